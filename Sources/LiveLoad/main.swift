// LiveLoad: opens many event streams, makes one post through the forms, and reports how long the
// post's event took to reach every stream (from the POST's answer to the last byte of the event
// on each socket). Used by scripts/bench-live.sh; one thread, epoll, no framework.
//
//   LiveLoad --port 8080 --streams 10000 --path /city/seoul/live
//            [--post-port 8080 --post-path /city/seoul/posts --cookie 'session=…' --body 'text']
//            [--per-address 50] [--hold SECONDS]
//            [--stream-cookie C --storm SECONDS --post-path /posts/ID/replies --server-pid PID --fetch replies]
//
// Streams connect from 127.0.0.2, 127.0.0.3, … (`--per-address` each: the server caps streams
// per client). Prints one line per phase; with --hold, keeps the streams open that long after
// they are all up (for measuring pages beside idle streams) and posts nothing.
import Foundation
import CSystem
#if canImport(Glibc)
import Glibc
#endif

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func now() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// A line on standard output at once (the script waits for "open").
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

/// A numeric argument, or the default; anything else ends the run with a message.
func number<T: FixedWidthInteger>(_ name: String, _ fallback: T) -> T {
    guard let text = argument(name) else { return fallback }
    guard let value = T(text), value > 0 else { fail("\(name) wants a positive number, not \(text)") }
    return value
}

let port: UInt16 = number("--port", 8080)
let count: Int = number("--streams", 1000)
let path = argument("--path") ?? "/city/seoul/live"
let perAddress: Int = number("--per-address", 50)
let hold = argument("--hold").flatMap(Double.init)

func address(_ ip: String, _ port: UInt16) -> sockaddr_in {
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = port.bigEndian
    inet_pton(AF_INET, ip, &a.sin_addr)
    return a
}

func connectSocket(from source: String?, blocking: Bool) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { fail("socket: errno \(errno) (raise ulimit -n)") }
    if let source {
        var local = address(source, 0)
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
    var remote = address("127.0.0.1", port)
    let r = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard r == 0 else { fail("connect: errno \(errno)") }
    if !blocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    return fd
}

func sendAll(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
        let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n < 0 && errno == EAGAIN { usleep(100); continue }
        guard n > 0 else { fail("send: errno \(errno)") }
        sent += n
    }
}

// 1. Open the streams.
let epoll = epoll_create1(0)
var buffers: [Int32: [UInt8]] = [:]
var opened = Set<Int32>()
var arrived: [Int32: UInt64] = [:]
// The pages' own cookie (`--stream-cookie`): signed-in pages, as the storm has them.
let streamCookie = argument("--stream-cookie")
let request = "GET \(path) HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n"
    + (streamCookie.map { "Cookie: \($0)\r\n" } ?? "") + "\r\n"
let started = now()
for i in 0..<count {
    let n = i / perAddress + 2
    let source = "127.0.\(n / 250).\(n % 250 + 1)"
    let fd = connectSocket(from: source, blocking: false)
    sendAll(fd, request)
    var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: fd))
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
    buffers[fd] = []
}
var events = [epoll_event](repeating: epoll_event(), count: 1024)
var scratch = [UInt8](repeating: 0, count: 65536)
let marker = Array("data:".utf8)

/// Reads what is ready; calls `onData` for a stream whose bytes hold `data:` (an event) and
/// has not been timed yet.
@MainActor func pump(timeout: Int32, onData: (Int32) -> Void) {
    let n = epoll_wait(epoll, &events, Int32(events.count), timeout)
    for i in 0..<max(0, Int(n)) {
        let fd = events[i].data.fd
        while true {
            let got = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got <= 0 {
                if got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
                    close(fd)
                    buffers[fd] = nil
                    opened.remove(fd)
                }
                break
            }
            buffers[fd, default: []].append(contentsOf: scratch[0..<got])
            let text = buffers[fd, default: []]
            if !opened.contains(fd), text.count >= 4, String(decoding: text, as: UTF8.self).contains(": open") {
                opened.insert(fd)
                if !String(decoding: text, as: UTF8.self).contains(" 200 ") { fail("a stream was refused: \(String(decoding: text.prefix(80), as: UTF8.self))") }
                buffers[fd] = []
            } else if opened.contains(fd), arrived[fd] == nil, text.count >= marker.count,
                      (0...(text.count - marker.count)).contains(where: { text[$0..<($0 + marker.count)].elementsEqual(marker) }) {
                onData(fd)
            }
        }
    }
}

