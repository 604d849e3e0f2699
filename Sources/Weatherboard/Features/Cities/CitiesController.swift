import Foundation
import HTTPServer

/// City search, the nearest city, the city page and the palette stylesheet.
struct CitiesController {
    let pages: Pages
    let index: CityIndex
    let weather: WeatherService
    let clock: @Sendable () -> Date
    let board: BoardView
    let bookmarks: Bookmarks
    let cache: PageCache
    let fragments = WeatherFragments()
    /// The palette stylesheet, generated once; its ETag is a hash of its text.
    let paletteCSS: Response

    init(pages: Pages, index: CityIndex, weather: WeatherService, board: BoardView, bookmarks: Bookmarks, cache: PageCache,
         clock: @escaping @Sendable () -> Date) {
        self.pages = pages
        self.cache = cache
        self.board = board
        self.bookmarks = bookmarks
        self.index = index
        self.weather = weather
        self.clock = clock
        let css = Palette.stylesheet()
        var response = Response(headers: HTTPHeaders([("Content-Type", "text/css; charset=utf-8"),
                                                      ("Cache-Control", "public, max-age=86400")]), body: Array(css.utf8))
        response.headers.add("ETag", "\"\(String(fnv1a(Array(css.utf8)), radix: 16))\"")
        paletteCSS = response
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/palette.css") { request, _ in
            if let tag = request.headers["If-None-Match"], tag == paletteCSS.headers["ETag"] {
                return Response(status: .notModified, headers: HTTPHeaders([("ETag", tag)]))
            }
            return paletteCSS
        }
        router.get("/search", search)
        router.get("/nearest", nearest)
        router.get("/city/{slug}", show)
    }

    /// `GET /search?q=`: prefix search in Korean and English; a single exact hit goes straight there.
    func search(_ request: Request, _ context: AppContext) throws -> Response {
        let query = (try request.queryItems()["q"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if let exact = index.exactMatch(query) { return .redirect(to: "/city/\(exact.slug)", status: .found) }
        let language = context.language
        let results = index.search(query).map { city in
            SearchPage.Result(slug: city.slug, name: city.name(language), otherName: language == .ko ? city.nameEn : city.nameKo,
                              country: city.country)
        }
        var layout = pages.layout(context, title: pages.string("search_title", language))
        layout.searchQuery = query
        let view = SearchPage(layout: layout, query: query, results: results, noResults: !query.isEmpty && results.isEmpty)
        return pages.html(context) { Templates.search(view, &$0, $1) }
    }

    /// `GET /nearest?lat=&lon=` → 302 to the nearest city.
    func nearest(_ request: Request, _ context: AppContext) throws -> Response {
        let query = try request.queryItems()
        guard let latitude = query["lat"].flatMap(Double.init), let longitude = query["lon"].flatMap(Double.init),
              (-90...90).contains(latitude), (-180...180).contains(longitude),
              let city = index.nearest(latitude: latitude, longitude: longitude)
        else { throw HTTPError(.badRequest, message: "lat and lon must be numbers") }
        return .redirect(to: "/city/\(city.slug)", status: .found)
    }

    /// `GET /city/{slug}`: today beside yesterday and tomorrow.
    func show(_ request: Request, _ context: AppContext) throws -> Response {
        guard let city = index.city(slug: request.parameters["slug"] ?? "") else { throw HTTPError(.notFound) }
        let before = try request.queryItems()["before"].map { value -> Int64 in
            guard let id = Int64(value) else { throw HTTPError(.badRequest, message: "before must be a post id") }
            return id
        }
        guard context.user == nil else { return try page(city, context, before: before, composer: nil) }
        // Guests all see the same page (but for their bookmark and token): kept and reused.
        let bookmarked = bookmarks.containsForGuest(city, context)
        let key = "city \(context.language.rawValue) \(bookmarked) \(request.target)"
        return try cache.response(key: key, city: city.id, context: context) { token in
            try render(city, context, before: before, composer: nil, csrfToken: token)
        }
    }

    /// The city page; also re-rendered by the board when a post is refused, with the text kept.
    func page(_ city: City, _ context: AppContext, before: Int64?, composer: Composer?, status: HTTPStatus = .ok) throws -> Response {
        let bytes = try render(city, context, before: before, composer: composer, csrfToken: context.csrfToken)
        return .html(bytes, status: status)
    }

    private func render(_ city: City, _ context: AppContext, before: Int64?, composer: Composer?, csrfToken: String) throws -> [UInt8] {
        // The board and the bookmark flag in one read; one statement each, so SQLite's
        // statement-level snapshots are enough: no transaction.
        let (posts, isBookmarked) = try board.database.pool.unsafeRead { db in
            (try board.posts(city: city, context: context, before: before, db), try bookmarks.contains(city, for: context, db))
        }
        let language = context.language
        var layout = pages.layout(context, title: city.name(language))
        layout.csrfToken = csrfToken
        let view = CityPage(layout: layout, slug: city.slug, weather: weatherFragment(city, language), bookmarked: isBookmarked,
                            board: board.section(city: city, context: context, before: before, composer: composer, posts: posts))
        return pages.renderer.page(language) { Templates.city(view, &$0, $1) }
    }

    /// The weather part of the city page, the same for every reader in one language: rendered
    /// once per forecast, language and half-minute (the chart marks "now").
    func weatherFragment(_ city: City, _ language: Language) -> HTMLFragment {
        let report = weather.report(for: city)
        let now = clock()
        if let kept = fragments.fragment(city: city.id, language: language, report: report, now: now) { return kept }
        var view = CityWeather(cityName: city.name(language), country: city.country, hasWeather: false)
        if let report {
            view = CityWeatherView(city: city, report: report, now: now, language: language) { key, arguments in
                pages.string(key, language, arguments)
            }.view
        }
        let fragment = pages.renderer.fragment(language) { Templates.city_weather(view, &$0, $1) }
        fragments.keep(fragment, city: city.id, language: language, report: report, now: now)
        return fragment
    }
}

/// Rendered weather parts of city pages, per city and language, each valid for the forecast it
/// was rendered from and at most 30 seconds.
final class WeatherFragments: @unchecked Sendable {
    private struct Entry {
        let fetchedAt: Date?
        let source: String?
        let until: Date
        let fragment: HTMLFragment
    }

    // Safe to share: `entries` is only touched with `lock` held.
    private let lock = NSLock()
    /// Least recently shown go first, past a count and a byte budget.
    private var entries = LRUCache<String, Entry>(maximumCount: 4_000, maximumCost: 8 << 20)
    static let maximumAge: TimeInterval = 30

    func fragment(city: Int64, language: Language, report: WeatherReport?, now: Date) -> HTMLFragment? {
        guard let entry = lock.withLock({ entries.value(for: "\(city) \(language.rawValue)") }),
              entry.fetchedAt == report?.forecast.fetchedAt, entry.source == report?.source, entry.until > now else { return nil }
        return entry.fragment
    }

    func keep(_ fragment: HTMLFragment, city: Int64, language: Language, report: WeatherReport?, now: Date) {
        let entry = Entry(fetchedAt: report?.forecast.fetchedAt, source: report?.source, until: now.addingTimeInterval(Self.maximumAge),
                          fragment: fragment)
        lock.withLock {
            entries.set(entry, for: "\(city) \(language.rawValue)", cost: fragment.bytes.count)
        }
    }
}

/// A city's page: its weather (rendered once for everyone) and its board (for this viewer).
struct CityPage {
    var layout: LayoutView
    var slug: String
    var weather: HTMLFragment
    var bookmarked: Bool
    var board: BoardSection
}

/// Search results.
struct SearchPage {
    struct Result {
        var slug: String
        var name: String
        var otherName: String?
        var country: String
    }

    var layout: LayoutView
    var query: String
    var results: [Result]
    var noResults: Bool
}
