import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 61 #1: every route the router knows, with every field name a handler reads or a form
/// sends, given hostile values (controls, broken and overlong UTF-8, lone surrogates, 10,000
/// combining marks, numbers past Int64 and Double, repeated keys) by a guest, a member and an
/// admin, against the real `weatherboard` executable on each engine. The process stays up and no
/// answer is a 5xx. `WEATHERBOARD_ROUTE_FUZZ_SECONDS` sets how long each engine is fuzzed (CI: 20;
/// `scripts/fuzz-routes.sh` runs longer), `WEATHERBOARD_ROUTE_FUZZ_SEED` replays a run.
@Suite(.serialized, .onEveryEngine) struct RouteFuzzTests {
    /// Values as they travel in a URL or a form body (already percent-encoded).
    static let hostile: [String] = [
        "%00", "world%00", "a%00b", "%00%00%00", "%01%02%1F%7F", "%C2%80%C2%9F", "%0D%0A", "%0A%0ASet-Cookie:%20x=1",
        "%ED%A0%80", "%ED%B0%80", "%ED%A0%80%ED%B0%80", "%C0%AF", "%C0%80", "%E0%80%AF", "%F0%80%80%AF", "%F4%90%80%80", "%FF%FE",
        "%C3", "%E2%82", "%", "%G0", "%2", "%EF%BF%BE", "%EF%BF%BF", "%EF%BF%BD", "%EF%B7%90",
        "%E2%80%AE", "%E2%80%AEdlrow", "%E2%81%A6x%E2%81%A9", "%E2%80%8B", "%EF%BB%BF", "%CC%81", "%CC%81a",
        String(repeating: "%CC%81", count: 10_000), "a" + String(repeating: "%CC%81", count: 10_000),
        String(repeating: "%E1%84%80", count: 2_000), String(repeating: "x", count: 5_000),
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "99999999999999999999999", "1e308", "1e309", "-1e309", "1.7976931348623157e308", "4.9e-324", "NaN", "nan", "inf", "-inf",
        "-0", "0", "-1", "0x10", "1.5", "1,5", "%2B1", "+", "%20", "", "%22", "%27", "%3Cscript%3E", "..%2F..%2Fetc%2Fpasswd",
        "%2F%2Fevil.example", "https%3A%2F%2Fevil.example%2F", "javascript:alert(1)", "%5C%5Cevil", "2026-13-45", "25%3A99",
        "99%3A99", "Asia%2FSeoul", "Mars%2FOlympus", "..%2F..%2Fzoneinfo", "UTC", "ko", "en", "xx", "on", "true", "%EC%84%9C%EC%9A%B8",
        "%F0%9F%98%80", "%E2%80%9C", "%22world", "rain", "*", "%25", "_", "%5B%5D",
    ]

    /// Values that get past a handler's first checks, so that what is behind them is reached too.
    static let ordinary = ["1", "2", "world", "seoul", "busan", "rain", "hello%20there", "on", "ko", "en", "07%3A00", "22%3A00", "60",
                           "Asia%2FSeoul", "member", "admin", "week", "newest", "best", "%2Fcity%2Fseoul", "day"]

