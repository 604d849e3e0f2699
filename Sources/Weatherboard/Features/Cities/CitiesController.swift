import Foundation
import HTTPServer

/// City search and the nearest city. (The city page is `CityPageController`'s.)
struct CitiesController {
    let pages: Pages
    let index: CityIndex
    let forgiving: ForgivingSearch
    /// A city's surge of reports as its line says it (`Surges`, handed in by the application), or nil.
    let surgeLine: @Sendable (Int64, Language) -> (count: Int, text: String)?

    init(pages: Pages, index: CityIndex, surgeLine: @escaping @Sendable (Int64, Language) -> (count: Int, text: String)? = { _, _ in nil }) {
        self.pages = pages
        self.index = index
        self.surgeLine = surgeLine
        forgiving = ForgivingSearch(index: index)
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/search", search)
        router.get("/nearest", nearest)
    }

    /// `GET /search?q=`: prefix search in Korean and English; a single exact hit goes straight there.
    func search(_ request: Request, _ context: AppContext) throws -> Response {
        let query = TextPolicy.searchable(try request.queryItems()["q"] ?? "", bytes: 400).trimmingCharacters(in: .whitespaces)
        if let exact = index.exactMatch(query) { return .redirect(to: "/city/\(exact.slug)", status: .found) }
        let language = context.language
        let reading = forgiving.read(query)
        let found = reading.results
        // Read as meant ("서울특별시", "Seoul, KR", "bombay") and unambiguous: straight there.
        if reading.reread, reading.correction == nil, found.total == 1, let only = found.cities.first {
            return .redirect(to: "/city/\(only.slug)", status: .found)
        }
        let results = zip(found.cities, found.via).map { city, district in
            SearchPage.Result(slug: city.slug, name: city.name(language), otherName: language == .ko ? city.nameEn : city.nameKo,
                              place: city.place(language), country: city.country,
                              surge: surgeLine(city.id, language).map { SearchPage.Surge(count: $0.count, text: $0.text) },
                              via: district.map { SearchPage.Via(district: $0.name(language), text: $0.name(language) + " → " + city.name(language)) })
        }
        // A word that is no city (우산, "umbrella") is looked for in what people wrote.
        if !query.isEmpty && results.isEmpty && reading.correction == nil {
            return .redirect(to: "/search/posts?q=" + percentEncode(query) + "&from=cities", status: .found)
        }
        var layout = pages.layout(context, title: pages.string("search_title", language))
        layout.searchQuery = query
        var view = SearchPage(layout: layout, query: query, results: results, noResults: !query.isEmpty && results.isEmpty)
        view.correction = reading.correction.map { SearchPage.Correction(slug: $0.slug, name: $0.name(language)) }
        if found.total > results.count {
            view.count = pages.string("search_count", language, ["shown": String(results.count), "total": String(found.total)])
        }
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
}

/// Search results.
struct SearchPage {
    struct Result {
        var slug: String
        var name: String
        var otherName: String?
        /// Region and country, readable ("IL, United States").
        var place: String
        /// The ISO code, for machines.
        var country: String
        var surge: Surge?
        /// The district it was found by.
        var via: Via?
    }
    /// "강남구 → 서울": the district's name (`data-via-district`) and the way search went.
    struct Via {
        var district: String
        var text: String
    }
    /// Reports surging there (`[data-surge]`).
    struct Surge {
        var count: Int
        var text: String
    }

    var layout: LayoutView
    var query: String
    var results: [Result]
    var noResults: Bool
    /// The same words searched in posts (`PostSearchController`).
    var postSearchHref: String { query.isEmpty ? "/search/posts" : "/search/posts?q=" + percentEncode(query) }
    /// "Did you mean Seoul?": the results are for this spelling.
    struct Correction {
        var slug: String
        var name: String
    }
    var correction: Correction?
    /// "20 of 143 cities…" when there are more than shown.
    var count: String?
}
