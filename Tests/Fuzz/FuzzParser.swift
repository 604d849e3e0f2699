// libFuzzer target for the HTTP request parser and the form decoder (built by scripts/fuzz-parser.sh).
// Beyond "no crash": the input is also parsed split in two at a position taken from its first
// byte, and both parses must agree, which is the parser's central promise.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = ParserLimits()
    limits.maxBodyBytes = 4096
    limits.maxHeaderBytes = 2048
    limits.maxRequestTargetLength = 1024
    let whole = outcomes([bytes], limits)
    if size > 1 {
        let cut = Int(bytes[0]) % size
        let split = outcomes([Array(bytes[..<cut]), Array(bytes[cut...])], limits)
        if split != whole { fatalError("split at \(cut) changed the result: \(whole) vs \(split)") }
    }
    if let text = String(validating: bytes, as: UTF8.self) {
        _ = try? URLEncodedForm(parsing: text)
        _ = PercentDecoding.pathSegments(text)
    }
    return 0
}

private func outcomes(_ chunks: [[UInt8]], _ limits: ParserLimits) -> [String] {
    var parser = RequestParser(limits: limits)
    var buffer: [UInt8] = []
    var index = 0
    var result: [String] = []
    for chunk in chunks {
        buffer.append(contentsOf: chunk)
        loop: while true {
            switch parser.next(buffer, &index) {
            case .needMore: break loop
            case .head: continue
            case .request(let request):
                precondition(index <= buffer.count)
                _ = request.wantsKeepAlive
                result.append("\(request.method) \(request.target) \(request.headers.fields.count) \(request.body.count)")
            case .error(let status):
                result.append("error \(status.code)")
                return result
            }
        }
    }
    return result
}
