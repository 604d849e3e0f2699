import Foundation
import Testing
import HTTPTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real SMTP server on loopback for the tests: Python's aiosmtpd (from PyPI), storing what it
/// receives in a Maildir that the tests read. Stopped and started again on the same port, it is
/// a relay that goes away and comes back.
final class MailCatcher {
    let port: Int
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-mail-\(UUID().uuidString)").path
    private var process: ChildProcess?

    var url: String { "smtp://127.0.0.1:\(port)" }

    private init(port: Int) { self.port = port }

    /// Why aiosmtpd cannot run here, or nil when it can.
    static let unavailableReason: String? = {
        guard let check = try? ChildProcess(shell: "exec python3 -c 'import aiosmtpd'"), check.wait() == 0 else {
            return "python3 with aiosmtpd is missing (pip install aiosmtpd)"
        }
        return nil
    }()

    /// A catcher, or nil (after saying why) when aiosmtpd is missing and not required; CI sets
    /// WEATHERBOARD_REQUIRE_SMTP=1 so that a missing one fails instead.
    static func start() throws -> MailCatcher? {
        if let reason = unavailableReason {
            if ProcessInfo.processInfo.environment["WEATHERBOARD_REQUIRE_SMTP"] == "1" {
                Issue.record("an SMTP server is required here: \(reason)")
            } else {
                print("mail tests not run: \(reason)")
            }
            return nil
        }
        let catcher = try MailCatcher(port: freeLoopbackPort())
        try catcher.resume()
        return catcher
    }

    /// Starts (again) listening on the port.
    func resume() throws {
        process = try ChildProcess(shell: "exec python3 -m aiosmtpd -n -l 127.0.0.1:\(port) -c aiosmtpd.handlers.Mailbox \(folder)")
        try waitUntil("the SMTP server listens", timeout: 20) { (try? TestClient(port: port)) != nil }
    }

    /// Stops listening: the relay is down.
    func pause() {
        process?.signal(SIGKILL)
        process?.wait()
        process = nil
    }

    /// Stops answering without closing: connections are accepted and wait for its greeting, as
    /// with a relay that hangs (SIGSTOP); `thaw` lets them go on.
    func freeze() { process?.signal(SIGSTOP) }

    func thaw() { process?.signal(SIGCONT) }

    deinit {
        pause()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Every message received so far, oldest first.
    func messages() -> [CaughtMail] {
        let files = ["new", "cur"].flatMap { sub -> [String] in
            let path = folder + "/" + sub
            return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).map { path + "/" + $0 }
        }
        return files.compactMap { path in
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return CaughtMail(String(decoding: data, as: UTF8.self), modified: (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast)
        }.sorted { $0.modified < $1.modified }
    }

    /// Waits until `count` messages arrived (up to 30 s), and returns them all.
    @discardableResult
    func waitForMessages(_ count: Int) throws -> [CaughtMail] {
        try waitUntil("\(count) message(s) arrive", timeout: 30) { messages().count >= count }
        return messages()
    }
}

/// A message as the relay received it, its parts decoded.
struct CaughtMail {
    var headers: [(String, String)]
    var text = ""
    var html = ""
    var modified: Date

    init(_ raw: String, modified: Date) {
        self.modified = modified
        let normalised = raw.replacingOccurrences(of: "\r\n", with: "\n")
        let split = normalised.components(separatedBy: "\n\n")
        headers = Self.headers(split[0])
        let body = split.dropFirst().joined(separator: "\n\n")
        guard let type = header("Content-Type"), let range = type.range(of: "boundary=\"") else { return }
        let boundary = type[range.upperBound...].prefix { $0 != "\"" }
        for part in body.components(separatedBy: "--" + boundary).dropFirst() {
            let pieces = part.components(separatedBy: "\n\n")
            guard pieces.count >= 2 else { continue }
            let partHeaders = Self.headers(pieces[0].trimmingCharacters(in: .newlines))
            let encoded = pieces[1].replacingOccurrences(of: "\n", with: "")
            let decoded = Data(base64Encoded: encoded).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let partType = partHeaders.first { $0.0.lowercased() == "content-type" }?.1 ?? ""
            if partType.hasPrefix("text/plain") { text = decoded } else if partType.hasPrefix("text/html") { html = decoded }
        }
    }

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }

    var to: String { header("To") ?? "" }
    /// The subject, its RFC 2047 words decoded (the space between two such words is not text).
    var subject: String {
        var out = ""
        var previousEncoded = false
        for word in (header("Subject") ?? "").components(separatedBy: " ") {
            if word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="), let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) {
                out += (previousEncoded || out.isEmpty ? "" : " ") + String(decoding: data, as: UTF8.self)
                previousEncoded = true
            } else {
                out += (out.isEmpty ? "" : " ") + word
                previousEncoded = false
            }
        }
        return out
    }

    /// The path of the text's one link to `origin` ("/password/reset/…").
    func path(at origin: String) -> String? {
        text.components(separatedBy: .whitespacesAndNewlines).first { $0.hasPrefix(origin + "/") }.map { String($0.dropFirst(origin.count)) }
    }

    private static func headers(_ block: String) -> [(String, String)] {
        var result: [(String, String)] = []
        for line in block.components(separatedBy: "\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), let last = result.popLast() {
                result.append((last.0, last.1 + " " + line.trimmingCharacters(in: .whitespaces)))
            } else if let colon = line.firstIndex(of: ":") {
                result.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        return result
    }
}
