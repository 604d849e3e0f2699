import Foundation
import HTTPServer

/// `/settings/notifications`: each topic on each channel the member can be reached on, quiet
/// hours for pushes, and the e-mail digest.
struct NotificationSettingsController {
    let pages: Pages
    let database: AppDatabase
    /// Whether Web Push is on for the site (its column is shown only then).
    let pushEnabled: Bool
    /// Whether the site sends mail (the e-mail column, for a confirmed address, and the digest).
    let mailEnabled: Bool
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/settings/notifications", show)
        router.post("/settings/notifications", save)
        router.post("/settings/time-zone", takeBrowserZone)
    }

    func show(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        return page(context, try database.read { try NotificationChoices.of(user.id, $0) }, error: nil)
    }

    /// The channels a member can choose now: the site; push when the site has it; e-mail when
    /// it sends mail and they have a confirmed address.
    private func channels(_ choices: NotificationChoices) -> [NotificationChoices.Channel] {
        NotificationChoices.Channel.allCases.filter { channel in
            switch channel {
            case .site: true
            case .push: pushEnabled
            case .email: mailEnabled && choices.address != nil
            }
        }
    }

    private func page(_ context: AppContext, _ choices: NotificationChoices, error: String?, status: HTTPStatus = .ok) -> Response {
        let language = context.language
        let shown = channels(choices)
        let columns = shown.map { pages.string("choices_" + $0.rawValue, language) }
        let rows = NotificationChoices.Topic.allCases.map { topic in
            let label = pages.string("choice_\(topic.rawValue)", language)
            return NotificationSettingsPage.Row(label: label, cells: zip(shown, columns).map { channel, column in
                NotificationSettingsPage.Cell(name: "\(topic.rawValue)_\(channel.rawValue)", label: label + ": " + column,
                                              on: choices.isOn(topic, channel))
            })
        }
        let view = NotificationSettingsPage(layout: pages.layout(context, title: pages.string("choices_title", language)), columns: columns,
                                            rows: rows, pushEnabled: pushEnabled, quietFrom: choices.quietFrom.map { LocalCalendar.clock(minutes: $0) } ?? "",
                                            quietTo: choices.quietTo.map { LocalCalendar.clock(minutes: $0) } ?? "",
                                            warningsPassQuiet: choices.warningsPassQuiet,
                                            timeZone: MemberTimeZone.label(choices.zone.name, at: clock()),
                                            zones: Self.zoneOptions(selected: choices.zone.name, at: clock()),
                                            zoneUnset: choices.zone.source == .unset, zoneFromBrowser: choices.zone.source == .browser,
                                            mailEnabled: mailEnabled, hasAddress: choices.address != nil, digest: choices.digest != .off,
                                            weekly: choices.digest == .weekly, error: error)
        return pages.html(context, status: status) { Templates.settings_notifications(view, &$0, $1) }
    }

    func save(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        let form = context.form
        // What is not on the form (a channel not offered now) stays as it was.
        var choices = try database.read { try NotificationChoices.of(user.id, $0) }
        for topic in NotificationChoices.Topic.allCases {
            for channel in channels(choices) {
                // A checkbox says "on" when ticked and nothing when not.
                choices.enabled["\(topic.rawValue)_\(channel.rawValue)"] = form["\(topic.rawValue)_\(channel.rawValue)"] != nil
            }
        }
        // The zone chosen in the list (app.js puts the browser's in front while none was set).
        if let zone = MemberTimeZone(form["time_zone"], source: .chosen) { choices.zone = zone }
        if pushEnabled {
            let from = form["quiet_from"] ?? "", to = form["quiet_to"] ?? ""
            (choices.quietFrom, choices.quietTo) = (nil, nil)
            choices.warningsPassQuiet = form["warnings_pass_quiet"] != nil
            if !from.isEmpty || !to.isEmpty {
                guard let start = LocalCalendar.minutes(from), let end = LocalCalendar.minutes(to) else {
                    choices.quietFrom = LocalCalendar.minutes(from)
                    choices.quietTo = LocalCalendar.minutes(to)
                    return page(context, choices, error: pages.string("error_quiet_hours", context.language), status: .unprocessableContent)
                }
                (choices.quietFrom, choices.quietTo) = (start, end)
            }
        }
        if mailEnabled && choices.address != nil {
            choices.digest = form["digest_email"] == nil ? .off : (form["digest_every"] == "weekly" ? .weekly : .daily)
        }
        let now = clock()
        try database.write(.subject(.member(user.id))) { try choices.save(for: user.id, now: now, $0) }  // the member's own choices, replaced whole
        context.nextFlash = Flash(.settingsSaved)
        return .redirect(to: "/settings/notifications")
    }

    /// `POST /settings/time-zone` (`time_zone`), sent by app.js from a member's page while no zone
    /// was ever set for them: the browser's zone is taken, never over one set meanwhile. 204; 422
    /// for a name the system does not know.
    func takeBrowserZone(_ request: Request, _ context: AppContext) throws -> Response {
        let user = try context.requireUser()
        guard let zone = MemberTimeZone(context.form["time_zone"], source: .browser) else {
            throw HTTPError(.unprocessableContent, message: "Unknown time zone")
        }
        if user.timeZoneUnset { _ = try database.write(.subjects) { try NotificationChoices.takeBrowserZone(zone, for: user.id, $0) } }
        return Response(status: .noContent)
    }

    /// Every zone as the list shows it ("Asia/Seoul (GMT+9)"), `selected` marked. Made once a
    /// page: the offsets change with summer time.
    static func zoneOptions(selected: String, at date: Date) -> [NotificationSettingsPage.Zone] {
        MemberTimeZone.names.map { NotificationSettingsPage.Zone(name: $0, label: MemberTimeZone.label($0, at: date), selected: $0 == selected) }
    }
}

struct NotificationSettingsPage {
    struct Cell {
        var name: String
        var label: String
        var on: Bool
    }

    struct Row {
        var label: String
        var cells: [Cell]
    }

    var layout: LayoutView
    var columns: [String]
    var rows: [Row]
    var pushEnabled: Bool
    var quietFrom: String
    var quietTo: String
    /// Severe and extreme warnings pushed through quiet hours.
    var warningsPassQuiet: Bool
    struct Zone {
        var name: String
        var label: String
        var selected: Bool
    }
    /// The member's zone as a label ("Asia/Seoul (GMT+9)").
    var timeZone: String
    var zones: [Zone]
    /// No zone was ever set: the page asks, and app.js picks the browser's in the list.
    var zoneUnset: Bool
    var zoneFromBrowser: Bool
    var mailEnabled: Bool
    var hasAddress: Bool
    var digest: Bool
    var weekly: Bool
    var error: String?
}
