-- PostgreSQL version of sqlite/0013: recovery codes, stored hashed.
CREATE TABLE recovery_codes (
    user_id     BIGINT           NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash   TEXT             NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);
