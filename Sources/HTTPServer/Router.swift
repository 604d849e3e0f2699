import Synchronization

/// The per-request state an application keeps (identity, language, CSRF…), created once per
/// request before any middleware runs and handed to every middleware and handler.
public protocol RequestContext: AnyObject, SendableMetatype {
    init(request: Request)
}

/// Routes requests by method and path (`/city/{slug}`, `/static/{path...}`) to handlers, runs
/// middleware around them, and turns every thrown error into a response in one place.
///
/// Routes, middleware and the error responder are set while the application starts; taking
/// `responder` (which the server does before it accepts anything) freezes them into a
/// `RouteTable` that workers share and nothing changes.
public final class Router<Context: RequestContext>: Sendable {
    public typealias Handler = @Sendable (Request, Context) throws -> Response
    public typealias Middleware = @Sendable (Request, Context, _ next: Handler) throws -> Response
    public typealias ErrorResponder = @Sendable (Request, Context, Error) -> Response

    /// What the application registers, until the table is made from it.
    private struct Registry {
        var root = RouteNode<Context>()
        var middleware: [Middleware] = []
        /// Every route added, in order.
        var routes: [(method: String, path: String)] = []
        var errorResponder: ErrorResponder = plainErrorResponse
        /// Set when `responder` is taken; see the type's comment.
        var frozen: RouteTable<Context>?
    }
    private let registry = Mutex(Registry())

    /// Path parameters whose values are secrets (a reset link's token): logged by name only
    /// (`Request.pathForLogs`), by the access log and by whatever logs a routed request.
    public let secretParameters: Set<String>

    public init(secretParameters: Set<String> = []) {
        self.secretParameters = secretParameters
    }

    private static func plainErrorResponse(_ request: Request, _ context: Context, _ error: Error) -> Response {
        if let http = error as? HTTPError {
            var response = Response.text(http.message ?? "\(http.status.code) \(http.status.reason)\n", status: http.status)
            for field in http.headers { response.headers.add(field.name, field.value) }
            return response
        }
        return Response.text("500 Internal Server Error\n", status: .internalServerError)
    }

    /// Changing the routes of a running server is a programming error in the application's
    /// set-up, caught at start-up (no request can reach it).
    private func register(_ change: (inout Registry) -> Void) {
        registry.withLock { registry in
            precondition(registry.frozen == nil, "routes, middleware and the error responder are fixed once the server has the responder")
            change(&registry)
        }
    }

    /// Every route added, in order (for tests that enumerate, e.g., the admin area).
    public var routes: [(method: String, path: String)] { registry.withLock { $0.routes } }

    /// Turns an error (an `HTTPError` or anything else) into a response; the context is there
    /// so that error pages can be rendered in the request's language.
    public var errorResponder: ErrorResponder {
        get { registry.withLock { $0.errorResponder } }
        set { register { $0.errorResponder = newValue } }
    }

    /// Adds middleware that runs around every request, including those that match no route.
    public func use(_ middleware: @escaping Middleware) {
        register { $0.middleware.append(middleware) }
    }

    public func get(_ path: String, _ handler: @escaping Handler) { add("GET", path, handler) }
    public func post(_ path: String, _ handler: @escaping Handler) { add("POST", path, handler) }

