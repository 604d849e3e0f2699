import Foundation
import HTTPServer
import HTTPMultipart

/// Which requests may carry a photo: a multipart post to a board (`/city/{slug}/posts`). Only
/// those are read past the site's 64 KiB body limit, up to half again the photo limit, so that
/// a photo a little too large still reaches the form and is refused in words with the text kept.
enum PhotoUpload {
    static func bodyLimit(default limit: Int, photoBytes: Int) -> @Sendable (RequestHead) -> Int {
        { head in
            guard head.method == "POST", isBoardPost(head.path),
                  head.headers["Content-Type"].flatMap(MultipartForm.boundary(ofContentType:)) != nil else { return limit }
            return photoBytes + photoBytes / 2 + limit
        }
    }

    /// `/city/{slug}/posts`, with exactly one segment between.
    static func isBoardPost(_ path: Substring) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return segments.count == 4 && segments[0].isEmpty && segments[1] == "city" && !segments[2].isEmpty && segments[3] == "posts"
    }
}
