-- Passkeys (WebAuthn): each credential's id and COSE public key (base64url), its signature
-- counter (a counter that goes back means a cloned authenticator), a name its owner chose. A
-- member may have passkeys and no password (password_hash is then ''). The handle is the random
-- user id authenticators keep with a passkey (never the row id: WebAuthn §14.6.1).
CREATE TABLE passkeys (
    id             INTEGER PRIMARY KEY,
    user_id        INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    credential_id  TEXT    NOT NULL UNIQUE,
    public_key     TEXT    NOT NULL,
    algorithm      INTEGER NOT NULL,
    sign_count     INTEGER NOT NULL,
    name           TEXT    NOT NULL,
    created_at     REAL    NOT NULL,
    last_used_at   REAL
) STRICT;
CREATE INDEX passkeys_user ON passkeys(user_id);
ALTER TABLE users ADD COLUMN passkey_handle TEXT;
CREATE UNIQUE INDEX users_passkey_handle ON users(passkey_handle) WHERE passkey_handle IS NOT NULL;

-- A challenge given to a browser, single-use, for 5 minutes, bound to the session (or, before
-- sign-in, to a cookie of its own) that asked: stored as its SHA-256. A sign-up with a passkey
-- keeps the account it will make here until the passkey comes back.
CREATE TABLE webauthn_challenges (
    challenge_hash  TEXT    PRIMARY KEY,
    binding         TEXT    NOT NULL,
    purpose         TEXT    NOT NULL CHECK (purpose IN ('register', 'authenticate', 'signup')),
    user_id         INTEGER REFERENCES users(id) ON DELETE CASCADE,
    username        TEXT,
    display_name    TEXT,
    email           TEXT,
    user_handle     TEXT,
    name            TEXT,
    expires_at      REAL    NOT NULL
) STRICT;
CREATE INDEX webauthn_challenges_binding ON webauthn_challenges(binding, purpose);
