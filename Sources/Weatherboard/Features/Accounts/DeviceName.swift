/// A passkey's name from the browser that made it ("Chrome on Android", "Safari on iPhone"), so
/// that a list of passkeys tells the devices apart; nil for a `User-Agent` it does not know.
/// Only the first known browser and system words count: the rest of the header is not kept.
enum DeviceName {
    /// Most specific first: Edge and Samsung Internet also say "Chrome", Chrome also says "Safari".
    private static let browsers: [(token: String, name: String)] = [
        ("Edg/", "Edge"), ("SamsungBrowser/", "Samsung Internet"), ("Whale/", "Whale"), ("OPR/", "Opera"),
        ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chrome/", "Chrome"), ("Safari/", "Safari"),
    ]
    private static let systems: [(token: String, name: String)] = [
        ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"),
        ("Macintosh", "Mac"), ("Windows", "Windows"), ("Linux", "Linux"),
    ]

    static func from(userAgent: String?) -> String? {
        guard let agent = userAgent?.prefix(512) else { return nil }
        let browser = browsers.first { agent.contains($0.token) }?.name
        let system = systems.first { agent.contains($0.token) }?.name
        switch (browser, system) {
        case let (browser?, system?): return "\(browser) on \(system)"
        case let (browser?, nil): return browser
        case let (nil, system?): return system
        case (nil, nil): return nil
        }
    }
}
