import Foundation
import HTTPTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A small client for the W3C WebDriver protocol spoken by `chromedriver`, over the same
/// raw-socket client the other tests use. Written here rather than taken from a library: no
/// maintained Swift WebDriver client is in the package mirror, and the dozen commands these
/// tests need are plain JSON over HTTP.
final class WebDriver {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Why a browser is not available here, or nil when it is.
    static var unavailableReason: String? {
        for path in [chromium, chromedriver] where !FileManager.default.isExecutableFile(atPath: path) {
            return "\(path) is missing (apt-get install -y chromium chromium-driver)"
        }
        return nil
    }

    /// CI sets this so that a missing browser fails the run instead of skipping.
    static var required: Bool { ProcessInfo.processInfo.environment["WEATHERBOARD_REQUIRE_BROWSER"] == "1" }

    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    private let driver: ChildProcess
    private let port: Int
    private(set) var session = ""
    static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// Starts chromedriver and a headless Chromium session.
    init(width: Int = 1280, height: Int = 900, acceptLanguage: String = "en-GB,en") throws {
        port = try freeLoopbackPort()
        driver = try ChildProcess([Self.chromedriver, "--port=\(port)", "--silent"])
        // Up to 30 s: on a busy two-core machine (other suites run alongside) start-up is slow.
        do {
            try waitUntil("chromedriver answers", timeout: 30) { (try? call("GET", "/status")) != nil }
        } catch {
            throw Failure(description: "chromedriver did not start")
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": [
                "binary": Self.chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=\(width),\(height)", "--hide-scrollbars", "--force-device-scale-factor=1"],
                "prefs": ["intl.accept_languages": acceptLanguage],
            ],
            "goog:loggingPrefs": ["browser": "ALL"],
            // Below the 120 s this client waits, so a stuck page ends as chromedriver's error.
            "timeouts": ["pageLoad": 60_000, "script": 30_000],
        ]]]
        let created = try call("POST", "/session", capabilities)
        guard let value = created["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            throw Failure(description: "no session: \(created)")
        }
        session = id
    }

    deinit {
        if !session.isEmpty { _ = try? call("DELETE", "/session/\(session)") }
        driver.signal(SIGKILL) // chromedriver ignores SIGTERM while it has browsers; the session is closed above
        driver.wait()
    }

    // MARK: - Protocol

    @discardableResult
    func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
        let bytes = try body.map { [UInt8](try JSONSerialization.data(withJSONObject: $0)) } ?? []
        var headers: [(String, String)] = []
        if body != nil { headers.append(("Content-Type", "application/json; charset=utf-8")) }
        // chromedriver answers when the browser has: a page load or an axe run on a busy two-core
        // machine (other suites alongside) can take longer than the 5 s meant for our own server,
        // and chromedriver's own limits (30 s for scripts, 300 s for page loads) end a stuck command.
        let response = try TestClient.request(port: port, method, path, headers: headers, body: bytes, timeout: 120)
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        if response.status >= 400 {
            let value = json["value"] as? [String: Any]
            throw Failure(description: "\(method) \(path) → \(response.status): \(value?["error"] ?? "") \(value?["message"] ?? "")")
        }
        return json
    }

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        try call(method, "/session/\(session)" + path, body)["value"] ?? nil
    }

    // MARK: - Navigation and elements

    func go(_ url: String) throws { try command("POST", "/url", ["url": url]) }

    var url: String { get throws { try command("GET", "/url") as? String ?? "" } }

    func find(_ css: String) throws -> String {
        guard let value = try command("POST", "/element", ["using": "css selector", "value": css]) as? [String: Any],
              let id = value[Self.elementKey] as? String else { throw Failure(description: "no element \(css)") }
        return id
    }

    func findAll(_ css: String) throws -> [String] {
        let values = try command("POST", "/elements", ["using": "css selector", "value": css]) as? [[String: Any]] ?? []
        return values.compactMap { $0[Self.elementKey] as? String }
    }

    func click(_ css: String) throws { try command("POST", "/element/\(try find(css))/click", [:]) }

    func type(_ css: String, _ text: String) throws {
        let element = try find(css)
        try command("POST", "/element/\(element)/clear", [:])
        try command("POST", "/element/\(element)/value", ["text": text])
    }

    /// Chooses a file in a file input, as a person picking it would (WebDriver sends its path).
    func attach(_ css: String, file path: String) throws {
        try command("POST", "/element/\(try find(css))/value", ["text": path])
    }

    func text(_ css: String) throws -> String { try command("GET", "/element/\(try find(css))/text") as? String ?? "" }

    /// Runs a script in the page and returns its result.
    @discardableResult
    func script(_ source: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "/execute/sync", ["script": source, "args": arguments])
    }

    /// Runs a script that calls its last argument with the result (a promise's), and returns it.
    @discardableResult
    func asyncScript(_ source: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "/execute/async", ["script": source, "args": arguments])
    }

    /// Presses keys (Tab is \u{E004}, Enter \u{E007}) as a keyboard would, on whatever has focus.
    func press(_ keys: String) throws {
        var actions: [[String: Any]] = []
        for scalar in keys.unicodeScalars {
            actions.append(["type": "keyDown", "value": String(scalar)])
            actions.append(["type": "keyUp", "value": String(scalar)])
        }
        try command("POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    /// Waits until `condition` holds, checking every 50 ms.
    func wait(_ what: String, seconds: Double = 5, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? condition()) == true { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Failure(description: "timed out waiting for \(what)")
    }

    // MARK: - WebAuthn (the W3C extension: a virtual authenticator)

    /// A virtual passkey device: CTAP2, built in, resident keys, user verification that succeeds.
    func addVirtualAuthenticator() throws -> String {
        let id = try command("POST", "/webauthn/authenticator", [
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": true, "hasUserVerification": true,
            "isUserConsenting": true, "isUserVerified": true,
        ]) as? String
        guard let id else { throw Failure(description: "no virtual authenticator") }
        return id
    }

    func removeVirtualAuthenticator(_ id: String) throws { try command("DELETE", "/webauthn/authenticator/\(id)") }

    /// The credentials an authenticator holds (with their private keys and counters).
    func credentials(_ authenticator: String) throws -> [[String: Any]] {
        try command("GET", "/webauthn/authenticator/\(authenticator)/credentials") as? [[String: Any]] ?? []
    }

    func addCredential(_ credential: [String: Any], to authenticator: String) throws {
        try command("POST", "/webauthn/authenticator/\(authenticator)/credential", credential)
    }

    // MARK: - Chrome specifics

    /// A Chrome DevTools Protocol command, through chromedriver's extension.
    @discardableResult
    func devTools(_ method: String, _ parameters: [String: Any] = [:]) throws -> Any? {
        try command("POST", "/goog/cdp/execute", ["cmd": method, "params": parameters])
    }

    func setWindow(width: Int, height: Int) throws {
        try command("POST", "/window/rect", ["width": width, "height": height])
    }

    /// Console messages (errors and CSP violations show up here) since the last call.
    func consoleErrors() throws -> [String] {
        let entries = try command("POST", "/se/log", ["type": "browser"]) as? [[String: Any]] ?? []
        return entries.filter { ($0["level"] as? String) == "SEVERE" }.compactMap { $0["message"] as? String }
    }

    func screenshot(to path: String) throws {
        guard let base64 = try command("GET", "/screenshot") as? String, let data = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
