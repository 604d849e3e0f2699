-- PostgreSQL version of sqlite/0019: the digest's choice and period, unsubscribe links, and
-- digests and notices in the mail queue.
ALTER TABLE users ADD COLUMN digest TEXT NOT NULL DEFAULT 'off' CHECK (digest IN ('off', 'daily', 'weekly'));
ALTER TABLE users ADD COLUMN digest_handled_at DOUBLE PRECISION;

CREATE TABLE unsubscribe_links (
    token_hash  TEXT             PRIMARY KEY,
    user_id     BIGINT           NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX unsubscribe_links_age ON unsubscribe_links(created_at);

ALTER TABLE mail_queue DROP CONSTRAINT mail_queue_kind_check;
ALTER TABLE mail_queue ADD CONSTRAINT mail_queue_kind_check
    CHECK (kind IN ('verify', 'reset', 'address_changed', 'digest', 'notice'));
