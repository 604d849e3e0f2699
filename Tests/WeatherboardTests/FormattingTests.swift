import Foundation
import Testing
@testable import Weatherboard

/// The hand-written formatters on the page path give what the general ones gave.
@Suite struct FormattingTests {
    @Test func iso8601MatchesFoundation() {
        let formatter = ISO8601DateFormatter()
        for seconds in [0.0, 1_795_326_300, 1_795_326_300.9, 951_782_400 /* 2000-02-29 */, 4_102_444_799 /* 2099-12-31T23:59:59 */] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(DateFormatting.iso8601(date) == formatter.string(from: date))
        }
    }

    @Test func placeholdersAreFilledInOnePass() {
        #expect(Localization.fill("{n}° warmer than {day}", ["n": "3", "day": "yesterday"]) == "3° warmer than yesterday")
        #expect(Localization.fill("{a}{a}", ["a": "{a}"]) == "{a}{a}", "a value is not filled again")
        #expect(Localization.fill("{unknown} stays, { and } too", ["n": "1"]) == "{unknown} stays, { and } too")
        #expect(Localization.fill("no end {n", ["n": "1"]) == "no end {n")
    }

    @Test func digestsAreLowerCaseHex() {
        #expect([UInt8]([0x00, 0x0F, 0xA0, 0xFF]).withUnsafeBytes(Tokens.hex) == "000fa0ff")
        #expect(Tokens.digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
