/// Which of the server's worker pools runs a request. The application sorts requests with the
/// server's `lane` function: `quick` for those that wait on nothing shared for long (static
/// files, pages kept in memory), so that a dependency that stops answering cannot occupy every
/// worker and stop them too; `main` for the rest.
public enum Lane: String, Sendable {
    case main, quick

    /// The lane of the request this thread runs (`main` outside any request).
    @TaskLocal public static var current: Lane = .main

    /// Thrown on the quick lane by work that would wait after all (a kept page that has to be
    /// rendered again): the server runs the request anew on the main lane. So a request can be
    /// sent to the quick lane on the chance that it is quick, and no wait occupies that lane.
    public struct Moved: Error {
        public init() {}
    }

    /// Throws `Moved` on the quick lane: call before anything that may wait on a dependency.
    public static func waitsAllowed() throws {
        if current == .quick { throw Moved() }
    }
}

/// What a `lane` function may weigh besides the request, read only when asked.
public struct LaneConditions: Sendable {
    let main: ThreadPool
    let stallAfter: UInt64

    /// Every main-lane worker is busy and none has finished a request for the configuration's
    /// `mainLaneStall`: they wait on something that stopped answering (a database).
    public var mainLaneStalled: Bool { main.isStalled(after: stallAfter) }
}
