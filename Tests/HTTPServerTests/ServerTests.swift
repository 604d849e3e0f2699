import Foundation
import Testing
import HTTPServer
import HTTPTestSupport

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

final class EmptyContext: RequestContext {
    init(request: Request) {}
}

/// A real server on an ephemeral port with a few routes that exercise the library.
final class TestServer {
    let server: Server
    var port: Int { server.port }
    /// How many times `/slow` has started.
    let slowStarted = Counter()

    init(configure: (inout ServerConfiguration) -> Void = { _ in }, publicFolder: String? = nil) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 2
        configuration.workerThreads = 4
        configure(&configuration)
        let router = Router<EmptyContext>()
        router.get("/plaintext") { _, _ in .text("Hello, World!") }
        router.get("/city/{slug}") { request, _ in .text("city \(request.parameters["slug"]!)") }
        router.get("/city/{slug}/feed") { request, _ in .text("feed \(request.parameters["slug"]!)") }
        router.post("/city/{slug}/posts") { request, _ in
            let form = try request.formBody()
            return .text("posted \(form["body"] ?? "-") to \(request.parameters["slug"]!)", status: .created)
        }
        router.post("/echo") { request, _ in Response(body: request.body) }
        let slowStarted = self.slowStarted
        router.get("/slow") { _, _ in
            slowStarted.increment()
            Thread.sleep(forTimeInterval: 1)
            return .text("slow")
        }
        router.get("/fail") { _, _ in throw CancellationError() }
        router.get("/query") { request, _ in .text(try request.queryItems()["q"] ?? "") }
        if let publicFolder {
            let files = StaticFiles(root: publicFolder)
            router.get("/static/{path...}") { request, _ in try files.response(for: request.parameters["path"]!, request: request) }
        }
        server = Server(configuration: configuration, responder: router.responder)
        try server.start()
    }

    deinit {
        server.shutdown()
        server.wait()
    }

    func get(_ target: String, headers: [(String, String)] = []) throws -> WireResponse {
        try TestClient.request(port: port, "GET", target, headers: headers)
    }
}

@Suite(.serialized) struct ServerTests {
    @Test func answersWithDateServerAndContentLength() throws {
        let server = try TestServer { $0.serverName = "test-server" }
        let response = try server.get("/plaintext")
        #expect(response.status == 200)
        #expect(response.text == "Hello, World!")
        #expect(response.headers["Content-Length"] == "13")
        #expect(response.headers["Server"] == "test-server")
        #expect(response.headers["Date"].flatMap(parseHTTPDate) != nil)
    }

