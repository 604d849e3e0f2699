import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Everything about the server that can be configured; defaults are the documented ones.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// Event loops; by default one per CPU this process may run on.
    public var eventLoops = Socket.availableCPUs()
    /// Threads running handlers.
    public var workerThreads = max(4, Socket.availableCPUs() * 2)
    /// Threads for the quick lane (`Lane`), when the server is given a `lane` function.
    public var quickWorkerThreads = max(2, Socket.availableCPUs())
    /// How long every main worker must have been busy with no request finished before the main
    /// lane counts as stalled (`LaneConditions.mainLaneStalled`).
    public var mainLaneStall: Duration = .milliseconds(200)
    public var limits = ParserLimits()
    /// From the first byte of a request's head to its end; then 408 and close.
    public var headerTimeout: Duration = .seconds(10)
    /// From the end of a head to the end of its body; then 408 and close.
    public var bodyTimeout: Duration = .seconds(30)
    /// How long a keep-alive connection may wait for its next request.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a response may wait for a client that does not read it.
    public var writeTimeout: Duration = .seconds(30)
    /// Connections beyond this are answered 503 and closed.
    public var maxConnections = 16_384
    /// Connections from one client address beyond this are answered 503 and closed, so that one
    /// client cannot hold every connection.
    public var maxConnectionsPerAddress = 256
    /// Addresses the per-address cap does not apply to: a proxy in front carries every visitor's
    /// connections (and each open event stream holds one), so capping it caps the whole site.
    /// Its visitors are then for the application to tell apart (and `maxStreamsPerAddress`
    /// counts the client a streamed response names).
    public var uncappedAddresses: Set<String> = []
    /// Bytes all connections together may hold in buffers (unparsed requests, bodies being
    /// read, answers not yet taken by their clients). Past it, a connection holding more than
    /// `EventLoop.largeHolding` is refused (503) when it reads more, and the largest unread
    /// answers are dropped with their connections: many slow clients cannot pin the memory that
    /// one connection's limits allow each of them.
    public var maxBufferedBytes = 256 << 20
    /// Streamed responses open at once, in all and from one client; more are answered 503.
    /// Streams also count as connections.
    public var maxStreams = 16_384
    public var maxStreamsPerAddress = 64
    /// Bytes a stream may have waiting for its client; past it the client is not keeping up,
    /// and the stream and its connection are closed (a live feed is worth nothing late).
    public var maxStreamBufferedBytes = 64 * 1024
    /// How long shutdown waits for requests in flight.
    public var shutdownTimeout: Duration = .seconds(10)
    /// A line per request at `info` (request id, method, path, status, bytes, duration, client).
    public var accessLog = false
    /// The `Server` field of every response.
    public var serverName = "HTTPServer"
    public var backlog: Int32 = 1024

    public init() {}

    /// The CPUs this process may run on (its affinity mask, as `taskset` or a container sets
    /// it), from which the defaults above are sized.
    public static var availableCPUs: Int { Socket.availableCPUs() }
}

/// A request handler: runs on a worker thread and must not throw (see `Router` for errors).
public typealias Responder = @Sendable (Request) -> Response

/// Answers on the event loop's own thread, or returns nil to pass the request to the workers.
/// It must never block (no file, database or network access, no lock held for long): while it
/// runs, none of its loop's connections move. For answers that are already made (a fixed text,
/// a health probe), it saves each request two thread hand-offs.
public typealias ImmediateResponder = @Sendable (Request) -> Response?

/// The HTTP/1.1 server: event loops for I/O, a worker pool for handlers.
public final class Server: Sendable {
    public let configuration: ServerConfiguration
    let responder: Responder
    let immediate: ImmediateResponder?
    let logger: Logger
    let writer: ResponseWriter
    let pool: ThreadPool
    /// The quick lane's workers, and the function that sends requests to them.
    let quickPool: ThreadPool?
    let lane: (@Sendable (Request, LaneConditions) -> Lane)?
    let connectionCount = Atomic<Int>(0)
    /// What every connection's buffers hold now, against `maxBufferedBytes`.
    let bufferedBytes = Atomic<Int>(0)
    /// Bytes held in connections' buffers now, across all loops.
    public var heldBytes: Int { bufferedBytes.load(ordering: .relaxed) }
    var overBudget: Bool { bufferedBytes.load(ordering: .relaxed) > configuration.maxBufferedBytes }
    /// Connections open now, across all loops.
    public var openConnections: Int { connectionCount.load(ordering: .relaxed) }
    /// The request workers' saturation (`ThreadPool.status`).
    public var workers: (threads: Int, busy: Int, queued: Int, waitedTotal: Int) { pool.status }
    /// The quick lane's, likewise (nil without lanes).
    public var quickWorkers: (threads: Int, busy: Int, queued: Int, waitedTotal: Int)? { quickPool?.status }
    /// Requests answered 503 by the server itself, since the start: a connection holding much
    /// while every buffer together was over `maxBufferedBytes`, a stream past its caps.
    let refusedForMemory = Atomic<Int>(0), refusedStreams = Atomic<Int>(0)
    public var refusals: (memory: Int, streams: Int) {
        (refusedForMemory.load(ordering: .relaxed), refusedStreams.load(ordering: .relaxed))
    }
    /// Open connections and open streams per client (an IPv6 client is its /64, `ClientKey`),
    /// across every loop.
    private let perClient = Mutex((connections: PerClientCount(), streams: PerClientCount()))