while opened.count < count {
    pump(timeout: 1000) { _ in }
    if now() - started > 120_000_000_000 { fail("only \(opened.count) of \(count) streams opened in 120 s") }
}
say("open \(opened.count) streams in \(Double(now() - started) / 1e9) s")

if let hold {
    let until = now() + UInt64(hold * 1e9)
    while now() < until { pump(timeout: 200) { _ in } }
    say("held \(opened.count) streams for \(hold) s")
    exit(0)
}

if let text = argument("--storm") {
    guard let storm = Double(text), storm.isFinite, storm >= 1, storm <= 86_400 else { fail("--storm wants seconds, 1 to 86400, not \(text)") }
    runStorm(seconds: storm)
    exit(0)
}

// 2. One post through the form, on its own connection.
guard let cookie = argument("--cookie") else { fail("--cookie is needed to post") }
let postPort: UInt16 = number("--post-port", port)
let postPath = argument("--post-path") ?? "/city/seoul/posts"
let text = argument("--body") ?? "Live bench \(now())"
let form = "body=" + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "x")
let poster: Int32 = {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var remote = address("127.0.0.1", postPort)
    let r = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard r == 0 else { fail("connect to post: errno \(errno)") }
    return fd
}()
sendAll(poster, "POST \(postPath) HTTP/1.1\r\nHost: bench\r\nCookie: \(cookie)\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\nConnection: close\r\n\r\n\(form)")
var answer: [UInt8] = []
var answeredAt: UInt64 = 0
// The event may reach some streams before the POST's answer reaches us: keep reading both.
var posterEvent = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: poster))
_ = fcntl(poster, F_SETFL, fcntl(poster, F_GETFL) | O_NONBLOCK)
epoll_ctl(epoll, EPOLL_CTL_ADD, poster, &posterEvent)
let deadline = now() + 30_000_000_000
while (arrived.count < opened.count || answeredAt == 0) && now() < deadline {
    let n = epoll_wait(epoll, &events, Int32(events.count), 100)
    for i in 0..<max(0, Int(n)) where events[i].data.fd == poster {
        let got = scratch.withUnsafeMutableBytes { recv(poster, $0.baseAddress, $0.count, 0) }
        if got > 0 {
            answer.append(contentsOf: scratch[0..<got])
            if answeredAt == 0, String(decoding: answer, as: UTF8.self).contains("\r\n\r\n") { answeredAt = now() }
        } else if got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
            epoll_ctl(epoll, EPOLL_CTL_DEL, poster, nil)
        }
    }
    // The streams' sockets: pump re-polls, so hand it what this wait returned.
    pump(timeout: 0) { fd in arrived[fd] = now() }
}
let status = String(decoding: answer.prefix(12), as: UTF8.self)
guard status.contains("303") else { fail("the post was not accepted: \(String(decoding: answer.prefix(200), as: UTF8.self))") }
let latencies = arrived.values.map { Double(Int64($0) - Int64(answeredAt)) / 1e6 }.sorted()
func percentile(_ p: Double) -> Double { latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
say(String(format: "event reached %d of %d streams; after the POST's answer: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
             arrived.count, opened.count, percentile(0.5), percentile(0.99), latencies.last ?? .nan))


// MARK: - The storm (issue 46's hot board)

/// A reply every second for `seconds` from another member (`--cookie`, to
/// `--post-path`, a post's replies), while every open page does what live.js does with a reply
/// event: after 0.3–1.5 s, fetch the reply as a bystander sees it (`/shared/cities/{city}/replies/{id}`
/// plus `--fetch-query`, with the page's cookie), here over `--fetchers` keep-alive connections.
/// Reports how many of the pages fetched every reply, the time from each reply's acknowledgement
/// to its fetch on each page (p50, p99, max), and, with `--server-pid`, the server's CPU.
@MainActor func runStorm(seconds: Double) {
    guard let cookie = argument("--cookie"), let replyPath = argument("--post-path") else {
        fail("--storm needs --cookie and --post-path (the replies of a post)")
    }
    let query = argument("--fetch-query") ?? "?as=member"
    let fetcherCount: Int = number("--fetchers", 128)
    let serverPID = argument("--server-pid")
    func cpuTicks() -> Double? {
        guard let pid = serverPID, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return user + system
    }

    struct Fetch { let reply: Int64; let post: Int64; let city: Int64 }
    // `--fetch replies`: as live.js asked before (the replies after the one before this one).
    let asBefore = argument("--fetch") == "replies"
    struct Fetcher { let fd: Int32; var busy: Fetch?; var buffer: [UInt8] = [] }
    var fetchers: [Int32: Fetcher] = [:]
    var idle: [Int32] = []
    for _ in 0..<fetcherCount {
        let fd = connectSocket(from: nil, blocking: false)
        fetchers[fd] = Fetcher(fd: fd, busy: nil)
        idle.append(fd)
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: fd))
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
    }
    // Fetches due, by 10 ms slot (a page fetches 0.3–1.5 s after its event: 120 slots ahead).
    var wheel: [UInt64: [Fetch]] = [:]
    var nextSlot = now() / 10_000_000
    var waitingForAConnection: [Fetch] = [], waitingFrom = 0
    var acknowledged: [Int64: UInt64] = [:]
    var latencies: [Double] = []
    var heard = 0, failed = 0, postsRefused = 0
    var generator = SystemRandomNumberGenerator()
    let streamFDs = opened

    func schedule(_ fetch: Fetch) {
        let at = now() + UInt64(Double.random(in: 0.3...1.5, using: &generator) * 1e9)
        wheel[max(at / 10_000_000, nextSlot), default: []].append(fetch)
    }
    func start(_ fetch: Fetch, on fd: Int32) {
        fetchers[fd]!.busy = fetch
        fetchers[fd]!.buffer = []
        let target = asBefore ? "/posts/\(fetch.post)/replies?after=\(fetch.reply - 1)" : "/shared/cities/\(fetch.city)/replies/\(fetch.reply)\(query)"
        sendAll(fd, "GET \(target) HTTP/1.1\r\nHost: bench\r\n"
                + (streamCookie.map { "Cookie: \($0)\r\n" } ?? "")
                + "Accept: text/html\r\nAccept-Encoding: gzip, deflate, br\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: cors\r\n\r\n")
    }
    /// A whole response in `bytes`: its status and length, or nil while it is incomplete.
    func response(_ bytes: [UInt8]) -> (status: Int, length: Int)? {
        guard bytes.count >= 12 else { return nil }
        var end = -1
        for i in 0..<(bytes.count - 3) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { end = i; break }
        guard end >= 0 else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let status = Int(head.dropFirst(9).prefix(3)) ?? 0
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        let total = end + 4 + length
        return bytes.count >= total ? (status, total) : nil
    }
    /// Reply events in a stream's bytes (`"type":"reply","id":R,...,"city":C`), consumed.
    func replyEvents(_ fd: Int32) -> [Fetch] {
        guard let bytes = buffers[fd], let last = bytes.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        let text = String(decoding: bytes[...last], as: UTF8.self)
        buffers[fd] = Array(bytes[(last + 1)...])
        var found: [Fetch] = []
        for line in text.split(separator: "\n") where line.hasPrefix("data:") && line.contains("\"type\":\"reply\"") {
            func field(_ name: String) -> Int64? {
                guard let range = line.range(of: "\"\(name)\":") else { return nil }
                return Int64(line[range.upperBound...].prefix { $0.isNumber })
            }
            if let id = field("id"), let post = field("post"), let city = field("city") { found.append(Fetch(reply: id, post: post, city: city)) }
        }
        return found
    }

    let startedAt = now(), ticksBefore = cpuTicks()
    var nextPost = startedAt, posted = 0
    let total = Int(seconds)
    while true {
        let current = now()
        if posted < total && current >= nextPost {
            // The reply, on a connection of its own; its acknowledgement is the answer's arrival.
            let fd = connectSocket(from: nil, blocking: true)
            let form = "body=" + "Storm reply \(posted) at \(current)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            sendAll(fd, "POST \(replyPath) HTTP/1.1\r\nHost: bench\r\nCookie: \(cookie)\r\nSec-Fetch-Site: same-origin\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\nConnection: close\r\n\r\n\(form)")
            var answer: [UInt8] = []
            while true {
                let got = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if got <= 0 { break }
                answer.append(contentsOf: scratch[0..<got])
                if String(decoding: answer, as: UTF8.self).contains("\r\n\r\n") { break }
            }
            let acknowledgedAt = now()
            close(fd)
            let head = String(decoding: answer, as: UTF8.self)
            if head.hasPrefix("HTTP/1.1 303"), let mark = head.range(of: "#post-"), let id = Int64(head[mark.upperBound...].prefix { $0.isNumber }) {
                acknowledged[id] = acknowledgedAt
            } else {
                postsRefused += 1
            }
            posted += 1
            nextPost += 1_000_000_000
        }
        while nextSlot <= current / 10_000_000 {
            for fetch in wheel.removeValue(forKey: nextSlot) ?? [] {
                if let fd = idle.popLast() { start(fetch, on: fd) } else { waitingForAConnection.append(fetch) }
            }
            nextSlot += 1
        }
        let n = epoll_wait(epoll, &events, Int32(events.count), 5)
        for i in 0..<max(0, Int(n)) {
            let fd = events[i].data.fd
            if fetchers[fd] != nil {
                while true {
                    let got = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if got <= 0 { if got == 0 { fail("the server closed a fetch connection") }; break }
                    fetchers[fd]!.buffer.append(contentsOf: scratch[0..<got])
                }
                if let fetch = fetchers[fd]!.busy, let (status, _) = response(fetchers[fd]!.buffer) {
                    if status == 200, let at = acknowledged[fetch.reply] {
                        latencies.append(Double(Int64(now()) - Int64(at)) / 1e6)
                    } else {
                        failed += 1
                    }
                    fetchers[fd]!.busy = nil
                    if waitingFrom < waitingForAConnection.count {
                        start(waitingForAConnection[waitingFrom], on: fd)
                        waitingFrom += 1
                        if waitingFrom == waitingForAConnection.count { waitingForAConnection = []; waitingFrom = 0 }
                    } else {
                        idle.append(fd)
                    }
                }
            } else if streamFDs.contains(fd) {
                while true {
                    let got = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if got <= 0 { break }
                    buffers[fd, default: []].append(contentsOf: scratch[0..<got])
                }
                for fetch in replyEvents(fd) {
                    heard += 1
                    schedule(fetch)
                }
            }
        }
        let quiet = wheel.isEmpty && waitingFrom >= waitingForAConnection.count && idle.count == fetcherCount
        if posted >= total && (quiet && current > nextPost + 2_000_000_000 || current > nextPost + 30_000_000_000) { break }
    }
    let wall = Double(now() - startedAt) / 1e9
    latencies.sort()
    func percentile(_ p: Double) -> Double { latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
    say("storm: \(posted) replies in \(Int(seconds)) s (\(postsRefused) refused), \(streamFDs.count) pages: \(heard) events, "
        + "\(latencies.count) fetches shown, \(failed) failed; expected \((posted - postsRefused) * streamFDs.count)")
    say(String(format: "from each reply's acknowledgement to its fetch on a page: p50 %.0f ms, p99 %.0f ms, max %.0f ms",
               percentile(0.5), percentile(0.99), latencies.last ?? .nan))
    if let before = ticksBefore, let after = cpuTicks() {
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        say(String(format: "server CPU over the storm: %.1f %% of one core (%.1f s in %.1f s)", 100 * (after - before) / hz / wall, (after - before) / hz, wall))
    }
}
