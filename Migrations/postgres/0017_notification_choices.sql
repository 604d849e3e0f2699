-- PostgreSQL version of sqlite/0017: notification choices and quiet hours.
CREATE TABLE notification_choices (
    user_id  BIGINT  NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic    TEXT    NOT NULL CHECK (topic IN ('replies', 'mentions', 'agreements', 'moderation')),
    channel  TEXT    NOT NULL CHECK (channel IN ('site', 'push')),
    enabled  INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (user_id, topic, channel)
);
ALTER TABLE users ADD COLUMN quiet_from INTEGER;
ALTER TABLE users ADD COLUMN quiet_to INTEGER;
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
