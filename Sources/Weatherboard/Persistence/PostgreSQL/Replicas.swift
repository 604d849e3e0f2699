import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A position in PostgreSQL's write-ahead log (`pg_lsn`, printed as `16/B374D848`), as one number.
enum WALPosition {
    static func parse(_ text: some StringProtocol) -> UInt64? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16),
              high <= UInt64(UInt32.max), low <= UInt64(UInt32.max) else { return nil }
        return high << 32 | low
    }

    /// The primary's position: every record written so far ends at or before it (inserted, not
    /// only flushed: right after a commit it covers the commit whatever `synchronous_commit` says).
    static let insertQuery = "pg_current_wal_insert_lsn()::text"
}

/// PostgreSQL streaming replicas that pages read from (`--database-replica-url`), and the gate
/// that keeps what this node holds consistent with them.
///
/// A read goes to a replica when three things hold: the replica answers (checked every
/// `checkInterval`), it is not more than `maximumLag` behind the primary, and it has replayed
/// what the reader must see: the client's own last write (`RequestReads.floor`, from a cookie,
/// so a member reads their post on whichever node) and every change this node has already
/// applied to its caches. Otherwise the read goes to the primary.
///
/// The gate: a committed change (this node's, or another's heard through `ChangeFeed`) reaches
/// this node's consumers — page versions, forecasts in memory, live streams — only once every
/// usable replica has replayed it. A page kept under the new versions, or a reply fetched after
/// its live event, is then never read from a replica that lacks the change. A replica that
/// dies or lags past the bound stops holding changes back (and stops serving reads).
final class ReplicaSet: Sendable {
    final class Replica: Sendable {
        /// Host, port and database, without credentials (logs, metrics).
        let name: String
        let database: PostgresDatabase
        /// What it had replayed when last checked.
        let replayed = Atomic<UInt64>(0)
        /// When it last answered a check, in uptime milliseconds (0: not yet, or it failed since).
        let checked = Atomic<UInt64>(0)
        /// When a page's read on it last failed: it is skipped until a check after that.
        let failed = Atomic<UInt64>(0)
        /// Set by the gate: answering, within the lag bound.
        let usable = Atomic(false)
        /// How far behind the primary it is, in milliseconds (for the operator).
        let lagMilliseconds = Atomic<Int>(0)

        init(url: String, database: PostgresDatabase) {
            self.name = ReplicaSet.describe(url)
            self.database = database
        }
    }

    let replicas: [Replica]
    /// Seconds of lag past which a replica serves nothing.
    let maximumLag: Double
    /// Every change this node's consumers have been given is at or before this position.
    let deliveredThrough = Atomic<UInt64>(0)
    /// Reads that went to a replica, and those that went to the primary from a request that
    /// could have used one but found none that had replayed enough (for the operator).
    let fallbacks = Atomic<Int>(0)

    private struct Held {
        var changes: [PageChange]
        var origin: ChangeStream.Origin
        var position: UInt64
    }
    private struct Gate {
        /// Changes committed but not yet replayed by every usable replica, in commit order.
        var held: [Held] = []
        /// The primary's recent positions and when they were seen (uptime ms), oldest first.
        var recent: [(at: UInt64, position: UInt64)] = []
        /// The highest position seen `maximumLag` ago or earlier: a replica below it lags.
        var overdue: UInt64 = 0
        /// Samples past `maximumLag`, kept while some replica has not replayed them (at most
        /// `pastKept`, one a second): how far behind a lagging replica really is, for the operator.
        var past: [(at: UInt64, position: UInt64)] = []
        /// Released, to be given to the consumers by the thread delivering now.
        var outbox: [Held] = []
        var delivering = false

