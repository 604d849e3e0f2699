// LiveLoad: opens many event streams, makes one post through the forms, and reports how long the
// post's event took to reach every stream (from the POST's answer to the last byte of the event
// on each socket). Used by scripts/bench-live.sh; one thread, epoll, no framework.
//
//   LiveLoad --port 8080 --streams 10000 --path /city/seoul/live
//            [--post-port 8080 --post-path /city/seoul/posts --cookie 'session=…; csrf=…' --token T --body 'text']
//            [--per-address 50] [--hold SECONDS]
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
let request = "GET \(path) HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n"
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

// 2. One post through the form, on its own connection.
guard let cookie = argument("--cookie"), let token = argument("--token") else { fail("--cookie and --token are needed to post") }
let postPort: UInt16 = number("--post-port", port)
let postPath = argument("--post-path") ?? "/city/seoul/posts"
let text = argument("--body") ?? "Live bench \(now())"
let form = "body=" + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "x") + "&csrf_token=" + token
let poster: Int32 = {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var remote = address("127.0.0.1", postPort)
    let r = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard r == 0 else { fail("connect to post: errno \(errno)") }
    return fd
}()
sendAll(poster, "POST \(postPath) HTTP/1.1\r\nHost: bench\r\nCookie: \(cookie)\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\nConnection: close\r\n\r\n\(form)")
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
