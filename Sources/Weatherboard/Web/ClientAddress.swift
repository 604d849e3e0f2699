import HTTPServer

/// The address a request came from, as the abuse limits count it: the connection's, unless the
/// connection is from a proxy of ours (nginx in front of several nodes), whose requests would
/// otherwise all count as one client. Then it is the last address in `X-Forwarded-For`: the one
/// that proxy appended; earlier entries are whatever the client claimed. An IPv6 client is its
/// /64 (`ClientKey`).
struct ClientAddress: Sendable {
    let trustedProxies: Set<String>

    func of(_ request: Request) -> String {
        guard trustedProxies.contains(request.remoteAddress), let forwarded = request.headers["X-Forwarded-For"],
              let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return ClientKey.of(request.remoteAddress) }
        return ClientKey.of(last)
    }
}
