import Foundation
import HTTPServer

/// `/settings/rain-alerts`: a member's rain windows, for cities they bookmarked; added with
/// `city`, `days`, `from`, `to` and `lead_minutes`, each removed with its own button.
struct RainAlertsController {
    let pages: Pages
    let database: AppDatabase
    let cities: CityIndex
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/settings/rain-alerts", show)
        router.post("/settings/rain-alerts", add)
        router.post("/settings/rain-alerts/{id}/delete", remove)
    }

    /// What was typed into the form (kept when it is refused).
    struct Typed {
        var city = ""
        var days = RainWindow.Days.weekdays.rawValue
        var from = ""
        var to = ""
        var lead = String(RainWindow.defaultLead)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        try page(context, Typed(), errors: [])
    }

    private func page(_ context: AppContext, _ typed: Typed, errors: [String], status: HTTPStatus = .ok) throws -> Response {
        let user = try context.requireUser()
        let language = context.language
        let windows = try database.readStatement { try RainWindow.of(user.id, $0) }
        let bookmarked = try BookmarkStore(database: database).cityIDs(of: user.id)
        let name = { (city: City) in city.name(language) }
        let rows = windows.compactMap { window -> RainAlertsPage.Window? in
            guard let city = cities.city(id: window.cityID) else { return nil }
            return RainAlertsPage.Window(id: window.id, city: name(city), citySlug: city.slug,
                                         days: pages.string("rain_days_" + window.days.rawValue, language),
                                         from: LocalCalendar.clock(minutes: window.start),
                                         to: LocalCalendar.clock(minutes: window.end),
                                         lead: pages.string("rain_lead_minutes", language, ["n": String(window.lead)]))
        }
        let choices = bookmarked.compactMap { cities.city(id: $0) }.map {
            RainAlertsPage.Choice(value: $0.slug, label: name($0), selected: $0.slug == typed.city)
        }
        let days = RainWindow.Days.allCases.map {
            RainAlertsPage.Choice(value: $0.rawValue, label: pages.string("rain_days_" + $0.rawValue, language), selected: $0.rawValue == typed.days)
        }
        let view = RainAlertsPage(layout: pages.layout(context, title: pages.string("rain_alerts_title", language)), windows: rows,
                                  cities: choices, days: days, from: typed.from, to: typed.to, lead: typed.lead, errors: errors,
                                  isFull: windows.count >= RainWindow.perMember)
        return pages.html(context, status: status) { Templates.settings_rain_alerts(view, &$0, $1) }
    }

    func add(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let form = context.form, language = context.language
        let typed = Typed(city: form["city"] ?? "", days: form["days"] ?? "", from: form["from"] ?? "", to: form["to"] ?? "",
                          lead: form["lead_minutes"] ?? "")
        var errors: [String] = []
        let city = cities.city(slug: typed.city)
        let days = RainWindow.Days(rawValue: typed.days)
        let start = LocalCalendar.minutes(typed.from), end = LocalCalendar.minutes(typed.to)
        let lead = Int(typed.lead.trimmingCharacters(in: .whitespaces)).flatMap { RainWindow.leads.contains($0) ? $0 : nil }
        if days == nil { errors.append(pages.string("error_rain_days", language)) }
        if start == nil || end == nil || start == end { errors.append(pages.string("error_rain_times", language)) }
        if lead == nil { errors.append(pages.string("error_rain_lead", language, ["max": String(RainWindow.leads.upperBound)])) }
        let added: Bool? = try database.write(.subject(.member(user.id))) { db in  // the member's windows are counted under their lock
            guard let city, try BookmarkStore.contains(cityID: city.id, userID: user.id, db) else {
                errors.insert(pages.string("error_rain_city", language), at: 0)
                return nil
            }
            guard errors.isEmpty, let days, let start, let end, let lead else { return nil }
            return try RainWindow.add(RainWindow(id: 0, userID: user.id, cityID: city.id, days: days, start: start, end: end, lead: lead),
                                      now: clock(), db)
        }
        if added == false { errors.append(pages.string("error_rain_full", language, ["n": String(RainWindow.perMember)])) }
        guard added == true else { return try page(context, typed, errors: errors, status: .unprocessableContent) }
        context.nextFlash = Flash(.rainWindowAdded)
        return .redirect(to: "/settings/rain-alerts")
    }

    func remove(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let id = request.parameters["id"].flatMap(Int64.init) else { throw HTTPError(.notFound) }
        try database.write(.subjects) { try RainWindow.remove(id, of: user.id, $0) }  // one window of the member's
        context.nextFlash = Flash(.rainWindowRemoved)
        return .redirect(to: "/settings/rain-alerts")
    }
}

struct RainAlertsPage {
    struct Window {
        var id: Int64
        var city: String
        var citySlug: String
        var days: String
        var from: String
        var to: String
        var lead: String
    }

    struct Choice {
        var value: String
        var label: String
        var selected: Bool
    }

    var layout: LayoutView
    var windows: [Window]
    var hasWindows: Bool { !windows.isEmpty }
    var cities: [Choice]
    var hasCities: Bool { !cities.isEmpty }
    var days: [Choice]
    var from: String
    var to: String
    var lead: String
    var errors: [String]
    var hasErrors: Bool { !errors.isEmpty }
    var isFull: Bool
}