    @Test func keepsAliveAndAnswersPipelinedRequestsInOrder() throws {
        let server = try TestServer()
        let client = try TestClient(port: server.port)
        try client.send("GET /city/a HTTP/1.1\r\nHost: x\r\n\r\nGET /city/b HTTP/1.1\r\nHost: x\r\n\r\nGET /city/c HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "city a")
        #expect(try client.readResponse().text == "city b")
        #expect(try client.readResponse().text == "city c")
        try client.send("GET /city/d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let last = try client.readResponse()
        #expect(last.text == "city d")
        #expect(last.headers["Connection"] == "close")
        #expect(client.isClosedByServer())
    }

    @Test func requestSplitIntoManyWritesIsStillOneRequest() throws {
        let server = try TestServer()
        let client = try TestClient(port: server.port)
        let request = Array("POST /city/seoul/posts HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\n\r\nbody=hi%21".utf8)
        for chunk in stride(from: 0, to: request.count, by: 7) {
            try client.send(Array(request[chunk..<min(chunk + 7, request.count)]))
            Thread.sleep(forTimeInterval: 0.002)
        }
        let response = try client.readResponse()
        #expect(response.status == 201)
        #expect(response.text == "posted hi! to seoul")
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() throws {
        let server = try TestServer()
        let plain = try TestClient(port: server.port)
        try plain.send("GET /plaintext HTTP/1.0\r\n\r\n")
        #expect(try plain.readResponse().status == 200)
        #expect(plain.isClosedByServer())

        let keepAlive = try TestClient(port: server.port)
        try keepAlive.send("GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let first = try keepAlive.readResponse()
        #expect(first.headers["Connection"] == "keep-alive")
        try keepAlive.send("GET /plaintext HTTP/1.0\r\n\r\n")
        #expect(try keepAlive.readResponse().status == 200)
        #expect(keepAlive.isClosedByServer())
    }

    @Test func headHasTheHeadersOfGetAndNoBody() throws {
        let server = try TestServer()
        let client = try TestClient(port: server.port)
        try client.send("HEAD /plaintext HTTP/1.1\r\nHost: x\r\n\r\nGET /city/after-head HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == "13")
        #expect(head.body.isEmpty)
        // the next response starts right after the head: no stray body bytes
        #expect(try client.readResponse().text == "city after-head")
    }

    @Test func chunkedBodiesAreDecoded() throws {
        let server = try TestServer()
        let client = try TestClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;note=x\r\nWeat\r\n5\r\nherbo\r\n3\r\nard\r\n0\r\nTrailer: ignored\r\n\r\n")
        #expect(try client.readResponse().text == "Weatherboard")
    }

    @Test func expectContinueIsAnsweredBeforeTheBody() throws {
        let server = try TestServer()
        let client = try TestClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("hello")
        #expect(try client.readResponse().text == "hello")

        let tooBig = try TestClient(port: server.port)
        try tooBig.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n")
        #expect(try tooBig.readResponse().status == 413)
        #expect(tooBig.isClosedByServer())
    }

    @Test("malformed requests get their status and the connection is closed", arguments: [
        ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", 400),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -3\r\n\r\nabc", 400),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-Fold: a\r\n\tb\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-Nul: \u{0}\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-Cr: a\rb\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("BAD REQUEST LINE\r\n\r\n", 400),
        ("GET / HTTP/3.0\r\nHost: x\r\n\r\n", 505),
        ("GET /\(String(repeating: "x", count: 10_000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: x\r\n\((0..<101).map { "X-\($0): y\r\n" }.joined())\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "y", count: 40_000))\r\n\r\n", 431),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n", 413),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n", 413),
    ])
    func rejects(request: String, status: Int) throws {
        let server = try TestServer()
        let client = try TestClient(port: server.port)
        try client.send(request)
        let response = try client.readResponse()
        #expect(response.status == status)
        #expect(response.headers["Connection"] == "close")
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(client.isClosedByServer())
        // the server is still healthy
        #expect(try server.get("/plaintext").status == 200)
    }

    @Test func chunkedBodyOverTheLimitAcrossChunksIs413() throws {
        let server = try TestServer { $0.limits.maxBodyBytes = 1000 }
        let client = try TestClient(port: server.port)
        var request = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<3 { request += "200\r\n\(String(repeating: "z", count: 512))\r\n" }
        try client.send(request)
        #expect(try client.readResponse().status == 413)
    }

    @Test func routerAnswers404And405WithAllow() throws {
        let server = try TestServer()
        #expect(try server.get("/nowhere").status == 404)
        #expect(try server.get("/city/seoul/feed").text == "feed seoul")
        let response = try TestClient.request(port: server.port, "DELETE", "/city/seoul")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD")
        #expect(try TestClient.request(port: server.port, "POST", "/plaintext").headers["Allow"] == "GET, HEAD")
    }

    @Test func malformedQueryAndFormAre400AndThrownErrorsAre500() throws {
        let server = try TestServer()
        #expect(try server.get("/query?q=caf%C3%A9").text == "café")
        #expect(try server.get("/query?q=%C3").status == 400)
        #expect(try server.get("/query?q=%G1").status == 400)
        #expect(try server.get("/city/%ff").status == 400)
        let badForm = try TestClient.request(port: server.port, "POST", "/city/x/posts",
                                             headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                             body: Array("body=%E0%80".utf8))
        #expect(badForm.status == 400)
        let failed = try server.get("/fail")
        #expect(failed.status == 500)
        #expect(!failed.text.contains("CancellationError"))
    }

    @Test func slowHandlerDoesNotStallOtherConnections() throws {
        let server = try TestServer()
        let slow = try TestClient(port: server.port)
        try slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try waitUntil("the slow handler runs") { server.slowStarted.value == 1 }
        let started = Date()
        #expect(try server.get("/plaintext").status == 200)
        #expect(Date().timeIntervalSince(started) < 0.9, "answered while the slow handler was still running")
        #expect(try slow.readResponse().text == "slow")
    }

    @Test func trickledHeadersTimeOutWith408() throws {
        let server = try TestServer { $0.headerTimeout = .milliseconds(600) }
        let client = try TestClient(port: server.port)
        try client.send("GET /plaintext HTTP/1.1\r\n")
        for byte in "Host: x".utf8 {
            if (try? client.send([byte])) == nil { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(client.isClosedByServer())
    }

    @Test func manySlowHeaderClientsDoNotHoldUpOthersAndAreClosed() throws {
        let server = try TestServer { $0.headerTimeout = .seconds(1) }
        let slow = try (0..<200).map { _ in try TestClient(port: server.port) }
        let head = Array("GET /plaintext HTTP/1.1\r\nHost: x\r\nX-Slow: yyyyyyyyyyyyyyyyyyyyyyyyy".utf8)
        var answeredMeanwhile = false
        for step in 0..<16 {
            for client in slow { try? client.send([head[step]]) }
            if step == 5 {
                // other clients are served while 200 connections trickle their heads
                answeredMeanwhile = try server.get("/plaintext").status == 200
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(answeredMeanwhile)
        var timedOut = 0
        for client in slow where (try? client.readResponse().status) == 408 && client.isClosedByServer() {
            timedOut += 1
        }
        #expect(timedOut == 200)
    }

    @Test func idleKeepAliveConnectionsAreClosed() throws {
        let server = try TestServer { $0.idleTimeout = .milliseconds(500) }
        let client = try TestClient(port: server.port)
        try client.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(client.isClosedByServer()) // reads until the server closes (or the client's 5 s timeout)
    }

    @Test func connectionsBeyondTheLimitAreRefusedWith503() throws {
        let server = try TestServer { $0.maxConnections = 2; $0.eventLoops = 1 }
        let first = try TestClient(port: server.port)
        let second = try TestClient(port: server.port)
        try first.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        try second.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try first.readResponse().status == 200)
        #expect(try second.readResponse().status == 200)
        let third = try TestClient(port: server.port)
        #expect(try third.readResponse().status == 503)
        #expect(third.isClosedByServer())
        // once one closes, new connections are served again
        try first.send("GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        _ = try first.readResponse()
        first.shutdownWrite()
        try waitUntil("the server has closed the first connection") { server.server.openConnections < 2 }
        #expect(try server.get("/plaintext").status == 200)
    }

    @Test func shutdownFinishesRequestsInFlightAndClosesIdleConnections() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        let router = Router<EmptyContext>()
        let slowStarted = DispatchSemaphore(value: 0)
        router.get("/slow") { _, _ in
            slowStarted.signal()
            Thread.sleep(forTimeInterval: 0.5)
            return .text("done")
        }
        router.get("/plaintext") { _, _ in .text("ok") }
        let server = Server(configuration: configuration, responder: router.responder)
        try server.start()
        let idle = try TestClient(port: server.port)
        try idle.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try idle.readResponse()
        let busy = try TestClient(port: server.port)
        try busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        slowStarted.wait()
        server.shutdown()
        let response = try busy.readResponse()
        #expect(response.text == "done")
        #expect(response.headers["Connection"] == "close")
        #expect(idle.isClosedByServer())
        server.wait()
        #expect(throws: TestClientError.self) { try TestClient(port: server.port) }
    }

    /// A request tried on the quick lane that finds it must wait (`Lane.Moved`) is answered by
    /// the main lane, once: the quick lane's workers stay free while main workers are busy.
    @Test func aRequestThatMustWaitMovesFromTheQuickLaneToTheMain() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.workerThreads = 1
        configuration.quickWorkerThreads = 1
        let router = Router<EmptyContext>()
        let runs = Counter()
        let release = DispatchSemaphore(value: 0)
        router.get("/held") { _, _ in
            release.wait()
            return .text("held")
        }
        router.get("/kept") { _, _ in .text("kept on \(Lane.current.rawValue)") }
        router.get("/rendered") { _, _ in
            runs.increment()
            try Lane.waitsAllowed()
            return .text("rendered on \(Lane.current.rawValue)")
        }
        let server = Server(configuration: configuration, lane: { request, _ in request.path == "/held" ? .main : .quick }, responder: router.responder)
        try server.start()
        defer {
            server.shutdown()
            server.wait()
        }
        let held = try TestClient(port: server.port)
        try held.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.2)
        // The only main worker waits; what the quick lane can answer is answered.
        let kept = try TestClient(port: server.port)
        try kept.send("GET /kept HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try kept.readResponse().text == "kept on quick")
        let moved = try TestClient(port: server.port)
        try moved.send("GET /rendered HTTP/1.1\r\nHost: x\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(runs.value == 1, "tried once on the quick lane, then waiting for the main lane")
        // The quick worker is free again though the moved request waits.
        let again = try TestClient(port: server.port)
        try again.send("GET /kept HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try again.readResponse().text == "kept on quick")
        release.signal()
        #expect(try held.readResponse().text == "held")
        #expect(try moved.readResponse().text == "rendered on main")
        #expect(runs.value == 2)
    }

    /// `LaneConditions.mainLaneStalled`: every main worker busy and none finishing for the
    /// configured time; not while idle, nor once they finish again.
    @Test func theMainLaneCountsAsStalledOnlyWhileEveryWorkerIsHeld() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.workerThreads = 1
        configuration.quickWorkerThreads = 1
        configuration.mainLaneStall = .milliseconds(100)
        let router = Router<EmptyContext>()
        let release = DispatchSemaphore(value: 0)
        router.get("/held") { _, _ in
            release.wait()
            return .text("held")
        }
        router.get("/where") { _, _ in .text(Lane.current.rawValue) }
        let server = Server(configuration: configuration, lane: { request, conditions in
            request.path == "/where" && conditions.mainLaneStalled ? .quick : .main
        }, responder: router.responder)
        try server.start()
        defer {
            server.shutdown()
            server.wait()
        }
        func whereServed() throws -> String {
            let client = try TestClient(port: server.port)
            try client.send("GET /where HTTP/1.1\r\nHost: x\r\n\r\n")
            return try client.readResponse().text
        }
        #expect(try whereServed() == "main")
        let held = try TestClient(port: server.port)
        try held.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try whereServed() == "quick")
        release.signal()
        #expect(try held.readResponse().text == "held")
        // The worker counts itself free a moment after its answer is written, so a request sent
        // as the answer arrives may still see it busy: main again within moments, not at once.
        // (A clean-clone CI run at 78a3ffe saw "quick" here once.)
        var served = try whereServed()
        let deadline = Date().addingTimeInterval(2)
        while served != "main" && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            served = try whereServed()
        }
        #expect(served == "main")
    }

    @Test func aProxyInFrontIsNotCappedAsOneClient() throws {
        let server = try TestServer {
            $0.maxConnectionsPerAddress = 2
            $0.uncappedAddresses = ["127.0.0.1"]
        }
        var held: [TestClient] = []
        for _ in 0..<5 { held.append(try TestClient(port: server.port, source: "127.0.0.1")) }
        for client in held {
            try client.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        var others: [TestClient] = []
        for _ in 0..<2 { others.append(try TestClient(port: server.port, source: "127.0.0.2")) }
        for client in others {
            try client.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        let third = try TestClient(port: server.port, source: "127.0.0.2")
        try third.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try third.readResponse().status == 503, "anyone else is still capped")
    }

    @Test func pastTheBufferBudgetALargeHolderIsRefusedAndOthersAreServed() throws {
        let server = try TestServer {
            $0.eventLoops = 1
            $0.maxBufferedBytes = 1 << 20
        }
        // A holds 900 KB of an unfinished body: within the budget
        let a = try TestClient(port: server.port, timeout: 10)
        try a.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
        try a.send([UInt8](repeating: 0x61, count: 900_000))
        try waitUntil("A's bytes are held") { server.server.heldBytes >= 900_000 }
        // B's unfinished body takes the total past it: B is refused and closed, A is not
        let b = try TestClient(port: server.port, timeout: 10)
        try b.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
        try b.send([UInt8](repeating: 0x62, count: 200_000))
        #expect(try b.readResponse().status == 503)
        #expect(b.isClosedByServer())
        // Small requests are answered meanwhile; A finishes its body and gets it back whole
        #expect(try server.get("/plaintext").status == 200)
        try a.send([UInt8](repeating: 0x61, count: 100_000))
        #expect(try a.readResponse().body.count == 1_000_000)
        try waitUntil("nothing is held once every answer is taken") { server.server.heldBytes == 0 }
    }

    @Test func whileAnAnswerIsBeingMadeLittleOfWhatIsPipelinedBehindItIsRead() throws {
        let server = try TestServer { $0.eventLoops = 1 }
        let client = try TestClient(port: server.port, timeout: 10)
        let pipelined = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
        try client.send(Array(pipelined.utf8) + [UInt8](repeating: 0x61, count: 1_000_000))
        try waitUntil("/slow is being answered") { server.slowStarted.value == 1 }
        // While /slow's answer is made (a second), the megabyte behind it waits in the socket
        var most = 0
        for _ in 0..<40 {
            most = max(most, server.server.heldBytes)
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(most > 0 && most <= 16 * 1024 + 64 * 1024, "held \(most) bytes while the first answer was made")
        #expect(try client.readResponse().text == "slow")
        #expect(try client.readResponse().body.count == 1_000_000)
    }

    @Test func pastTheBufferBudgetAnAnswerNobodyTakesIsDroppedAndOneBeingTakenIsNot() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        configuration.maxBufferedBytes = 2 << 20
        configuration.writeTimeout = .seconds(120) // only the budget can end the stuck answer
        let big = Response(body: [UInt8](repeating: 0x61, count: 32 << 20))
        let router = Router<EmptyContext>()
        router.get("/big") { _, _ in big }
        let server = Server(configuration: configuration, responder: router.responder)
        try server.start()
        defer { server.shutdown(); server.wait() }
        // A client that asks and never reads: what the sockets do not take stays with the server
        let stuck = try TestClient(port: server.port, timeout: 10)
        try stuck.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        try waitUntil("the unread answer is held") { server.heldBytes > 2 << 20 }
        // Past the budget, after a second without progress, it is dropped with its connection
        try waitUntil("the unread answer is dropped") { server.heldBytes == 0 && server.openConnections == 0 }
        #expect(throws: (any Error).self, "the answer ends before its length") { try stuck.readResponse() }
        // A client that reads takes the same answer whole, though it is over the budget while it is taken
        let reader = try TestClient(port: server.port, timeout: 20)
        try reader.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try reader.readResponse().body.count == 32 << 20)
    }

    /// Both ways a response is made: by a worker, and on the loop by the immediate responder.
    @Test(arguments: [false, true])
    func aClientThatStopsReadingGetsBackPressureNotBuffering(answeredOnTheLoop: Bool) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        let handled = Counter()
        let big = Response(body: [UInt8](repeating: 0x61, count: 1 << 20))
        let router = Router<EmptyContext>()
        router.get("/big") { _, _ in
            handled.increment()
            return big
        }
        let onTheLoop: ImmediateResponder = { _ in
            handled.increment()
            return big
        }
        let immediate = answeredOnTheLoop ? onTheLoop : nil
        let server = Server(configuration: configuration, immediate: immediate, responder: router.responder)
        try server.start()
        defer { server.shutdown(); server.wait() }
        let client = try TestClient(port: server.port, timeout: 10)
        let request = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"
        try client.send(String(repeating: request, count: 100))
        // 100 MiB were asked for; with nobody reading, the server stops once it holds an answer
        // the socket will not take (it reads no further request on that connection until then,
        // so at most the one being answered is added), instead of queueing every response.
        // (Held bytes past every request's own are an answer's.)
        try waitUntil("the server holds an answer the socket does not take") { server.heldBytes > 100 * request.utf8.count }
        let handledWhenFull = handled.value
        #expect(handledWhenFull < 20, "handled \(handledWhenFull) of 100 while the client was not reading")
        #expect(server.heldBytes < 4 << 20, "held \(server.heldBytes) bytes for a client that does not read")
        for _ in 0..<100 { #expect(try client.readResponse().body.count == 1 << 20) }
        #expect(handled.value == 100)
    }

    @Test func pipelinedBodiesOfEverySizeComeBackWhole() throws {
        // Small bodies ride in the head's buffer, large ones are written as their own chunk.
        let router = Router<EmptyContext>()
        router.get("/bytes/{count}") { request, _ in
            let count = Int(request.parameters["count"]!)!
            return Response(body: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ count) })
        }
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = Server(configuration: configuration, responder: router.responder)
        try server.start()
        defer { server.shutdown(); server.wait() }
        let client = try TestClient(port: server.port)
        let sizes = [0, 1, 4095, 4096, 4097, 70_000, 3, 300_000, 12]
        try client.send(sizes.map { "GET /bytes/\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
        for count in sizes {
            let response = try client.readResponse()
            #expect(response.headers["Content-Length"] == String(count))
            #expect(response.body == (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ count) })
        }
    }

    @Test func aBodyOfManyStretchesOfSeveralArraysComesBackWholeAndInOrder() throws {
        // Stretches of three arrays, interleaved, more than one `sendmsg` takes, of every size
        // from one byte; the largest bodies outgrow the socket's buffer, so writes stop in the
        // middle of a stretch and go on from there.
        let arrays: [[UInt8]] = (0..<3).map { array in (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ array &* 101) } }
        @Sendable func stretches(_ count: Int) -> [(array: Int, range: Range<Int>)] {
            (0..<count).map { index in
                let start = (index * 37) % 4_000
                return (index % 3, start..<(start + 1 + (index * 131) % 997))
            }
        }
        let router = Router<EmptyContext>()
        router.get("/stretches/{count}") { request, _ in
            var body = ResponseBody()
            let numbers = arrays.map { body.add(storage: $0) }
            for stretch in stretches(Int(request.parameters["count"]!)!) { body.append(storage: numbers[stretch.array], stretch.range) }
            var response = Response()
            response.bodyParts = body
            return response
        }
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = Server(configuration: configuration, responder: router.responder)
        try server.start()
        defer { server.shutdown(); server.wait() }
        let client = try TestClient(port: server.port, timeout: 10)
        let counts = [1, 2, 1_023, 1_024, 1_025, 3_000, 5, 600]
        try client.send(counts.map { "GET /stretches/\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
        for count in counts {
            let expected = stretches(count).flatMap { arrays[$0.array][$0.range] }
            let response = try client.readResponse()
            #expect(response.headers["Content-Length"] == String(expected.count))
            #expect(response.body == expected, "\(count) stretches")
        }
    }

    @Test func aResponseForAVanishedClientNeverReachesTheNextClientOnItsDescriptor() throws {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let router = Router<EmptyContext>()
        router.get("/held") { _, _ in
            started.signal()
            release.wait()
            defer { finished.signal() }
            return .text("held")
        }
        router.get("/plaintext") { _, _ in .text("Hello, World!") }
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        let server = Server(configuration: configuration, responder: router.responder)
        try server.start()
        defer { server.shutdown(); server.wait() }

        var vanishing: TestClient? = try TestClient(port: server.port)
        try vanishing!.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        started.wait()
        vanishing!.resetOnClose()
        vanishing = nil
        try waitUntil("the server closed the reset connection") { server.openConnections == 0 }
        // The next connection takes the lowest free descriptor: the one just closed.
        let next = try TestClient(port: server.port)
        try next.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: try next.readResponse().body, as: UTF8.self) == "Hello, World!")
        release.signal()
        finished.wait()
        try next.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: try next.readResponse().body, as: UTF8.self) == "Hello, World!")
    }

    @Test func immediateAnswersKeepPipelineOrderAndNeedNoWorker() throws {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let router = Router<EmptyContext>()
        router.get("/work/{n}") { request, _ in .text(request.parameters["n"]!) }
        router.get("/held") { _, _ in
            started.signal()
            release.wait()
            return .text("held")
        }
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        configuration.workerThreads = 1
        let server = Server(configuration: configuration, immediate: { request in
            request.path.hasPrefix("/now/") ? .text(String(request.path.dropFirst(5))) : nil
        }, responder: router.responder)
        try server.start()
        defer { server.shutdown(); server.wait() }
        // Answers made on the loop and by workers, pipelined, come back in the order asked.
        let client = try TestClient(port: server.port)
        try client.send(["/now/1", "/work/2", "/now/3", "/now/4", "/work/5", "/now/6"].map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
        #expect(try (1...6).map { _ in try client.readResponse().text } == ["1", "2", "3", "4", "5", "6"])
        // With the only worker held, the loop still answers what it can answer itself.
        let holder = try TestClient(port: server.port)
        try holder.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        started.wait()
        try client.send("GET /now/7 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "7")
        release.signal()
        #expect(try holder.readResponse().text == "held")
    }

    /// A second server on a port another process (here: another server) listens on refuses to
    /// start: SO_REUSEPORT let it share the port silently, and a node started twice (or an old one
    /// left running) took half the visitors, serving whatever database it had.
    @Test func aPortSomeoneElseListensOnIsRefused() throws {
        let first = try TestServer { $0.eventLoops = 2 }
        #expect(throws: SocketError.self) { try TestServer { $0.port = first.port } }
        let client = try TestClient(port: first.port)
        try client.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "Hello, World!")
    }

    @Test func listensOnIPv6() throws {
        let server = try TestServer { $0.host = "::1" }
        let client = try TestClient(host: "::1", port: server.port)
        try client.send("GET /plaintext HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        #expect(try client.readResponse().text == "Hello, World!")
    }
}

@Suite(.serialized) struct StaticFileTests {
    let folder: String
    let outside: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("static-\(UUID().uuidString)").path
        folder = base + "/public"
        outside = base + "/secret.txt"
        try FileManager.default.createDirectory(atPath: folder + "/css", withIntermediateDirectories: true)
        try "body { color: black }".write(toFile: folder + "/css/site.css", atomically: true, encoding: .utf8)
        try "top secret".write(toFile: outside, atomically: true, encoding: .utf8)
        try "hidden".write(toFile: folder + "/.env", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/escape.txt", withDestinationPath: outside)
    }

    @Test func servesFilesWithValidatorsAnd304() throws {
        let server = try TestServer(publicFolder: folder)
        let response = try server.get("/static/css/site.css")
        #expect(response.status == 200)
        #expect(response.text == "body { color: black }")
        #expect(response.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(response.headers["Cache-Control"] != nil)
        #expect(response.headers["Last-Modified"] != nil)
        let etag = try #require(response.headers["ETag"])
        let revalidated = try server.get("/static/css/site.css", headers: [("If-None-Match", etag)])
        #expect(revalidated.status == 304)
        #expect(revalidated.body.isEmpty)
        #expect(revalidated.headers["ETag"] == etag)
        let sinceModified = try server.get("/static/css/site.css", headers: [("If-Modified-Since", response.headers["Last-Modified"]!)])
        #expect(sinceModified.status == 304)
        #expect(try server.get("/static/css/site.css", headers: [("If-None-Match", "\"other\"")]).status == 200)
    }

    @Test("no way out of the root", arguments: [
        "/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/css/..%2f..%2fsecret.txt",
        "/static/%2e%2e%2fsecret.txt", "/static/css%2f..%2f..%2fsecret.txt", "/static/escape.txt",
        "/static/.env", "/static/css/site.css%00.txt", "/static/css", "/static/nothing.css",
    ])
    func refusesTraversal(target: String) throws {
        let server = try TestServer(publicFolder: folder)
        let response = try server.get(target)
        #expect(response.status == 404 || response.status == 400, "\(target) → \(response.status)")
        #expect(!response.text.contains("secret"))
    }
}

/// Runs the bare server binary in its own process with a tiny descriptor limit, so that running
/// out of descriptors does not disturb the test process.
@Suite(.serialized) struct DescriptorExhaustionTests {
    @Test func theAcceptLoopSurvivesRunningOutOfDescriptors() throws {
        let binary = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("HTTPServerBench").path
        let fallback = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/HTTPServerBench").path
        let path = FileManager.default.isExecutableFile(atPath: binary) ? binary : fallback
        #expect(FileManager.default.isExecutableFile(atPath: path), "build HTTPServerBench first")
        let port = try freeLoopbackPort()
        var pid: pid_t = 0
        let command = "ulimit -n 48 && exec '\(path)' --port \(port) --loops 1 --workers 2"
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0 else {
            Issue.record("cannot start the server")
            return
        }
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        var up = false
        for _ in 0..<100 where !up {
            up = (try? TestClient.request(port: port, "GET", "/healthz").status) == 200
            if !up { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(up)
        // Far more connections than descriptors: the extra ones are accepted and closed at once.
        var clients: [TestClient] = []
        for _ in 0..<80 { if let client = try? TestClient(port: port, timeout: 0.2) { clients.append(client) } }
        try waitUntil("some connections are turned away", timeout: 60) { clients.contains { $0.isClosedByServer() } }
        let refused = clients.filter { $0.isClosedByServer() }.count
        #expect(refused > 0, "some connections must have been turned away")
        clients.removeAll()
        // and once they are gone the server answers again (as soon as it has seen them close:
        // waited for as a condition, not a fixed time, since the machine may be busy)
        var answered = false
        let giveUp = Date().addingTimeInterval(60) // a deadlock guard, not a timing claim
        while !answered && Date() < giveUp {
            answered = (try? TestClient.request(port: port, "GET", "/healthz").text) == "ok"
            if !answered { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(answered)
    }
}

/// One client address cannot hold every connection, and a connection that never speaks is let
/// go after the header timeout, not the longer idle timeout.
@Suite(.serialized) struct ConnectionShareTests {
    @Test func oneAddressGetsItsShareAndOthersStillGetIn() throws {
        let server = try TestServer { configuration in
            configuration.maxConnectionsPerAddress = 8
        }
        // Given one address holding eight connections, each answered once (so surely accepted)
        var held: [TestClient] = []
        for _ in 0..<8 {
            let client = try TestClient(port: server.port, source: "127.0.0.5")
            try client.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            held.append(client)
        }
        // Then its ninth is answered 503 and closed
        let ninth = try TestClient(port: server.port, source: "127.0.0.5")
        #expect(try ninth.readResponse().status == 503)
        #expect(ninth.isClosedByServer())
        // while another address is served
        #expect(try TestClient.request(port: server.port, "GET", "/plaintext", source: "127.0.0.6").status == 200)
        // and once the first address lets one go, it gets in again
        // (as soon as its loop has seen the close: up to 10 s, since two seconds were once not
        // enough here with the other suites running alongside)
        held.removeLast()
        try waitUntil("the address is admitted again") {
            (try? TestClient.request(port: server.port, "GET", "/plaintext", source: "127.0.0.5").status) == 200
        }
    }

    @Test func aSilentConnectionIsClosedAtTheHeaderTimeout() throws {
        let server = try TestServer { configuration in
            configuration.headerTimeout = .milliseconds(300)
            configuration.idleTimeout = .seconds(60)
        }
        let silent = try TestClient(port: server.port, timeout: 10)
        // the server closes it long before the idle timeout: reading sees the end, not our 10 s receive timeout
        var buffer = [UInt8](repeating: 0, count: 16)
        let read = recv(silent.fd, &buffer, buffer.count, 0)
        #expect(read <= 0)
    }
}
