"""What the attack scripts share: a release build started on a fresh SQLite database on
loopback, and its CPU time from /proc."""
import argparse, http.client, os, subprocess, tempfile, time

def arguments(port, **options):
    """The common options (--bin, --port) and the script's own (name: (type, default))."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=".build/release/weatherboard")
    ap.add_argument("--port", type=int, default=port)
    for name, (kind, default) in options.items():
        if kind is bool:
            ap.add_argument("--" + name.replace("_", "-"), action="store_true")
        else:
            ap.add_argument("--" + name.replace("_", "-"), type=kind, default=default)
    return ap.parse_args()

def start(args, *flags):
    """The server on a fresh database in a temporary directory, once /healthz answers; (process, directory)."""
    work = tempfile.mkdtemp(prefix="weatherboard-attack.")
    log = open(f"{work}/server.log", "w")
    server = subprocess.Popen([args.bin, "serve", "--port", str(args.port), "--db", f"{work}/db.sqlite", "--log-level", "warning",
                               *flags], stdout=log, stderr=log)
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=5)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200: return server, work
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server did not start: see {work}/server.log")

def cpu_seconds(pid):
    """User and system CPU seconds the process has used (/proc/PID/stat, fields 14 and 15)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
