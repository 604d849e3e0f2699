import Testing
@testable import HTTPServer
import HTTPMultipart

/// `multipart/form-data` (RFC 7578): fields and files as browsers send them, and every malformed
/// or oversized body refused, never half-read.
@Suite struct MultipartTests {
    static func body(_ parts: [String], boundary: String = "XyZ", preamble: String = "") -> [UInt8] {
        Array((preamble + parts.map { "--\(boundary)\r\n\($0)\r\n" }.joined() + "--\(boundary)--\r\n").utf8)
    }

    @Test func fieldsAndFilesAsABrowserSendsThem() throws {
        let form = try MultipartForm(body: Self.body([
            "Content-Disposition: form-data; name=\"body\"\r\n\r\nSnow on the hills\r\nand more",
            "Content-Disposition: form-data; name=\"photo\"; filename=\"my \\\"sky\\\".jpg\"\r\nContent-Type: image/jpeg\r\n\r\n\u{1}\u{2}--XY",
            "Content-Disposition: form-data; name=\"empty\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n",
        ], preamble: "ignored preamble\r\n"), boundary: "XyZ")
        #expect(form.textFields.map(\.name) == ["body"])
        #expect(form.textFields.first?.value == "Snow on the hills\r\nand more")
        #expect(form.files.count == 2)
        #expect(form.file("photo")?.filename == "my \"sky\".jpg")
        #expect(form.file("photo")?.contentType == "image/jpeg")
        #expect(form.file("photo")?.bytes == [1, 2, 0x2D, 0x2D, 0x58, 0x59])
        #expect(form.file("empty") == nil, "an empty file input sends nothing to read")
    }

    @Test func theBoundaryComesFromTheContentType() {
        #expect(MultipartForm.boundary(ofContentType: "multipart/form-data; boundary=----WebKitFormBoundaryAbC") == "----WebKitFormBoundaryAbC")
        #expect(MultipartForm.boundary(ofContentType: "Multipart/Form-Data; charset=utf-8; boundary=\"a b\"") == "a b")
        #expect(MultipartForm.boundary(ofContentType: "multipart/mixed; boundary=x") == nil)
        #expect(MultipartForm.boundary(ofContentType: "multipart/form-data") == nil)
        #expect(MultipartForm.boundary(ofContentType: "multipart/form-data; boundary=\(String(repeating: "b", count: 71))") == nil)
    }

    @Test(arguments: [
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno closing delimiter",
        "no boundary at all",
        "--XyZ\r\nContent-Type: text/plain\r\n\r\nno disposition\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\u{FF}\r\n--XyZ--",
        "--XyZgarbage",
    ])
    func malformedBodiesAreRefused(_ text: String) {
        var bytes = Array(text.utf8)
        if text.contains("\u{FF}") { bytes = bytes.map { $0 == 0xC3 ? 0xFF : $0 } }
        #expect(throws: MultipartForm.Failure.self) { try MultipartForm(body: bytes, boundary: "XyZ") }
    }

    @Test func limitsAreKept() {
        var limits = MultipartForm.Limits()
        limits.maxParts = 2
        limits.maxFieldBytes = 5
        let three = Self.body((0..<3).map { "Content-Disposition: form-data; name=\"f\($0)\"\r\n\r\nv" })
        #expect(throws: MultipartForm.Failure.self) { try MultipartForm(body: three, boundary: "XyZ", limits: limits) }
        let long = Self.body(["Content-Disposition: form-data; name=\"f\"\r\n\r\n123456"])
        #expect(throws: MultipartForm.Failure.self) { try MultipartForm(body: long, boundary: "XyZ", limits: limits) }
        let head = Self.body(["Content-Disposition: form-data; name=\"f\"\r\nX-Pad: \(String(repeating: "p", count: 5_000))\r\n\r\nv"])
        #expect(throws: MultipartForm.Failure.self) { try MultipartForm(body: head, boundary: "XyZ") }
    }

    /// A file made of near-delimiters (CR LF - - and most of the boundary, over and over) is its
    /// bytes: nothing short of the whole delimiter ends a part.
    @Test func nearDelimitersInAFileAreItsBytes() throws {
        let near = String(repeating: "\r\n--XyZXyZXyZXyZXyZXyZXyZXyZXyZXy", count: 30_000)
        let bytes = Array("--XyZXyZXyZXyZXyZXyZXyZXyZXyZXyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n\(near)\r\n--XyZXyZXyZXyZXyZXyZXyZXyZXyZXyZ--".utf8)
        let form = try MultipartForm(body: bytes, boundary: "XyZXyZXyZXyZXyZXyZXyZXyZXyZXyZ")
        #expect(form.files.first?.bytes.count == near.utf8.count)
    }
}
