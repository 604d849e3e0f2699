-- Sign-in through OpenID Connect providers (OpenIDController): who a provider says a member is
-- (its issuer's `sub`: never an e-mail address), an attempt under way (single use, bound to the
-- browser's cookie by its digest), and a first sign-in waiting for the person's username.
CREATE TABLE oidc_identities (
    issuer      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    provider    TEXT    NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_user ON oidc_identities(user_id);
CREATE TABLE oidc_attempts (
    state_hash  TEXT    PRIMARY KEY,
    binding     TEXT    NOT NULL,
    provider    TEXT    NOT NULL,
    nonce       TEXT    NOT NULL,
    verifier    TEXT    NOT NULL,
    next        TEXT    NOT NULL,
    user_id     BIGINT REFERENCES users(id) ON DELETE CASCADE,
    expires_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX oidc_attempts_expiry ON oidc_attempts(expires_at);
CREATE TABLE oidc_pending (
    token_hash  TEXT    PRIMARY KEY,
    issuer      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    provider    TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    email       TEXT,
    next        TEXT    NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX oidc_pending_expiry ON oidc_pending(expires_at);
