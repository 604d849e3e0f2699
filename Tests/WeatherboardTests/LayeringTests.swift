import Foundation
import Testing
@testable import Weatherboard

/// The house's shape (issue 63 #2): a folder uses another when one of its files names a type
/// declared there. Layers only look down (Support, Persistence, Rendering, Web, Features, App);
/// feature folders use each other without a cycle. Read from the text, as a newcomer would.
@Suite struct LayeringTests {
    static let layers = ["Support", "Persistence", "Rendering", "Web", "Features", "App"]

    struct Use: Hashable, CustomStringConvertible {
        let file: String, type: String
        var description: String { "\(file) names \(type)" }
    }

    /// `[folder: [folder it uses: why]]`, folders as `Support` or `Features/Boards`.
    static func uses() throws -> [String: [String: Set<Use>]] {
        let root = AppConfiguration.repositoryFolder("Sources/Weatherboard")
        let paths = try FileManager.default.subpathsOfDirectory(atPath: root).filter { $0.hasSuffix(".swift") }
        func folder(_ path: String) -> String? {
            let parts = path.split(separator: "/").map(String.init)
            guard parts.count > 1 else { return nil } // WeatherboardCommand.swift: the entry point
            return parts[0] == "Features" ? parts[0] + "/" + parts[1] : parts[0]
        }
        // Comments and string literals name no types.
        let noise = try Regex(#"//[^\n]*|/\*[\s\S]*?\*/|"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*""#)
        let declaration = try Regex(#"(?m)^([ \t]*)(?:(?:public|package|internal|private|fileprivate|final|nonisolated|indirect) )*(?:struct|class|enum|protocol|actor|typealias) ([A-Z]\w*)"#)
        let word = try Regex(#"\b[A-Z]\w*\b"#).wordBoundaryKind(.simple) // "Notices.keptFor" is one word to Unicode
        var texts: [String: String] = [:], owner: [String: String] = [:], declared: [String: Int] = [:]
        for path in paths {
            guard let folder = folder(path) else { continue }
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8).replacing(noise, with: "")
            texts[path] = text
            for match in text.matches(of: declaration) {
                guard let name = match.output[2].substring.map(String.init) else { continue }
                declared[name, default: 0] += 1
                if match.output[1].substring?.isEmpty == true, owner[name] == nil { owner[name] = folder }
            }
        }
        owner = owner.filter { declared[$0.key] == 1 } // a name declared twice (a nested `Reader`) is nobody's
        var uses: [String: [String: Set<Use>]] = [:]
        for (path, text) in texts {
            guard let folder = folder(path) else { continue }
            for name in Set(text.matches(of: word).map { String(text[$0.range]) }) {
                guard let other = owner[name], other != folder else { continue }
                uses[folder, default: [:]][other, default: []].insert(Use(file: path, type: name))
            }
        }
        return uses
    }

    static func layer(_ folder: String) -> Int { layers.firstIndex(of: String(folder.split(separator: "/")[0])) ?? layers.count }

    @Test func layersOnlyLookDown() throws {
        let uses = try Self.uses()
        #expect(uses.count > 10, "the reading found the folders")
        for (folder, used) in uses {
            for (other, why) in used where Self.layer(other) > Self.layer(folder) {
                Issue.record("\(folder) uses \(other), a layer above it: \(why.sorted { $0.description < $1.description })")
            }
        }
    }

    @Test func featuresHaveNoCycle() throws {
        let uses = try Self.uses()
        let features = uses.mapValues { Set($0.keys.filter { $0.hasPrefix("Features/") }) }.filter { $0.key.hasPrefix("Features/") }
        #expect(features.count >= 10)
        // A cycle is a folder reached again from itself.
        for start in features.keys.sorted() {
            var path = [start], seen: Set<String> = []
            func walk(_ folder: String) -> [String]? {
                for next in (features[folder] ?? []).sorted() {
                    if next == start { return path + [start] }
                    guard seen.insert(next).inserted else { continue }
                    path.append(next)
                    if let cycle = walk(next) { return cycle }
                    path.removeLast()
                }
                return nil
            }
            if let cycle = walk(start) {
                let why = zip(cycle, cycle.dropFirst()).map { "\($0) → \($1): \(Set(uses[$0]![$1]!.map(\.type)).sorted().prefix(3))" }
                Issue.record("a cycle between features: \(why.joined(separator: "; "))")
            }
        }
    }

    /// The check reads what it means to: a use planted in a copy is found.
    @Test func theReadingFindsAUse() throws {
        let uses = try Self.uses()
        #expect(uses["Features/Boards"]?["Features/Photos"]?.contains { $0.type == "PhotoProcessor" } == true)
        #expect(uses["App"]?["Features/Boards"] != nil)
        #expect(uses["Support"]?["App"] == nil)
    }
}
