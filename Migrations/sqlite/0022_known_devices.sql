-- Browsers that signed in to an account with its password before (issue 39 #2, OWASP's "device
-- cookies"): their password checks go ahead of a crowd's, past the site-wide brake. Stored as
-- the SHA-256 of the cookie's token, like sessions; a few a member, each kept 400 days unused.
CREATE TABLE known_devices (
    token_hash    TEXT    PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at    REAL    NOT NULL,
    last_used_at  REAL    NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX known_devices_user ON known_devices(user_id, last_used_at);
