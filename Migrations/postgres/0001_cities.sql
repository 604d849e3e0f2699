-- PostgreSQL 15 version of SQLite migration 0001: cities from the GeoNames catalog (15,000+ inhabitants, CC BY 4.0).
CREATE TABLE cities (
    id          BIGINT           PRIMARY KEY,    -- GeoNames geonameid, always supplied: no identity
    slug        TEXT             NOT NULL UNIQUE,
    name_en     TEXT             NOT NULL,
    name_ko     TEXT,
    country     TEXT             NOT NULL,
    admin1      TEXT             NOT NULL DEFAULT '',
    latitude    DOUBLE PRECISION NOT NULL,
    longitude   DOUBLE PRECISION NOT NULL,
    timezone    TEXT             NOT NULL,
    population  BIGINT           NOT NULL DEFAULT 0,
    kma_nx      BIGINT,
    kma_ny      BIGINT
);
CREATE INDEX cities_population ON cities(population DESC);
