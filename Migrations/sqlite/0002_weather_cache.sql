-- The last forecast fetched per city and provider; served fresh for a while, stale when every
-- provider fails. Errors are never stored.
CREATE TABLE weather_cache (
    city_id     INTEGER NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    provider    TEXT    NOT NULL,
    fetched_at  REAL    NOT NULL,                 -- seconds since 1970, UTC
    payload     TEXT    NOT NULL,                 -- the Forecast as JSON
    PRIMARY KEY (city_id, provider)
) STRICT, WITHOUT ROWID;
