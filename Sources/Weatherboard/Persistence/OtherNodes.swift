import Foundation
import Logging

extension AppDatabase {
    /// How this node hears what others write: PostgreSQL's change feed (other nodes' commits),
    /// or a watch on the SQLite file (other processes', e.g. `weatherboard` commands).
    func followOthers(logger: Logger) -> (changeFeed: ChangeFeed?, otherWriters: OtherWriters?) {
        if let postgres = engine as? PostgresDatabase {
            return (ChangeFeed(database: postgres, node: changes.node, logger: logger, asksPosition: replicas != nil) { [self] in heard($0, at: $1) }, nil)
        }
        return (nil, (engine as? SQLiteDatabase).map { OtherWriters($0, changes: changes) })
    }

    /// Whether every change reaches this process as it commits (one SQLite file, one writer
    /// process): what may be kept only while nothing else writes unseen.
    var hearsEveryCommitAtOnce: Bool { dialect == .sqlite }

    /// Connections the pool holds open (PostgreSQL), nil where there is no pool.
    var openConnections: Int? { (engine as? PostgresDatabase)?.openConnections }

    /// What SQLite's allocator holds in this process (its page caches), 0 on PostgreSQL.
    var engineMemoryBytes: Int { dialect == .sqlite ? Int(SQLiteDatabase.memoryUsed) : 0 }
}