    /// Counts a connection from `address` against its client's cap (none for `uncappedAddresses`);
    /// false (nothing counted) when the cap is reached.
    func admit(_ address: String) -> Bool {
        let cap = configuration.uncappedAddresses.contains(address) ? nil : configuration.maxConnectionsPerAddress
        return perClient.withLock { $0.connections.take(ClientKey.of(address), cap: cap) }
    }

    func release(_ address: String) {
        perClient.withLock { $0.connections.give(ClientKey.of(address)) }
    }
    let draining = Atomic<Bool>(false)
    /// The access log's request ids: this process's tag, then a serial.
    private let requestSerial = Atomic<UInt64>(0)
    private let bootTag = String(UInt32.random(in: .min ... .max), radix: 36)
    /// The loops `start` made, and the signal handlers `shutDownOnSignals` installed.
    private let running = Mutex((loops: [EventLoop](), signalSources: [any DispatchSourceSignal]()))
    private let finished = DispatchGroup()
    private let boundPort = Atomic<Int>(0)
    /// The port actually bound (useful with port 0).
    public var port: Int { boundPort.load(ordering: .acquiring) }

    /// - Parameter lane: which workers run each request (`Lane`); nil: all run on one pool.
    public init(configuration: ServerConfiguration = ServerConfiguration(), logger: Logger = Logger(label: "http"),
                immediate: ImmediateResponder? = nil, lane: (@Sendable (Request, LaneConditions) -> Lane)? = nil, responder: @escaping Responder) {
        self.configuration = configuration
        self.responder = responder
        self.immediate = immediate
        self.lane = lane
        self.logger = logger
        self.writer = ResponseWriter(serverName: configuration.serverName)
        self.pool = ThreadPool(name: "http-worker", threads: configuration.workerThreads)
        self.quickPool = lane == nil ? nil : ThreadPool(name: "http-quick", threads: max(1, configuration.quickWorkerThreads))
    }

    /// Binds the listening sockets and starts the event loops; returns once the server accepts.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        var port = configuration.port
        if port != 0 { // nobody else may hold it: the loops' own sockets share it among themselves only
            let probe = try Socket.listen(host: configuration.host, port: port, backlog: 0, exclusive: true)
            close(probe.fd)
        }
        var loops: [EventLoop] = []
        for i in 0..<max(1, configuration.eventLoops) {
            let listener = try Socket.listen(host: configuration.host, port: port, backlog: configuration.backlog)
            port = listener.port
            loops.append(try EventLoop(server: self, listener: listener.fd, index: i))
        }
        boundPort.store(port, ordering: .releasing)
        running.withLock { $0.loops = loops }
        for loop in loops {
            finished.enter()
            let thread = Thread { [finished] in
                loop.run()
                finished.leave()
            }
            thread.name = "http-loop-\(loop.index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        logger.notice("listening on \(configuration.host):\(port) with \(loops.count) event loop(s) and \(configuration.workerThreads) workers")
    }

    /// Blocks until the server has shut down.
    public func wait() {
        finished.wait()
        pool.stopAndWait()
        quickPool?.stopAndWait()
    }

