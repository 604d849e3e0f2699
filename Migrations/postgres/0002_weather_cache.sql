-- PostgreSQL 15 version of SQLite migration 0002: the last forecast per city and provider (errors are never stored).
CREATE TABLE weather_cache (
    city_id     BIGINT           NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    provider    TEXT             NOT NULL,
    fetched_at  DOUBLE PRECISION NOT NULL,       -- seconds since 1970, as the app binds it
    payload     TEXT             NOT NULL,
    PRIMARY KEY (city_id, provider)
);
