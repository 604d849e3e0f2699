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
        configuration.logLevel = .warning
        configuration.server.eventLoops = 1
        configure(&configuration)
        application = try Application(configuration: configuration)
        try application.start()
    }

    deinit {
        application.server.shutdown()
        application.server.wait()
        try? FileManager.default.removeItem(atPath: folder)
    }

    func get(_ target: String, headers: [(String, String)] = []) throws -> WireResponse {
        try TestClient.request(port: port, "GET", target, headers: headers)
    }

    /// GETs an HTML page and parses it.
    func page(_ target: String, headers: [(String, String)] = []) throws -> (WireResponse, HTMLDocument) {
        let response = try get(target, headers: headers)
        return (response, try HTMLDocument(response.body))
    }
}