    public func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        register { registry in
            registry.root.add(method, path, handler)
            registry.routes.append((method, path))
        }
    }

    /// A group of routes under a path prefix, with middleware of its own.
    public func group(_ prefix: String, middleware: [Middleware] = []) -> RouteGroup<Context> {
        RouteGroup(router: self, prefix: prefix, middleware: middleware)
    }

    /// `endpoint` behind `middleware`, the first outermost (a route group's, and the router's
    /// around every route).
    static func chain(_ endpoint: @escaping Handler, through middleware: [Middleware]) -> Handler {
        middleware.reversed().reduce(endpoint) { next, middleware in
            { request, context in try middleware(request, context, next) }
        }
    }

    /// The function the server calls for each request. Taking it freezes the router.
    public var responder: Responder {
        let table = registry.withLock { registry in
            if let frozen = registry.frozen { return frozen }
            let table = RouteTable(registry.root, middleware: registry.middleware, errorResponder: registry.errorResponder,
                                   secretParameters: secretParameters)
            registry.frozen = table
            return table
        }
        return { table.respond(to: $0) }
    }

    /// The table as registered so far: the frozen one once the server has it.
    private var table: RouteTable<Context> {
        registry.withLock { $0.frozen ?? RouteTable($0.root, middleware: $0.middleware, errorResponder: $0.errorResponder,
                                                   secretParameters: secretParameters) }
    }

    public func respond(to request: Request) -> Response { table.respond(to: request) }

    /// Whether a route answers this request's method and path (so middleware can leave 404 and
    /// 405 to the router instead of, say, checking a form that no handler would read).
    public func hasRoute(for request: Request) -> Bool { table.hasRoute(for: request) }

    /// The longest leading part of `path`, in whole segments, that a GET route answers ("/city/seoul"
    /// for "/city/seoul/posts/7/edit"), or "/" when none does. One walk down the route tree: the
    /// work is bounded by the tree's depth, not by the path (a walk that tried each shorter prefix
    /// in turn cost 0.95 s of CPU for a path of 4,000 segments).
    public func nearestPage(above path: String) -> String { table.nearestPageWalk(above: path).page }

    /// `nearestPage` and how many tree nodes its walk visited (tests bound the work with it).
    func nearestPageWalk(above path: String) -> (page: String, nodesVisited: Int) { table.nearestPageWalk(above: path) }

    /// Paths of more segments than any application has routes for are not decoded or walked
    /// at all: 404 at once. (Decoding is linear in the path, but an attacker's 8 KiB of "/a"
    /// is 4,000 segments of work for nothing.)
    public static var maxPathSegments: Int { 128 }
}

/// The route tree as it is registered.
private final class RouteNode<Context: RequestContext> {
    var literals: [String: RouteNode] = [:]
    var parameter: (name: String, node: RouteNode)?
    var catchAll: (name: String, node: RouteNode)?
    var handlers: [String: Router<Context>.Handler] = [:]
    var pattern: String?

    func add(_ method: String, _ path: String, _ handler: @escaping Router<Context>.Handler) {
        var node = self
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            if segment.hasPrefix("{") && segment.hasSuffix("...}") {
                let name = String(segment.dropFirst().dropLast(4))
                let child = node.catchAll?.node ?? RouteNode()
                node.catchAll = (name, child)
                node = child
                break
            } else if segment.hasPrefix("{") && segment.hasSuffix("}") {
                let name = String(segment.dropFirst().dropLast())
                precondition(node.parameter == nil || node.parameter!.name == name, "conflicting parameter names at \(path)")
                let child = node.parameter?.node ?? RouteNode()
                node.parameter = (name, child)
                node = child
            } else {
                let key = String(segment)
                let child = node.literals[key] ?? RouteNode()
                node.literals[key] = child
                node = child
            }
        }
        precondition(node.handlers[method] == nil, "duplicate route \(method) \(path)")
        node.handlers[method] = handler
        node.pattern = path
    }
}

/// Routes, middleware and the error responder as the server uses them: made once from what was
/// registered, never changed, shared by every worker.
final class RouteTable<Context: RequestContext>: Sendable {
    private let root: Node
    /// The most segments any route has (a catch-all counts as one): how deep a walk of the
    /// tree can go, whatever the path's length.
    private let deepestRoute: Int
    private let middleware: [Router<Context>.Middleware]
    private let errorResponder: Router<Context>.ErrorResponder
    private let secretParameters: Set<String>

    fileprivate init(_ root: RouteNode<Context>, middleware: [Router<Context>.Middleware], errorResponder: @escaping Router<Context>.ErrorResponder,
                     secretParameters: Set<String>) {
        self.secretParameters = secretParameters
        // Each route's handler behind the middleware, composed here once rather than per request.
        self.root = Node(root) { handler in Router<Context>.chain(handler, through: middleware) }
        deepestRoute = self.root.depth
        self.middleware = middleware
        self.errorResponder = errorResponder
    }

    /// A matched route: the request as routed (its parameters and route set) and its handler
    /// behind the middleware, or why nothing answers it.
    private func routed(_ request: Request) -> (request: Request, answer: Result<Router<Context>.Handler, HTTPError>) {
        if Self.isAbsurd(request.path) { return (request, .failure(HTTPError(.notFound))) }
        guard let segments = PercentDecoding.pathSegments(request.path) else {
            return (request, .failure(HTTPError(.badRequest, message: "Invalid path encoding")))
        }
        var parameters: [String: String] = [:]
        guard let node = root.match(segments[...], &parameters) else { return (request, .failure(HTTPError(.notFound))) }
        var routed = request
        routed.parameters = parameters
        routed.route = node.pattern
        if !secretParameters.isEmpty, parameters.keys.contains(where: secretParameters.contains), let pattern = node.pattern {
            routed.redactedPath = Self.redacted(request.path, pattern: pattern, secrets: secretParameters)
        }
        if let handler = node.handlers[request.method] ?? (request.method == "HEAD" ? node.handlers["GET"] : nil) {
            return (routed, .success(handler))
        }
        guard !node.handlers.isEmpty else { return (routed, .failure(HTTPError(.notFound))) }
        var allowed = Set(node.handlers.keys)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return (routed, .failure(HTTPError(.methodNotAllowed, headers: HTTPHeaders([("Allow", allowed.sorted().joined(separator: ", "))]))))
    }

