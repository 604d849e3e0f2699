import HTTPServer

/// The home page.
struct HomeController {
    let pages: Pages

    func addRoutes(to router: Router<AppContext>) {
        router.get("/", home)
    }

    func home(_ request: Request, _ context: AppContext) throws -> Response {
        pages.page("home", context)
    }
}
