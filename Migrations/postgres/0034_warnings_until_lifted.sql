-- A warning in force until its source lifts it (KMA's special weather reports): its expiry is
-- then only how long it is kept unheard, and pages say "until lifted".
ALTER TABLE warnings ADD COLUMN ends_when_lifted INTEGER NOT NULL DEFAULT 0 CHECK (ends_when_lifted IN (0, 1));
