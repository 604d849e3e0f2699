import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// The real `weatherboard` executable, killed with SIGKILL in the middle of a stream of posts and
/// started again on the same database: every post whose 303 came back is there, exactly once.
@Suite(.serialized, .onEveryEngine) struct DurabilityTests {
    /// The executable built beside the tests (`swift test` builds every product).
    static let executable = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("weatherboard").path

    /// A new site for executables the test starts: a folder (removed at the end) and a database
    /// of the test's engine (SQLite in the folder, or a fresh PostgreSQL database, dropped at the end).
    final class Site {
        let folder: String
        /// `--db PATH` or `--database-url URL`.
        let arguments: [String]
        private let drop: () -> Void

        init(named name: String) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-\(name)-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            switch TestEngine.current {
            case .sqlite:
                arguments = ["--db", folder + "/site.sqlite"]
                drop = {}
            case .postgres:
                let postgres = try TestPostgres.require()
                let url = try postgres.freshDatabase()
                arguments = ["--database-url", url]
                drop = { postgres.drop(url) }
            }
        }

        deinit {
            drop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// The site's database, opened by the test beside the executable.
        func open() throws -> AppDatabase {
            try AppDatabase.open(TestEngine.current == .sqlite ? .sqlite(path: arguments[1]) : .postgres(url: arguments[1]),
                                 migrationsDirectory: AppConfiguration.repositoryFolder("Migrations")).0
        }
    }

    final class Node {
        let process: ChildProcess
        let port: Int

        init(arguments: [String], port: Int, log: String) throws {
            self.port = port
            let arguments = ["serve", "--port", String(port), "--weather", "demo", "--log-level", "warning",
                             "--seconds-between-posts", "0", "--posts-per-day", "1000000",
                             "--migrations", AppConfiguration.repositoryFolder("Migrations"),
                             "--public", AppConfiguration.repositoryFolder("Public"),
                             "--templates", AppConfiguration.repositoryFolder("Templates")] + arguments
            // Through `exec` in a shell, so that the log is the shell's redirection (no descriptor of
            // this process handed over) and the process killed is the server itself.
            process = try ChildProcess(["/bin/sh", "-c", "exec \"$0\" \"$@\" >\(log) 2>&1", DurabilityTests.executable] + arguments)
            try waitUntil("the node answers /healthz", timeout: 120) {
                (try? TestClient.request(port: port, "GET", "/healthz").status) == 200
            }
        }

        func kill() {
            process.signal(SIGKILL)
            process.wait()
        }

        func stop() {
            process.signal(SIGTERM)
            process.wait()
        }
    }

    @Test func everyAcknowledgedPostSurvivesAKillAndNoneIsDoubled() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable), "build the weatherboard product first")
        let site = try Site(named: "kill")
        let (folder, database) = (site.folder, site.arguments)
        defer { withExtendedLifetime(site) {} } // its database outlives the nodes
        let port = try freeLoopbackPort()

        let first = try Node(arguments: database, port: port, log: folder + "/first.log")
        let writer = Browser(port: port)
        try writer.signUp("writer")
        try writer.get("/city/seoul")
        let cookies = writer.cookies
        // Posts from four threads until the node dies under them.
        let acknowledged = Locked<[String]>([])
        let running = Locked(true)
        let stopped = Locked(0)
        let threads = (0..<4).map { thread in
            Thread {
                defer { stopped.update { $0 += 1 } }
                let client = Browser(port: port)
                client.cookies = cookies
                var number = 0
                while running.value {
                    number += 1
                    let body = "durable \(thread)-\(number)"
                    guard let (response, _) = try? client.post("/city/seoul/posts", [("body", body)]) else { continue }
                    if response.status == 303 { acknowledged.update { $0.append(body) } }
                }
            }
        }
        threads.forEach { $0.start() }
        try waitUntil("some posts acknowledged", timeout: 60) { acknowledged.value.count >= 50 }
        first.kill()
        running.update { $0 = false }
        // Every posting thread has seen the refused connections and stopped: no post is in flight
        // when the second node starts.
        try waitUntil("the posting threads stop", timeout: 30) { stopped.value == threads.count }

        let second = try Node(arguments: database, port: port, log: folder + "/second.log")
        defer { second.stop() }
        let opened = try site.open()
        let stored = try opened.read { db in try db.all("SELECT body FROM posts WHERE body LIKE 'durable %'") { $0.string(0) } }
        let storedSet = Set(stored)
        let missing = acknowledged.value.filter { !storedSet.contains($0) }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(5))")
        #expect(stored.count == storedSet.count, "a post stored twice")
        #expect(acknowledged.value.count >= 50)
        try opened.close()
    }
}
