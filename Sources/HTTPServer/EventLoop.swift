import Foundation
import Synchronization
import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// One connection's state. Touched only by its event loop's thread; workers see only the request.
final class Connection {
    let fd: Int32
    let remoteAddress: String
    var parser: RequestParser
    var input: [UInt8] = []
    var inputIndex = 0
    /// Bytes waiting to be written, in order: a response's head and its body stay separate
    /// (written together with `sendmsg`, the body's stretches as they are), so a page is never
    /// copied into one buffer. Those before `outputFirst` are written (dropped all at once when
    /// the rest is); of that one, the stretches before `outputSpan`, and `outputIndex` bytes of it.
    var output: [ResponseBody] = []
    var outputFirst = 0
    var outputSpan = 0
    var outputIndex = 0
    /// Bytes in `output` not yet written.
    var outputBytes = 0
    /// What this connection's buffers held when last counted into the server's budget.
    var accounted = 0
    /// When its output last moved: queued, or taken by the client (monotonic ms).
    var lastOutputProgress: UInt64 = 0
    /// The streamed response being written; `inFlight` stays set until it ends, so nothing
    /// pipelined behind it is parsed meanwhile.
    var stream: ResponseStream?
    /// Whether the stream's pieces are framed as chunks (HTTP/1.1) or sent bare (HTTP/1.0).
    var streamChunked = false
    /// Tells this connection apart from a later one on the same descriptor, for a response that
    /// comes back after its connection closed.
    let serial: UInt64
    /// A request is with a worker; nothing more is parsed until its response is queued.
    var inFlight = false
    /// The peer has sent FIN.
    var readEOF = false
    /// Close once `output` is written (error, `Connection: close`, shutdown).
    var closeWhenWritten = false
    /// Output is written and the write side shut down; unread input is drained until EOF or deadline.
    var lingering = false
    var closed = false
    var interest: UInt32 = 0
    /// When the current phase ends (monotonic ms); 0 for none.
    var deadline: UInt64 = 0
    var phase = Phase.idle

    enum Phase { case idle, head, body, handling, writing, lingering }

    init(fd: Int32, serial: UInt64, remoteAddress: String, limits: ParserLimits) {
        self.fd = fd
        self.serial = serial
        self.remoteAddress = remoteAddress
        self.parser = RequestParser(limits: limits)
    }

    var hasPendingOutput: Bool { outputFirst < output.count }
    /// Bytes held for this connection now: its input buffer, a body being decoded, unsent output.
    var held: Int { closed ? 0 : input.count + parser.bufferedBodyBytes + outputBytes }
    var unparsedInput: Int { input.count - inputIndex }
}

/// An epoll loop owning one listening socket and the connections accepted on it.
final class EventLoop: @unchecked Sendable {
    // Safe to share: everything but the mailboxes and `requestedShutdown` is touched only by the
    // loop's own thread; other threads call only `complete`, `streamOperation` and `beginShutdown`.
    let index: Int
    private unowned let server: Server
    private let epollFD: Int32
    private let wakeFD: Int32
    private var listenerFD: Int32
    private var connections: [Connection?] = []
    private var liveConnections = 0
    private var spareFD: Int32
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    private var jobs: [ThreadPool.Job] = []
    /// Jobs for the quick lane's workers (`Lane`).
    private var quickJobs: [ThreadPool.Job] = []
    private var shutdownDeadline: UInt64 = 0
    private var nextSweep: UInt64 = 0
    private var acceptedConnections: UInt64 = 0
    private let date = DateCache()

    /// Responses handed back by workers, and the shutdown request.
    /// A response a worker hands back: which connection it answers (by descriptor and serial, so
    /// workers never hold the loop's `Connection`), its serialised head and its body.
    struct Completion: Sendable {
        let fd: Int32
        let serial: UInt64
        let head: [UInt8]
        let body: ResponseBody
        let close: Bool
        /// For a streamed response: what writes its body, and whom it counts against.
        var stream: (@Sendable (ResponseStream) -> Void)? = nil
        var streamClient = ""
        var chunked = false
    }

    private let completions = Mailbox<Completion>()
    private let streamOperations = Mailbox<ResponseStream.Operation>()
    private let requestedShutdown = Atomic<UInt64>(0)

    private let readHighWater: Int
    private let headerTimeout: UInt64
    private let bodyTimeout: UInt64
    private let idleTimeout: UInt64
    private let writeTimeout: UInt64
    private static let lingerTimeout: UInt64 = 2000

