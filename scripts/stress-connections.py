#!/usr/bin/env python3
"""Holds many idle keep-alive connections, and many slow-header connections, against a running
server, and measures GET /healthz latency meanwhile and the server's RSS.

    scripts/stress-connections.py --port 8080 --pid PID [--idle 10000] [--slow 200]

Raise the file-descriptor limit first (ulimit -n 20000); the server needs as many as well.
Writes a Markdown summary to standard output. A measurement, not a test: no pass/fail on time.
"""
import argparse, resource, socket, statistics, time

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                yield line.split()[0].rstrip(":"), int(line.split()[1])

def healthz_ms(port, samples=50):
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk: break
            data += chunk
        s.close()
        assert data.startswith(b"HTTP/1.1 200"), data[:40]
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1], times[-1]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--slow", type=int, default=200)
    ap.add_argument("--slow-seconds", type=int, default=15)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"- server pid {a.pid}, port {a.port}; client fd limit {hard}")
    print(f"- before: " + ", ".join(f"{k} {v / 1024:.1f} MiB" for k, v in rss_kib(a.pid)))
    med, p99, worst = healthz_ms(a.port)
    print(f"- GET /healthz with no load: median {med:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms")

    idle = []
    t0 = time.time()
    for i in range(a.idle):
        s = socket.create_connection(("127.0.0.1", a.port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        idle.append(s)
    answered = 0
    for s in idle:
        if s.recv(4096).startswith(b"HTTP/1.1 200"): answered += 1
    print(f"- opened {len(idle)} keep-alive connections, each answered once ({answered} x 200), in {time.time() - t0:.1f} s; now idle")
    print(f"- with them idle: " + ", ".join(f"{k} {v / 1024:.1f} MiB" for k, v in rss_kib(a.pid)))
    med, p99, worst = healthz_ms(a.port)
    print(f"- GET /healthz on a new connection meanwhile: median {med:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms")
    still_open = sum(1 for s in idle if s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") and s.recv(4096).startswith(b"HTTP/1.1 200"))
    print(f"- the idle connections still serve: {still_open}/{len(idle)} answered a second request")
    for s in idle: s.close()

    slow = []
    for i in range(a.slow):
        s = socket.create_connection(("127.0.0.1", a.port))
        s.setblocking(False)
        slow.append(s)
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"y" * 100
    sent = 0
    latencies = []
    closed_at = {}
    t0 = time.time()
    while time.time() - t0 < a.slow_seconds:
        for i, s in enumerate(slow):
            if i in closed_at: continue
            try:
                s.send(request[sent:sent + 1])
            except OSError:
                closed_at[i] = time.time() - t0
                continue
            try:
                data = s.recv(4096)
                if data == b"" or data.startswith(b"HTTP/1.1 408"):
                    closed_at[i] = time.time() - t0
            except BlockingIOError:
                pass
            except OSError:
                closed_at[i] = time.time() - t0
        sent += 1
        latencies.append(healthz_ms(a.port, samples=5)[0])
        time.sleep(max(0, t0 + sent - time.time()))
    print(f"- {a.slow} connections sending one header byte a second for {a.slow_seconds} s: "
          f"GET /healthz meanwhile median of medians {statistics.median(latencies):.2f} ms, worst {max(latencies):.2f} ms")
    if closed_at:
        print(f"- slow connections answered 408 / closed by the server: {len(closed_at)}/{a.slow}, "
              f"after {min(closed_at.values()):.1f}–{max(closed_at.values()):.1f} s")
    else:
        print(f"- slow connections closed by the server: 0/{a.slow}")
    print(f"- after: " + ", ".join(f"{k} {v / 1024:.1f} MiB" for k, v in rss_kib(a.pid)))

main()
