#!/usr/bin/env python3
"""Writes the upload fuzzer's seeds into Tests/Fuzz/upload-corpus: small pictures in the four
formats, alone (first byte odd) and inside a multipart body with boundary "B" (first byte even).
Needs Pillow; the HEIC seed is written by `vips` if it is installed."""
import io, os, subprocess, sys
from PIL import Image

out = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fuzz", "upload-corpus")
os.makedirs(out, exist_ok=True)
image = Image.new("RGB", (16, 12), (30, 120, 200))
files = {}
for name, fmt, extra in [("jpg", "JPEG", {"quality": 50}), ("png", "PNG", {}), ("webp", "WEBP", {"quality": 50})]:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **extra)
    files[name] = buffer.getvalue()
try:
    image.save("/tmp/seed.jpg", "JPEG")
    subprocess.run(["vips", "copy", "/tmp/seed.jpg", "/tmp/seed.heic"], check=True, capture_output=True)
    files["heic"] = open("/tmp/seed.heic", "rb").read()
except Exception as problem:
    print("no HEIC seed:", problem, file=sys.stderr)
for name, data in files.items():
    open(os.path.join(out, f"file-{name}"), "wb").write(b"\x01" + data)
    body = (b"--B\r\nContent-Disposition: form-data; name=\"body\"\r\n\r\nSnow\r\n"
            b"--B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a." + name.encode() + b"\"\r\n"
            b"Content-Type: image/" + name.encode() + b"\r\n\r\n" + data + b"\r\n--B--\r\n")
    open(os.path.join(out, f"form-{name}"), "wb").write(b"\x00" + body)
