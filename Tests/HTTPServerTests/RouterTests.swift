import Testing
@testable import HTTPServer

@Suite struct RouterTests {
    private func router() -> Router<EmptyContext> {
        let router = Router<EmptyContext>()
        router.get("/") { _, _ in .text("home") }
        router.get("/city/{slug}") { _, _ in .text("city") }
        router.post("/city/{slug}/posts") { _, _ in .text("posted") }
        router.post("/posts/{id}/edit") { _, _ in .text("edited") }
        router.get("/settings") { _, _ in .text("settings") }
        router.post("/settings/profile") { _, _ in .text("saved") }
        router.get("/static/{path...}") { _, _ in .text("file") }
        return router
    }

    @Test func theNearestPageAboveAFormIsFound() {
        let router = router()
        #expect(router.nearestPage(above: "/city/seoul/posts") == "/city/seoul")
        #expect(router.nearestPage(above: "/settings/profile") == "/settings")
        #expect(router.nearestPage(above: "/posts/7/edit") == "/")
        #expect(router.nearestPage(above: "/city/s%C3%A3o-paulo/posts") == "/city/s%C3%A3o-paulo")
        #expect(router.nearestPage(above: "/static/css/site.css") == "/static/css/site.css")
        #expect(router.nearestPage(above: "/nowhere/at/all") == "/")
        #expect(router.nearestPage(above: "/city/%00/posts") == "/")
    }

    /// Issue 20 #2: a walk that tried each shorter prefix in turn cost 0.95 s of CPU for a path of
    /// 4,000 segments. The walk's work is the route tree's, whatever the path's length.
    @Test func findingThePageAboveALongPathWalksTheTreeNotThePath() {
        let router = router()
        let short = router.nearestPageWalk(above: "/city/seoul/posts/a/b")
        let long = router.nearestPageWalk(above: "/city/seoul/posts" + String(repeating: "/a", count: 4_000))
        #expect(short.page == "/city/seoul")
        #expect(long.page == "/city/seoul")
        #expect(long.nodesVisited == short.nodesVisited)
        #expect(long.nodesVisited <= 5)
    }

    @Test func pathsOfAbsurdlyManySegmentsAreNotFoundWithoutBeingWalked() {
        let router = router()
        let deep = "/static" + String(repeating: "/a", count: Router<EmptyContext>.maxPathSegments)
        #expect(router.hasRoute(for: Request(method: "GET", target: "/static" + String(repeating: "/a", count: 20))))
        #expect(!router.hasRoute(for: Request(method: "GET", target: deep)))
        #expect(router.respond(to: Request(method: "PUT", target: deep)).status == .notFound)
        #expect(router.respond(to: Request(method: "GET", target: deep)).status == .notFound)
    }
}

@Suite struct ClientKeyTests {
    @Test func ipv6ClientsAreTheirSlash64AndIPv4ClientsTheirAddress() {
        #expect(ClientKey.of("203.0.113.7") == "203.0.113.7")
        #expect(ClientKey.of("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientKey.of("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(ClientKey.of("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientKey.of("::ffff:198.51.100.4") == "198.51.100.4")
        #expect(ClientKey.of("::1") == "::/64")
        #expect(ClientKey.of("not an address") == "not an address")
    }
}

