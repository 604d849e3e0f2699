// libFuzzer target for the photo upload path (scripts/fuzz-upload.sh): a multipart body parsed as
// the server parses a post form, each file recognised by its container walk, and a file that
// passes read by libvips's header reader, as `PhotoProcessor` does before any pixel is decoded.
// Beyond "no crash": a part's bytes lie inside the body, and a recognised file's header read
// either fails or gives a size.
import CPhotos

private let started: Bool = wb_photos_start() == 0

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard started else { fatalError("libvips did not start") }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte chooses: a multipart body (boundary "B"), or a file as it would arrive in one.
    if let first = bytes.first, first & 1 == 0 {
        guard let form = try? MultipartForm(body: Array(bytes.dropFirst()), boundary: "B") else { return 0 }
        for file in form.files {
            if file.bytes.count >= size { fatalError("a part of \(file.bytes.count) bytes from a body of \(size)") }
            readHeader(file.bytes)
        }
    } else {
        readHeader(bytes.dropFirst())
    }
    return 0
}

private func readHeader(_ file: ArraySlice<UInt8>) {
    guard case .success(let format) = PhotoFormat.recognise(file) else { return }
    var header = wb_photo_header()
    let status = file.withUnsafeBytes { wb_photo_read_header($0.baseAddress, $0.count, format.rawValue, &header) }
    if status == 0 && (header.width <= 0 || header.height <= 0) { fatalError("a header read with size \(header.width) x \(header.height)") }
}
