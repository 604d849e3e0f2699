-- Rain alerts (issue 41 #2). A member's windows ("weekdays 07:00–09:00 in Seoul", in the city's
-- local time) hang on their bookmark of the city: unbookmarking it ends them. A window that
-- ends before it starts runs past midnight.
CREATE TABLE rain_windows (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL,
    city_id       INTEGER NOT NULL,
    days          TEXT    NOT NULL CHECK (days IN ('weekdays', 'weekends', 'daily')),
    start_minute  INTEGER NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
    end_minute    INTEGER NOT NULL CHECK (end_minute BETWEEN 0 AND 1439 AND end_minute <> start_minute),
    lead_minutes  INTEGER NOT NULL CHECK (lead_minutes BETWEEN 0 AND 720),
    created_at    REAL    NOT NULL,
    FOREIGN KEY (user_id, city_id) REFERENCES bookmarks(user_id, city_id) ON DELETE CASCADE
) STRICT;
CREATE INDEX rain_windows_bookmark ON rain_windows(user_id, city_id);

-- What a window's day was told: rain expected (the likely hours in the window, local
-- `yyyy-MM-ddTHH:00`, and when the spell stops if the forecast reaches that far), then perhaps
-- that it no longer is. One row per window and day, whichever node writes it first: that
-- insert is what makes an alert go once across nodes.
CREATE TABLE rain_alerts (
    id          INTEGER PRIMARY KEY,
    window_id   INTEGER NOT NULL REFERENCES rain_windows(id) ON DELETE CASCADE,
    day         TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('expected', 'cleared')),
    kind        TEXT    NOT NULL CHECK (kind IN ('rain', 'snow', 'mixed')),
    spell_from  TEXT    NOT NULL,
    spell_to    TEXT    NOT NULL,
    stops_at    TEXT,
    told_at     REAL    NOT NULL,
    UNIQUE (window_id, day)
) STRICT;

-- A notice is about a post or about a rain alert.
CREATE TABLE notifications_new (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('reply', 'mention', 'reaction', 'report_decided', 'removed', 'restored',
                                                 'rain', 'rain_cleared')),
    post_id     INTEGER REFERENCES posts(id) ON DELETE CASCADE,
    actor_id    INTEGER REFERENCES users(id) ON DELETE CASCADE,
    people      INTEGER NOT NULL DEFAULT 1,
    created_at  REAL    NOT NULL,
    read_at     REAL,
    alert_id    INTEGER REFERENCES rain_alerts(id) ON DELETE CASCADE,
    CHECK ((post_id IS NULL) <> (alert_id IS NULL))
) STRICT;
INSERT INTO notifications_new (id, user_id, kind, post_id, actor_id, people, created_at, read_at)
    SELECT id, user_id, kind, post_id, actor_id, people, created_at, read_at FROM notifications;
DROP TABLE notifications;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX notifications_user ON notifications(user_id, id DESC);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_age ON notifications(created_at);
CREATE INDEX notifications_alert ON notifications(alert_id) WHERE alert_id IS NOT NULL;

-- Rain alerts as a topic, and e-mail as a channel.
CREATE TABLE notification_choices_new (
    user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic    TEXT    NOT NULL CHECK (topic IN ('replies', 'mentions', 'agreements', 'moderation', 'rain')),
    channel  TEXT    NOT NULL CHECK (channel IN ('site', 'push', 'email')),
    enabled  INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (user_id, topic, channel)
) STRICT;
INSERT INTO notification_choices_new SELECT user_id, topic, channel, enabled FROM notification_choices;
DROP TABLE notification_choices;
ALTER TABLE notification_choices_new RENAME TO notification_choices;
