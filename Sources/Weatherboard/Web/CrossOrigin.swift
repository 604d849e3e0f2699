import HTTPServer

/// Where a request says it comes from, by the headers a browser sets and a page cannot: Fetch
/// Metadata's `Sec-Fetch-Site`, else `Origin`. The rule is Go 1.25's `http.CrossOriginProtection`
/// and OWASP's Fetch Metadata guidance (docs/security.md), with one difference: a request that
/// states neither is not let through but confirmed first (`UnstatedPosts`).
enum RequestSource: Equatable {
    /// `Sec-Fetch-Site: same-origin`, or `none` (an address typed or a bookmark), or, from a
    /// browser that sends no Fetch Metadata, an `Origin` naming this site.
    case thisSite
    /// `cross-site`, `same-site` (a sibling subdomain is another site here), any other value, or
    /// an `Origin` naming another site (or `null`).
    case elsewhere
    /// Neither header: an old browser or a script. The person confirms it on a page of ours.
    case unstated

    init(_ request: Request) {
        if let site = request.headers["Sec-Fetch-Site"] {
            let value = site.trimmingCharacters(in: .whitespaces).asciiLowercased()
            self = value == "same-origin" || value == "none" ? .thisSite : .elsewhere
        } else if let origin = request.headers["Origin"] {
            self = Self.origin(origin, names: request.headers["Host"]) ? .thisSite : .elsewhere
        } else {
            self = .unstated
        }
    }

    /// Whether `origin` (`scheme://host[:port]`) is the request's own `Host`, as the browser
    /// addressed it (a proxy in front passes `Host` on: docs/operations.md).
    static func origin(_ origin: String, names host: String?) -> Bool {
        guard let host, !host.isEmpty, let separator = origin.range(of: "://") else { return false }
        let authority = String(origin[separator.upperBound...])
        return !authority.contains("/") && authority.asciiLowercased() == host.asciiLowercased()
    }
}
