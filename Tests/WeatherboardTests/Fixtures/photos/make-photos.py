#!/usr/bin/env python3
"""Writes the photo tests' fixtures into the folder named first: real pictures with the metadata
the site must drop (GPS, orientation, XMP, PNG text), and files that must be refused. Made here,
never downloaded. Needs Pillow."""
import io, os, random, struct, sys, zipfile, zlib
from PIL import Image, ImageDraw

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

def scene(width, height, seed=1):
    """A picture with structure (a sky, a horizon, a sun): likeness hashes need edges."""
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(image)
    for y in range(height):
        shade = int(90 + 140 * y / height)
        draw.line([(0, y), (width, y)], fill=(shade // 2, shade // 2 + 40, 255 - shade // 3))
    draw.rectangle([0, int(height * 0.62), width, height], fill=(40, 110, 50))
    draw.ellipse([int(width * 0.08), int(height * 0.1), int(width * 0.3), int(height * 0.42)], fill=(250, 220, 60))
    for _ in range(12):
        x, y = rng.randrange(width), rng.randrange(int(height * 0.6))
        draw.ellipse([x, y, x + width // 6, y + height // 12], fill=(235, 235, 240))
    # The top-left corner red: the test finds it after rotation.
    draw.rectangle([0, 0, width // 10, height // 10], fill=(255, 0, 0))
    return image

XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
       b'xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="37,33.99N"/></rdf:RDF>'
       b'</x:xmpmeta><?xpacket end="w"?>')

def exif_with_gps(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "PhoneMaker"
    exif[0x9286] = "home"  # UserComment-ish
    gps = exif.get_ifd(0x8825)
    gps[1] = "N"
    gps[2] = (37.0, 33.0, 59.0)
    gps[3] = "E"
    gps[4] = (126.0, 58.0, 40.0)
    return exif

# A phone's JPEG: 1200 x 800 stored, orientation 6 (to be turned a quarter clockwise), GPS and XMP.
phone = scene(1200, 800)
phone.save(f"{out}/gps-rotated.jpg", quality=92, exif=exif_with_gps(6), xmp=XMP)

# A PNG with text chunks (a comment with where it was taken) and transparency.
from PIL.PngImagePlugin import PngInfo
info = PngInfo()
info.add_text("Comment", "taken at home, 37.5665 N 126.9780 E")
info.add_itxt("XML:com.adobe.xmp", XMP.decode())
scene(800, 600, 2).convert("RGBA").save(f"{out}/text.png", pnginfo=info)

# A WebP with EXIF.
scene(900, 600, 3).save(f"{out}/photo.webp", quality=85, exif=exif_with_gps(1))

# A decompression bomb: a valid PNG whose header declares 100,000 x 100,000 pixels.
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)
idat = zlib.compress(b"\x00" * 4096, 9)
with open(f"{out}/bomb.png", "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))

# A JPEG cut short.
buffer = io.BytesIO()
scene(1000, 700, 4).save(buffer, "JPEG", quality=90)
whole = buffer.getvalue()
with open(f"{out}/truncated.jpg", "wb") as f:
    f.write(whole[: len(whole) * 6 // 10])

# A polyglot: a JPEG whose comment is HTML with a script, with a ZIP after its end.
html = b"<html><body><script>alert(document.cookie)</script></body></html>"
com = b"\xff\xfe" + struct.pack(">H", len(html) + 2) + html
polyglot = whole[:2] + com + whole[2:]
zipped = io.BytesIO()
with zipfile.ZipFile(zipped, "w") as z:
    z.writestr("index.html", html)
with open(f"{out}/polyglot.jpg", "wb") as f:
    f.write(polyglot + zipped.getvalue())

# SVG with a script, named .jpg.
with open(f"{out}/script.jpg", "wb") as f:
    f.write(b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">'
            b'<script>alert(1)</script><rect width="100" height="100" fill="red"/></svg>')

# 13 MB of noise behind a JPEG's first bytes (over the 12 MB limit).
with open(f"{out}/noise.jpg", "wb") as f:
    f.write(b"\xff\xd8\xff\xe0" + random.Random(7).randbytes(13 * 1024 * 1024))

# The same picture as a removed one, re-encoded at another quality, and cropped by 5 %.
removed = scene(1000, 750, 9)
removed.save(f"{out}/removed.jpg", quality=90)
removed.save(f"{out}/removed-requality.jpg", quality=55)
w, h = removed.size
removed.crop((w * 5 // 200, h * 5 // 200, w - w * 5 // 200, h - h * 5 // 200)).save(f"{out}/removed-cropped.jpg", quality=85)
# Another picture altogether (not refused).
scene(1000, 750, 11).transpose(Image.Transpose.FLIP_TOP_BOTTOM).save(f"{out}/other.jpg", quality=90)
