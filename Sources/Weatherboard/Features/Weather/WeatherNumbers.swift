import Foundation

/// Numbers as the weather part writes them, without `String(format:)` on the request path.
enum WeatherNumbers {
    /// `value` as `%.1f` writes it (`-3.5`, `12.0`) without going through `String(format:)` (a
    /// chart has a hundred of these): tenths rounded directly, except within a hair of a half
    /// tenth, where only the exact binary value decides (and `String(format:)` still does).
    static func oneDecimal(_ value: Double) -> String {
        let scaled = value * 10
        guard abs(value) < 1e6, abs(scaled - scaled.rounded(.down) - 0.5) > 1e-4 else { return String(format: "%.1f", value) }
        let tenths = Int(scaled.rounded())
        let whole = tenths.magnitude / 10, fraction = tenths.magnitude % 10
        return (value.sign == .minus ? "-" : "") + String(whole) + "." + String(fraction)
    }

    /// To a tenth (what normals and made-up amounts are kept as).
    static func tenth(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
