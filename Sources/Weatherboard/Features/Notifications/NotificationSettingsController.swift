import Foundation
import HTTPServer

/// `/settings/notifications`: each topic on each channel, and quiet hours for pushes.
struct NotificationSettingsController {
    let pages: Pages
    let database: AppDatabase
    /// Whether Web Push is on for the site (its column is shown only then).
    let pushEnabled: Bool

    func addRoutes(to router: Router<AppContext>) {
        router.get("/settings/notifications", show)
        router.post("/settings/notifications", save)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        return page(context, try database.readStatement { try NotificationChoices.of(user.id, $0) }, error: nil)
    }

    private func page(_ context: AppContext, _ choices: NotificationChoices, error: String?, status: HTTPStatus = .ok) -> Response {
        let language = context.language
        let rows = NotificationChoices.Topic.allCases.map { topic in
            NotificationSettingsPage.Row(label: pages.string("choice_\(topic.rawValue)", language),
                                         siteName: "\(topic.rawValue)_site", site: choices.isOn(topic, .site),
                                         pushName: "\(topic.rawValue)_push", push: choices.isOn(topic, .push))
        }
        let view = NotificationSettingsPage(layout: pages.layout(context, title: pages.string("choices_title", language)), rows: rows,
                                            pushEnabled: pushEnabled, quietFrom: choices.quietFrom.map(Self.clock) ?? "",
                                            quietTo: choices.quietTo.map(Self.clock) ?? "", timeZone: choices.timeZone.identifier,
                                            error: error)
        return pages.html(context, status: status) { Templates.settings_notifications(view, &$0, $1) }
    }

    func save(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let form = context.form
        var choices = NotificationChoices()
        for topic in NotificationChoices.Topic.allCases {
            // A checkbox says "on" when ticked and nothing when not; push choices are kept as
            // they were while the site has no push.
            choices.enabled["\(topic.rawValue)_site"] = form["\(topic.rawValue)_site"] != nil
            if pushEnabled { choices.enabled["\(topic.rawValue)_push"] = form["\(topic.rawValue)_push"] != nil }
        }
        choices.timeZone = TimeZone(identifier: form["time_zone"] ?? "") ?? .gmt
        let from = form["quiet_from"] ?? "", to = form["quiet_to"] ?? ""
        if !from.isEmpty || !to.isEmpty {
            guard let start = Self.minutes(from), let end = Self.minutes(to) else {
                choices.quietFrom = Self.minutes(from)
                choices.quietTo = Self.minutes(to)
                return page(context, choices, error: pages.string("error_quiet_hours", context.language), status: .unprocessableContent)
            }
            (choices.quietFrom, choices.quietTo) = (start, end)
        }
        if !pushEnabled {
            let kept = try database.readStatement { try NotificationChoices.of(user.id, $0) }
            for topic in NotificationChoices.Topic.allCases { choices.enabled["\(topic.rawValue)_push"] = kept.isOn(topic, .push) }
        }
        try database.write { try choices.save(for: user.id, $0) }
        context.nextFlash = Flash(.settingsSaved)
        return .redirect(to: "/settings/notifications")
    }

    /// "07:30" as minutes after midnight; nil for anything else.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[0].count <= 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
              (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        return hour * 60 + minute
    }

    static func clock(_ minutes: Int) -> String {
        let hour = minutes / 60, minute = minutes % 60
        return (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
    }
}

struct NotificationSettingsPage {
    struct Row {
        var label: String
        var siteName: String
        var site: Bool
        var pushName: String
        var push: Bool
    }

    var layout: LayoutView
    var rows: [Row]
    var pushEnabled: Bool
    var quietFrom: String
    var quietTo: String
    var timeZone: String
    var error: String?
}
