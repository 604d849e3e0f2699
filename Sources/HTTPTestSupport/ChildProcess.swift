import CSystem
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program started by a test, with `posix_spawn` and not Foundation's `Process`: `Process`
/// closes descriptors of this process again under concurrency (swiftlang/swift#57827), and
/// with other tests' sockets opening meanwhile one of theirs went (EBADF on send, or a
/// connection closed before its answer). The child gets none of this process's descriptors
/// beyond standard input, output and error (all `/dev/null`): a test's socket left open in a
/// long-lived child (a database server) would keep its connection from ever closing. Output
/// goes where the command's own redirections say.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The exit status once `wait` has seen it.
    private let status = Mutex<Int32?>(nil)

    /// Starts `/bin/sh -c command`.
    public convenience init(shell command: String) throws {
        try self.init(["/bin/sh", "-c", command])
    }

    /// Starts `arguments[0]` (a path) with the rest as its arguments.
    public init(_ arguments: [String]) throws {
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard csystem_spawn_add_closefrom(&actions, 3) == 0 else { throw TestClientError("posix_spawn cannot close descriptors") }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard code == 0 else { throw TestClientError("cannot start \(arguments[0]): error \(code)") }
        self.pid = pid
    }

    /// Waits for the child to end; its exit status (128 + the signal's number if one ended it).
    @discardableResult
    public func wait() -> Int32 {
        if let known = status.withLock({ $0 }) { return known }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
        let ended = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        status.withLock { $0 = ended }
        return ended
    }

    /// Sends `signal` to the child (nothing if it has already been waited for).
    public func signal(_ signal: Int32) {
        guard status.withLock({ $0 }) == nil else { return }
        kill(pid, signal)
    }
}
