-- An e-mail address a member has confirmed (NULL until then; an address waiting to be confirmed
-- lives only in its token), the language their mail is written in, single-use links by their
-- SHA-256, and the mail waiting to go out. A queued message holds what it is about, not its
-- text: a link's token is made when the message is sent, so no live link is ever stored.
ALTER TABLE users ADD COLUMN email TEXT;
ALTER TABLE users ADD COLUMN email_key TEXT;
ALTER TABLE users ADD COLUMN language TEXT NOT NULL DEFAULT 'en';
CREATE INDEX users_email ON users(email_key) WHERE email_key IS NOT NULL;

CREATE TABLE email_tokens (
    token_hash  TEXT    PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    purpose     TEXT    NOT NULL CHECK (purpose IN ('verify', 'reset')),
    address     TEXT    NOT NULL,
    created_at  REAL    NOT NULL,
    expires_at  REAL    NOT NULL
) STRICT;
CREATE INDEX email_tokens_user ON email_tokens(user_id, purpose);

CREATE TABLE mail_queue (
    id               INTEGER PRIMARY KEY,
    user_id          INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind             TEXT    NOT NULL CHECK (kind IN ('verify', 'reset', 'address_changed')),
    address          TEXT    NOT NULL,
    detail           TEXT    NOT NULL DEFAULT '',
    language         TEXT    NOT NULL,
    created_at       REAL    NOT NULL,
    expires_at       REAL    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  REAL    NOT NULL,
    claimed_until    REAL
) STRICT;
CREATE INDEX mail_queue_due ON mail_queue(next_attempt_at);
