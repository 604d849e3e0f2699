// The bare HTTPServer library answering the peer's two trivial routes, for load comparisons:
//   HTTPServerBench [--port 8080] [--host 127.0.0.1] [--loops N] [--workers N]
import Foundation
import HTTPServer
import Logging

var configuration = ServerConfiguration()
configuration.serverName = "bench"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let flag = arguments.next() {
    guard let value = arguments.next() else { fatalError("missing value for \(flag)") }
    switch flag {
    case "--port": configuration.port = Int(value)!
    case "--host": configuration.host = value
    case "--loops": configuration.eventLoops = Int(value)!
    case "--workers": configuration.workerThreads = Int(value)!
    case "--max-connections": configuration.maxConnections = Int(value)!
    case "--header-timeout": configuration.headerTimeout = .seconds(Int(value)!)
    default: fatalError("unknown flag \(flag)")
    }
}

var logger = Logger(label: "bench")
logger.logLevel = .notice
let plaintext = Response.text("Hello, World!")
let healthy = Response.text("ok")
let placeholderCity = Response.html(Array("<!doctype html><title>bench</title><p>The bare HTTPServer has no city pages.</p>".utf8))
// The two fixed answers are made on the event loop (they never block); the rest goes to workers.
let server = Server(configuration: configuration, logger: logger, immediate: { request in
    guard request.method == "GET" || request.method == "HEAD" else { return nil }
    switch request.path {
    case "/plaintext": return plaintext
    case "/healthz": return healthy
    default: return nil
    }
}) { request in
    // bench.sh checks that /city/seoul answers before any scenario; the bare server has no
    // city pages, so only its plaintext scenario means anything.
    if request.method == "GET" && request.path.hasPrefix("/city/") { return placeholderCity }
    return Response.text("not found\n", status: .notFound)
}
try server.start()
server.shutDownOnSignals()
server.wait()
