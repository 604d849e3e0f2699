import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 37 #4: the node's log as an operator's collector reads it.
@Suite struct LogTests {
    /// `serve --log-format json --access-log on`: every line the node writes is one JSON object
    /// with its time, level and message, start-up lines included; a request's line carries its
    /// id, method, path (without the query), status, bytes, duration and client.
    @Test func jsonLinesWithTheAccessLogOn() throws {
        let lines = try Self.serve(["--log-format", "json", "--access-log", "on"]) { (port: Int) throws in
            #expect(try TestClient.request(port: port, "GET", "/city/seoul?lang=ko").status == 200)
        }
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not one JSON object: \(line)")
            if let object { objects.append(object) }
        }
        #expect(objects.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        #expect(objects.contains { ($0["message"] as? String)?.hasPrefix("database: SQLite") == true }, "start-up lines too")
        let request = try #require(objects.first { $0["path"] as? String == "/city/seoul" })
        #expect(request["method"] as? String == "GET")
        #expect(request["status"] as? Int == 200)
        #expect((request["bytes"] as? Int ?? 0) > 1_000)
        #expect(request["duration_ms"] is Int)
        #expect(request["client"] as? String == "127.0.0.1")
        #expect((request["request_id"] as? String)?.isEmpty == false)
        #expect(!lines.joined().contains("lang=ko"), "the query is never logged")
    }

    /// The default: text lines stamped alike, and no line per request.
    @Test func byDefaultTextAndNoLinePerRequest() throws {
        let lines = try Self.serve([]) { (port: Int) throws in
            for _ in 0..<3 { #expect(try TestClient.request(port: port, "GET", "/city/seoul").status == 200) }
        }
        #expect(!lines.isEmpty)
        let stamped = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (trace|debug|info|notice|warning|error|critical) \S+: "#)
        for line in lines { #expect(line.firstMatch(of: stamped) != nil, "unstamped: \(line)") }
        #expect(!lines.contains { $0.contains("/city/seoul") }, "no access log unless asked")
    }

    /// Runs the built binary on a new SQLite site with `arguments`, lets `work` use its port,
    /// stops it, and gives back the lines it wrote.
    static func serve(_ arguments: [String], _ work: (Int) throws -> Void) throws -> [String] {
        try serve(arguments, withProcess: { port, _ in try work(port) })
    }

    /// `serve`, with the server's process id for `work` too.
    static func serve(_ arguments: [String], withProcess work: (Int, pid_t) throws -> Void) throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: DurabilityTests.executable), "build the weatherboard product first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-log-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: AppHarness.templateDatabase, toPath: folder + "/site.sqlite")
        let port = try freeLoopbackPort()
        let log = folder + "/serve.log"
        let all = ["serve", "--db", folder + "/site.sqlite", "--port", String(port), "--weather", "demo",
                   "--migrations", AppConfiguration.repositoryFolder("Migrations"), "--public", AppConfiguration.repositoryFolder("Public"),
                   "--templates", AppConfiguration.repositoryFolder("Templates")] + arguments
        let server = try ChildProcess(["/bin/sh", "-c", "exec \"$0\" \"$@\" >\(log) 2>&1", DurabilityTests.executable] + all)
        do {
            try waitUntil("the node answers /healthz", timeout: 60) { (try? TestClient.request(port: port, "GET", "/healthz").status) == 200 }
            try work(port, server.pid)
        } catch {
            server.signal(SIGTERM)
            _ = server.wait()
            throw error
        }
        server.signal(SIGTERM)
        _ = server.wait()
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
    }
}