        /// The primary was at `position` at `time`: samples less than `sampleSpacing` apart are
        /// one (the earlier time, the higher position: a lag is never underestimated), so the
        /// list holds at most a sample per 10 ms of the lag bound however many commits come.
        mutating func saw(_ position: UInt64, at time: UInt64) {
            if let last = recent.last, time &- min(time, last.at) < ReplicaSet.sampleSpacing {
                if position > last.position { recent[recent.count - 1].position = position }
            } else if position > (recent.last?.position ?? overdue) {
                recent.append((time, position))
            }
        }
    }
    /// Milliseconds within which the primary's positions count as one sample.
    static let sampleSpacing: UInt64 = 10
    /// Samples past the lag bound kept (a second apart: an hour of a stopped replica's lag).
    static let pastKept = 3_600
    private let gate = Mutex(Gate())
    private let stream: ChangeStream
    private let logger: Logger
    private let stopped = Atomic(false)
    private let turn = Atomic(0)

    /// How often each replica is asked what it has replayed (changes wait for it).
    static let checkInterval: TimeInterval = 0.02
    /// How often the primary is asked where it is (the lag's measure when this node writes nothing).
    static let sampleInterval: TimeInterval = 0.1
    /// A replica that has not answered a check for this long serves nothing.
    static let silenceAllowed: UInt64 = 500
    /// Seconds a page's read waits on a replica at most before it is tried on the primary (or
    /// half the request's time left, when that is more).
    static let readDeadline: TimeInterval = 0.75

    init(primaryURL: String, replicaURLs: [String], maximumLag: Double, connections: Int, timeouts: PostgresTimeouts,
         stream: ChangeStream, logger: Logger) throws {
        let replicaTimeouts = { var shorter = timeouts; shorter.connect = min(timeouts.connect, 2); return shorter }()
        replicas = try replicaURLs.map { url in
            Replica(url: url, database: try PostgresDatabase(url: url, maximumConnections: connections, timeouts: replicaTimeouts))
        }
        self.maximumLag = maximumLag
        self.stream = stream
        self.logger = logger
        logger.notice("replicas: \(replicas.map(\.name).joined(separator: ", ")) (pages read there while within \(maximumLag) s of the primary)")
        for replica in replicas {
            let thread = Thread { [self] in watch(replica, timeouts: replicaTimeouts) }
            thread.name = "replica-check"
            thread.start()
        }
        let sampler = Thread { [self] in sample(primaryURL: primaryURL, timeouts: timeouts) }
        sampler.name = "replica-lag"
        sampler.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        for replica in replicas { try? replica.database.close() }
    }

    // MARK: Reads

    /// A replica that may serve a read which must see `floor` (and everything this node has
    /// applied), taking turns among those that may; nil: the primary.
    func replica(seeing floor: UInt64) -> Replica? {
        let needed = max(floor, deliveredThrough.load(ordering: .acquiring))
        let start = turn.add(1, ordering: .relaxed).newValue
        for offset in 0..<replicas.count {
            let replica = replicas[(start &+ offset) % replicas.count]
            if replica.usable.load(ordering: .acquiring), replica.replayed.load(ordering: .acquiring) >= needed,
               replica.failed.load(ordering: .relaxed) < replica.checked.load(ordering: .relaxed) {
                return replica
            }
        }
        return nil
    }

    /// A page's read on `replica` failed (it went away, froze, or cancelled the read to replay):
    /// it serves nothing until it answers a check again.
    func failed(_ replica: Replica, _ error: Error) {
        replica.failed.store(Self.now(), ordering: .relaxed)
        logger.warning("replica \(replica.name): a read failed and went to the primary: \(error)")
    }

    // MARK: The gate

    /// Changes committed at or before `position`: given to this node's consumers once the usable
    /// replicas have replayed it (at once when there are none).
    func hold(_ changes: [PageChange], from origin: ChangeStream.Origin, at position: UInt64) {
        gate.withLock { gate in
            if !changes.isEmpty { gate.held.append(Held(changes: changes, origin: origin, position: position)) }
            gate.saw(position, at: Self.now())
        }
        settle()
    }

