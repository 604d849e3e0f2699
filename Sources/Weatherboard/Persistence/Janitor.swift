import Foundation
import Logging
import Synchronization

/// Rows a feature keeps for a while, declared beside its table: those whose `column` (seconds
/// since 1970) is `keptFor` or more in the past go. An expiry column is kept for 0.
struct Keeping: Sendable {
    let table: String
    let column: String
    let keptFor: TimeInterval

    init(_ table: String, _ column: String, for keptFor: TimeInterval = 0) {
        (self.table, self.column, self.keptFor) = (table, column, keptFor)
    }
}

/// The one worker that purges what every feature keeps past its time (issue 63 #7): on its own
/// thread once a minute (a request never waits for it), on every node (a purge is idempotent and
/// locks only the rows it deletes).
final class Janitor: Sendable, BackgroundWork {
    let keeping: [Keeping]
    private let database: AppDatabase
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let worker: QueueWorker
    /// Purges finished (tests wait for one before they look).
    var rounds: Int { worker.rounds.load(ordering: .relaxed) }

    init(database: AppDatabase, keeping: [Keeping], every interval: TimeInterval = 60, clock: @escaping @Sendable () -> Date, logger: Logger) {
        (self.database, self.keeping, self.clock, self.logger) = (database, keeping, clock, logger)
        worker = QueueWorker(pollInterval: interval)
    }

    func start() {
        worker.start { [self] in
            do {
                try purge(now: clock())
            } catch { logger.warning("janitor: the purge did not finish: \(error); again in a minute") }
        }
    }

    func stop() { worker.stop(waitingAtMost: 5) }

    /// Deletes what is past its keeping time in every table declared, one statement each.
    func purge(now: Date) throws {
        let seconds = now.timeIntervalSince1970
        // Locks: only the expired rows each statement deletes.
        try database.write(.subjects) { db in
            for kept in keeping { try db.execute("DELETE FROM \(kept.table) WHERE \(kept.column) <= ?", seconds - kept.keptFor) }
        }
    }
}
