-- Web Push (RFC 8030, 8291, 8292). The site's VAPID key pair, made once by whichever node first
-- needs it, so that every node signs with the same key; members' push subscriptions (one per
-- browser, found by its endpoint); and the pushes waiting to go, one per notice and
-- subscription, holding what they are about, not their text.
CREATE TABLE push_keys (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    private_key  TEXT    NOT NULL,
    public_key   TEXT    NOT NULL,
    created_at   REAL    NOT NULL
) STRICT;

CREATE TABLE push_subscriptions (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    endpoint      TEXT    NOT NULL UNIQUE,
    p256dh        TEXT    NOT NULL,
    auth          TEXT    NOT NULL,
    browser       TEXT    NOT NULL,
    created_at    REAL    NOT NULL,
    last_used_at  REAL
) STRICT;
CREATE INDEX push_subscriptions_user ON push_subscriptions(user_id);

CREATE TABLE push_queue (
    id               INTEGER PRIMARY KEY,
    subscription_id  INTEGER NOT NULL REFERENCES push_subscriptions(id) ON DELETE CASCADE,
    notification_id  INTEGER NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    created_at       REAL    NOT NULL,
    expires_at       REAL    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  REAL    NOT NULL,
    claimed_until    REAL
) STRICT;
CREATE INDEX push_queue_due ON push_queue(next_attempt_at);
