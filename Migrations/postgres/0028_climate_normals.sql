-- PostgreSQL version of sqlite/0028: the 1991–2020 normal high and low per city and calendar date.
CREATE TABLE climate_normals (
    city_id     BIGINT           NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    month_day   INTEGER          NOT NULL CHECK (month_day BETWEEN 101 AND 1231),
    high        DOUBLE PRECISION NOT NULL,
    low         DOUBLE PRECISION NOT NULL,
    source      TEXT             NOT NULL,
    fetched_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (city_id, month_day)
);
