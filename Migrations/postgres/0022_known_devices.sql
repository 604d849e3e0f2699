-- PostgreSQL version of sqlite/0022: browsers that signed in to an account before.
CREATE TABLE known_devices (
    token_hash    TEXT             PRIMARY KEY,
    user_id       BIGINT           NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at    DOUBLE PRECISION NOT NULL,
    last_used_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX known_devices_user ON known_devices(user_id, last_used_at);
