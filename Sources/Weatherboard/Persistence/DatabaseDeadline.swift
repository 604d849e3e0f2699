import Foundation

/// When a request's database work must be done by: set for each request (`Application`), so
/// that a database that stops answering costs a request a bounded wait and a 503, never a
/// worker for as long as the database's own timeouts. Work off the request path has none.
public enum DatabaseDeadline {
    @TaskLocal public static var current: Date?

    /// Seconds left, or nil without a deadline.
    static var remaining: Double? { current.map { max(0, $0.timeIntervalSinceNow) } }

    /// How long a request may wait on the database in all.
    static let allowed: TimeInterval = 2
}
