-- Official weather warnings (issue 43 #1): one row per warning as its source last gave it (an
-- update replaces it; a cancellation or its end removes it), its text in each language the
-- source wrote it in, and the cities its area covers.
CREATE TABLE warnings (
    id          TEXT    PRIMARY KEY, -- the source's name, ':', the source's identifier
    source      TEXT    NOT NULL,
    event       TEXT    NOT NULL,
    severity    TEXT    NOT NULL CHECK (severity IN ('minor', 'moderate', 'severe', 'extreme')),
    urgency     TEXT    NOT NULL,
    sent        REAL    NOT NULL,
    onset       REAL    NOT NULL,
    expires     REAL    NOT NULL
) STRICT;
CREATE INDEX warnings_source ON warnings (source);

CREATE TABLE warning_texts (
    warning_id  TEXT    NOT NULL REFERENCES warnings(id) ON DELETE CASCADE,
    language    TEXT    NOT NULL,
    headline    TEXT    NOT NULL,
    description TEXT    NOT NULL,
    PRIMARY KEY (warning_id, language)
) STRICT, WITHOUT ROWID;

CREATE TABLE warning_cities (
    warning_id  TEXT    NOT NULL REFERENCES warnings(id) ON DELETE CASCADE,
    city_id     INTEGER NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    PRIMARY KEY (warning_id, city_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX warning_cities_city ON warning_cities (city_id);
