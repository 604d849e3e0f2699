-- PostgreSQL version of sqlite/0029: official weather warnings, their texts and their cities.
CREATE TABLE warnings (
    id          TEXT             PRIMARY KEY,
    source      TEXT             NOT NULL,
    event       TEXT             NOT NULL,
    severity    TEXT             NOT NULL CHECK (severity IN ('minor', 'moderate', 'severe', 'extreme')),
    urgency     TEXT             NOT NULL,
    sent        DOUBLE PRECISION NOT NULL,
    onset       DOUBLE PRECISION NOT NULL,
    expires     DOUBLE PRECISION NOT NULL
);
CREATE INDEX warnings_source ON warnings (source);

CREATE TABLE warning_texts (
    warning_id  TEXT             NOT NULL REFERENCES warnings(id) ON DELETE CASCADE,
    language    TEXT             NOT NULL,
    headline    TEXT             NOT NULL,
    description TEXT             NOT NULL,
    PRIMARY KEY (warning_id, language)
);

CREATE TABLE warning_cities (
    warning_id  TEXT             NOT NULL REFERENCES warnings(id) ON DELETE CASCADE,
    city_id     BIGINT           NOT NULL REFERENCES cities(id) ON DELETE CASCADE,
    PRIMARY KEY (warning_id, city_id)
);
CREATE INDEX warning_cities_city ON warning_cities (city_id);
