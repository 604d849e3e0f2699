#!/usr/bin/env python3
"""Cold cities against a slow provider (issue 39 #1 and #4), against a release build on loopback.

    swift build -c release --product weatherboard
    scripts/attack-cold-cities.py [--bin .build/release/weatherboard] [--addresses 12] [--seconds 60] [--delay 1]

A stub Open-Meteo on loopback answers every forecast after `--delay` seconds: the recorded Seoul
answer from Tests/WeatherboardTests/Fixtures, with the asking city's UTC offset and time zone (the
node refuses an answer for another offset), so that every fetch is one the node keeps. `--addresses` crawlers (127.0.4.x) each open a
different city nobody opened before, one after another and at most one a second (what a crawler
waiting on a 1-second provider managed when this was found: the node then spent 97 % of a core),
for `--seconds`. Prints pages and upstream calls, and the server's CPU over the run from
/proc/PID/stat, as a share of one core. A measurement: nothing here asserts a time.
"""
import datetime, http.client, http.server, json, os, sqlite3, threading, time, urllib.parse, zoneinfo
from loopback import arguments, cpu_seconds, start

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "Tests", "WeatherboardTests", "Fixtures", "open-meteo-seoul.json")
AIR = b'{"utc_offset_seconds":32400,"current":{"time":"2026-11-22T14:00","interval":3600,"pm10":42.4,"pm2_5":18.1}}'

def main():
    args = arguments(8098, addresses=(int, 12), seconds=(float, 60), delay=(float, 1.0))
    forecast = json.load(open(FIXTURE))
    zones = {}  # (latitude, longitude) as asked → the city's zone, read once the database exists
    calls = {"forecast": 0, "air": 0}
    lock = threading.Lock()

    class Stub(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            air = "air-quality" in self.path
            with lock: calls["air" if air else "forecast"] += 1
            time.sleep(args.delay)
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            zone = zones.get((query.get("latitude", [""])[0], query.get("longitude", [""])[0]), "Asia/Seoul")
            offset = int(datetime.datetime.now(zoneinfo.ZoneInfo(zone)).utcoffset().total_seconds())
            answer = json.loads(AIR) if air else dict(forecast)
            answer["utc_offset_seconds"], answer["timezone"] = offset, zone
            body = json.dumps(answer).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the node gave up on a slow answer (its own bound), as it may
        def log_message(self, *_): pass

    stub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    stub_url = f"http://127.0.0.1:{stub.server_address[1]}"
    server, work = start(args, "--weather", "open-meteo", "--open-meteo-url", stub_url, "--air-quality-url", stub_url)
    try:
        rows = sqlite3.connect(f"{work}/db.sqlite").execute("SELECT slug, latitude, longitude, timezone FROM cities ORDER BY id").fetchall()
        slugs = [row[0] for row in rows]
        zones.update({(f"{latitude:.4f}", f"{longitude:.4f}"): zone for _, latitude, longitude, zone in rows})
        pages, unavailable = [0], [0]
        stop = time.monotonic() + args.seconds
        def crawler(number):
            source = f"127.0.4.{number + 1}"
            index = number
            while time.monotonic() < stop and index < len(slugs):
                started = time.monotonic()
                conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30, source_address=(source, 0))
                conn.request("GET", f"/city/{slugs[index]}", headers={"Accept-Encoding": "gzip"})
                response = conn.getresponse()
                body = response.read()
                conn.close()
                with lock:
                    pages[0] += 1
                    if response.status != 200: unavailable[0] += 1
                index += args.addresses
                time.sleep(max(0, 1 - (time.monotonic() - started)))
        cpu0, wall0 = cpu_seconds(server.pid), time.monotonic()
        threads = [threading.Thread(target=crawler, args=(n,)) for n in range(args.addresses)]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        wall = time.monotonic() - wall0
        cpu = cpu_seconds(server.pid) - cpu0
        print(f"{args.addresses} addresses, {wall:.0f} s, provider answering after {args.delay} s: {pages[0]} cold city pages "
              f"({unavailable[0]} not 200), {calls['forecast']} forecast and {calls['air']} air-quality calls upstream")
        print(f"server CPU: {cpu:.2f} s, {100 * cpu / wall:.1f} % of one core")
    finally:
        server.terminate()
        server.wait()
        stub.shutdown()

if __name__ == "__main__":
    main()
