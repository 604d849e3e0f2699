-- How a member's time zone was set (MemberTimeZone.Source): 0 never (the default, UTC: every
-- account before this, whose digest came at 07:00 GMT), 1 taken from their browser, 2 chosen.
-- An account still at 0 has its browser's zone taken on its next page.
ALTER TABLE users ADD COLUMN time_zone_source INTEGER NOT NULL DEFAULT 0;
