import Foundation
import HTTPServer

/// `GET /city/{slug}/live` and `GET /posts/{id}/live`: the event streams the board and a post's
/// page name in `data-live`. What a stream carries is decided in `LiveBoards`; here the reader
/// is identified once, with the people they blocked or have muted.
struct LiveController {
    let live: LiveBoards
    let store: BoardStore
    let index: CityIndex
    let clientAddress: ClientAddress
    let clock: @Sendable () -> Date

    func addRoutes(to router: Router<AppContext>) {
        router.get("/city/{slug}/live", board)
        router.get("/posts/{id}/live", conversation)
    }

    func board(_ request: Request, _ context: AppContext) throws -> Response {
        guard let city = index.city(slug: request.parameters["slug"] ?? "") else { throw HTTPError(.notFound) }
        return try stream(.board(city.id), request, context)
    }

    /// A post's page listens to its conversation; a reply's id is not a conversation (404, as its page redirects).
    func conversation(_ request: Request, _ context: AppContext) throws -> Response {
        guard let post = try store.post(id: try request.idParameter(), viewer: context.user, removed: .all), post.parentID == nil
        else { throw HTTPError(.notFound) }
        return try stream(.conversation(post.id), request, context)
    }

    private func stream(_ topic: LiveBoards.Topic, _ request: Request, _ context: AppContext) throws -> Response {
        let viewer = context.user?.id
        let (blocked, muted) = try viewer.map { try store.silencedIDs(by: $0, now: clock()) } ?? ([], [])
        // A browser reconnecting by itself sends Last-Event-ID; live.js, reconnecting with its own
        // backoff, sends the same as ?last=.
        let lastEventID = try request.headers["Last-Event-ID"] ?? request.queryItems()["last"]
        let headers = HTTPHeaders([("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                                   ("X-Accel-Buffering", "no")])
        return .streaming(headers: headers, client: clientAddress.of(request)) { [live] stream in
            live.listen(topic, stream: stream, viewer: viewer, blocked: blocked, muted: muted, lastEventID: lastEventID)
        }
    }
}
