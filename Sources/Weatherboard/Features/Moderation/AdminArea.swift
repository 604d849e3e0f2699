import Foundation
import HTTPServer

/// The admin area: every route sits in one group behind `requireAdmin`, so a new route cannot
/// forget the check. Signed-out visitors are sent to sign in; signed-in non-admins get a 404
/// (the area is not advertised). One controller per resource: the report queue and its posts
/// (`ModerationQueueController`), people (`AdminPeopleController`), the log
/// (`ModerationLogController`); what they share is here.
struct AdminArea {
    let pages: Pages
    let store: ModerationStore
    let database: AppDatabase
    let clock: @Sendable () -> Date
    /// Drops a removed photo's files kept on this node (`PhotosController.forget`).
    var forgetPhoto: @Sendable (String) -> Void = { _ in }
    static let pageSize = 20
    /// Page numbers the admin lists accept: far past any real list, and small enough that no
    /// offset computed from them can overflow.
    static let pages = 1...100_000
    static let durations: [String: TimeInterval?] = ["1d": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "permanent": nil]

    static func requireAdmin(_ request: Request, _ context: AppContext, _ next: Router<AppContext>.Handler) throws -> Response {
        let user = try context.requireUser()
        guard user.isAdmin else { throw HTTPError(.notFound) }
        return try next(request, context)
    }

    func addRoutes(to router: Router<AppContext>) {
        let admin = router.group("/admin", middleware: [Self.requireAdmin])
        let queue = ModerationQueueController(area: self)
        queue.addRoutes(to: admin)
        AdminPeopleController(area: self, queue: queue).addRoutes(to: admin)
        ModerationLogController(area: self).addRoutes(to: admin)
    }

    /// What the moderation pages' GET forms (remove, ban) carry so that their confirmation can
    /// tell them from a link someone else made: derived from the admin's CSRF secret (a digest,
    /// so the URL it travels in never holds the secret itself). A link without it still opens the
    /// confirmation, with a warning first and the post the action is about.
    static func formProof(_ context: AppContext) -> String {
        String(Tokens.digest("moderation-form|" + context.csrfSecret).prefix(32))
    }

    static func isFromOwnForm(_ query: URLEncodedForm, _ context: AppContext) -> Bool {
        constantTimeEquals(Array((query["from"] ?? "").utf8), Array(formProof(context).utf8))
    }

    /// The reasons offered for removing (an admin may type another).
    static func removalPresets(_ pages: Pages, _ language: Language) -> [String] {
        [ReportReason.spam, .harassment, .off_topic].map { pages.string("reason_\($0.rawValue)", language) }
    }

    static func durationOptions(_ pages: Pages, _ language: Language) -> [SelectOption] {
        ["1d", "7d", "30d", "permanent"].map { SelectOption(value: $0, label: pages.string("duration_\($0)", language)) }
    }

    static func moment(_ seconds: Double?, _ language: Language) -> Moment {
        guard let seconds else { return Moment(iso: "", text: "") }
        return Moment(Date(timeIntervalSince1970: seconds), language)
    }


    /// A moderator's reason: as it will be stored, or as typed (at most the limit) with the
    /// catalog key of what is wrong with it.
    struct TypedReason {
        var text: String
        var problem: String?
    }

    /// A ban's confirm page lines: how long, and why.
    static func banDetails(duration: String, reason: String, _ pages: Pages, _ language: Language) -> [ConfirmPage.Detail] {
        [.init(text: pages.string("confirm_duration", language,
                                  ["duration": durations.keys.contains(duration) ? pages.string("duration_\(duration)", language) : "–"])),
         .init(text: pages.string("confirm_reason", language, ["reason": reason]))]
    }

    func reason(_ context: AppContext, required: Bool) -> TypedReason {
        let policy = TextPolicy.moderationReason
        let typed = policy.typed(context.form["reason"])
        switch policy.normalise(typed) {
        case .success(let text):
            return TypedReason(text: text, problem: required && text.isEmpty ? "error_reason_required" : nil)
        case .failure(let problem):
            return TypedReason(text: typed.text, problem: problem.key(lengthKey: "error_reason_long"))
        }
    }

    /// A reason a link filled in (the confirmation pages), cut like a typed one.
    static func linkedReason(_ query: URLEncodedForm) -> String {
        TextPolicy.moderationReason.typed(query["reason"]).text
    }

    func post(_ request: Request) throws -> ModerationStore.ModeratedPost {
        guard let post = try store.post(id: try request.idParameter()) else { throw HTTPError(.notFound) }
        return post
    }
}
