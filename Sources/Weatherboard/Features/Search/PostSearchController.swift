import Foundation
import HTTPServer

/// `GET /search/posts?q=&city=&sort=`: search in what people wrote (issue 45 #1), beside the city
/// search: substrings in Korean and English, phrases in quotes, newest or best match first, 20
/// a page with cursors, the matched words marked; only what the reader may see on the boards.
struct PostSearchController {
    let pages: Pages
    let database: AppDatabase
    let index: CityIndex
    let clientAddress: ClientAddress
    /// A search that no index can narrow reads many posts: each address has its share a minute.
    let searches: ClientLimit
    let clock: @Sendable () -> Date

    static let pageSize = 20

    func addRoutes(to router: Router<AppContext>) {
        router.get("/search/posts", search)
    }

    func search(_ request: Request, _ context: AppContext) throws -> Response {
        let items = try request.queryItems()
        let typed = PostQuery.typed(items["q"] ?? "")
        let query = PostQuery(typed)
        let city = items["city"].flatMap { index.city(slug: $0) }
        let order = items["sort"].flatMap(BoardQueries.SearchOrder.init(rawValue:)) ?? .newest
        let cursor = Self.cursor(items["after"])
        let language = context.language, viewer = context.user
        let wait = query.isEmpty ? nil : searches.admit(clientAddress.of(request), now: clock())
        let now = clock()
        let found = query.isEmpty || wait != nil ? [] : try database.readStatement { db in
            try BoardQueries.search(query, cityID: city?.id, viewer: viewer, order: order, after: cursor, limit: Self.pageSize + 1, now: now, db)
        }
        let times = PostPresenter.RelativeTimes { pages.string($0, language) }
        let shown = found.prefix(Self.pageSize)
        var layout = pages.layout(context, title: pages.string("post_search_title", language))
        layout.searchQuery = typed
        var view = PostSearchPage(layout: layout, query: typed, citySlug: city?.slug, cityName: city?.name(language),
                                  newest: order == .newest, noResults: !query.isEmpty && found.isEmpty && wait == nil)
        view.limitText = wait.map { pages.string("error_search_limit", language, ["n": String($0)]) }
        view.citySearchHref = "/search?q=" + percentEncode(typed)
        if items["from"] == "cities" && !query.isEmpty { view.noCityText = pages.string("post_search_no_city", language, ["q": typed]) }
        if !query.isEmpty && !found.isEmpty {
            view.countText = pages.string(found.count > Self.pageSize ? "post_search_count_more" : "post_search_count", language,
                                          ["n": String(min(found.count, Self.pageSize)), "q": typed])
        }
        view.results = shown.map { post, _ in
            PostSearchPage.Result(
                id: post.id, href: post.href, author: post.username, displayName: post.displayName ?? pages.string("deleted_user", language),
                citySlug: post.citySlug, cityName: language == .ko ? (post.cityNameKo ?? post.cityNameEn) : post.cityNameEn,
                datetime: DateFormatting.iso8601(post.createdAt), relativeTime: PostPresenter.relativeTime(post.createdAt, now: now, times),
                isReply: post.parentID != nil,
                parts: query.marked(post.body).map { PostSearchPage.Part(text: $0.text, marked: $0.marked) })
        }
        if found.count > Self.pageSize, let last = shown.last {
            var next: [(String, String)] = [("q", typed)]
            if let city { next.append(("city", city.slug)) }
            if order == .best { next.append(("sort", "best")) }
            next.append(("after", order == .best ? "\(last.length).\(last.post.id)" : "\(last.post.id)"))
            view.nextHref = "/search/posts?" + next.map { "\($0)=\(percentEncode($1))" }.joined(separator: "&")
        }
        var response = pages.html(context, status: wait == nil ? .ok : .tooManyRequests) { Templates.search_posts(view, &$0, $1) }
        if let wait { response.headers.add("Retry-After", String(wait)) }
        return response
    }

    /// `after`: the last id shown (newest first), or `length.id` (best match first).
    static func cursor(_ text: String?) -> (length: Int, id: Int64)? {
        guard let text else { return nil }
        let parts = text.split(separator: ".", maxSplits: 1)
        if parts.count == 2, let length = Int(parts[0]), let id = Int64(parts[1]) { return (length, id) }
        return Int64(text).map { (Int.max, $0) }
    }
}

/// The results of a search in posts.
struct PostSearchPage {
    /// Said when the header's search found no city by these words and came here.
    var noCityText: String?
    /// "3 posts contain ‘우산’", or "More than 20 …".
    var countText: String?
    struct Part {
        var text: String
        var marked: Bool
    }
    struct Result {
        var id: Int64
        var href: String
        var author: String?
        var displayName: String
        var citySlug: String
        var cityName: String
        var datetime: String
        var relativeTime: String
        var isReply: Bool
        var parts: [Part]
    }

    var layout: LayoutView
    var query: String
    /// The board searched, when one is (`city=`).
    var citySlug: String?
    var cityName: String?
    var newest: Bool
    var noResults: Bool
    /// Too many searches from this address: when to try again.
    var limitText: String?
    var citySearchHref = ""
    var results: [Result] = []
    var nextHref: String?
}
