import Foundation
import HTTPServer

/// `/palette.css`: the temperature colours every page's backgrounds are drawn from, as a
/// stylesheet generated once; its ETag is a hash of its text.
struct PaletteController {
    let stylesheet: Response

    init() {
        let css = Palette.stylesheet()
        var response = Response(headers: HTTPHeaders([("Content-Type", "text/css; charset=utf-8"),
                                                      ("Cache-Control", "public, max-age=86400")]), body: Array(css.utf8))
        response.headers.add("ETag", "\"\(String(fnv1a(Array(css.utf8)), radix: 16))\"")
        stylesheet = response
    }

    func addRoutes(to router: Router<AppContext>) {
        // Its `ETag` is answered by the compression layer, for the representation it picks.
        router.get("/palette.css") { [stylesheet] _, _ in stylesheet }
    }
}