    /// Every name a handler reads from a query or a form (the sources), and every field a form sends (the templates).
    static let fieldNames: [String] = {
        var names: Set<String> = []
        func scan(_ folder: String, _ pattern: String) {
            let regex = try! NSRegularExpression(pattern: pattern)
            let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") || file.hasSuffix(".html") {
                guard let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8) else { continue }
                let whole = NSRange(text.startIndex..., in: text)
                for match in regex.matches(in: text, range: whole) {
                    if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
                }
            }
        }
        scan(AppConfiguration.repositoryFolder("Sources/Weatherboard"), #"(?:form|items|query|queryItems\(\)|fields)\[\"([a-z_0-9]+)\"\]"#)
        scan(AppConfiguration.repositoryFolder("Sources/Weatherboard"), #"values\(\"([a-z_0-9]+)\"\)"#)
        scan(AppConfiguration.repositoryFolder("Templates"), #"name=\"([a-z_0-9]+)\""#)
        return names.sorted()
    }()

    @Test func noValueInAnyFieldOfAnyRouteEndsTheProcessOrAnswers5xx() throws {
        try #require(FileManager.default.isExecutableFile(atPath: DurabilityTests.executable), "build the weatherboard product first")
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["WEATHERBOARD_ROUTE_FUZZ_SECONDS"].flatMap(Double.init) ?? 20
        let seed = environment["WEATHERBOARD_ROUTE_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970)
        // The router's own table, from an application built as the executable builds it.
        let routes = try AppHarness().application.router.routes.filter { $0.path != "/static/{path...}" }
        #expect(routes.count > 60)
        #expect(Self.fieldNames.contains("q") && Self.fieldNames.contains("body") && Self.fieldNames.contains("time_zone"))

        let site = try DurabilityTests.Site(named: "fuzz")
        let (folder, database) = (site.folder, site.arguments)
        defer { withExtendedLifetime(site) {} } // its database outlives the nodes
        let port = try freeLoopbackPort()
        let log = folder + "/node.log"
        let node = try DurabilityTests.Node(arguments: database + ["--searches-per-minute", "1000000", "--sign-ins-per-minute", "1000000",
                                                                   "--sign-ups-per-hour", "1000000", "--reports-per-day", "1000000",
                                                                   "--reactions-per-hour", "1000000"],
                                            port: port, log: log)
        defer { node.stop() }

        // A member with a post and a reply to aim ids at, and an admin.
        let member = Browser(port: port), admin = Browser(port: port)
        try member.signUp("member")
        try admin.signUp("admin")
        try member.postOnBoard("seoul", "world")
        try member.get("/city/seoul")
        let opened = try site.open()
        defer { try? opened.close() }
        try opened.write(.cluster) { db in try db.execute("UPDATE users SET role = 'admin' WHERE username = 'admin'") }
        let postID = try opened.read { db in try db.one("SELECT max(id) FROM posts") { $0.int64(0) } } ?? 1
        let identities: [[String: String]] = [[:], member.cookies, admin.cookies]

        // Each route's own fields: the forms its pages send there (found by opening every page as
        // the admin), so that most requests give a route names it reads.
        var ownFields: [String: Set<String>] = [:]
        func pattern(of action: String) -> String? {
            let path = action.split(separator: "?").first.map(String.init) ?? action
            let segments = path.split(separator: "/")
            return routes.first { route in
                let parts = route.path.split(separator: "/")
                return parts.count == segments.count && zip(parts, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
            }?.path
        }
        func concrete(_ pattern: String) -> String {
            pattern.replacingOccurrences(of: "{id}", with: String(postID)).replacingOccurrences(of: "{slug}", with: "seoul")
                .replacingOccurrences(of: "{city}", with: "seoul").replacingOccurrences(of: "{username}", with: "member")
        }
        for route in routes where route.method == "GET" && !route.path.hasSuffix("/live") && !route.path.contains("{token}") {
            guard let (_, page) = try? admin.get(concrete(route.path)) else { continue }
            for form in page.nodes("//form[@action]") {
                guard let action = form["action"], let own = pattern(of: action) else { continue }
                for field in page.nodes("//form[@action='\(action)']//*[@name]") { if let name = field["name"] { ownFields[own, default: []].insert(name) } }
            }
        }
        #expect(ownFields["/search/posts"]?.contains("q") == true, "\(ownFields.keys.sorted())")

        var generator = SeededGenerator(seed: seed)
        func value() -> String {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return Self.ordinary.randomElement(using: &generator)!
            case 1: return Self.hostile.randomElement(using: &generator)!
            default: return Self.ordinary.randomElement(using: &generator)! + Self.hostile.randomElement(using: &generator)!
            }
        }
        func fields(for route: String) -> String {
            let own = Array(ownFields[route] ?? [])
            return (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                let name: String
                switch Int.random(in: 0..<8, using: &generator) {
                case 0: name = value()
                case 1, 2: name = Self.fieldNames.randomElement(using: &generator)!
                default: name = own.randomElement(using: &generator) ?? Self.fieldNames.randomElement(using: &generator)!
                }
                return name + "=" + value()
            }.joined(separator: "&")
        }
        func path(_ pattern: String) -> String {
            pattern.split(separator: "/").map { segment -> String in
                guard segment.hasPrefix("{") else { return String(segment) }
                let hostile = Int.random(in: 0..<3, using: &generator) == 0
                switch segment {
                case "{id}": return hostile ? value() : String(postID - Int64.random(in: 0...1, using: &generator))
                case "{slug}", "{city}": return hostile ? value() : ["seoul", "busan"].randomElement(using: &generator)!
                case "{username}": return hostile ? value() : ["member", "admin"].randomElement(using: &generator)!
                default: return value()
                }
            }.reduce("") { $0 + "/" + $1 }
        }

        var failures: [String] = []
        var sent = 0
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && failures.count < 20 {
            let route = routes.randomElement(using: &generator)!
            let cookies = identities.randomElement(using: &generator)!
            var target = path(route.path)
            if target.isEmpty { target = "/" }
            let query = fields(for: route.path)
            if !query.isEmpty { target += "?" + query }
            // A breath between requests: the node and this client would otherwise hold both of
            // the machine's cores for the whole run, and the suites beside it keep their timing.
            usleep(300)
            let body = route.method == "POST" ? fields(for: route.path) : ""
            var headers: [(String, String)] = [("Sec-Fetch-Site", "same-origin")]
            if !cookies.isEmpty { headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))) }
            if route.method == "POST" { headers.append(("Content-Type", "application/x-www-form-urlencoded")) }
            if Int.random(in: 0..<4, using: &generator) == 0 { headers.append(("Accept-Language", "ko")) }
            let request = "\(route.method) \(target.prefix(300)) body \(body.prefix(300)) (\(cookies.isEmpty ? "guest" : "signed in"))"
            sent += 1
            do {
                let response = try TestClient.request(port: port, route.method, target, headers: headers, body: Array(body.utf8),
                                                     headOnly: route.path.hasSuffix("/live"))
                if response.status >= 500 { failures.append("\(response.status) for \(request)") }
            } catch {
                let alive = (try? TestClient.request(port: port, "GET", "/healthz").status) == 200
                let lines = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n") ?? []
                let tail = (lines.filter { $0.contains("Fatal error") || $0.contains("Crash") }.prefix(3) + lines.suffix(2)).joined(separator: "\n")
                failures.append("\(error) for \(request); the node \(alive ? "still answers" : "is gone"): \(tail)")
                if !alive { break }
            }
        }
        print("◇ route fuzzing on \(TestEngine.current): \(sent) requests in \(Int(seconds)) s, seed \(seed)")
        #expect(failures.isEmpty, "seed \(seed), \(sent) requests:\n\(failures.joined(separator: "\n"))")
        #expect(sent > 500, "seed \(seed): only \(sent) requests in \(seconds) s")
        #expect(try TestClient.request(port: port, "GET", "/healthz").status == 200)
    }
}
