import Foundation
import Glibc
import HTTPTestSupport

/// A TCP relay on loopback between a browser and the server, whose connections a test can cut
/// at once, as a dropped network cuts them: both ends see their connection reset. (Chromium's
/// own offline emulation fails new requests but leaves an open stream's socket be.)
final class TCPRelay: @unchecked Sendable {
    let port: Int
    private var target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var open: [Int32] = []
    private var stopped = false

    init(to target: Int) throws {
        self.target = target
        (listener, port) = try loopbackListener()
        let thread = Thread { [weak self] in self?.accepting() }
        thread.start()
    }

    deinit {
        stop()
    }

    /// New connections go to `port` from now on (a site restarted elsewhere, at the same address).
    func retarget(to port: Int) {
        lock.withLock { target = port }
    }

    /// Resets every relayed connection (new ones are relayed as before). Under the lock, as the
    /// closing of finished connections is: no descriptor is reset after its number is reused.
    func cutAll() {
        lock.withLock {
            for fd in open {
                // SO_LINGER 0: closing sends a reset, as a broken path ends in one.
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                shutdown(fd, Int32(SHUT_RDWR))
            }
        }
    }

    /// Closes a finished connection's two ends.
    private func finished(_ fds: [Int32]) {
        lock.withLock {
            open.removeAll { fds.contains($0) }
            for fd in fds { close(fd) }
        }
    }

    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        cutAll()
    }

    private func accepting() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let chosen = lock.withLock { target }
            address.sin_port = in_port_t(UInt16(chosen).bigEndian)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                close(client)
                close(server)
                continue
            }
            // Retargeted while connecting: this one went to the old target, which `cutAll` may
            // already have passed over; it is closed, as a cut would have.
            let current = lock.withLock { () -> Bool in
                guard chosen == target else { return false }
                open += [client, server]
                return true
            }
            guard current else {
                close(client)
                close(server)
                continue
            }
            let pair = Pair { [weak self] in
                guard let self else { close(client); close(server); return }
                self.finished([client, server])
            }
            Thread { Self.pump(from: client, to: server); pair.done() }.start()
            Thread { Self.pump(from: server, to: client); pair.done() }.start()
        }
    }

    /// One relayed connection: `whenDone` once both directions are.
    private final class Pair: @unchecked Sendable {
        private let lock = NSLock()
        private var running = 2
        private let whenDone: () -> Void
        init(whenDone: @escaping () -> Void) { self.whenDone = whenDone }
        func done() {
            let last = lock.withLock { () -> Bool in
                running -= 1
                return running == 0
            }
            if last { whenDone() }
        }
    }

    /// Copies bytes one way until either side ends, then ends both.
    private static func pump(from source: Int32, to sink: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(sink, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(sink, Int32(SHUT_RDWR))
    }
}
