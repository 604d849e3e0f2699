import Foundation
import HTTPServer

extension Request {
    /// A page's script asks for the outcome as JSON (`Accept: application/json`) rather than the
    /// redirect a form gets: agreeing and bookmarking change in place.
    var asksForJSON: Bool { headers["Accept"]?.contains("application/json") == true }
}

extension Response {
    /// A JSON answer for a page's script (keys sorted), never kept by a cache unless `cacheControl` says.
    static func json(_ object: Any, status: HTTPStatus = .ok, contentType: String = "application/json",
                     cacheControl: String = "no-store") -> Response {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])).map { Array($0) }
            ?? Array("{}".utf8)
        return Response(status: status, headers: HTTPHeaders([("Content-Type", contentType), ("Cache-Control", cacheControl)]), body: body)
    }
}
