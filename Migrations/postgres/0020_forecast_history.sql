-- PostgreSQL version of sqlite/0020: forecasts against what followed, per city and day.
CREATE TABLE forecast_history (
    city_id          BIGINT           NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    day              TEXT             NOT NULL,
    source           TEXT             NOT NULL,
    forecast_high    DOUBLE PRECISION,
    forecast_low     DOUBLE PRECISION,
    forecast_chance  INTEGER,
    issued_at        DOUBLE PRECISION NOT NULL,
    observed_high    DOUBLE PRECISION,
    observed_low     DOUBLE PRECISION,
    observed_code    INTEGER,
    observed_source  TEXT,
    observed_at      DOUBLE PRECISION,
    PRIMARY KEY (city_id, day)
);
CREATE INDEX forecast_history_age ON forecast_history(issued_at);
