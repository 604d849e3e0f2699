-- PostgreSQL version of sqlite/0007: one node fetches a city's forecast, the others wait for it.
CREATE TABLE weather_refresh_leases (
    city_id  BIGINT           PRIMARY KEY REFERENCES cities(id) ON DELETE CASCADE,
    holder   TEXT             NOT NULL,
    until    DOUBLE PRECISION NOT NULL
);
