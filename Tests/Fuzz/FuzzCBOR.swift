// libFuzzer target for the CBOR reader WebAuthn's messages go through (scripts/fuzz-cbor.sh).
// Beyond "no crash": a value read must say how many bytes it took, never more than were given,
// and reading exactly those bytes again must give the same value.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoder = CBORDecoder()
    guard let (value, length) = try? decoder.decode(bytes[...]) else { return 0 }
    if length < 1 || length > size { fatalError("a value of \(length) bytes out of \(size)") }
    // Compared as text: a NaN read twice is the same value, though NaN != NaN.
    guard let again = try? decoder.decodeWhole(Array(bytes[..<length])), "\(again)" == "\(value)" else {
        fatalError("the value's own bytes read differently")
    }
    return 0
}
