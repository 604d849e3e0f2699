import Foundation
import Synchronization

/// Writes made beside the server on its SQLite file (`weatherboard create-admin`, `demote-admin`,
/// an operator's `sqlite3`) reach it as PostgreSQL's other nodes' do: a thread looks at the
/// writer connection's `data_version` every `interval` and, when another connection committed,
/// delivers `.everything` from elsewhere (kept pages and boards are read again). The process's
/// own writes never move it, so they cost nothing here.
final class OtherWriters: Sendable {
    static let interval: TimeInterval = 0.25
    private final class Flag: Sendable { let stopped = Atomic(false) }
    private let flag = Flag()

    init(_ sqlite: SQLiteDatabase, changes: ChangeStream) {
        let thread = Thread { [flag] in
            var seen = sqlite.othersCommitted()
            while !flag.stopped.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: Self.interval)
                guard let now = sqlite.othersCommitted() else { continue }
                if let before = seen, now != before { changes.deliver([.everything], from: .elsewhere) }
                seen = now
            }
        }
        thread.name = "sqlite-other-writers"
        thread.start()
    }

    func stop() { flag.stopped.store(true, ordering: .relaxed) }
}
