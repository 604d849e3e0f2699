import Foundation
import Testing
@testable import Weatherboard

/// Memory that a crawl cannot grow without bound: the decoded-forecast cache.
@Suite(.onEveryEngine) struct MemoryBoundTests {
    @Test func theLeastRecentlyUsedEntryGoesFirst() {
        var cache = LRUCache<String, Int>(maximumCount: 3, maximumCost: 1_000)
        cache.set(1, for: "a", cost: 1)
        cache.set(2, for: "b", cost: 1)
        cache.set(3, for: "c", cost: 1)
        #expect(cache.value(for: "a") == 1) // "a" is now the most recent; "b" the least
        cache.set(4, for: "d", cost: 1)
        #expect(cache.count == 3)
        #expect(cache.peek("b") == nil)
        #expect(cache.peek("a") == 1 && cache.peek("c") == 3 && cache.peek("d") == 4)
    }

    @Test func theTotalCostIsBoundedAndAReplacedEntryIsCountedOnce() {
        var cache = LRUCache<Int, String>(maximumCount: 100, maximumCost: 10)
        for key in 0..<5 { cache.set("v\(key)", for: key, cost: 3) }
        #expect(cache.totalCost <= 10)
        #expect(cache.count == 3)
        #expect(cache.peek(4) == "v4" && cache.peek(0) == nil)
        cache.set("again", for: 4, cost: 3)
        #expect(cache.totalCost == 9 && cache.count == 3)
        cache.set("too big", for: 99, cost: 11)
        #expect(cache.peek(99) == nil && cache.totalCost == 9)
        cache.removeValue(for: 4)
        #expect(cache.count == 2 && cache.totalCost == 6)
    }

    @Test func manyCitiesKeepAtMostTheConfiguredForecastsInMemoryAndPagesStillShowTheirWeather() throws {
        let harness = try AppHarness { $0.forecastsInMemory = WeatherService.MemoryLimit(forecasts: 3, bytes: 1 << 20) }
        let slugs = ["seoul", "tokyo", "london", "paris", "auckland", "honolulu"]
        for slug in slugs {
            let (response, page) = try harness.page("/city/\(slug)")
            #expect(response.status == 200)
            #expect(page.nodes("//section[@data-day='today']").count == 1, "\(slug) shows today's weather")
            #expect(harness.application.weather.forecastsInMemory.count <= 3)
        }
        // The first city was forgotten in memory but not in SQLite: its page still has its weather,
        // read back rather than fetched again.
        let (_, again) = try harness.page("/city/seoul")
        #expect(again.nodes("//section[@data-day='today']").count == 1)
        #expect(try harness.count("SELECT COUNT(*) FROM weather_cache") == slugs.count)
        #expect(harness.application.weather.forecastsInMemory.count == 3)
    }
}

/// Issue 39 #5: the caches counted their arrays' lengths and forecasts' JSON, while the process
/// held 1.7 times that. What they report now is what the heap holds for them (measured with
/// mallinfo2 over enough entries that other suites' allocations meanwhile are small beside them).
@Suite(.serialized) struct ResidentBytesTests {
    @Test func keptForecastsCostWhatTheHeapHoldsForThem() throws {
        let url = try #require(Bundle.module.url(forResource: "open-meteo-seoul", withExtension: "json", subdirectory: "Fixtures"))
        let json = try Data(contentsOf: url)
        // Other suites allocate and free meanwhile (the whole run shares the heap; a photo upload
        // holds tens of megabytes for a moment). What the cache held is measured as what the heap
        // gives back when it goes, two readings a few milliseconds apart (the filling took
        // hundreds, and other suites' work in it made the growth a poor measure: a median 0.35
        // from 1 in CI at 43578dd); five rounds, and the median of their ratios.
        var ratios: [Double] = []
        var held = 0.0, reported = 0.0
        for _ in 0..<5 {
            var memory: ForecastMemory? = ForecastMemory(WeatherService.MemoryLimit(forecasts: 1_000, bytes: 1 << 30))
            for city in 0..<600 {
                // Each decoded anew, as each city's own forecast is.
                memory?.remember(try OpenMeteoProvider.decode(json, fetchedAt: Date()), cityID: Int64(city))
            }
            reported = Double(memory?.usage.bytes ?? 0)
            let full = SiteMetrics.heapBytes().inUse
            memory = nil
            held = Double(full - SiteMetrics.heapBytes().inUse)
            // A round in which another suite took more than this one gave back says nothing: its
            // ratio sorts last, and the median is of the rounds that measured.
            ratios.append(held > 0 ? reported / held : .infinity)
        }
        #expect(ratios.filter(\.isFinite).count >= 3, "the heap gave back in most rounds: \(ratios)")
        let median = ratios.sorted()[2]
        #expect(abs(median - 1) < 0.2, "ratios \(ratios); last round: reported \(Int(reported)) bytes, the heap gave back \(Int(held)); their JSON: \(600 * json.count)")
    }

    @Test func aKeptFragmentHoldsNoMoreThanItsBytes() {
        var html: [UInt8] = []
        html.reserveCapacity(64 << 10) // as a renderer reserves for a page
        for index in 0..<2_000 { html.append(contentsOf: Array("<li>row \(index)</li>".utf8)) }
        #expect(html.capacity > html.count + 1_000)
        let kept = HTMLFragment(html).deflatedOnce()
        #expect(kept.bytes.capacity < kept.bytes.count + 64) // malloc rounds a block up a little
        #expect(kept.residentBytes < html.count + (kept.deflated?.deflated.count ?? 0) + 200)
    }
}
