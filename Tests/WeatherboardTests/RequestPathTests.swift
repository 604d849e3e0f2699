import Foundation
import HTTPServer
import HTTPTestSupport
import Testing
@testable import Weatherboard

/// Slow work stays off the request path: a hanging provider, a long bookmarks cookie and a burst
/// of password checks cannot stop the site answering.
@Suite(.serialized, .onEveryEngine) struct RequestPathTests {
    /// Runs `work` on `count` threads at once and returns what each gave.
    func concurrently<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) throws -> T) -> [Result<T, Error>] {
        let lock = NSLock()
        nonisolated(unsafe) var results: [Result<T, Error>] = []
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                let result = Result { try work(index) }
                lock.withLock { results.append(result) }
                group.leave()
            }
        }
        group.wait()
        return results
    }

    @Test func aHangingProviderHoldsNoRequestWorker() throws {
        // Given a provider that never answers within its 3 s timeout
        let stub = try UpstreamStub()
        stub.delay = 4
        let app = try AppHarness { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
            configuration.weatherFirstFetchBudget = 0.3
        }
        let slugs = ["seoul", "busan", "incheon", "daegu", "daejeon", "gwangju", "ulsan", "suwon", "tokyo", "osaka"]
        // When 50 page loads of 10 uncached cities arrive at once, and a health check among them
        let health = Locked<WireResponse?>(nil)
        let pages = concurrently(51) { index in
            if index == 25 {
                let answer = try app.get("/healthz", overSocket: true)
                health.update { $0 = answer } // the client gives up after 5 s: the request workers must not all be waiting
                return try app.get("/city/seoul", overSocket: true)
            }
            return try app.get("/city/\(slugs[index % slugs.count])", overSocket: true)
        }
        // Then the health check and every page were answered, without the weather, which is not there yet
        #expect(health.value?.status == 200)
        #expect(pages.count == 51)
        for result in pages {
            let response = try result.get()
            let document = try MarkupDocument(response.body)
            #expect(response.status == 200)
            #expect(document.nodes("//p[@class='weather-unavailable']").count == 1)
        }
        #expect(stub.hits <= slugs.count, "one fetch per city however many pages asked")
    }

    @Test func aLongBookmarksCookieAsksUpstreamForAtMostItsTwentyCities() throws {
        let stub = try UpstreamStub()
        let app = try AppHarness { configuration in
            configuration.weatherProviders = ["open-meteo"]
            configuration.openMeteoURL = stub.url
        }
        // as many cities as fit in the server's 16 KiB header limit
        var slugs: [String] = []
        for slug in try app.application.database.read({ try $0.all("SELECT slug FROM cities ORDER BY length(slug), slug") { $0.string(0) } }) {
            if slugs.reduce(0, { $0 + $1.utf8.count + 1 }) + slug.utf8.count > 14_000 { break }
            slugs.append(slug)
        }
        #expect(slugs.count > 1_500)
        let (response, document) = try app.page("/", headers: [("Cookie", "bookmarks=" + slugs.joined(separator: "."))])
        #expect(response.status == 200)
        #expect(document.nodes("//li[@class='city-row']").count == Bookmarks.limit)
        #expect(stub.hits <= WeatherService.fetchesPerRequest)
    }

    @Test func aBurstOfPasswordChecksIsBoundedAndPagesAreStillServed() throws {
        let app = try AppHarness { configuration in
            configuration.passwordCost = 1 << 14 // slow enough for the checks to overlap
            configuration.limits.signInsPerMinute = 1_000 // this test is about the hashing bound, not the guessing limit
        }
        let browser = app.browser()
        try browser.signUp("walker")
        let cookie = browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let body = Array("current_password=wrong-wrong-wrong&new_password=another-long-one".utf8)
        // When 100 wrong current passwords arrive at once, with a page load among them
        let answers = concurrently(100) { _ in
            try TestClient.request(port: app.port, "POST", "/settings/password",
                                   headers: [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded"), ("Sec-Fetch-Site", "same-origin")], body: body).status
        }
        let page = try app.get("/city/seoul")
        // Then each got an answer: refused as wrong, or 503 with Retry-After when too many ran at once
        let statuses = try answers.map { try $0.get() }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == 422 || $0 == 503 })
        #expect(statuses.contains(503))
        #expect(page.status == 200)
    }
}
