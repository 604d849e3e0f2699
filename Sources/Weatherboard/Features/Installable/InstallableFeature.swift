import Foundation
import HTTPServer

/// The site's own files: static assets, the icon browsers ask for, the manifest and service worker.
enum InstallableFeature {
    static func install(_ site: Site, publicDirectory: String) throws {
        // The compression layer answers their conditionals, for the representation it picks.
        let files = StaticFiles(root: publicDirectory, answersConditionals: false)
        site.router.get("/static/{path...}") { request, _ in try files.response(for: request.parameters["path"] ?? "", request: request) }
        // Browsers ask for /favicon.ico whatever the page links; the icon is an SVG.
        site.router.get("/favicon.ico") { _, _ in .redirect(to: "/static/favicon.svg", status: .movedPermanently) }
        try InstallController(pages: site.pages, publicDirectory: publicDirectory).addRoutes(to: site.router)
    }
}
