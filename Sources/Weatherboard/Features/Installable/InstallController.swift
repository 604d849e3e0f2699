import Foundation
import HTTPServer

/// What makes the site installable (a web app manifest, a service worker) and the page the
/// worker shows when the network is gone. Nothing here is needed without JavaScript.
struct InstallController {
    let pages: Pages
    /// The service worker's script, read once at start from the public folder.
    let worker: [UInt8]

    init(pages: Pages, publicDirectory: String) throws {
        self.pages = pages
        let path = publicDirectory + "/js/sw.js"
        guard let data = FileManager.default.contents(atPath: path) else { throw StartupError("the service worker \(path) is missing") }
        worker = Array(data)
    }

    func addRoutes(to router: Router<AppContext>) {
        router.get("/manifest.webmanifest", manifest)
        router.get("/sw.js", serviceWorker)
        router.get("/offline", offline)
    }

    /// The manifest in the language its link names (`?lang=`), so that each address has one body.
    func manifest(_ request: Request, _ context: AppContext) throws -> Response {
        let language = try request.queryItems()["lang"].flatMap(Language.init(rawValue:)) ?? .en
        let icons: [[String: String]] = [192, 512].flatMap { size in
            [["src": "/static/icons/icon-\(size).png", "sizes": "\(size)x\(size)", "type": "image/png", "purpose": "any"],
             ["src": "/static/icons/maskable-\(size).png", "sizes": "\(size)x\(size)", "type": "image/png", "purpose": "maskable"]]
        }
        let manifest: [String: Any] = [
            "name": pages.string("site_name", language), "short_name": pages.string("site_name", language),
            "description": pages.string("manifest_description", language),
            "lang": language.rawValue, "dir": "ltr", "id": "/", "start_url": "/", "scope": "/", "display": "standalone",
            "background_color": "#ffffff", "theme_color": Self.themeColor, "icons": icons,
        ]
        return .json(manifest, contentType: "application/manifest+json", cacheControl: "public, max-age=86400")
    }

    /// Served from the root so that its scope is the whole site; checked for a new version on
    /// every navigation (`no-cache`), as browsers do for workers anyway.
    func serviceWorker(_ request: Request, _ context: AppContext) throws -> Response {
        Response(status: .ok, headers: HTTPHeaders([("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "no-cache")]),
                 body: worker)
    }

    /// The page a navigation gets when the network is gone: the same for everyone (the worker
    /// keeps it), so it names no one.
    func offline(_ request: Request, _ context: AppContext) throws -> Response {
        let language = context.language
        let view = OfflinePage(lang: language.rawValue, title: pages.string("offline_title", language),
                               text: pages.string("offline_text", language), again: pages.string("offline_again", language),
                               siteName: pages.string("site_name", language))
        var response = pages.html(context) { Templates.offline(view, &$0, $1) }
        response.headers.set("Cache-Control", "no-cache")
        return response
    }

    static let themeColor = "#3567C8"
}

struct OfflinePage {
    var lang: String
    var title: String
    var text: String
    var again: String
    var siteName: String
}
