-- Warnings that find people (issue 68 #3): what a member was told of an official warning in a
-- city they follow (a bookmark, or a subscription to its warnings alone), once per warning,
-- member and state however many nodes poll the feed; the row keeps what the notice said after
-- the warning itself is gone. `carried`: an update heard that changed nothing to do (not told,
-- kept so that a later update knows the member was told of the start).
CREATE TABLE warning_alerts (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    warning_id       TEXT    NOT NULL,
    user_id          INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    city_id          INTEGER NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    event            TEXT    NOT NULL,
    severity         TEXT    NOT NULL CHECK (severity IN ('minor', 'moderate', 'severe', 'extreme')),
    expires          REAL    NOT NULL,
    ends_when_lifted INTEGER NOT NULL CHECK (ends_when_lifted IN (0, 1)),
    state            TEXT    NOT NULL CHECK (state IN ('started', 'raised', 'extended', 'cancelled', 'carried')),
    told_at          REAL    NOT NULL,
    UNIQUE (warning_id, user_id, state)
) STRICT;
CREATE INDEX warning_alerts_user ON warning_alerts(user_id, warning_id);
CREATE INDEX warning_alerts_age ON warning_alerts(told_at);

CREATE TABLE warning_subscriptions (
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    city_id     INTEGER NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    created_at  REAL    NOT NULL,
    PRIMARY KEY (user_id, city_id)
) STRICT;
CREATE INDEX warning_subscriptions_city ON warning_subscriptions(city_id);

-- Severe and extreme warnings pass quiet hours unless the member says otherwise.
ALTER TABLE users ADD COLUMN warnings_pass_quiet INTEGER NOT NULL DEFAULT 1 CHECK (warnings_pass_quiet IN (0, 1));

CREATE TABLE notifications_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind             TEXT    NOT NULL CHECK (kind IN ('reply', 'mention', 'reaction', 'report_decided', 'removed', 'restored',
                                                      'rain', 'rain_cleared', 'warning', 'warning_update')),
    post_id          INTEGER REFERENCES posts(id) ON DELETE CASCADE,
    actor_id         INTEGER REFERENCES users(id) ON DELETE CASCADE,
    people           INTEGER NOT NULL DEFAULT 1,
    created_at       REAL    NOT NULL,
    read_at          REAL,
    alert_id         INTEGER REFERENCES rain_alerts(id) ON DELETE CASCADE,
    warning_alert_id INTEGER REFERENCES warning_alerts(id) ON DELETE CASCADE,
    CHECK ((post_id IS NOT NULL) + (alert_id IS NOT NULL) + (warning_alert_id IS NOT NULL) = 1)
) STRICT;
INSERT INTO notifications_new (id, user_id, kind, post_id, actor_id, people, created_at, read_at, alert_id)
    SELECT id, user_id, kind, post_id, actor_id, people, created_at, read_at, alert_id FROM notifications;
DROP TABLE notifications;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX notifications_user ON notifications(user_id, id DESC);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_age ON notifications(created_at);
CREATE INDEX notifications_alert ON notifications(alert_id) WHERE alert_id IS NOT NULL;
CREATE INDEX notifications_warning ON notifications(warning_alert_id) WHERE warning_alert_id IS NOT NULL;

CREATE TABLE notification_choices_new (
    user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    topic    TEXT    NOT NULL CHECK (topic IN ('replies', 'mentions', 'agreements', 'moderation', 'rain', 'warnings')),
    channel  TEXT    NOT NULL CHECK (channel IN ('site', 'push', 'email')),
    enabled  INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (user_id, topic, channel)
) STRICT;
INSERT INTO notification_choices_new SELECT user_id, topic, channel, enabled FROM notification_choices;
DROP TABLE notification_choices;
ALTER TABLE notification_choices_new RENAME TO notification_choices;
