import Foundation
import Testing
import HTTPServer
import HTTPTestSupport

/// A server whose `/stream` answers with a stream the test writes to.
final class StreamingServer {
    let server: Server
    var port: Int { server.port }
    /// Streams opened, in order; and how many have ended (their end handlers ran).
    let opened = Locked<[ResponseStream]>([])
    let ended = Locked(0)

    init(configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        configuration.workerThreads = 2
        configure(&configuration)
        let router = Router<EmptyContext>()
        router.get("/plaintext") { _, _ in .text("Hello, World!") }
        let opened = self.opened, ended = self.ended
        router.get("/stream") { _, _ in
            .streaming(headers: HTTPHeaders([("Content-Type", "text/event-stream")])) { stream in
                stream.onEnd { ended.update { $0 += 1 } }
                opened.update { $0.append(stream) }
            }
        }
        server = Server(configuration: configuration, responder: router.responder)
        try server.start()
    }

    deinit {
        server.shutdown()
        server.wait()
    }

    /// The `n`th stream opened (counting from 1), once its writer has started.
    func stream(_ n: Int) throws -> ResponseStream {
        try waitUntil("stream \(n) is open") { opened.value.count >= n }
        return opened.value[n - 1]
    }
}

@Suite(.serialized) struct StreamTests {
    @Test func aStreamIsChunkedByteForByteAndThePipelineGoesOnAfterIt() throws {
        let server = try StreamingServer()
        let client = try TestClient(port: server.port)
        try client.send("GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "Hello, World!")
        let head = try client.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.headers["Transfer-Encoding"] == "chunked")
        #expect(head.headers["Content-Length"] == nil)
        #expect(head.headers["Content-Type"] == "text/event-stream")
        let stream = try server.stream(1)
        #expect(stream.write(Array("hello".utf8)))
        #expect(try client.readBytes(10) == Array("5\r\nhello\r\n".utf8))
        stream.write(Array("0123456789abcdef".utf8))
        #expect(try client.readBytes(22) == Array("10\r\n0123456789abcdef\r\n".utf8))
        stream.write([]) // nothing: an empty chunk would end the body
        stream.finish()
        #expect(try client.readBytes(5) == Array("0\r\n\r\n".utf8))
        #expect(!stream.isOpen && !stream.write(Array("late".utf8)))
        #expect(try client.readResponse().text == "Hello, World!", "the request pipelined behind the stream is answered after it")
        try waitUntil("the end handler ran") { server.ended.value == 1 }
        #expect(server.server.openStreams == 0)
    }

    @Test func onHTTP10TheStreamEndsWithTheConnection() throws {
        let server = try StreamingServer()
        let client = try TestClient(port: server.port)
        try client.send("GET /stream HTTP/1.0\r\n\r\n")
        let head = try client.readResponse(head: true)
        #expect(head.version == "HTTP/1.1" && head.status == 200)
        #expect(head.headers["Transfer-Encoding"] == nil && head.headers["Content-Length"] == nil)
        #expect(head.headers["Connection"] == "close")
        let stream = try server.stream(1)
        stream.write(Array("data: one\n\n".utf8))
        #expect(try client.readBytes(11) == Array("data: one\n\n".utf8))
        stream.finish()
        #expect(client.isClosedByServer())
    }

    @Test func aClientThatStopsReadingLosesItsStreamAndOthersAreServed() throws {
        let server = try StreamingServer { $0.maxStreamBufferedBytes = 64 * 1024; $0.writeTimeout = .seconds(120) }
        let slow = try TestClient(port: server.port)
        try slow.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        let stream = try server.stream(1)
        let piece = [UInt8](repeating: 0x61, count: 1024)
        var written = 0
        // The socket buffers take megabytes; past them the stream's budget ends it
        while stream.isOpen && written < 64 << 20 {
            stream.write(piece)
            written += piece.count
        }
        try waitUntil("the stream ended past its budget") { !stream.isOpen }
        try waitUntil("the end handler ran") { server.ended.value == 1 }
        #expect(try TestClient.request(port: server.port, "GET", "/plaintext").text == "Hello, World!")
        #expect(server.server.openStreams == 0 && server.server.heldBytes == 0)
    }

    @Test func streamsBeyondTheirCapsAre503() throws {
        let server = try StreamingServer { $0.maxStreams = 2; $0.maxStreamsPerAddress = 1 }
        func open(from source: String) throws -> (TestClient, Int) {
            let client = try TestClient(port: server.port, source: source)
            try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            return (client, try client.readResponse(head: true).status)
        }
        let (first, firstStatus) = try open(from: "127.0.0.1")
        #expect(firstStatus == 200)
        #expect(try open(from: "127.0.0.1").1 == 503, "one per address")
        let (second, secondStatus) = try open(from: "127.0.0.2")
        #expect(secondStatus == 200)
        #expect(try open(from: "127.0.0.3").1 == 503, "two in all")
        #expect(try TestClient.request(port: server.port, "GET", "/plaintext").status == 200, "pages are not streams")
        // When a client leaves, its place is free again
        first.resetOnClose()
        _ = consume first
        try waitUntil("the stream of the client that left ended") { server.server.openStreams == 1 }
        #expect(try open(from: "127.0.0.1").1 == 200)
        _ = second
    }

    @Test func shutdownEndsStreamsAfterWhatTheyQueued() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        let opened = Locked<[ResponseStream]>([]), ended = Locked(0)
        let router = Router<EmptyContext>()
        router.get("/stream") { _, _ in
            .streaming(headers: HTTPHeaders()) { stream in
                stream.onEnd { ended.update { $0 += 1 } }
                opened.update { $0.append(stream) }
            }
        }
        let server = Server(configuration: configuration, responder: router.responder)
        try server.start()
        let client = try TestClient(port: server.port)
        try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readResponse(head: true)
        try waitUntil("the stream is open") { opened.value.count == 1 }
        opened.value[0].write(Array("last".utf8))
        server.shutdown()
        #expect(try client.readUntil("0\r\n\r\n") == "4\r\nlast\r\n0\r\n\r\n")
        #expect(client.isClosedByServer())
        server.wait()
        #expect(ended.value == 1 && !opened.value[0].isOpen)
    }

    @Test func aStreamsClientLeavingEndsIt() throws {
        let server = try StreamingServer()
        var client: TestClient? = try TestClient(port: server.port)
        try client!.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        let stream = try server.stream(1)
        client = nil
        try waitUntil("the stream ended with its connection") { server.ended.value == 1 && !stream.isOpen }
        #expect(server.server.openStreams == 0 && server.server.openConnections == 0)
    }

    @Test func aHeadRequestGetsTheStreamsHeadAndNoStream() throws {
        let server = try StreamingServer()
        let client = try TestClient(port: server.port)
        try client.send("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(head: true)
        #expect(head.status == 200 && head.headers["Content-Type"] == "text/event-stream")
        #expect(try client.readResponse().text == "Hello, World!")
        #expect(server.opened.value.isEmpty && server.server.openStreams == 0)
    }
}
