import Foundation
import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// A socket error with the failing call and errno's message.
public struct SocketError: Error, CustomStringConvertible {
    public let call: String
    public let code: Int32
    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

enum Socket {
    /// Creates a non-blocking listening socket bound to host:port with SO_REUSEPORT, so that every
    /// event loop can own one and the kernel spreads connections between them. `exclusive`: bound
    /// without SO_REUSEPORT and not listening, only to find out that no other process holds the
    /// port (SO_REUSEPORT would let a second server share it silently, and take half its visitors).
    static func listen(host: String, port: Int, backlog: Int32, exclusive: Bool = false) throws -> (fd: Int32, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0, let first = info else {
            throw SocketError(call: "getaddrinfo(\(host)): \(String(cString: gai_strerror(status)))", code: 0)
        }
        defer { freeaddrinfo(info) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if !exclusive { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        if first.pointee.ai_family == AF_INET6 {
            // "::" serves IPv4 too; a specific IPv6 address only itself.
            var zero: Int32 = 0
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: code == EADDRINUSE ? "bind(\(host):\(port)): another process listens there; bind" : "bind(\(host):\(port))", code: code)
        }
        if exclusive { return (fd, localPort(fd)) }
        guard Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "listen", code: code)
        }
        return (fd, localPort(fd))
    }

    static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return port(of: storage)
    }

    static func port(of storage: sockaddr_storage) -> Int {
        var copy = storage
        if Int32(storage.ss_family) == AF_INET {
            return withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        }
    }

    /// The numeric address of a peer (`127.0.0.1`, `::1`; IPv4-mapped IPv6 shown as IPv4).
    static func address(of storage: sockaddr_storage) -> String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if Int32(storage.ss_family) == AF_INET {
            withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    var addr = $0.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
                }
            }
        } else {
            withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    var addr = $0.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &addr, &buffer, socklen_t(buffer.count))
                }
            }
        }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.hasPrefix("::ffff:") && text.contains(".") ? String(text.dropFirst(7)) : text
    }

    /// The number of CPUs this process may run on (its affinity mask, not the machine's count),
    /// so a server pinned with `taskset -c 0` starts one event loop.
    static func availableCPUs() -> Int {
        let count = Int(csystem_available_cpus())
        return count > 0 ? count : ProcessInfo.processInfo.activeProcessorCount
    }
}

/// Milliseconds on the monotonic clock.
@inline(__always)
func monotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
}

/// The client an address stands for, as per-client limits count it. An IPv4 address is one
/// client; an IPv6 address is counted by its /64: one host is routinely given a whole /64 (SLAAC,
/// privacy addresses), so keying on the full address would let it be 2^64 clients.
public enum ClientKey {
    /// `2001:db8:1:2::/64` for any address in that network; an IPv4 address (or an IPv4-mapped
    /// IPv6 one) as its dotted form; anything unparsable as it is.
    public static func of(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        return withUnsafeMutableBytes(of: &bytes) { raw -> String in
            if raw.prefix(10).allSatisfy({ $0 == 0 }) && raw[10] == 0xFF && raw[11] == 0xFF {
                return raw[12...].map(String.init).joined(separator: ".")
            }
            for i in 8..<16 { raw[i] = 0 }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            _ = inet_ntop(AF_INET6, raw.baseAddress, &buffer, socklen_t(buffer.count))
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
        }
    }
}

/// The process's standard output, for servers whose log goes to a file or a supervisor's pipe.
public enum StandardOutput {
    /// Every line written as it ends (`print` and log lines reach the log at once, not at exit).
    public static func flushEveryLine() { csystem_line_buffer_stdout() }
}


/// The process's heap (glibc).
public enum ProcessHeap {
    /// Caps glibc's malloc arenas at `count` unless `MALLOC_ARENA_MAX` says otherwise. glibc
    /// gives a threaded process up to eight arenas per CPU; a server's threads scatter their
    /// allocations over them and freed memory stays in each: after crawling 10,000 city pages,
    /// 153 MiB resident with the default, 143 MiB with two (`scripts/crawl-rss.sh`).
    public static func limitArenas(to count: Int) {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = csystem_limit_malloc_arenas(Int32(count))
    }
}
