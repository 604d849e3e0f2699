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
    /// The palette stylesheet, generated once; its ETag is a hash of its text.
    let paletteCSS: Response

    init(pages: Pages, index: CityIndex, weather: WeatherService, board: BoardView, bookmarks: Bookmarks,
         clock: @escaping @Sendable () -> Date) {
        self.pages = pages
        self.board = board
        self.bookmarks = bookmarks
        self.index = index
        self.weather = weather
        self.clock = clock
        let css = Palette.stylesheet()
        var response = Response(headers: HTTPHeaders([("Content-Type", "text/css; charset=utf-8"),
                                                      ("Cache-Control", "public, max-age=86400")]), body: Array(css.utf8))
        response.headers.add("ETag", "\"\(String(css.utf8.reduce(UInt64(14695981039346656037)) { ($0 ^ UInt64($1)) &* 1099511628211 }, radix: 16))\"")
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
        return try page(city, context, before: before, composer: nil)
    }

    /// The city page; also re-rendered by the board when a post is refused, with the text kept.
    func page(_ city: City, _ context: AppContext, before: Int64?, composer: Composer?, status: HTTPStatus = .ok) throws -> Response {
        let language = context.language
        let view = CityPage(layout: pages.layout(context, title: city.name(language)), slug: city.slug,
                            weather: weatherFragment(city, language), bookmarked: try bookmarks.contains(city, for: context),
                            board: try board.section(city: city, context: context, before: before, composer: composer))
        return pages.html(context, status: status) { Templates.city(view, &$0, $1) }
    }

    /// The weather part of the city page, the same for every reader in one language.
    func weatherFragment(_ city: City, _ language: Language) -> HTMLFragment {
        var view = CityWeather(cityName: city.name(language), country: city.country, hasWeather: false)
        if let report = weather.report(for: city) {
            view = CityWeatherView(city: city, report: report, now: clock(), language: language) { key, arguments in
                pages.string(key, language, arguments)
            }.view
        }
        return HTMLFragment(pages.renderer.render(language) { Templates.city_weather(view, &$0, $1) })
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
