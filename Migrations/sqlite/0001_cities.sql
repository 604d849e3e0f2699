-- Cities from the GeoNames catalog (cities with 15,000+ inhabitants, CC BY 4.0).
CREATE TABLE cities (
    id          INTEGER PRIMARY KEY,             -- GeoNames geonameid
    slug        TEXT    NOT NULL UNIQUE,          -- stable URL part: seoul, new-york-city
    name_en     TEXT    NOT NULL,
    name_ko     TEXT,                             -- Korean name where one is known
    country     TEXT    NOT NULL,                 -- ISO 3166-1 alpha-2
    admin1      TEXT    NOT NULL DEFAULT '',
    latitude    REAL    NOT NULL,
    longitude   REAL    NOT NULL,
    timezone    TEXT    NOT NULL,                 -- IANA time zone
    population  INTEGER NOT NULL DEFAULT 0,
    kma_nx      INTEGER,                          -- KMA forecast grid, Korean cities only
    kma_ny      INTEGER
) STRICT;
CREATE INDEX cities_population ON cities(population DESC);
