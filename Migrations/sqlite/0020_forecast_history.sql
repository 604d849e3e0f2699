-- Was yesterday's forecast right? (issue 42 #3). Per city and local day: what the newest
-- forecast issued before the day began said of it, and what the provider gave for it once the
-- day was over (its past days), both as stored with the forecasts the site fetches anyway.
-- Kept 60 days; the page scores the last 30.
CREATE TABLE forecast_history (
    city_id          INTEGER NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    day              TEXT    NOT NULL,
    source           TEXT    NOT NULL,
    forecast_high    REAL,
    forecast_low     REAL,
    forecast_chance  INTEGER,
    issued_at        REAL    NOT NULL,
    observed_high    REAL,
    observed_low     REAL,
    observed_code    INTEGER,
    observed_source  TEXT,
    observed_at      REAL,
    PRIMARY KEY (city_id, day)
) STRICT, WITHOUT ROWID;
CREATE INDEX forecast_history_age ON forecast_history(issued_at);
