/// The per-request state an application keeps (identity, language, CSRF…), created once per
/// request before any middleware runs and handed to every middleware and handler.
public protocol RequestContext: AnyObject, SendableMetatype {
    init(request: Request)
}

/// Routes requests by method and path (`/city/{slug}`, `/static/{path...}`) to handlers, runs
/// middleware around them, and turns every thrown error into a response in one place.
///
/// Sendable because it is frozen: routes, middleware and the error responder are set while the
/// application starts, on one thread; taking `responder` (which the server does before it
/// accepts anything) freezes them, and after that workers only read them.
public final class Router<Context: RequestContext>: @unchecked Sendable {
    public typealias Handler = (Request, Context) throws -> Response
    public typealias Middleware = (Request, Context, _ next: Handler) throws -> Response

    private let root = Node()
    /// The most segments any route has (a catch-all counts as one): how deep a walk of the
    /// tree can go, whatever the path's length.
    private var deepestRoute = 0
    private var middleware: [Middleware] = []
    /// Every route added, in order (for tests that enumerate, e.g., the admin area).
    public private(set) var routes: [(method: String, path: String)] = []
    /// Turns an error (an `HTTPError` or anything else) into a response; the context is there
    /// so that error pages can be rendered in the request's language.
    public var errorResponder: (Request, Context, Error) -> Response = Router.plainErrorResponse {
        willSet { checkNotFrozen() }
    }

    private static func plainErrorResponse(_ request: Request, _ context: Context, _ error: Error) -> Response {
        if let http = error as? HTTPError {
            var response = Response.text(http.message ?? "\(http.status.code) \(http.status.reason)\n", status: http.status)
            for field in http.headers { response.headers.add(field.name, field.value) }
            return response
        }
        return Response.text("500 Internal Server Error\n", status: .internalServerError)
    }

    /// Set once the server has the responder; see the type's comment.
    private var frozen = false

    /// Changing the routes of a running server is a programming error in the application's
    /// set-up, caught at start-up (no request can reach it).
    private func checkNotFrozen() {
        precondition(!frozen, "routes, middleware and the error responder are fixed once the server has the responder")
    }

    public init() {}

    /// Adds middleware that runs around every request, including those that match no route.
    public func use(_ middleware: @escaping Middleware) {
        checkNotFrozen()
        self.middleware.append(middleware)
    }

    public func get(_ path: String, _ handler: @escaping Handler) { add("GET", path, handler) }
    public func post(_ path: String, _ handler: @escaping Handler) { add("POST", path, handler) }

