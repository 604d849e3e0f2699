-- Ids that name something outside their row are never given again (as posts' since 0021).
-- Without AUTOINCREMENT, SQLite gives the newest row's id to the next row once it is deleted:
-- a mail sender that finished message 7 deleted the newer message 7 a second "forgot password"
-- had queued in its place, and the same with pushes; a deleted account's id went to the next
-- sign-up, whose name then stood beside the deleted account's ban in a city's public record; a
-- notice, a report or a device named in a page, a form or a queued mail could become another.
-- Every row keeps its id; each sequence starts at the highest id kept.

CREATE TABLE users_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL,
    username_key  TEXT    NOT NULL UNIQUE,          -- lowercased: usernames are unique case-insensitively
    display_name  TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,                 -- scrypt$N$r$p$salt$hash (base64)
    role          TEXT    NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
    created_at    REAL    NOT NULL,
    email             TEXT,
    email_key         TEXT,
    language          TEXT    NOT NULL DEFAULT 'en',
    passkey_handle    TEXT,
    quiet_from        INTEGER,
    quiet_to          INTEGER,
    time_zone         TEXT    NOT NULL DEFAULT 'UTC',
    digest            TEXT    NOT NULL DEFAULT 'off' CHECK (digest IN ('off', 'daily', 'weekly')),
    digest_handled_at REAL,
    level             INTEGER NOT NULL DEFAULT 0 CHECK (level BETWEEN 0 AND 2),
    level_set         INTEGER CHECK (level_set BETWEEN 0 AND 2),
    visit_days        INTEGER NOT NULL DEFAULT 0,
    last_visit_day    INTEGER,
    is_system         INTEGER NOT NULL DEFAULT 0 CHECK (is_system IN (0, 1))
) STRICT;
INSERT INTO users_new (id, username, username_key, display_name, password_hash, role, created_at, email, email_key, language,
                       passkey_handle, quiet_from, quiet_to, time_zone, digest, digest_handled_at, level, level_set, visit_days,
                       last_visit_day, is_system)
    SELECT id, username, username_key, display_name, password_hash, role, created_at, email, email_key, language,
           passkey_handle, quiet_from, quiet_to, time_zone, digest, digest_handled_at, level, level_set, visit_days,
           last_visit_day, is_system FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
CREATE INDEX users_email ON users(email_key) WHERE email_key IS NOT NULL;
CREATE UNIQUE INDEX users_passkey_handle ON users(passkey_handle) WHERE passkey_handle IS NOT NULL;

CREATE TABLE notifications_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO notifications_new (id, user_id, kind, post_id, actor_id, people, created_at, read_at, alert_id)
    SELECT id, user_id, kind, post_id, actor_id, people, created_at, read_at, alert_id FROM notifications;
DROP TABLE notifications;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX notifications_user ON notifications(user_id, id DESC);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_age ON notifications(created_at);
CREATE INDEX notifications_alert ON notifications(alert_id) WHERE alert_id IS NOT NULL;

CREATE TABLE reports_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    post_id        INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    reporter_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
    reason         TEXT    NOT NULL CHECK (reason IN ('spam', 'harassment', 'off_topic', 'personal_info', 'illegal', 'other')),
    detail         TEXT    NOT NULL DEFAULT '' CHECK (length(detail) <= 1000),
    created_at     REAL    NOT NULL,
    outcome        TEXT    NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'removed', 'no_violation')),
    resolved_at    REAL,
    reported_body  TEXT,
    weight         INTEGER NOT NULL DEFAULT 2,
    UNIQUE (post_id, reporter_id)
) STRICT;
INSERT INTO reports_new (id, post_id, reporter_id, reason, detail, created_at, outcome, resolved_at, reported_body, weight)
    SELECT id, post_id, reporter_id, reason, detail, created_at, outcome, resolved_at, reported_body, weight FROM reports;
DROP TABLE reports;
ALTER TABLE reports_new RENAME TO reports;
CREATE INDEX reports_reporter ON reports(reporter_id, created_at);
CREATE INDEX reports_post ON reports(post_id, outcome);
CREATE INDEX reports_reporter_post ON reports(reporter_id, post_id);
CREATE INDEX reports_pending ON reports(post_id) WHERE outcome = 'pending';

CREATE TABLE push_subscriptions_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    endpoint      TEXT    NOT NULL UNIQUE,
    p256dh        TEXT    NOT NULL,
    auth          TEXT    NOT NULL,
    browser       TEXT    NOT NULL,
    created_at    REAL    NOT NULL,
    last_used_at  REAL
) STRICT;
INSERT INTO push_subscriptions_new (id, user_id, endpoint, p256dh, auth, browser, created_at, last_used_at)
    SELECT id, user_id, endpoint, p256dh, auth, browser, created_at, last_used_at FROM push_subscriptions;
DROP TABLE push_subscriptions;
ALTER TABLE push_subscriptions_new RENAME TO push_subscriptions;
CREATE INDEX push_subscriptions_user ON push_subscriptions(user_id);

CREATE TABLE push_queue_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id  INTEGER NOT NULL REFERENCES push_subscriptions(id) ON DELETE CASCADE,
    notification_id  INTEGER NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    created_at       REAL    NOT NULL,
    expires_at       REAL    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  REAL    NOT NULL,
    claimed_until    REAL
) STRICT;
INSERT INTO push_queue_new (id, subscription_id, notification_id, created_at, expires_at, attempts, next_attempt_at, claimed_until)
    SELECT id, subscription_id, notification_id, created_at, expires_at, attempts, next_attempt_at, claimed_until FROM push_queue;
DROP TABLE push_queue;
ALTER TABLE push_queue_new RENAME TO push_queue;
CREATE INDEX push_queue_due ON push_queue(next_attempt_at);

CREATE TABLE mail_queue_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind             TEXT    NOT NULL CHECK (kind IN ('verify', 'reset', 'address_changed', 'digest', 'notice')),
    address          TEXT    NOT NULL,
    detail           TEXT    NOT NULL DEFAULT '',
    language         TEXT    NOT NULL,
    created_at       REAL    NOT NULL,
    expires_at       REAL    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  REAL    NOT NULL,
    claimed_until    REAL
) STRICT;
INSERT INTO mail_queue_new (id, user_id, kind, address, detail, language, created_at, expires_at, attempts, next_attempt_at,
                            claimed_until)
    SELECT id, user_id, kind, address, detail, language, created_at, expires_at, attempts, next_attempt_at, claimed_until
    FROM mail_queue;
DROP TABLE mail_queue;
ALTER TABLE mail_queue_new RENAME TO mail_queue;
CREATE INDEX mail_queue_due ON mail_queue(next_attempt_at);
