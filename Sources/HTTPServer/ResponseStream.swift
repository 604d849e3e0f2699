import Foundation
import Synchronization

/// The body of a streamed response, written after its head, in pieces, from any thread, until
/// the handler finishes it or it ends otherwise: the client goes away, stops reading past the
/// stream's budget (`ServerConfiguration.maxStreamBufferedBytes`) or the write timeout, or the
/// server shuts down. On HTTP/1.1 each write is one chunk (RFC 9112 §7.1) and the connection
/// carries on after the last; on HTTP/1.0 the body ends when the connection closes (§6.3).
///
/// Writing is cheap and never blocks: the bytes are handed to the connection's event loop,
/// which frames and sends them. Whoever writes learns from `isOpen` (or `write`'s result) that
/// nobody is listening any more, and from `onEnd` when that happens.
public final class ResponseStream: Sendable {
    private unowned let loop: EventLoop
    let fd: Int32
    let serial: UInt64
    /// Whom the stream counts against for `maxStreamsPerAddress`.
    let client: String

    private struct State {
        var open = true
        var endHandlers: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())

    init(loop: EventLoop, fd: Int32, serial: UInt64, client: String) {
        self.loop = loop
        self.fd = fd
        self.serial = serial
        self.client = client
    }

    /// False once the stream has ended, for whatever reason.
    public var isOpen: Bool { state.withLock { $0.open } }

    /// Sends `bytes` as the body's next piece (nothing for an empty one); false when the stream
    /// has ended and the bytes go nowhere.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        guard isOpen else { return false }
        if !bytes.isEmpty { loop.streamOperation(.init(stream: self, kind: .write(bytes))) }
        return true
    }

    /// Ends the body; on HTTP/1.1 the connection then serves its next request.
    public func finish() {
        guard isOpen else { return }
        loop.streamOperation(.init(stream: self, kind: .finish))
    }

    /// Runs `handler` once when the stream ends (at once if it has). Handlers run on the event
    /// loop's thread: they must be quick and must not block.
    public func onEnd(_ handler: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state -> Bool in
            guard state.open else { return true }
            state.endHandlers.append(handler)
            return false
        }
        if ended { handler() }
    }

    /// Marks the stream ended and runs its handlers; called by the loop, once.
    func ended() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard state.open else { return [] }
            state.open = false
            defer { state.endHandlers = [] }
            return state.endHandlers
        }
        for handler in handlers { handler() }
    }

    /// What a writer asks of the loop.
    struct Operation: Sendable {
        let stream: ResponseStream
        enum Kind: Sendable {
            case write([UInt8])
            case finish
        }
        let kind: Kind
    }
}
