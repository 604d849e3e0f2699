import Foundation
import FoundationXML
import HTTPServer
import Testing
@testable import Weatherboard

/// One text policy for every field people type, measured in the unit the database checks.
@Suite(.serialized, .onEveryEngine) struct TextPolicyTests {
    static let stacked = "Z" + String(repeating: "\u{0301}", count: 1_000) // one Character, 1,001 scalars

    @Test func aDisplayNameOfStackedMarksIsRefused() throws {
        let app = try AppHarness()
        let browser = app.browser()
        try browser.get("/signup")
        let (response, page) = try browser.post("/signup", [("username", "stacker"), ("display_name", Self.stacked),
                                                            ("password", "correct horse battery")])
        #expect(response.status == 422)
        #expect(page?.text("//span[@id='display-name-error']") != nil)
        #expect(try app.count("SELECT count(*) FROM users") == 0)
    }

    @Test(arguments: [
        ("\u{0}hello", "NUL"), ("hel\u{0}lo", "NUL"), ("bell\u{7}", "control"), ("odd \u{FFFE}", "control"),
        ("x" + String(repeating: "\u{0301}", count: 5), "stacked"), (String(repeating: "é", count: 501), "500"),
    ])
    func postsOutsideThePolicyAreRefusedWithAMessageAndTheTextKept(body: String, message: String) throws {
        let app = try AppHarness()
        let person = app.browser()
        try person.signUp("writer")
        let (response, page) = try person.postOnBoard("seoul", body)
        #expect(response.status == 422)
        let error = try #require(page?.text("//p[@id='post-error']"))
        #expect(error.contains(message), "\(error)")
        #expect(try app.count("SELECT count(*) FROM posts") == 0)
    }

    @Test func postsWithinThePolicyAreStoredWhole() throws {
        let app = try AppHarness()
        let person = app.browser()
        try person.signUp("writer")
        let body = "Line one\n\tline two: 서울 ☔️ café a\u{0308}\u{0301} <b>&amp;</b> \"q\" 'x'"
        #expect(try person.postOnBoard("seoul", body).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts WHERE body = ?", [body.precomposedStringWithCanonicalMapping]) == 1)
        // and the feed stays well-formed XML
        let feed = try app.get("/city/seoul/feed.atom")
        #expect(XMLParser(data: Data(feed.body)).parse())
        #expect(String(decoding: feed.body, as: UTF8.self).contains("서울 ☔️"))
    }

    @Test func aReportDetailOverTheLimitIsRefusedNotSilentlyDropped() throws {
        let app = try AppHarness()
        let author = app.browser()
        try author.signUp("author")
        try author.postOnBoard("seoul", "Hello")
        let reader = app.browser()
        try reader.signUp("reader")
        try reader.get("/city/seoul")
        let id = Int64(try app.count("SELECT id FROM posts"))
        // 600 characters as people count them, 1,200 scalars as the database counts (x with an
        // acute accent has no precomposed form, so NFC keeps both scalars)
        let detail = String(repeating: "x\u{0301}", count: 600)
        let (response, page) = try reader.post("/posts/\(id)/report", [("reason", "other"), ("detail", detail)])
        #expect(response.status == 422) // the form again, with the message
        #expect(page?.text("//p[@id='report-error']") == "The detail has at most 1,000 characters.")
        #expect(try app.count("SELECT count(*) FROM reports") == 0)
        let (fine, _) = try reader.post("/posts/\(id)/report", [("reason", "other"), ("detail", String(repeating: "x\u{0301}", count: 400))])
        #expect(fine.status == 303)
        #expect(try app.count("SELECT count(*) FROM reports") == 1)
    }

    /// Thousands of generated inputs through the form decoder and the policy: no crash, and every
    /// accepted value within the limits as counted independently here.
    @Test func generatedInputsNeverEscapeThePolicy() throws {
        var generator = SeededGenerator(seed: 20261123)
        let alphabet: [String] = ["a", "Z", " ", "%", "%00", "%0A", "%09", "%07", "%EF%BF%BE", "%CC%81", "%E2%80%AE", "+", "=", "&",
                                  "%ED%A0%80", "%FF", "%C3%A9", "%EC%84%9C", "%F0%9F%8C%A7", "%7F", "%C2%85", "%EF%B7%90"]
        var accepted = 0
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...60, using: &generator)
            let encoded = "body=" + (0..<length).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            guard let form = try? URLEncodedForm(parsing: encoded), let value = form["body"] else { continue }
            for policy in [TextPolicy.post, TextPolicy.displayName, TextPolicy(maxScalars: 10, maxBytes: 20, allowsLines: true)] {
                guard policy.problem(value) == nil else { continue }
                accepted += 1
                #expect(value.unicodeScalars.count <= policy.maxScalars && value.utf8.count <= policy.maxBytes)
                #expect(!value.unicodeScalars.contains { $0.value < 0x20 && !(policy.allowsLines && ($0 == "\n" || $0 == "\t")) })
                #expect(!value.unicodeScalars.contains { $0.value == 0x7F || $0.value == 0xFFFE || (0x80...0x9F).contains($0.value) })
                var run = 0, longest = 0
                for scalar in value.unicodeScalars {
                    let isMark = [.nonspacingMark, .spacingMark, .enclosingMark].contains(scalar.properties.generalCategory)
                    run = isMark ? run + 1 : 0
                    longest = max(longest, run)
                }
                #expect(longest <= TextPolicy.maxMarksPerCharacter)
            }
        }
        #expect(accepted > 200, "the generator must also produce acceptable text")
    }
}

/// A small deterministic generator (SplitMix64), so a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
