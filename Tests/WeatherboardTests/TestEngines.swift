import Foundation
import Testing
import HTTPTestSupport
@testable import Weatherboard

/// The database engines the application tests run on. Every suite marked `.onEveryEngine` runs
/// each of its tests once per engine: SQLite always, PostgreSQL when it is installed (a server of
/// the tests' own, started once per test process in a temporary folder on a free port).
/// `WEATHERBOARD_TEST_ENGINES=sqlite` (or `postgres`) narrows the run; `WEATHERBOARD_REQUIRE_POSTGRES=1`
/// (CI) turns a missing PostgreSQL into a failure instead of a printed reason.
enum TestEngine: String, Sendable, CaseIterable {
    case sqlite, postgres

    /// The engine the running test uses (set by `.onEveryEngine`; SQLite outside it).
    @TaskLocal static var current: TestEngine = .sqlite

    static let enabled: [TestEngine] = {
        let asked = ProcessInfo.processInfo.environment["WEATHERBOARD_TEST_ENGINES"].map {
            $0.split(separator: ",").compactMap { TestEngine(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
        } ?? TestEngine.allCases
        guard asked.contains(.postgres) else { return asked }
        if case .failure(let reason) = TestPostgres.shared {
            if ProcessInfo.processInfo.environment["WEATHERBOARD_REQUIRE_POSTGRES"] == "1" { return asked } // fails in the harness
            print("◇ PostgreSQL runs skipped: \(reason)")
            return asked.filter { $0 != .postgres }
        }
        return asked
    }()
}

/// Runs each test of the suite once per enabled engine, with `TestEngine.current` set.
struct OnEveryEngine: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        for engine in TestEngine.enabled {
            try await TestEngine.$current.withValue(engine) { try await function() }
        }
    }
}

extension Trait where Self == OnEveryEngine {
    static var onEveryEngine: OnEveryEngine { OnEveryEngine() }
}

/// A PostgreSQL server for this test process: `initdb` into a temporary folder, started on a free
/// port with a watchdog that stops it when the process ends (however it ends). A template
/// database holds the migrated schema and the city catalog; each test gets a copy.
final class TestPostgres: Sendable {
    let folder: String
    let port: Int
    private let admin: PostgresDatabase

    static let shared: Result<TestPostgres, TestPostgresUnavailable> = {
        do { return .success(try TestPostgres()) } catch let error as TestPostgresUnavailable { return .failure(error) } catch {
            return .failure(TestPostgresUnavailable(description: "\(error)"))
        }
    }()

    static func require() throws -> TestPostgres {
        try shared.get()
    }

    /// A server of its own (`TestReplica`'s primary: its replay must not wait on every other test's writes).
    init() throws {
        guard let bin = Self.binaries() else {
            throw TestPostgresUnavailable(description: "PostgreSQL is not installed (apt-get install postgresql)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let port = try freeLoopbackPort()
        self.folder = folder
        self.port = port
        let asRoot = getuid() == 0
        // PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user.
        // Output goes to files through the shell's redirections (children are `ChildProcess`es:
        // see there why not Foundation's Process).
        func shell(_ command: String) throws {
            let logged = "\(command) >\(folder)/setup.log 2>&1"
            let status = try ChildProcess(shell: asRoot ? "chown -R postgres \(folder) && su postgres -s /bin/sh -c '\(logged)'" : logged).wait()
            guard status == 0 else {
                let text = (try? String(contentsOfFile: folder + "/setup.log", encoding: .utf8)) ?? ""
                throw TestPostgresUnavailable(description: "`\(command)` failed: \(text)")
            }
        }
        try shell("\(bin)/initdb -D \(folder)/data --no-locale -E UTF8 -A trust -U postgres")
        // Fast and forgetful: a test database need not survive a crash of the machine.
        let options = "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off "
            + "-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB"
        // The watchdog: the server stops (and its folder goes) when this process is gone, even after a crash.
        let watchdog = "\(bin)/postgres -D \(folder)/data \(options) >\(folder)/log 2>&1 & p=$!; "
            + "while [ -d /proc/\(getpid()) ] && kill -0 $p 2>/dev/null; do sleep 1; done; kill -INT $p; wait $p; rm -rf \(folder)"
        _ = try ChildProcess(shell: asRoot ? "chown -R postgres \(folder) && exec su postgres -s /bin/sh -c '\(watchdog)' >/dev/null 2>&1"
                                           : "(\(watchdog)) >/dev/null 2>&1")
        // Ready when it accepts a connection.
        do {
            try waitUntil("the test PostgreSQL accepts a connection", timeout: 30) {
                (try? PostgresDatabase(url: "postgresql://postgres@127.0.0.1:\(port)/postgres").isHealthy()) == true
            }
        } catch {
            throw TestPostgresUnavailable(description: "the test PostgreSQL did not start (log: \(folder)/log)")
        }
        admin = try PostgresDatabase(url: "postgresql://postgres@127.0.0.1:\(port)/postgres", maximumConnections: 2)
        // The template: migrations and the city catalog, once.
        try admin.withConnection { try $0.simple("CREATE DATABASE wb_template") }
        let (template, _) = try AppDatabase.open(.postgres(url: url("wb_template")),
                                                 migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
        try CityCatalog.importIfEmpty(into: template)
        try template.close()
    }

    /// A new database, a copy of the template; its URL.
    func freshDatabase() throws -> String {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try admin.withConnection { try $0.simple("CREATE DATABASE \(name) TEMPLATE wb_template") }
        return url(name)
    }

    /// A new empty database; its URL.
    func emptyDatabase() throws -> String {
        let name = "empty_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try admin.withConnection { try $0.simple("CREATE DATABASE \(name)") }
        return url(name)
    }

    /// Drops a test's database (its connections are ended first).
    func drop(_ url: String) {
        guard let name = url.split(separator: "/").last else { return }
        try? admin.withConnection { try $0.simple("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    }

    func url(_ database: String) -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { $0.localizedStandardCompare($1) == .orderedDescending }
        return versions.map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }
}

struct TestPostgresUnavailable: Error, CustomStringConvertible {
    let description: String
}