    init(server: Server, listener: Int32, index: Int) throws {
        self.server = server
        self.index = index
        self.listenerFD = listener
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError(call: "epoll_create1", code: errno) }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw SocketError(call: "eventfd", code: errno) }
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let config = server.configuration
        readHighWater = config.limits.maxBodyBytes + config.limits.maxHeaderBytes + config.limits.maxRequestTargetLength + 64 * 1024
        headerTimeout = config.headerTimeout.milliseconds
        bodyTimeout = config.bodyTimeout.milliseconds
        idleTimeout = config.idleTimeout.milliseconds
        writeTimeout = config.writeTimeout.milliseconds
        register(listenerFD, events: EPOLLIN.rawValue)
        register(wakeFD, events: EPOLLIN.rawValue)
    }

    // MARK: - Cross-thread entry points

    /// Called by a worker with a serialised response.
    func complete(_ completion: Completion) {
        if completions.push(completion) { signalWake() }
    }

    /// Called by a stream's writer, from any thread.
    func streamOperation(_ operation: ResponseStream.Operation) {
        if streamOperations.push(operation) { signalWake() }
    }

    func beginShutdown(deadline: UInt64) {
        requestedShutdown.store(deadline, ordering: .releasing)
        signalWake()
    }

    private func signalWake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: - The loop

    func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while true {
            let count = epoll_wait(epollFD, &events, Int32(events.count), 250)
            if count < 0 && errno != EINTR { break }
            for i in 0..<max(0, Int(count)) {
                let event = events[i]
                let fd = event.data.fd
                if fd == listenerFD { acceptConnections() }
                else if fd == wakeFD { drainMailbox() }
                else if let connection = connection(for: fd) { handle(connection, events: event.events) }
            }
            if !jobs.isEmpty {
                // Jobs a full (or stopping) pool did not take wait here for the next turn, rather
                // than being dropped with their connections.
                let queued = server.pool.submit(jobs)
                jobs.removeFirst(queued)
            }
            if !quickJobs.isEmpty, let quickPool = server.quickPool {
                let queued = quickPool.submit(quickJobs)
                quickJobs.removeFirst(queued)
            }
            let now = monotonicMilliseconds()
            if now >= nextSweep {
                sweep(now: now)
                nextSweep = now + 250
            }
            if shutdownDeadline != 0 && (liveConnections == 0 || now >= shutdownDeadline) { break }
        }
        for case let connection? in connections { close(connection) }
        if listenerFD >= 0 { Glibc.close(listenerFD) }
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
        if spareFD >= 0 { Glibc.close(spareFD) }
    }

    private func connection(for fd: Int32) -> Connection? {
        Int(fd) < connections.count ? connections[Int(fd)] : nil
    }

    // MARK: - Accepting

    private func acceptConnections() {
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    csystem_accept4(listenerFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE:
                    // Out of descriptors: release the spare one to accept and close the waiting
                    // connection, so the listener does not stay readable forever.
                    server.logger.warning("accept: out of file descriptors; refusing a connection")
                    if spareFD >= 0 {
                        Glibc.close(spareFD)
                        let victim = csystem_accept4(listenerFD, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
                        if victim >= 0 { Glibc.close(victim) }
                        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    }
                    return
                default:
                    server.logger.warning("accept: \(String(cString: strerror(errno)))")
                    return
                }
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let total = server.connectionCount.add(1, ordering: .relaxed).newValue
            if total > server.configuration.maxConnections {
                refuse(fd)
                continue
            }
            let address = Socket.address(of: storage)
            guard server.admit(address) else {
                refuse(fd)
                continue
            }
            acceptedConnections += 1
            let connection = Connection(fd: fd, serial: acceptedConnections, remoteAddress: address,
                                        limits: server.configuration.limits)
            if Int(fd) >= connections.count {
                connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1024 - connections.count))
            }
            connections[Int(fd)] = connection
            liveConnections += 1
            // A new connection has the header timeout to send its first request, not the idle
            // timeout of a connection that has already been answered.
            connection.deadline = monotonicMilliseconds() + headerTimeout
            connection.interest = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
            register(fd, events: connection.interest)
        }
    }

    /// Over the connection limit: a 503 if the socket takes it at once, then close.
    private func refuse(_ fd: Int32) {
        let bytes = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        _ = bytes.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
        server.connectionCount.subtract(1, ordering: .relaxed)
    }

    // MARK: - Connections

    private func handle(_ connection: Connection, events: UInt32) {
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 && events & EPOLLIN.rawValue == 0 {
            close(connection)
            return
        }
        if events & EPOLLOUT.rawValue != 0 {
            flush(connection)
            if connection.closed { return }
            if !connection.hasPendingOutput && !connection.inFlight && !connection.closeWhenWritten {
                process(connection)
            }
        }
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue) != 0 && !connection.closed {
            readAvailable(connection)
        }
        if !connection.closed { updateInterest(connection) }
        account(connection)
    }

    // MARK: - The memory budget

    /// Brings the server's count of buffered bytes up to date with this connection's.
    private func account(_ connection: Connection) {
        let held = connection.held
        guard held != connection.accounted else { return }
        server.bufferedBytes.add(held - connection.accounted, ordering: .relaxed)
        connection.accounted = held
    }

    /// A connection may hold this much whatever the budget: every request head and small form fits.
    static let largeHolding = 64 * 1024

    /// Over the budget, a connection that holds much and has just read more is answered 503 and
    /// closed (what it sent is dropped); the others, and everyone holding little, go on.
    private func refuseIfOverBudget(_ connection: Connection) -> Bool {
        account(connection)
        guard connection.accounted > Self.largeHolding && server.overBudget else { return false }
        if connection.stream != nil {
            close(connection) // mid-body: no room for a 503; the stream ends with its connection
            return true
        }
        connection.input = []
        connection.inputIndex = 0
        connection.parser = RequestParser(limits: server.configuration.limits)
        connection.closeWhenWritten = true
        server.refusedForMemory.add(1, ordering: .relaxed)
        enqueue(connection, server.writer.errorBytes(.serviceUnavailable, date: date.current()))
        flush(connection)
        account(connection)
        return true
    }

    /// Over the budget, drops this loop's largest unread answers with their connections until the
    /// budget holds again or only small holders are left (run with the timeouts). An answer its
    /// client is taking is left alone, however large: only one that has not moved for a second.
    private func dropLargestUnreadAnswers(now: UInt64) {
        guard server.overBudget else { return }
        let holders = connections.compactMap { $0 }
            .filter { $0.outputBytes > Self.largeHolding && now >= $0.lastOutputProgress + 1000 }
            .sorted { $0.outputBytes > $1.outputBytes }
        for connection in holders {
            guard server.overBudget else { return }
            server.logger.warning("buffered bytes over budget: closing a connection from \(connection.remoteAddress) holding \(connection.outputBytes) unread bytes")
            close(connection)
        }
    }

    /// How much unparsed input a connection may hold: a whole request while it is being read;
    /// while its answer is being made or is unsent, only a little of the next pipelined request
    /// (a client that sends without reading its answers is not buffered a megabyte at a time).
    private func readLimit(_ connection: Connection) -> Int {
        if connection.inFlight || connection.hasPendingOutput { return Self.pipelinedInputLimit }
        // A body larger than the default limit, allowed for its address (`ParserLimits.bodyLimit`).
        if connection.parser.isReadingBody && connection.parser.bodyLimit > server.configuration.limits.maxBodyBytes {
            return readHighWater - server.configuration.limits.maxBodyBytes + connection.parser.bodyLimit
        }
        return readHighWater
    }
    static let pipelinedInputLimit = 16 * 1024

    private func readAvailable(_ connection: Connection) {
        while !connection.closed && (connection.unparsedInput < readLimit(connection) || connection.lingering) {
            let n = scratch.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                if connection.lingering { continue } // discarded: the answer is already sent
                connection.input.append(contentsOf: scratch[0..<n])
                if refuseIfOverBudget(connection) { return }
                // Parsed as it comes: once a request is with a worker, the read limit drops to
                // what may be pipelined behind it, and the rest stays in the socket.
                process(connection)
                if n < scratch.count { break }
                continue
            }
            if n == 0 {
                connection.readEOF = true
                break
            }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            if errno == EINTR { continue }
            close(connection)
            return
        }
        if connection.closed { return }
        if connection.lingering {
            if connection.readEOF { close(connection) }
            return
        }
        if connection.stream != nil && connection.readEOF {
            close(connection) // a stream's client has gone
            return
        }
        if connection.readEOF { process(connection) }
    }

    /// Parses what the connection has buffered and dispatches at most one request to the workers
    /// (requests the server's immediate responder answers are written at once, and parsing goes on).
    private func process(_ connection: Connection) {
        parsing: while !connection.inFlight && !connection.closeWhenWritten && !connection.closed {
            let event = connection.parser.next(connection.input, &connection.inputIndex)
            switch event {
            case .needMore:
                let now = monotonicMilliseconds()
                if connection.parser.isBetweenRequests && connection.unparsedInput == 0 {
                    if connection.readEOF {
                        connection.closeWhenWritten = true
                    } else if connection.phase != .idle {
                        connection.phase = .idle
                        connection.deadline = now + idleTimeout
                    }
                } else if connection.parser.isReadingBody {
                    if connection.phase != .body {
                        connection.phase = .body
                        connection.deadline = now + bodyTimeout
                    }
                } else if connection.phase != .head {
                    connection.phase = .head
                    connection.deadline = now + headerTimeout
                }
                if connection.readEOF && !connection.closeWhenWritten {
                    connection.closeWhenWritten = true // a request cut short by the peer: nothing to answer
                }
                compact(connection)
                if connection.closeWhenWritten { flush(connection) }
                return
            case .head(let head):
                connection.phase = .body
                connection.deadline = monotonicMilliseconds() + bodyTimeout
                if head.expectsContinue && connection.unparsedInput == 0 {
                    enqueue(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    flush(connection)
                }
            case .request(var request):
                request.remoteAddress = connection.remoteAddress
                if let response = server.handleImmediately(request) {
                    answer(request, with: response, on: connection)
                    // A client that sends without reading gets no more answers until it reads
                    // (the writable event resumes parsing): its input then stops being read.
                    if connection.hasPendingOutput { break parsing }
                    continue
                }
                connection.inFlight = true
                connection.phase = .handling
                connection.deadline = 0
                dispatch(request, on: connection)
            case .error(let status):
                connection.closeWhenWritten = true
                enqueue(connection, server.writer.errorBytes(status, date: date.current()))
                flush(connection)
            }
        }
        compact(connection)
    }

    private func dispatch(_ parsed: Request, on connection: Connection) {
        let server = self.server
        let started = monotonicMilliseconds()
        var arrived = parsed
        arrived.arrival = started
        let request = arrived
        let fd = connection.fd, serial = connection.serial
        @Sendable func job(on lane: Lane) -> ThreadPool.Job {
            { [self] in
                let response = Lane.$current.withValue(lane) { server.handle(request, started: started) }
                if response.movedToMainLane {
                    // Tried on the quick lane, it needs to wait: the main lane runs it again.
                    if server.pool.submit(job(on: .main)) { return }
                    complete(Completion(fd: fd, serial: serial, head: server.writer.errorBytes(.serviceUnavailable, date: WorkerDate.current()),
                                        body: ResponseBody(), close: true))
                    return
                }
                let (head, body, close) = server.serialize(response, for: request, date: WorkerDate.current())
                var completion = Completion(fd: fd, serial: serial, head: head, body: body, close: close)
                if request.method != "HEAD", let start = response.stream {
                    completion.stream = start
                    completion.streamClient = response.streamClient ?? request.remoteAddress
                    completion.chunked = request.version == .http11
                }
                complete(completion)
            }
        }
        let lane = server.lane(of: request)
        if lane == .quick && server.quickPool != nil { quickJobs.append(job(on: .quick)) } else { jobs.append(job(on: .main)) }
    }

    /// A response made on this thread, written as a worker's would be; the caller's loop then
    /// parses the next pipelined request, if any.
    private func answer(_ request: Request, with response: Response, on connection: Connection) {
        let (head, body, close) = server.serialize(response, for: request, date: date.current())
        queueResponse(head, body, close: close, to: connection)
    }

    /// A serialised response onto the connection's output, written as far as the socket takes it.
    private func queueResponse(_ head: [UInt8], _ body: ResponseBody, close: Bool, to connection: Connection) {
        if close || shutdownDeadline != 0 { connection.closeWhenWritten = true }
        connection.lastOutputProgress = monotonicMilliseconds()
        enqueue(connection, head)
        enqueue(connection, body)
        connection.phase = .writing
        flush(connection)
    }

    private func drainMailbox() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)
        let completions = self.completions.takeAll(), operations = streamOperations.takeAll()
        let deadline = requestedShutdown.load(ordering: .acquiring)
        for completion in completions {
            // Its connection may have closed meanwhile (a timeout), its descriptor reused.
            guard let connection = connection(for: completion.fd), connection.serial == completion.serial else { continue }
            if let start = completion.stream {
                openStream(start, completion, on: connection)
                continue
            }
            connection.inFlight = false
            queueResponse(completion.head, completion.body, close: completion.close, to: connection)
            if !connection.closed && !connection.hasPendingOutput { process(connection) }
            if !connection.closed { updateInterest(connection) }
            account(connection)
        }
        for operation in operations { perform(operation) }
        if deadline != 0 && shutdownDeadline == 0 { startShutdown(deadline: deadline) }
    }

    // MARK: - Streams

    /// A streamed response's head is written, the stream counted, and its writer started on a
    /// worker; past a cap (or while shutting down) the client gets 503 instead.
    private func openStream(_ start: @escaping @Sendable (ResponseStream) -> Void, _ completion: Completion,
                            on connection: Connection) {
        guard shutdownDeadline == 0, server.admitStream(for: completion.streamClient) else {
            if shutdownDeadline == 0 { server.refusedStreams.add(1, ordering: .relaxed) }
            connection.inFlight = false
            connection.closeWhenWritten = true
            enqueue(connection, server.writer.errorBytes(.serviceUnavailable, date: date.current()))
            flush(connection)
            if !connection.closed { updateInterest(connection) }
            return
        }
        let stream = ResponseStream(loop: self, fd: connection.fd, serial: connection.serial, client: completion.streamClient)
        connection.stream = stream
        connection.streamChunked = completion.chunked
        queueResponse(completion.head, ResponseBody(), close: completion.close, to: connection)
        if connection.closed { return } // closed while writing the head: the stream has ended
        updateInterest(connection)
        account(connection)
        jobs.append { start(stream) }
    }

    private func perform(_ operation: ResponseStream.Operation) {
        let stream = operation.stream
        guard let connection = connection(for: stream.fd), connection.serial == stream.serial,
              connection.stream === stream else { return }
        switch operation.kind {
        case .write(let bytes):
            guard connection.outputBytes + bytes.count <= server.configuration.maxStreamBufferedBytes else {
                // The client is not keeping up: a live feed is worth nothing late.
                close(connection)
                return
            }
            enqueue(connection, connection.streamChunked ? Self.chunk(bytes) : bytes)
            flush(connection)
        case .finish:
            endStream(connection, finished: true)
        }
        if !connection.closed {
            updateInterest(connection)
            account(connection)
        }
    }

    /// One chunk: its size in hex, the bytes, CRLF (RFC 9112 §7.1).
    private static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        let size = Array(String(bytes.count, radix: 16).utf8)
        var framed: [UInt8] = []
        framed.reserveCapacity(size.count + bytes.count + 4)
        framed.append(contentsOf: size)
        framed.append(contentsOf: [CR, LF])
        framed.append(contentsOf: bytes)
        framed.append(contentsOf: [CR, LF])
        return framed
    }

    /// Ends the connection's stream: its end handlers run; when the writer finished it, the
    /// last chunk goes out (HTTP/1.1, then the next request is served) or the connection closes
    /// once written (HTTP/1.0).
    private func endStream(_ connection: Connection, finished: Bool) {
        guard let stream = connection.stream else { return }
        connection.stream = nil
        server.releaseStream(for: stream.client)
        stream.ended()
        guard finished && !connection.closed else { return }
        if connection.streamChunked {
            enqueue(connection, Array("0\r\n\r\n".utf8))
        } else {
            connection.closeWhenWritten = true
        }
        connection.inFlight = false
        connection.phase = .writing
        flush(connection)
        if !connection.closed && !connection.hasPendingOutput { process(connection) }
    }

    private func enqueue(_ connection: Connection, _ bytes: [UInt8]) {
        enqueue(connection, ResponseBody(bytes))
    }

    private func enqueue(_ connection: Connection, _ bytes: ResponseBody) {
        guard !bytes.isEmpty else { return }
        connection.output.append(bytes)
        connection.outputBytes += bytes.count
    }

    /// Writes what it can; on EAGAIN waits for EPOLLOUT, with the write timeout as back-pressure.
    private func flush(_ connection: Connection) {
        while connection.hasPendingOutput {
            let n = send(connection)
            if n > 0 {
                advance(connection, by: n)
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                if connection.phase != .writing || connection.deadline == 0 {
                    connection.phase = .writing
                    connection.deadline = monotonicMilliseconds() + writeTimeout
                }
                return
            }
            if n < 0 && errno == EINTR { continue }
            close(connection)
            return
        }
        if connection.stream != nil {
            // All written: a stream waits for its writer, with no deadline but the client's.
            connection.phase = .handling
            connection.deadline = 0
        }
        if connection.closeWhenWritten && !connection.inFlight { linger(connection) }
    }

    /// One `sendmsg` of what waits first: a response's head and its body's stretches, up to
    /// `vectorsPerSend` of them. MSG_NOSIGNAL: a closed peer is an error here, not a signal.
    private func send(_ connection: Connection) -> Int {
        let fd = connection.fd, skip = connection.outputIndex
        // The usual small answer, its body in its head's array: that array as it is.
        if connection.outputFirst + 1 == connection.output.count && connection.output[connection.outputFirst].isOneArray {
            return connection.output[connection.outputFirst].withStorage(0) { bytes in
                Glibc.send(fd, bytes.baseAddress! + skip, bytes.count - skip, Int32(MSG_NOSIGNAL))
            }
        }
        // The first two waiting (a head and its body) at most: each of their arrays' addresses
        // is good only inside its `withStorage`, so they are nested, one level an array (a few:
        // a page's own array and the fragments it lends, a kept page's runs between its tokens).
        let bodies = connection.output[connection.outputFirst..<min(connection.output.count, connection.outputFirst + 2)]
        let arrays = bodies.reduce(0) { $0 + $1.storageCount }
        return withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: arrays) { bases in
            func gather(_ body: Int, _ storage: Int, _ filled: Int) -> Int {
                if body == bodies.count { return sendGathered(connection, bodies, bases) }
                let current = bodies[bodies.startIndex + body]
                if storage == current.storageCount { return gather(body + 1, 0, filled) }
                return current.withStorage(storage) { bytes in
                    bases[filled] = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                    return gather(body, storage + 1, filled + 1)
                }
            }
            return gather(0, 0, 0)
        }
    }

    /// The `sendmsg` itself, with each array's address in `bases` (body after body).
    private func sendGathered(_ connection: Connection, _ bodies: ArraySlice<ResponseBody>,
                              _ bases: UnsafeMutableBufferPointer<UnsafeRawPointer>) -> Int {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: Self.vectorsPerSend) { vectors in
            var taken = 0
            var firstBase = 0
            for (number, body) in zip(0..., bodies) {
                var span = number == 0 ? connection.outputSpan : 0
                while span < body.spanCount && taken < Self.vectorsPerSend {
                    let (storage, range) = body.span(span)
                    let skip = number == 0 && span == connection.outputSpan ? connection.outputIndex : 0
                    vectors[taken] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bases[firstBase + storage] + range.lowerBound + skip),
                                           iov_len: range.count - skip)
                    taken += 1
                    span += 1
                }
                firstBase += body.storageCount
            }
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = taken
            return sendmsg(connection.fd, &message, Int32(MSG_NOSIGNAL))
        }
    }

    /// Stretches handed to one `sendmsg` at most: Linux's limit (UIO_MAXIOV). A response is as many
    /// stretches as its body has parts (a page's shared and deflated-ahead pieces, a stream's
    /// queued events): one call sends the largest whole. 16 KB of the loop thread's stack.
    static let vectorsPerSend = 1024

    /// Drops what `send` sent: whole stretches and bodies, then part of the next stretch.
    private func advance(_ connection: Connection, by written: Int) {
        connection.outputBytes -= written
        connection.lastOutputProgress = monotonicMilliseconds()
        var rest = written
        while rest > 0 {
            let body = connection.output[connection.outputFirst]
            let left = body.span(connection.outputSpan).range.count - connection.outputIndex
            if rest < left {
                connection.outputIndex += rest
                return
            }
            rest -= left
            connection.outputIndex = 0
            connection.outputSpan += 1
            if connection.outputSpan == body.spanCount {
                connection.outputSpan = 0
                connection.outputFirst += 1
            }
        }
        if connection.outputFirst == connection.output.count {
            connection.output.removeAll(keepingCapacity: connection.output.count <= 64)
            connection.outputFirst = 0
        }
    }

    /// After the last response: shut down the write side and drain briefly, so that the client
    /// reads the response instead of a reset caused by unread input.
    private func linger(_ connection: Connection) {
        guard !connection.lingering else { return }
        if connection.readEOF || shutdownDeadline != 0 {
            close(connection)
            return
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.lingering = true
        connection.phase = .lingering
        connection.deadline = monotonicMilliseconds() + Self.lingerTimeout
        connection.input = []
        connection.inputIndex = 0
        updateInterest(connection)
    }

    private func compact(_ connection: Connection) {
        if connection.inputIndex == connection.input.count {
            if connection.input.capacity > 256 * 1024 {
                connection.input = []
                releaseFreedMemory()
            } else {
                connection.input.removeAll(keepingCapacity: true)
            }
            connection.inputIndex = 0
        } else if connection.inputIndex > 64 * 1024 {
            connection.input.removeFirst(connection.inputIndex)
            connection.inputIndex = 0
        }
    }

    /// After a large buffer is freed, hands free memory at the top of the heap back to the
    /// system (glibc keeps it otherwise: 2 GB stayed resident after a burst of large bodies); at
    /// most once a second per loop, since trimming walks the heap.
    private func releaseFreedMemory() {
        let now = monotonicMilliseconds()
        guard now >= nextTrim else { return }
        nextTrim = now + 1000
        _ = csystem_malloc_trim(0)
    }
    private var nextTrim: UInt64 = 0

    private func updateInterest(_ connection: Connection) {
        var wanted: UInt32 = 0
        let reading = connection.lingering
            || (!connection.readEOF && !connection.closeWhenWritten && connection.unparsedInput < readLimit(connection))
        if reading { wanted |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if connection.hasPendingOutput { wanted |= EPOLLOUT.rawValue }
        guard wanted != connection.interest else { return }
        connection.interest = wanted
        var event = epoll_event(events: wanted, data: epoll_data_t(fd: connection.fd))
        epoll_ctl(epollFD, EPOLL_CTL_MOD, connection.fd, &event)
    }

    private func close(_ connection: Connection) {
        guard !connection.closed else { return }
        connection.closed = true
        let heldMuch = connection.accounted > 256 * 1024
        endStream(connection, finished: false)
        account(connection) // a closed connection holds nothing
        connection.output = []
        connection.outputFirst = 0
        connection.outputSpan = 0
        connection.outputIndex = 0
        connection.input = []
        if heldMuch { releaseFreedMemory() }
        epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.fd, nil)
        Glibc.close(connection.fd)
        connections[Int(connection.fd)] = nil
        liveConnections -= 1
        server.connectionCount.subtract(1, ordering: .relaxed)
        server.release(connection.remoteAddress)
    }

    private func register(_ fd: Int32, events: UInt32) {
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    // MARK: - Timeouts and shutdown

    private func sweep(now: UInt64) {
        dropLargestUnreadAnswers(now: now)
        for case let connection? in connections where connection.deadline != 0 && now >= connection.deadline {
            switch connection.phase {
            case .head, .body:
                // A client that trickles its request: 408, then close.
                connection.closeWhenWritten = true
                connection.deadline = 0
                enqueue(connection, server.writer.errorBytes(.requestTimeout, date: date.current()))
                flush(connection)
                if !connection.closed { updateInterest(connection) }
            case .idle, .writing, .lingering, .handling:
                close(connection)
            }
        }
    }

    private func startShutdown(deadline: UInt64) {
        shutdownDeadline = deadline
        epoll_ctl(epollFD, EPOLL_CTL_DEL, listenerFD, nil)
        Glibc.close(listenerFD)
        listenerFD = -1
        // Streams end now (their clients reconnect elsewhere), after what they have queued.
        for case let connection? in connections where connection.stream != nil {
            connection.closeWhenWritten = true
            endStream(connection, finished: true)
        }
        for case let connection? in connections where !connection.inFlight && !connection.hasPendingOutput {
            close(connection)
        }
    }
}

/// Each worker thread formats the `Date` field from its own cache.
enum WorkerDate {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { if let raw = $0 { Unmanaged<DateCache>.fromOpaque(raw).release() } }
        return key
    }()

    static func current() -> String {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<DateCache>.fromOpaque(raw).takeUnretainedValue().current()
        }
        let cache = DateCache()
        pthread_setspecific(key, Unmanaged.passRetained(cache).toOpaque())
        return cache.current()
    }
}
