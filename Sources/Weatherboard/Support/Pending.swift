import Foundation
import HTTPServer

/// A result that several threads may wait for, each with its own deadline.
final class Pending<Value: Sendable>: Sendable {
    private let result = ConditionLock<(done: Bool, value: Value?)>((false, nil))

    func finish(_ value: Value?) {
        result.withLock(wake: .all) { $0 = (true, value) }
    }

    /// The result once finished, or nil at the deadline.
    func wait(until deadline: Date) -> Value? {
        result.wait(until: deadline, for: \.done) { result, _ in result.value }
    }
}
