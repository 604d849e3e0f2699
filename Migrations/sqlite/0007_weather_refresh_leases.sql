-- Who is fetching a city's forecast now: with several nodes on one database, one node asks the
-- provider and the others wait for its answer in weather_cache (a lease, so a node that dies
-- mid-fetch holds it only until `until`).
CREATE TABLE weather_refresh_leases (
    city_id  INTEGER PRIMARY KEY REFERENCES cities(id) ON DELETE CASCADE,
    holder   TEXT    NOT NULL,                     -- the node's id
    until    REAL    NOT NULL                      -- seconds since 1970
) STRICT;
