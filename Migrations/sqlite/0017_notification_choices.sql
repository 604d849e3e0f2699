-- What each member wants to hear of, and how. Only choices that differ from the defaults are
-- stored (on the site: everything; by push: replies). Quiet hours (minutes after midnight, in
-- the member's time zone) hold pushes back until they end; NULL: none.
CREATE TABLE notification_choices (
    user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic    TEXT    NOT NULL CHECK (topic IN ('replies', 'mentions', 'agreements', 'moderation')),
    channel  TEXT    NOT NULL CHECK (channel IN ('site', 'push')),
    enabled  INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (user_id, topic, channel)
) STRICT;
ALTER TABLE users ADD COLUMN quiet_from INTEGER;
ALTER TABLE users ADD COLUMN quiet_to INTEGER;
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
