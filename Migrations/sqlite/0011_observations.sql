-- What a member says the sky is doing where they are, and how it feels against the forecast,
-- when posting (both optional; replies carry neither). A city page counts the last 3 hours'.
ALTER TABLE posts ADD COLUMN sky TEXT CHECK (sky IN ('clear', 'clouds', 'fog', 'rain', 'snow', 'storm'));
ALTER TABLE posts ADD COLUMN feels TEXT CHECK (feels IN ('warmer', 'same', 'colder'));
CREATE INDEX posts_observations ON posts(city_id, created_at) WHERE sky IS NOT NULL OR feels IS NOT NULL;
