import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 37 #2: the binary installed by `scripts/install-tree.sh` (the layout of the Debian
/// package) serves a new site from an empty directory with only `--db` given: it read its
/// migrations, static files, strings and city catalog from `usr/share/weatherboard`, not from
/// the checkout it was built from.
@Suite struct InstallTests {
    @Test func anInstalledBinaryServesANewSiteFromAnEmptyDirectory() throws {
        try #require(FileManager.default.isExecutableFile(atPath: DurabilityTests.executable), "build the weatherboard product first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-install-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for sub in ["root", "empty", "state"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        let script = AppConfiguration.repositoryFolder("scripts/install-tree.sh")
        #expect(try ChildProcess([script, DurabilityTests.executable, folder + "/root"]).wait() == 0)
        let port = try freeLoopbackPort()
        let log = folder + "/serve.log"
        let server = try ChildProcess(shell: "cd '\(folder)/empty' && exec '\(folder)/root/usr/bin/weatherboard' serve "
            + "--db '\(folder)/state/site.sqlite' --port \(port) --weather demo >'\(log)' 2>&1")
        defer {
            server.signal(SIGTERM)
            _ = server.wait()
        }
        try waitUntil("the installed binary answers /healthz", timeout: 120) {
            (try? TestClient.request(port: port, "GET", "/healthz").status) == 200
        }
        let page = try TestClient.request(port: port, "GET", "/city/seoul")
        #expect(page.status == 200)
        let document = try MarkupDocument(page.body)
        #expect(document.nodes("//h1").first?.text.contains("Seoul") == true)
        #expect(try TestClient.request(port: port, "GET", "/static/css/site.css").status == 200)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("files: migrations \(folder)/root/usr/share/weatherboard/Migrations"), "\(text.prefix(2_000))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/empty").isEmpty, "nothing written where it was started")
    }
}
