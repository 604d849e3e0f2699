import CZlib
import Foundation
@testable import HTTPServer
import Synchronization
import Testing

/// Issue 38 #7: what happens when zlib cannot start or fails midway.
@Suite struct GzipTests {
    static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Raw deflate data (a run that need not be final) inflated, if it makes exactly `length` bytes.
    static func inflateRaw(_ deflated: [UInt8], expecting length: Int) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: length + 1)
        var input = deflated
        let (status, produced) = input.withUnsafeMutableBufferPointer { inBuffer in
            out.withUnsafeMutableBufferPointer { outBuffer -> (Int32, Int) in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                let status = inflate(&stream, Z_SYNC_FLUSH)
                return (status, outBuffer.count - Int(stream.avail_out))
            }
        }
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, stream.avail_in == 0, produced == length else { return nil }
        out.removeLast()
        return out
    }

    /// The body a gzip member carries, read back with zlib.
    static func carried(_ member: [UInt8], length: Int) -> [UInt8]? {
        guard member.count >= 18, Array(member.prefix(10)) == Gzip.header else { return nil }
        return Self.inflateRaw(Array(member[10..<(member.count - 8)]), expecting: length)
    }

    /// A stream zlib refuses to start (here: a level it does not have) went out as one stored
    /// block, cut at 64 KiB under a trailer that claimed the whole length.
    @Test func aStreamThatCannotStartCarriesTheWholeBodyStored() {
        let body = Self.bytes(200_000)
        let member = Gzip.compress(body, level: 42)
        #expect(Self.carried(member, length: body.count) == body)
        #expect(Self.carried(Gzip.compress(body), length: body.count) == body)
    }

    /// Streams are kept and reset between uses: a stream used before, ended (`final`) or left
    /// mid-stream (a sync flush), from any thread, makes the same bytes as a fresh one would.
    @Test func aKeptStreamDeflatesAsAFreshOne() {
        let text = Array(String(repeating: "<p class=\"post-body\">Drizzle by the river</p>\n", count: 400).utf8)
        let fresh = Gzip.withDeflateStream(level: 6) { stream -> [UInt8] in
            var out: [UInt8] = []
            _ = text.withUnsafeBufferPointer { Gzip.deflateInto(&out, &stream, $0, 0..<$0.count, flush: Z_FINISH) }
            return out
        }
        #expect(fresh != nil)
        let runs = Mutex<[[UInt8]]>([])
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let bytes = index % 3 == 0 ? Self.bytes(5_000) : text
            let run = Gzip.deflateRun(bytes, final: index % 2 == 0, level: 6)
            if bytes == text && index % 2 == 0 { runs.withLock { $0.append(run) } }
            #expect(Self.inflateRaw(run, expecting: bytes.count) == bytes)
        }
        #expect(!runs.withLock { $0 }.isEmpty)
        #expect(runs.withLock { $0 }.allSatisfy { $0 == fresh })
        #expect(Self.carried(Gzip.compress(text), length: text.count) == text)
    }

    /// A zlib error (here: a stream that was never started) ended nothing: the loop grew its
    /// buffer and called deflate again, for ever.
    @Test func aZlibErrorEndsTheLoop() {
        let finished = DispatchSemaphore(value: 0)
        let outcome = Mutex<Bool?>(nil)
        Thread.detachNewThread {
            var stream = z_stream()
            var out: [UInt8] = []
            let input = Self.bytes(10_000)
            let deflated = input.withUnsafeBufferPointer { Gzip.deflateInto(&out, &stream, $0, 0..<$0.count, flush: Z_SYNC_FLUSH) }
            outcome.withLock { $0 = deflated }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 10) == .success, "deflateInto returned")
        #expect(outcome.withLock { $0 } == false)
    }
}
