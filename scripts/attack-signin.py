#!/usr/bin/env python3
"""Sign-in under a spread guessing attack (issue 39 #2), against a release build on loopback.

    swift build -c release --product weatherboard
    scripts/attack-signin.py [--bin .build/release/weatherboard] [--addresses 120] [--accounts 40]

Starts the server on a fresh SQLite database, makes the accounts and a returning member who
signed in once from their browser, then guesses passwords from `--addresses` loopback addresses
(127.0.1.x, each within every per-address limit's spirit: it simply keeps asking) spread over the
accounts and the member's, while the member signs in 20 times from their browser, 12.5 s apart
(their address's own limit is 6 a minute, the first sign-in included). Prints the member's statuses and times, what the
guesses got, and the server's CPU during the attack (from /proc). `--stranger` signs the member
in from a fresh browser each time instead, to compare. A measurement: nothing here asserts a time.
"""
import http.client, threading, time, urllib.parse
from loopback import arguments, cpu_seconds, start

def request(port, method, path, body=None, cookies=None, source="127.0.0.1"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    headers = {"Sec-Fetch-Site": "same-origin", "Connection": "close"}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        body = urllib.parse.urlencode(body)
    if cookies:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    set_cookies = response.headers.get_all("Set-Cookie") or []
    conn.close()
    return response.status, set_cookies

def keep(cookies, set_cookies):
    for value in set_cookies:
        name, _, rest = value.partition("=")
        cookies[name] = rest.split(";")[0]

def main():
    args = arguments(8099, addresses=(int, 120), accounts=(int, 40), sign_ins=(int, 20), spacing=(float, 12.5), stranger=(bool, False))
    server, _ = start(args, "--weather", "demo")
    try:
        password = "correct horse battery"
        names = ["owner"] + [f"member{n}" for n in range(1, args.accounts + 1)]
        for index, name in enumerate(names):  # ten sign-ups an hour an address: a few addresses
            status, _ = request(args.port, "POST", "/signup", {"username": name, "display_name": name, "password": password},
                                source=f"127.0.2.{index // 9 + 1}")
            assert status == 303, (name, status)
        browser = {}
        status, set_cookies = request(args.port, "POST", "/login", {"username": "owner", "password": password}, source="127.0.3.1")
        assert status == 303, status
        keep(browser, set_cookies)
        print(f"accounts: {len(names)}; the member's browser known: {'device' in browser}")

        stop = threading.Event()
        tally, lock = {}, threading.Lock()
        def guesser(number):
            source = f"127.0.1.{number + 1}"
            round = 0
            while not stop.is_set():
                account = names[(number + round) % len(names)]
                try:
                    status, _ = request(args.port, "POST", "/login", {"username": account, "password": f"guess {round}"}, source=source)
                except OSError:
                    status = "error"
                with lock: tally[status] = tally.get(status, 0) + 1
                round += 1
        threads = [threading.Thread(target=guesser, args=(n,), daemon=True) for n in range(args.addresses)]
        for thread in threads: thread.start()
        time.sleep(10)  # the attack at full strength first (and the first sign-in past its minute)
        cpu0, wall0 = cpu_seconds(server.pid), time.monotonic()
        results = []
        for attempt in range(args.sign_ins):
            cookies = {} if args.stranger else browser
            started = time.monotonic()
            status, set_cookies = request(args.port, "POST", "/login", {"username": "owner", "password": password},
                                          cookies=cookies, source="127.0.3.1")
            results.append((status, time.monotonic() - started))
            if not args.stranger: keep(browser, set_cookies)
            if attempt + 1 < args.sign_ins: time.sleep(args.spacing)
        cpu = (cpu_seconds(server.pid) - cpu0) / (time.monotonic() - wall0)
        stop.set()
        for thread in threads: thread.join()
        ok = sum(1 for status, _ in results if status == 303)
        slowest = max(seconds for _, seconds in results)
        print(f"member's sign-ins ({'fresh browser' if args.stranger else 'known browser'}): {ok}/{len(results)} succeeded, "
              f"slowest {slowest * 1000:.0f} ms; statuses {[status for status, _ in results]}")
        print(f"guesses: {dict(sorted(tally.items(), key=str))} from {args.addresses} addresses over {len(names)} accounts")
        print(f"server CPU during the member's sign-ins: {cpu * 100:.0f} % of one core")
    finally:
        server.terminate()
        server.wait()

if __name__ == "__main__":
    main()
