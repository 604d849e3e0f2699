import Foundation
import Testing
@testable import Weatherboard

/// The string catalogs and templates shipped in the repository.
@Suite struct ResourceTests {
    let templates = AppConfiguration.repositoryFolder("Templates")

    @Test func catalogsHaveTheSameKeys() throws {
        let localization = try Localization(directory: templates + "/strings")
        let english = Set(try #require(localization.catalogs[.en]).keys)
        let korean = Set(try #require(localization.catalogs[.ko]).keys)
        #expect(english.subtracting(korean).isEmpty, "only in en: \(english.subtracting(korean).sorted())")
        #expect(korean.subtracting(english).isEmpty, "only in ko: \(korean.subtracting(english).sorted())")
    }

    @Test func everyKeyATemplateUsesExists() throws {
        let localization = try Localization(directory: templates + "/strings")
        let keys = Set(try #require(localization.catalogs[.en]).keys)
        let files = try FileManager.default.contentsOfDirectory(atPath: templates).filter { $0.hasSuffix(".mustache") }
        #expect(!files.isEmpty)
        let pattern = try Regex(#"\{\{\s*t\.([A-Za-z0-9_]+)\s*\}\}"#)
        var used = 0
        for file in files {
            let text = try String(contentsOfFile: templates + "/" + file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                let key = String(text[match.output[1].range!])
                used += 1
                #expect(keys.contains(key), "\(file) uses t.\(key), which no catalog has")
            }
        }
        #expect(used > 0)
    }

    @Test func catalogsThatDifferAreRefusedAtStartup() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strings-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"a": "A", "b": "B"}"#.write(toFile: folder + "/en.json", atomically: true, encoding: .utf8)
        try #"{"a": "가"}"#.write(toFile: folder + "/ko.json", atomically: true, encoding: .utf8)
        #expect(throws: StartupError.self) { try Localization(directory: folder) }
    }

    @Test func aCatalogWithoutAKeyTheTemplatesUseStopsStartup() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/strings", withIntermediateDirectories: true)
        for language in ["en", "ko"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: templates + "/strings/\(language).json"))
            var catalog = try JSONDecoder().decode([String: String].self, from: data)
            catalog["site_name"] = nil
            try JSONEncoder().encode(catalog).write(to: URL(fileURLWithPath: folder + "/strings/\(language).json"))
        }
        #expect(throws: StartupError.self) { try Renderer(templatesDirectory: folder) }
    }
}
