-- Mute beside block (issue 45 #3): a member hides a person's posts and replies from themselves,
-- collapsed, until a time (NULL: until they unmute), without stopping that person seeing them.
CREATE TABLE mutes (
    muter_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    muted_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    until       REAL,
    created_at  REAL    NOT NULL,
    PRIMARY KEY (muter_id, muted_id),
    CHECK (muter_id <> muted_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX mutes_muted ON mutes(muted_id);
