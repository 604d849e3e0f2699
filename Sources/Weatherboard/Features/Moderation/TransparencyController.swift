import Foundation
import HTTPServer

/// `GET /city/{slug}/moderation`: what moderators did on a city's board, in public: who was
/// removed or banned and why, never who reported it or what the removed text said.
struct TransparencyController {
    let pages: Pages
    let store: ModerationStore
    let index: CityIndex

    func addRoutes(to router: Router<AppContext>) {
        router.get("/city/{slug}/moderation", show)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let city = try index.city(named: request)
        let language = context.language
        let entries = try store.publicRecord(cityID: city.id).map { entry -> ModerationPage.Entry in
            // As boards name people: the display name, with the handle no one else can have.
            let user = entry.username.map { username in entry.displayName.map { "\($0) (@\(username))" } ?? username }
                ?? pages.string("deleted_user", language)
            let key = entry.action == "remove" ? "public_removed" : "public_banned"
            return ModerationPage.Entry(
                action: entry.action,
                text: pages.string(key, language, ["user": user, "reason": entry.reason,
                                                   "date": DateFormatting.string(entry.createdAt, style: .medium, language: language,
                                                                                 timeZone: city.timeZone)]))
        }
        let view = ModerationPage(layout: pages.layout(context, title: pages.string("moderation_title", language, ["city": city.name(language)])),
                                  cityName: city.name(language), slug: city.slug, entries: entries)
        return pages.html(context) { Templates.moderation(view, &$0, $1) }
    }
}

/// A city's public moderation record.
struct ModerationPage {
    struct Entry {
        var action: String
        var text: String
    }

    var layout: LayoutView
    var cityName: String
    var slug: String
    var entries: [Entry]
    var hasEntries: Bool { !entries.isEmpty }
}
