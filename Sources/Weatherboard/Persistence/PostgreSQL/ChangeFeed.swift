import Foundation
import Synchronization
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// How a node hears what other nodes changed, through PostgreSQL's `LISTEN/NOTIFY`, so that
/// their cached pages and decoded forecasts give way at once: a post written through node A is
/// on node B's pages as soon as the notification arrives (milliseconds on a LAN). The writing
/// node sends it with its COMMIT (`ChangeLog`). A node hears its own notifications too
/// and ignores them (it applied the change after its commit).
/// When the listening connection drops, the node reconnects and treats everything as changed,
/// since it may have missed notifications meanwhile.
final class ChangeFeed: Sendable { // the listening thread owns its connection
    let node: String
    private let database: PostgresDatabase
    private let logger: Logger
    private let stopped = Atomic(false)
    private let listening = Atomic(false)
    /// When the listening connection last answered (a notice, or a keepalive), in uptime nanoseconds.
    private let lastHeardNanoseconds = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)

    /// Whether the node hears other nodes' changes now (for the operator: a dead feed means
    /// cached pages go stale behind other nodes' writes).
    var isListening: Bool { listening.load(ordering: .relaxed) }
    /// Seconds since the listening connection last answered.
    var silence: Double { Double(DispatchTime.now().uptimeNanoseconds &- lastHeardNanoseconds.load(ordering: .relaxed)) / 1e9 }
    private func heard() { lastHeardNanoseconds.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
    private let received: @Sendable ([PageChange], _ position: UInt64?) -> Void
    /// Whether what is heard goes with the primary's position after it (`ReplicaSet`'s gate).
    private let asksPosition: Bool

    /// Starts listening on a connection of its own (not the pool's); `node` is this process's
    /// name in the notifications it sends. With `asksPosition`, each batch heard is handed over
    /// with a position in the write-ahead log at or after the commits that sent it.
    init(database: PostgresDatabase, node: String, logger: Logger, asksPosition: Bool = false,
         received: @escaping @Sendable ([PageChange], _ position: UInt64?) -> Void) {
        self.database = database
        self.node = node
        self.logger = logger
        self.asksPosition = asksPosition
        self.received = received
        let thread = Thread { [self] in listen() }
        thread.name = "change-feed"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Seconds of silence after which the listening connection is asked to answer (`SELECT 1`):
    /// a connection whose backend froze or whose peer vanished delivers nothing and reports
    /// nothing, and this node's cached pages would go stale behind other nodes' writes.
    static let keepaliveInterval: TimeInterval = 5
    /// Seconds that keepalive may take before the connection is given up.
    static let keepaliveDeadline: Double = 3

    private func listen() {
        var firstConnection = true
        var outage: String? // why the feed is down, logged once when it goes and once when it is back
        func lost(_ reason: String) {
            listening.store(false, ordering: .relaxed)
            guard outage == nil else { return }
            outage = reason
            logger.warning("change feed: \(reason); reconnecting every second, and cached pages are dropped when it is back")
        }
        while !isStopped {
            do {
                let connection = try PostgresConnection(url: database.url, library: try LibPQ.shared.get(),
                                                        applicationName: Self.applicationName(node: node))
                try connection.simple("LISTEN \(ChangeStream.channel)")
                if !firstConnection { received([.missed], try position(connection)) } // what was missed while away
                if let reason = outage { logger.notice("change feed: listening again (it was down: \(reason))") }
                outage = nil
                firstConnection = false
                listening.store(true, ordering: .relaxed)
                heard()
                var lastHeard = Date()
                while !isStopped {
                    var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&descriptor, 1, 500)
                    if ready < 0 && errno != EINTR { break }
                    guard connection.isUsable else { break }
                    if ready > 0 {
                        lastHeard = Date()
                        heard()
                    }
                    // Until none is left: asking the position reads the socket, and notifications
                    // that came meanwhile wait in libpq, not on the socket `poll` watches.
                    while true {
                        var heardNow: [PageChange] = []
                        let notifications = connection.notifications()
                        for (channel, payload) in notifications where channel == ChangeStream.channel {
                            let parts = payload.split(separator: " ", maxSplits: 1)
                            guard parts.count == 2, parts[0] != node else { continue }
                            if let change = PageChange(payload: parts[1]) { heardNow.append(change) }
                        }
                        if !heardNow.isEmpty { received(heardNow, try position(connection)) }
                        if notifications.isEmpty || !asksPosition { break }
                    }
                    guard connection.isUsable else { break }
                    if Date().timeIntervalSince(lastHeard) >= Self.keepaliveInterval {
                        do {
                            _ = try connection.withAnswerDeadline(Self.keepaliveDeadline) { try connection.integer("SELECT 1") }
                            lastHeard = Date()
                            heard()
                        } catch {
                            lost("the listening connection did not answer a keepalive within \(Self.keepaliveDeadline) s (\(error))")
                            break
                        }
                    }
                }
                if outage == nil && !isStopped { lost("the listening connection closed") }
                connection.close()
            } catch {
                lost("\(error)")
            }
            if !isStopped { sleep(1) }
        }
    }

    /// Where the primary's log is now: after every commit whose notification was just read.
    private func position(_ connection: PostgresConnection) throws -> UInt64? {
        guard asksPosition else { return nil }
        let text = try connection.withAnswerDeadline(Self.keepaliveDeadline) { try connection.simpleValue("SELECT \(WALPosition.insertQuery)") }
        guard let position = text.flatMap(WALPosition.parse) else { throw SQLError(.other, "no write-ahead log position from the primary") }
        return position
    }

    /// The listener's `application_name` (letters, digits and dashes: safe in a URL and a conninfo).
    static func applicationName(node: String) -> String { "weatherboard-feed-" + node.prefix(8).lowercased() }
}
