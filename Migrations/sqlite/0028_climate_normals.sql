-- Today against the normal for the date (issue 42 #2): per city and calendar date (month * 100
-- + day, 229 included), the 1991–2020 mean high and low over the fortnight around it, from the
-- provider's archive, fetched once per city and kept (366 rows a city).
CREATE TABLE climate_normals (
    city_id     INTEGER NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    month_day   INTEGER NOT NULL CHECK (month_day BETWEEN 101 AND 1231),
    high        REAL    NOT NULL,
    low         REAL    NOT NULL,
    source      TEXT    NOT NULL,
    fetched_at  REAL    NOT NULL,
    PRIMARY KEY (city_id, month_day)
) STRICT, WITHOUT ROWID;
