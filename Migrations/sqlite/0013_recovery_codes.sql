-- One-time codes a member keeps on paper to get back into their account: only each code's
-- SHA-256 (with the member's id) is stored. Making new codes deletes the old; using one deletes it.
CREATE TABLE recovery_codes (
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash   TEXT    NOT NULL,
    created_at  REAL    NOT NULL,
    PRIMARY KEY (user_id, code_hash)
) STRICT;
