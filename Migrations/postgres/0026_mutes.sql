-- PostgreSQL version of sqlite/0026: mutes.
CREATE TABLE mutes (
    muter_id    BIGINT           NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    muted_id    BIGINT           NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    until       DOUBLE PRECISION,
    created_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (muter_id, muted_id),
    CHECK (muter_id <> muted_id)
);
CREATE INDEX mutes_muted ON mutes(muted_id);