    public func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        checkNotFrozen()
        var node = root
        deepestRoute = max(deepestRoute, path.split(separator: "/", omittingEmptySubsequences: true).count)
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            if segment.hasPrefix("{") && segment.hasSuffix("...}") {
                let name = String(segment.dropFirst().dropLast(4))
                let child = node.catchAll?.node ?? Node()
                node.catchAll = (name, child)
                node = child
                break
            } else if segment.hasPrefix("{") && segment.hasSuffix("}") {
                let name = String(segment.dropFirst().dropLast())
                precondition(node.parameter == nil || node.parameter!.name == name, "conflicting parameter names at \(path)")
                let child = node.parameter?.node ?? Node()
                node.parameter = (name, child)
                node = child
            } else {
                let key = String(segment)
                let child = node.literals[key] ?? Node()
                node.literals[key] = child
                node = child
            }
        }
        precondition(node.handlers[method] == nil, "duplicate route \(method) \(path)")
        node.handlers[method] = handler
        node.pattern = path
        routes.append((method, path))
    }

    /// A group of routes under a path prefix, with middleware of its own.
    public func group(_ prefix: String, middleware: [Middleware] = []) -> RouteGroup<Context> {
        RouteGroup(router: self, prefix: prefix, middleware: middleware)
    }

    /// The function the server calls for each request. Taking it freezes the router.
    public var responder: Responder {
        frozen = true
        return { [self] request in respond(to: request) }
    }

    public func respond(to request: Request) -> Response {
        let context = Context(request: request)
        let chain = middleware.reversed().reduce({ [self] (request: Request, context: Context) throws -> Response in
            try route(request, context)
        } as Handler) { next, middleware in
            { request, context in try middleware(request, context, next) }
        }
        do {
            return try chain(request, context)
        } catch {
            return errorResponder(request, context, error)
        }
    }

    /// Whether a route answers this request's method and path (so middleware can leave 404 and
    /// 405 to the router instead of, say, checking a form that no handler would read).
    public func hasRoute(for request: Request) -> Bool {
        guard !Self.isAbsurd(request.path), let segments = PercentDecoding.pathSegments(request.path) else { return false }
        var parameters: [String: String] = [:]
        guard let node = root.match(segments[...], &parameters) else { return false }
        return node.handlers[request.method] != nil || (request.method == "HEAD" && node.handlers["GET"] != nil)
    }

    /// The longest leading part of `path`, in whole segments, that a GET route answers ("/city/seoul"
    /// for "/city/seoul/posts/7/edit"), or "/" when none does. One walk down the route tree: the
    /// work is bounded by the tree's depth, not by the path (a walk that tried each shorter prefix
    /// in turn cost 0.95 s of CPU for a path of 4,000 segments).
    public func nearestPage(above path: String) -> String {
        nearestPageWalk(above: path).page
    }

    /// `nearestPage` and how many tree nodes its walk visited (tests bound the work with it).
    func nearestPageWalk(above path: String) -> (page: String, nodesVisited: Int) {
        // Only as many segments as a route can have, and one more for what a catch-all takes.
        let raw = path.split(separator: "/", maxSplits: deepestRoute, omittingEmptySubsequences: true)
        let decoded = raw.map { PercentDecoding.decode($0, plusAsSpace: false) }
        var best = 0
        var visited = 0
        func walk(_ node: Node, depth: Int) {
            visited += 1
            if node.handlers["GET"] != nil { best = max(best, depth) }
            guard depth < raw.count, let segment = decoded[depth], !segment.utf8.contains(0) else { return }
            if let child = node.literals[segment] { walk(child, depth: depth + 1) }
            if let (_, child) = node.parameter, !segment.isEmpty { walk(child, depth: depth + 1) }
            if let (_, child) = node.catchAll, child.handlers["GET"] != nil { best = raw.count }
        }
        walk(root, depth: 0)
        return ("/" + raw.prefix(best).joined(separator: "/"), visited)
    }

    /// Paths of more segments than any application has routes for are not decoded or walked
    /// at all: 404 at once. (Decoding is linear in the path, but an attacker's 8 KiB of "/a"
    /// is 4,000 segments of work for nothing.)
    public static var maxPathSegments: Int { 128 }

    private static func isAbsurd(_ path: String) -> Bool {
        var slashes = 0
        for byte in path.utf8 where byte == UInt8(ascii: "/") {
            slashes += 1
            if slashes > maxPathSegments { return true }
        }
        return false
    }

    private func route(_ request: Request, _ context: Context) throws -> Response {
        if Self.isAbsurd(request.path) { throw HTTPError(.notFound) }
        guard let segments = PercentDecoding.pathSegments(request.path) else {
            throw HTTPError(.badRequest, message: "Invalid path encoding")
        }
        var parameters: [String: String] = [:]
        guard let node = root.match(segments[...], &parameters) else { throw HTTPError(.notFound) }
        request.parameters = parameters
        request.route = node.pattern
        if let handler = node.handlers[request.method] ?? (request.method == "HEAD" ? node.handlers["GET"] : nil) {
            return try handler(request, context)
        }
        guard !node.handlers.isEmpty else { throw HTTPError(.notFound) }
        var allowed = Set(node.handlers.keys)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        throw HTTPError(.methodNotAllowed, headers: HTTPHeaders([("Allow", allowed.sorted().joined(separator: ", "))]))
    }

    private final class Node {
        var literals: [String: Node] = [:]
        var parameter: (name: String, node: Node)?
        var catchAll: (name: String, node: Node)?
        var handlers: [String: Handler] = [:]
        /// The path as registered (one per node: every method's route here has the same shape).
        var pattern: String?

        /// Literal segments win over parameters, parameters over catch-alls.
        func match(_ segments: ArraySlice<String>, _ parameters: inout [String: String]) -> Node? {
            guard let first = segments.first else {
                if !handlers.isEmpty { return self }
                return nil
            }
            let rest = segments.dropFirst()
            if let child = literals[first], let found = child.match(rest, &parameters) { return found }
            if let (name, child) = parameter, !first.isEmpty, let found = child.match(rest, &parameters) {
                parameters[name] = first
                return found
            }
            if let (name, child) = catchAll, !child.handlers.isEmpty {
                parameters[name] = segments.joined(separator: "/")
                return child
            }
            return nil
        }
    }
}

/// Routes sharing a prefix and middleware (for example the admin area behind one check).
public struct RouteGroup<Context: RequestContext> {
    let router: Router<Context>
    let prefix: String
    let middleware: [Router<Context>.Middleware]

    public func get(_ path: String, _ handler: @escaping Router<Context>.Handler) { add("GET", path, handler) }
    public func post(_ path: String, _ handler: @escaping Router<Context>.Handler) { add("POST", path, handler) }

    public func add(_ method: String, _ path: String, _ handler: @escaping Router<Context>.Handler) {
        let wrapped = middleware.reversed().reduce(handler) { next, middleware in
            { request, context in try middleware(request, context, next) }
        }
        router.add(method, prefix + (path == "/" || path.isEmpty ? "" : path), wrapped)
    }

    public func group(_ path: String, middleware more: [Router<Context>.Middleware] = []) -> RouteGroup<Context> {
        RouteGroup(router: router, prefix: prefix + path, middleware: middleware + more)
    }
}