    /// Decides which replicas are usable and releases the changes they have all replayed, in
    /// commit order. Called after every check and every commit. One thread at a time delivers
    /// (a consumer that writes comes back here and finds the delivery under way).
    private func settle() {
        let delivers = gate.withLock { gate -> Bool in
            // The time under the lock: every sample is then at or before it.
            let now = Self.now()
            let cutoff = now &- min(now, UInt64(maximumLag * 1000))
            let expired = gate.recent.prefix { $0.at <= cutoff }
            if let last = expired.last { gate.overdue = max(gate.overdue, last.position) }
            for sample in expired where gate.past.last.map({ sample.at &- $0.at >= 1000 }) ?? true { gate.past.append(sample) }
            gate.recent.removeFirst(expired.count)
            let slowest = replicas.map { $0.replayed.load(ordering: .acquiring) }.min() ?? .max
            gate.past.removeFirst(gate.past.prefix { $0.position <= slowest }.count)
            if gate.past.count > Self.pastKept { gate.past.removeFirst(gate.past.count - Self.pastKept) }
            var threshold = UInt64.max
            for replica in replicas {
                let replayed = replica.replayed.load(ordering: .acquiring), checked = replica.checked.load(ordering: .acquiring)
                let answering = checked > 0 && now &- min(now, checked) <= Self.silenceAllowed
                // The oldest position seen that it has not replayed: its age is the lag, past the
                // bound too (the bound only decides what the replica serves).
                let behind = gate.past.first { $0.position > replayed } ?? gate.recent.first { $0.position > replayed }
                let lag: UInt64 = behind.map { now &- min(now, $0.at) } ?? (gate.overdue > replayed ? UInt64(maximumLag * 1000) : 0)
                replica.lagMilliseconds.store(answering ? Int(lag) : -1, ordering: .relaxed)
                let usable = answering && gate.overdue <= replayed
                replica.usable.store(usable, ordering: .releasing)
                if usable { threshold = min(threshold, replayed) }
            }
            let count = gate.held.prefix { $0.position <= threshold }.count
            gate.outbox += gate.held.prefix(count)
            gate.held.removeFirst(count)
            guard !gate.delivering, !gate.outbox.isEmpty else { return false }
            gate.delivering = true
            return true
        }
        guard delivers else { return }
        while let next = gate.withLock({ gate -> Held? in
            guard !gate.outbox.isEmpty else {
                gate.delivering = false
                return nil
            }
            return gate.outbox.removeFirst()
        }) {
            // Before the consumers: once a page's versions move, no read takes a replica without the change.
            if next.position > deliveredThrough.load(ordering: .relaxed) { deliveredThrough.store(next.position, ordering: .releasing) }
            // Consumers read what they reload from the primary, whichever thread delivers.
            RequestReads.$current.withValue(nil) { stream.deliver(next.changes, from: next.origin) }
        }
    }

    // MARK: Watching

    /// Asks `replica` what it has replayed, every `checkInterval`, on a connection of its own.
    private func watch(_ replica: Replica, timeouts: PostgresTimeouts) {
        var connection: PostgresConnection?
        var down: String?
        while !stopped.load(ordering: .relaxed) {
            do {
                if connection == nil {
                    connection = try PostgresConnection(url: replica.database.url, library: try LibPQ.shared.get(), timeouts: timeouts,
                                                        applicationName: "weatherboard-replica-check")
                }
                let text = try connection!.withAnswerDeadline(1) { try connection!.simpleValue("SELECT pg_last_wal_replay_lsn()::text") }
                guard let position = text.flatMap(WALPosition.parse) else {
                    throw SQLError(.other, "it is not a standby (pg_last_wal_replay_lsn() is NULL): reads stay on the primary")
                }
                replica.replayed.store(position, ordering: .releasing)
                replica.checked.store(Self.now(), ordering: .releasing)
                if let reason = down {
                    logger.notice("replica \(replica.name): answering again (it was out: \(reason))")
                    down = nil
                }
                settle()
                usleep(useconds_t(Self.checkInterval * 1_000_000))
            } catch {
                replica.checked.store(0, ordering: .releasing)
                settle()
                connection?.close()
                connection = nil
                if down == nil {
                    down = "\(error)"
                    logger.warning("replica \(replica.name): out of use: \(error)")
                }
                sleep(1)
            }
        }
        connection?.close()
    }

