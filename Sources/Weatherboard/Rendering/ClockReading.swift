import Foundation

/// The clock as one render reads it: the moment it is, and the first moment after it at which
/// anything the render decided by the clock would be decided otherwise (an edit window closing,
/// a pin running out). A kept render is good until then: how long follows from what it read,
/// not from a period chosen beside it.
final class ClockReading {
    let now: Date
    private(set) var changesAt = Date.distantFuture

    init(_ now: Date) {
        self.now = now
    }

    /// Whether `moment` is still to come; if it is, the render changes then.
    func isBefore(_ moment: Date) -> Bool {
        guard now < moment else { return false }
        changesAt = min(changesAt, moment)
        return true
    }
}

/// A render kept with the moment its `ClockReading` said it stops being true.
struct KeptUntil<Value: Sendable>: Sendable {
    var value: Value
    var until: Date

    /// The value while `now` is before its end; nil after.
    func value(at now: Date) -> Value? { now < until ? value : nil }
}