    /// The request is routed first, so that the context, every middleware and the handler see
    /// it finished (its parameters and route set) and nothing changes it afterwards; a request
    /// that matches nothing still runs through the middleware, which see its 404 or 405 thrown.
    func respond(to request: Request) -> Response {
        let (request, answer) = routed(request)
        let context = Context(request: request)
        let chain: Router<Context>.Handler
        switch answer {
        case .success(let routedChain): chain = routedChain
        case .failure(let error): chain = Router<Context>.chain({ _, _ in throw error }, through: middleware)
        }
        var response: Response
        do {
            response = try chain(request, context)
        } catch is Lane.Moved where Lane.current == .quick {
            var moved = Response()
            moved.movedToMainLane = true
            return moved
        } catch {
            response = errorResponder(request, context, error)
        }
        response.redactedPath = request.redactedPath
        return response
    }

    /// `path` with each segment the pattern names a secret parameter replaced by the pattern's
    /// own segment (`/password/reset/{token}`); a secret in a catch-all hides the rest.
    static func redacted(_ path: String, pattern: String, secrets: Set<String>) -> String {
        let names = pattern.split(separator: "/")
        var out = ""
        for (index, segment) in path.split(separator: "/", omittingEmptySubsequences: true).enumerated() {
            let name = index < names.count ? names[index] : ""
            let isSecret = name.hasPrefix("{") && secrets.contains(String(name.dropFirst().dropLast().replacingOccurrences(of: "...", with: "")))
            out += "/" + (isSecret ? String(name) : String(segment))
            if isSecret && name.hasSuffix("...}") { break }
        }
        return out.isEmpty ? "/" : out
    }

    func hasRoute(for request: Request) -> Bool {
        guard !Self.isAbsurd(request.path), let segments = PercentDecoding.pathSegments(request.path) else { return false }
        var parameters: [String: String] = [:]
        guard let node = root.match(segments[...], &parameters) else { return false }
        return node.handlers[request.method] != nil || (request.method == "HEAD" && node.handlers["GET"] != nil)
    }

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

    private static func isAbsurd(_ path: String) -> Bool {
        var slashes = 0
        for byte in path.utf8 where byte == UInt8(ascii: "/") {
            slashes += 1
            if slashes > Router<Context>.maxPathSegments { return true }
        }
        return false
    }

    /// A node of the frozen tree.
    private final class Node: Sendable {
        let literals: [String: Node]
        let parameter: (name: String, node: Node)?
        let catchAll: (name: String, node: Node)?
        /// Each method's handler, behind the router's middleware.
        let handlers: [String: Router<Context>.Handler]
        /// The path as registered (one per node: every method's route here has the same shape).
        let pattern: String?

        init(_ registered: RouteNode<Context>, wrapping wrap: (@escaping Router<Context>.Handler) -> Router<Context>.Handler) {
            literals = registered.literals.mapValues { Node($0, wrapping: wrap) }
            parameter = registered.parameter.map { ($0.name, Node($0.node, wrapping: wrap)) }
            catchAll = registered.catchAll.map { ($0.name, Node($0.node, wrapping: wrap)) }
            handlers = registered.handlers.mapValues(wrap)
            pattern = registered.pattern
        }

        /// Segments below this node on its longest route (a catch-all counts as one).
        var depth: Int {
            let below = literals.values.map { $0.depth + 1 } + [parameter, catchAll].compactMap { $0.map { $0.node.depth + 1 } }
            return below.max() ?? 0
        }

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
        router.add(method, prefix + (path == "/" || path.isEmpty ? "" : path), Router<Context>.chain(handler, through: middleware))
    }

    public func group(_ path: String, middleware more: [Router<Context>.Middleware] = []) -> RouteGroup<Context> {
        RouteGroup(router: router, prefix: prefix + path, middleware: middleware + more)
    }
}