    /// Asks the primary where it is, every `sampleInterval`: the measure of each replica's lag
    /// while this node writes nothing itself. Also releases changes held for a replica that
    /// stopped answering (its own checks no longer come).
    private func sample(primaryURL: String, timeouts: PostgresTimeouts) {
        var connection: PostgresConnection?
        while !stopped.load(ordering: .relaxed) {
            do {
                if connection == nil {
                    connection = try PostgresConnection(url: primaryURL, library: try LibPQ.shared.get(), timeouts: timeouts,
                                                        applicationName: "weatherboard-replica-lag")
                }
                let text = try connection!.withAnswerDeadline(1) { try connection!.simpleValue("SELECT \(WALPosition.insertQuery)") }
                if let position = text.flatMap(WALPosition.parse) {
                    gate.withLock { $0.saw(position, at: Self.now()) }
                }
            } catch {
                connection?.close()
                connection = nil
            }
            settle()
            usleep(useconds_t(Self.sampleInterval * 1_000_000))
        }
        connection?.close()
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// A connection string's host, port and database, never its user or password.
    static func describe(_ url: String) -> String {
        if let parts = URLComponents(string: url), let host = parts.host {
            return host + (parts.port.map { ":\($0)" } ?? "") + parts.path
        }
        let pairs = url.split(separator: " ").compactMap { pair -> (String, String)? in
            let kv = pair.split(separator: "=", maxSplits: 1)
            return kv.count == 2 ? (String(kv[0]), String(kv[1])) : nil
        }
        let value = { (key: String) in pairs.first { $0.0 == key }?.1 }
        return (value("host") ?? "localhost") + (value("port").map { ":" + $0 } ?? "") + "/" + (value("dbname") ?? "")
    }
}

/// What one request reads and writes, where replicas serve reads: set for each request
/// (`Middleware.readYourWrites`). Work off the request path has none, and reads the primary
/// (a sender that marks what it sent must not read a replica that has not replayed the mark).
public final class RequestReads: Sendable {
    @TaskLocal static var current: RequestReads?

    /// A GET or HEAD: its reads may go to a replica. Other methods read the primary: what they
    /// read decides what they write.
    let mayUseReplica: Bool
    /// What its reads must see: the client's last write (its cookie), and this request's own.
    let floor: Atomic<UInt64>
    /// This request's last commit (0: none), for the cookie.
    let wrote = Atomic<UInt64>(0)
    init(mayUseReplica: Bool, floor: UInt64) {
        self.mayUseReplica = mayUseReplica
        self.floor = Atomic(floor)
    }

    /// This request committed at `position`: its later reads see it, and so do the client's next.
    func committed(at position: UInt64) {
        raise(wrote, to: position)
        raise(floor, to: position)
    }

    /// Whether pages kept on this node can be what this client reads: not while it carries a
    /// write of its own (for the cookie's few seconds). No node knows when another node's
    /// changes have all reached its caches, so a kept page might predate the write.
    var seesKeptPages: Bool { floor.load(ordering: .relaxed) == 0 }

    /// This request read from a replica that had replayed `position`: its later reads see at
    /// least as much (a page never reads an older replica after a newer one).
    func read(at position: UInt64) {
        raise(floor, to: position)
    }

    /// The cookie that carries a client's last write to its next request on any node.
    static let cookieName = "wb_wrote"

    private func raise(_ value: borrowing Atomic<UInt64>, to position: UInt64) {
        var current = value.load(ordering: .relaxed)
        while current < position {
            let (exchanged, original) = value.compareExchange(expected: current, desired: position, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
