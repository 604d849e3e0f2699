import Foundation

/// Text from outside (an upstream's error reason, an answer's contents) as one log line: control
/// characters escaped, so that it cannot end the line and forge the next, and at most `limit`
/// characters, so that a provider cannot fill the disk through the log.
enum LogText {
    static func oneLine(_ value: Any, limit: Int = 300) -> String {
        var out = ""
        var count = 0
        var rest = 0
        for scalar in String(describing: value).unicodeScalars {
            if count >= limit {
                rest += 1
                continue
            }
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029 {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return rest > 0 ? out + "… (\(rest) more)" : out
    }
}
