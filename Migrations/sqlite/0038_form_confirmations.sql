-- One-time confirmations of a form sent by a client that says neither where it comes from
-- (no Sec-Fetch-Site, no Origin: UnstatedPosts). Each is the digest of a token shown once on a
-- confirmation page, bound to the browser that asked (a session's or a guest cookie's digest)
-- and to the action (method and path); confirming deletes it.
CREATE TABLE form_confirmations (
    token_hash  TEXT    PRIMARY KEY,
    holder      TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    expires_at  REAL    NOT NULL
);
CREATE INDEX form_confirmations_holder ON form_confirmations(holder, expires_at);
CREATE INDEX form_confirmations_expiry ON form_confirmations(expires_at);
