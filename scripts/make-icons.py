#!/usr/bin/env python3
"""Draws the app icons the manifest names (Public/icons/), from the same design as
Public/favicon.svg: a rounded square with the site's warm-to-cold gradient and a white sun.
The maskable icon keeps the sun inside the central 80 % safe zone and fills the whole square.
    pip install pillow && python3 scripts/make-icons.py"""
from pathlib import Path
from PIL import Image, ImageDraw

TOP, BOTTOM = (0xEC, 0x6A, 0x3C), (0x35, 0x67, 0xC8)

def icon(size, maskable):
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    gradient = Image.new("RGBA", (size, size))
    draw = ImageDraw.Draw(gradient)
    for y in range(size):
        t = y / (size - 1)
        draw.line([(0, y), (size, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(TOP, BOTTOM)) + (255,))
    mask = Image.new("L", (size, size), 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, size - 1, size - 1], radius=0 if maskable else size * 7 // 32, fill=255)
    image.paste(gradient, (0, 0), mask)
    sun = size * (6 / 32) * (0.8 if maskable else 1)
    cx, cy = size / 2, size * 14 / 32 if not maskable else size / 2
    ImageDraw.Draw(image).ellipse([cx - sun, cy - sun, cx + sun, cy + sun], fill=(255, 255, 255, 255))
    return image

folder = Path(__file__).resolve().parent.parent / "Public" / "icons"
folder.mkdir(exist_ok=True)
for size in (192, 512):
    icon(size, False).save(folder / f"icon-{size}.png", optimize=True)
    icon(size, True).save(folder / f"maskable-{size}.png", optimize=True)