    /// Shuts down on SIGINT or SIGTERM.
    public func shutDownOnSignals() {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in
                self?.logger.notice("signal \(sig): shutting down")
                self?.shutdown()
            }
            source.resume()
            running.withLock { $0.signalSources.append(source) }
        }
    }

    /// Stops accepting, closes idle connections, lets requests in flight finish (up to the
    /// shutdown timeout), then closes everything. Returns at once; `wait()` returns when done.
    public func shutdown() {
        guard !draining.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let deadline = monotonicMilliseconds() + configuration.shutdownTimeout.milliseconds
        for loop in running.withLock({ $0.loops }) { loop.beginShutdown(deadline: deadline) }
    }

    /// Runs a request through the responder and logs it; called on a worker thread.
    func handle(_ request: Request, started: UInt64) -> Response {
        let response = responder(request)
        return response.movedToMainLane ? response : log(request, response, started: started)
    }

    /// The lane `request` runs on.
    func lane(of request: Request) -> Lane {
        lane?(request, LaneConditions(main: pool, stallAfter: configuration.mainLaneStall.milliseconds)) ?? .main
    }

    /// A parsed request answered as a loop answers it (the immediate responder, then the
    /// workers' responder), on the caller's thread, serialised as for the socket; a streamed
    /// response's head only. The hook `HTTPTestSupport` builds its in-process exchange on, as
    /// Hummingbird's testing library uses its server's; not part of the server's interface.
    @_spi(Testing) public func answerInPlace(_ request: Request, from remoteAddress: String) -> [UInt8] {
        var request = request
        request.remoteAddress = remoteAddress
        let started = monotonicMilliseconds()
        request.arrival = started
        var response = handleImmediately(request) ?? Lane.$current.withValue(lane(of: request)) { handle(request, started: started) }
        if response.movedToMainLane { response = Lane.$current.withValue(.main) { handle(request, started: started) } }
        let (head, body, _) = serialize(response, for: request, date: WorkerDate.current())
        return head + body.joined()
    }

    /// The bytes a connection answers a request it cannot parse with (see `answerInPlace`).
    @_spi(Testing) public func errorBytes(_ status: HTTPStatus) -> [UInt8] {
        writer.errorBytes(status, date: WorkerDate.current())
    }

    /// The response's bytes for `request` (no body for HEAD) and whether the connection closes
    /// after it: when the client asked, or the server is draining.
    /// A streamed response on HTTP/1.0 ends by closing the connection.
    func serialize(_ response: Response, for request: Request, date: String) -> (head: [UInt8], body: ResponseBody, close: Bool) {
        let streamed = response.stream != nil
        let close = !request.wantsKeepAlive || draining.load(ordering: .relaxed) || (streamed && request.version == .http10)
        let (head, body) = writer.serialize(response, omitBody: request.method == "HEAD", close: close,
                                            keepAliveHTTP10: request.version == .http10 && !close, date: date,
                                            chunked: streamed && request.version == .http11)
        return (head, body, close)
    }

    /// Streamed responses open now, across all loops.
    public var openStreams: Int { perClient.withLock { $0.streams.total } }

    /// Counts a new stream for `client`; false (nothing counted) past either cap.
    func admitStream(for client: String) -> Bool {
        perClient.withLock { counts in
            counts.streams.total < configuration.maxStreams
                && counts.streams.take(ClientKey.of(client), cap: configuration.maxStreamsPerAddress)
        }
    }

    func releaseStream(for client: String) {
        perClient.withLock { $0.streams.give(ClientKey.of(client)) }
    }

    /// The immediate responder's answer, logged; nil when the request is for the workers.
    func handleImmediately(_ request: Request) -> Response? {
        guard let immediate else { return nil }
        let started = configuration.accessLog && logger.logLevel <= .info ? monotonicMilliseconds() : 0
        // A stream is opened by the workers' responder only: its answer is handed to them.
        guard let response = immediate(request), response.stream == nil else { return nil }
        return log(request, response, started: started)
    }

    private func log(_ request: Request, _ response: Response, started: UInt64) -> Response {
        if configuration.accessLog && logger.logLevel <= .info {
            let serial = requestSerial.add(1, ordering: .relaxed).newValue
            // Behind a proxy in `uncappedAddresses`, the client it names (the last address it appended).
            var client = request.remoteAddress
            if configuration.uncappedAddresses.contains(client),
               let named = request.headers["X-Forwarded-For"]?.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) {
                client = named
            }
            // Routed, the path may hold a secret the router names instead (a reset link's token).
            let path = response.redactedPath ?? request.path
            logger.info("\(request.method) \(path) \(response.status.code)", metadata: [
                "request_id": "\(bootTag)-\(serial)", "method": "\(request.method)", "path": "\(path)",
                "status": .stringConvertible(Int(response.status.code)), "bytes": .stringConvertible(response.bodyParts.count),
                "duration_ms": .stringConvertible(Int(clamping: monotonicMilliseconds() &- started)), "client": "\(client)",
            ])
        }
        return response
    }
}

extension Duration {
    var milliseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
    }
}

/// How many of something (connections, streams) each client holds open.
struct PerClientCount {
    private var open: [String: Int] = [:]
    /// All clients together.
    private(set) var total = 0

    /// One more for `client`, unless it holds `cap` already (nil: no cap).
    mutating func take(_ client: String, cap: Int?) -> Bool {
        let held = open[client, default: 0]
        if let cap, held >= cap { return false }
        open[client] = held + 1
        total += 1
        return true
    }

    mutating func give(_ client: String) {
        guard let held = open[client] else { return }
        open[client] = held > 1 ? held - 1 : nil
        total -= 1
    }
}
