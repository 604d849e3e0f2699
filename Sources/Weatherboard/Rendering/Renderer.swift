import Foundation
import HTTPServer

/// The string catalogs prepared for rendering: each language's strings escaped once at start-up,
/// indexed by the keys the templates were compiled against (`StringKey`, generated at build time).
public final class Renderer: Sendable {
    public let localization: Localization
    private let tables: [Language: Strings]
    /// Pages' shared stretches, deflated once per content.
    let sharedStretches = SharedStretches()

    public init(templatesDirectory: String) throws {
        localization = try Localization(directory: templatesDirectory + "/strings")
        var tables: [Language: Strings] = [:]
        for language in Language.allCases {
            let catalog = localization.catalogs[language] ?? [:]
            let missing = StringKey.names.filter { catalog[$0] == nil }
            guard missing.isEmpty else {
                throw StartupError("string catalog \(language.rawValue).json lacks \(missing.joined(separator: ", "))")
            }
            tables[language] = Strings(table: StringKey.names.map { HTML.escaped(catalog[$0] ?? $0) })
        }
        self.tables = tables
    }

    /// The page language's strings for a compiled template.
    public func strings(_ language: Language) -> Strings {
        tables[language] ?? Strings(table: [])
    }

    /// Runs a compiled template for a response body. It writes straight into the array that
    /// becomes the body (no copy of the page at the end); its spare capacity lives only until
    /// the response is written, so keep `fragment` for anything held longer. Large fragments
    /// it shows (a city's weather, a board) are not copied in: the body holds them as parts.
    public func page(_ language: Language, _ template: (inout HTML, Strings) -> Void) -> RenderedPage {
        let strings = strings(language)
        var grown: [UInt8]?
        var pieces: [Gzip.Piece] = []
        var shared: [Range<Int>] = []
        var lent: [HTML.Lent] = []
        var lenders: [[UInt8]] = []
        let bytes = [UInt8](unsafeUninitializedCapacity: Self.pageCapacity) { buffer, initialized in
            var html = HTML(writingInto: buffer)
            template(&html, strings)
            pieces = html.pieces
            shared = html.shared
            lent = html.lent
            lenders = html.lenders
            if html.ownsStorage {
                grown = html.bytes // it outgrew the array and moved; rare
                initialized = 0
            } else {
                initialized = html.count
            }
        }
        let own = grown ?? bytes
        guard !lent.isEmpty else { return RenderedPage(body: ResponseBody(own), deflatedAhead: pieces, shared: shared, stretches: sharedStretches) }
        var body = ResponseBody()
        let ownStorage = body.add(storage: own)
        let lenderStorages = lenders.map { body.add(storage: $0) }
        var from = 0
        for stretch in lent {
            body.append(storage: ownStorage, from..<stretch.at)
            body.append(storage: lenderStorages[stretch.lender], stretch.range)
            from = stretch.at
        }
        body.append(storage: ownStorage, from..<own.count)
        return RenderedPage(body: body, deflatedAhead: pieces, shared: shared, stretches: sharedStretches)
    }

    /// Runs a compiled template into an exactly sized fragment, to be kept and shown again
    /// (`capacity`: room to render into first, for a large one such as a board). Exactly sized:
    /// an array keeps the capacity it was made with, and a cache counts what a fragment holds.
    public func fragment(_ language: Language, capacity: Int = 4096, _ template: (inout HTML, Strings) -> Void) -> HTMLFragment {
        var html = HTML(capacity: capacity)
        template(&html, strings(language))
        return HTMLFragment(html.bytes, deflated: nil)
    }

    /// Room for the largest usual page of its own bytes (a board or a city's weather is lent,
    /// not copied in; a page that outgrows it is copied once into storage of its own).
    static let pageCapacity = 128 * 1024
}

/// A page's bytes, where in them fragments deflated ahead of time sit (`HTMLFragment.deflated`)
/// and where stretches many pages share end (`HTML.endShared`), so that compressing the page
/// compresses only the rest.
public struct RenderedPage: Sendable {
    public var body: ResponseBody
    var deflatedAhead: [Gzip.Piece] = []
    var shared: [Range<Int>] = []
    var stretches: SharedStretches?

    /// Parts of the page deflated already, in order: the fragments', and the shared stretches'
    /// that `SharedStretches` keeps (`kept`: for a page that is kept, whose stretches are shown
    /// again by definition).
    func deflatedParts(kept: Bool = false) -> [Gzip.Piece] {
        guard let stretches, !shared.isEmpty else { return deflatedAhead }
        let sharedParts = shared.compactMap { range in
            stretches.run(for: body.bytes(in: range), shared: kept).map { Gzip.Piece(offset: range.lowerBound, run: $0) }
        }
        return (deflatedAhead + sharedParts).sorted { $0.offset < $1.offset }
    }
    var hasDeflatedParts: Bool { !deflatedAhead.isEmpty || !shared.isEmpty }
}

extension Response {
    /// A rendered page for `request`: compressed here when the client takes gzip and the page
    /// shows parts deflated ahead of time (only the rest is compressed, and the few hundred bytes
    /// between two parts go out stored: deflating each would cost more than the rest of the
    /// page); otherwise plain, for `ResponseCompression` to compress whole.
    static func html(_ page: RenderedPage, for request: Request, status: HTTPStatus = .ok) -> Response {
        var response = Response.html([], status: status)
        guard page.hasDeflatedParts, acceptsGzip(request) else {
            response.bodyParts = page.body
            return response
        }
        response.bodyParts = Gzip.compress(page.body, reusing: page.deflatedParts(), level: 1, storingGapsUnder: storedGap)
        response.headers.add("Content-Encoding", "gzip")
        response.headers.add("Vary", "Accept-Encoding")
        return response
    }

    /// Stretches between a page's deflated parts shorter than this are sent stored.
    static let storedGap = 1_024
}
