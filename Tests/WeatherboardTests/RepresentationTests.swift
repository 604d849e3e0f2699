import Foundation
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Issue 63 #10: a static file and its gzip form are two representations, each with its own
/// strong `ETag`, and `If-None-Match` is answered for the one the client would get.
@Suite struct RepresentationTests {
    static let gzip = [("Accept-Encoding", "gzip")]

    @Test(arguments: ["/static/css/site.css", "/palette.css"])
    func theGzipFormHasItsOwnTagAndThePlainTagDoesNotValidateIt(_ path: String) throws {
        let app = try AppHarness()
        let plain = try app.get(path)
        let packed = try app.get(path, headers: Self.gzip)
        #expect(plain.status == 200 && packed.status == 200)
        #expect(packed.headers["Content-Encoding"] == "gzip" && plain.headers["Content-Encoding"] == nil)
        let plainTag = try #require(plain.headers["ETag"]), packedTag = try #require(packed.headers["ETag"])
        #expect(!plainTag.hasPrefix("W/") && !packedTag.hasPrefix("W/"), "strong validators")
        #expect(plainTag != packedTag, "two representations, two tags")

        // Holding the plain body, a client that now accepts gzip gets the gzip body, not 304.
        let crossed = try app.get(path, headers: Self.gzip + [("If-None-Match", plainTag)])
        #expect(crossed.status == 200 && crossed.headers["Content-Encoding"] == "gzip" && !crossed.body.isEmpty)
        // And the other way round.
        let back = try app.get(path, headers: [("If-None-Match", packedTag)])
        #expect(back.status == 200 && back.headers["Content-Encoding"] == nil && back.body == plain.body)
        // Each tag validates its own representation.
        let same = try app.get(path, headers: Self.gzip + [("If-None-Match", packedTag)])
        #expect(same.status == 304 && same.body.isEmpty && same.headers["ETag"] == packedTag)
        #expect(try app.get(path, headers: [("If-None-Match", "\"other\", " + plainTag)]).status == 304)
        #expect(try app.get(path, headers: Self.gzip + [("If-None-Match", "*")]).status == 304)
    }

    /// Issue 63 #8: every cache that holds bytes says what it holds and its bound, and the
    /// bounds add up to what docs/operations.md says a node may hold.
    @Test func everyByteCacheIsMeasuredAndItsBoundDocumented() throws {
        let app = try AppHarness()
        _ = try app.get("/city/seoul")
        _ = try app.get("/static/css/site.css", headers: Self.gzip)
        let text = try app.get("/metrics", overSocket: true).text
        let caches = app.application.site.caches
        #expect(Set(caches.map(\.name)).isSuperset(of: ["pages", "weather_parts", "boards", "shared_stretches", "shared_replies", "forecasts",
                                                        "photos", "observations", "compressed_files", "sqlite"]))
        let guide = try String(contentsOfFile: AppConfiguration.repositoryFolder("docs/operations.md"), encoding: .utf8)
        for cache in caches {
            #expect(text.contains("weatherboard_cache_bytes{cache=\"\(cache.name)\"}"), "\(cache.name) is measured")
            if let bound = cache.bound {
                #expect(text.contains("weatherboard_cache_bytes_limit{cache=\"\(cache.name)\"} \(bound)"), "\(cache.name)'s bound is exposed")
                #expect(guide.contains("| `\(cache.name)` | \(bound >> 20) MiB"), "docs/operations.md lists \(cache.name) with its bound")
            }
        }
        let total = caches.compactMap(\.bound).reduce(0, +) >> 20
        #expect(guide.contains("**\(total) MiB**"), "docs/operations.md states the total (\(total) MiB)")
        #expect(text.contains("weatherboard_cache_bytes{cache=\"compressed_files\"}"))
    }
}
