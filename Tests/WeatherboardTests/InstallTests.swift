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

    /// Issue 39 #5: the region names were read with `try?`: a missing or broken regions.tsv gave
    /// pages that said "11, France" and nobody a reason. Now the site does not start, and says why.
    @Test func aBrokenRegionFileStopsTheStartAndSaysWhy() throws {
        try #require(FileManager.default.isExecutableFile(atPath: DurabilityTests.executable), "build the weatherboard product first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-install-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/root", withIntermediateDirectories: true)
        #expect(try ChildProcess([AppConfiguration.repositoryFolder("scripts/install-tree.sh"), DurabilityTests.executable, folder + "/root"]).wait() == 0)
        try "FR\t11\tIle-de-France\nFR\t11\n".write(toFile: folder + "/root/usr/share/weatherboard/regions.tsv", atomically: true, encoding: .utf8)
        let log = folder + "/serve.log"
        let server = try ChildProcess(shell: "exec '\(folder)/root/usr/bin/weatherboard' serve --db '\(folder)/site.sqlite' "
            + "--port \(try freeLoopbackPort()) --weather demo >'\(log)' 2>&1")
        #expect(server.wait() != 0)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("regions.tsv line 2 is malformed"), "\(text.prefix(2_000))")
    }
}
