import Foundation

extension Int {
    /// Seconds (a wait, an age, a time) as an Int, within ±10^15 (31 million years) and 0 for
    /// NaN: what is computed from a stored time can be anything a hand edit wrote, and `Int(Double)`
    /// traps past Int's range, ending the process.
    init(clampedSeconds value: Double) {
        self = value.isNaN ? 0 : Int(Swift.min(Swift.max(value, -1e15), 1e15))
    }
}
