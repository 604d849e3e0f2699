-- The e-mail digest (issue 41 #5): how often a member wants it, when the last period was
-- handled (sent, or passed over with nothing to say), and each sent digest's one-click
-- unsubscribe link (RFC 8058) by its SHA-256, good for 90 days. The queue takes digests and
-- notices by e-mail (`detail`: the notice's id).
ALTER TABLE users ADD COLUMN digest TEXT NOT NULL DEFAULT 'off' CHECK (digest IN ('off', 'daily', 'weekly'));
ALTER TABLE users ADD COLUMN digest_handled_at REAL;

CREATE TABLE unsubscribe_links (
    token_hash  TEXT    PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  REAL    NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX unsubscribe_links_age ON unsubscribe_links(created_at);

CREATE TABLE mail_queue_new (
    id               INTEGER PRIMARY KEY,
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
INSERT INTO mail_queue_new SELECT id, user_id, kind, address, detail, language, created_at, expires_at, attempts, next_attempt_at,
    claimed_until FROM mail_queue;
DROP TABLE mail_queue;
ALTER TABLE mail_queue_new RENAME TO mail_queue;
CREATE INDEX mail_queue_due ON mail_queue(next_attempt_at);
