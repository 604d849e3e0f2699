import Foundation

/// When a request's database work must be done by: set for each request (`Application`), so
/// that a database that stops answering costs a request a bounded wait and a 503, never a
/// worker for as long as the database's own timeouts. Work off the request path has none.
public enum DatabaseDeadline {
    @TaskLocal public static var current: Date?

    /// Seconds left, or nil without a deadline.
    static var remaining: Double? { current.map { max(0, $0.timeIntervalSinceNow) } }

    /// How long a request of each lane may wait on the database in all: a quick-lane request
    /// (a guest's page, which is usually kept in memory) gives up sooner.
    static let main: TimeInterval = 2
    static let quick: TimeInterval = 1
}
