import Foundation
import HTTPServer
import HTTPTestSupport
import Logging
@testable import Weatherboard

/// The real application on an ephemeral port with a fresh database in a temporary folder.
final class AppHarness {
    let application: Application
    let folder: String
    var port: Int { application.server.port }

    init(configure: (inout AppConfiguration) -> Void = { _ in }) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var configuration = AppConfiguration()
        configuration.port = 0
        configuration.databasePath = folder + "/test.sqlite"
        try FileManager.default.copyItem(atPath: AppHarness.templateDatabase, toPath: configuration.databasePath)
        configuration.logLevel = .warning
        configuration.server.eventLoops = 1
        configuration.weatherProviders = ["demo"]
        configuration.clock = { AppHarness.fixedNow }
        configure(&configuration)
        application = try Application(configuration: configuration)
        try application.start()
    }

    /// 2026-11-22 05:45 UTC: 14:45 in Seoul, 18:45 in Auckland, and still the 21st in Honolulu.
    static let fixedNow = Date(timeIntervalSince1970: 1_795_326_300)

    /// A migrated database with the city catalog imported, made once and copied for each test
    /// (the import is the slow part of start-up).
    static let templateDatabase: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wb-template-\(UUID().uuidString).sqlite").path
        do {
            let (database, _) = try AppDatabase.open(path: path, migrationsDirectory: AppConfiguration.repositoryFolder("Migrations"))
            try CityCatalog.importIfEmpty(into: database)
            try database.pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
            try database.pool.close()
        } catch {
            fatalError("cannot prepare the template database: \(error)")
        }
        return path
    }()

    deinit {
        application.server.shutdown()
        application.server.wait()
        try? FileManager.default.removeItem(atPath: folder)
    }

    func get(_ target: String, headers: [(String, String)] = []) throws -> WireResponse {
        try TestClient.request(port: port, "GET", target, headers: headers)
    }

    /// GETs an HTML page and parses it.
    func page(_ target: String, headers: [(String, String)] = []) throws -> (WireResponse, MarkupDocument) {
        let response = try get(target, headers: headers)
        return (response, try MarkupDocument(response.body))
    }
}
