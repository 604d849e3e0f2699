import Foundation
import HTTPServer
import Logging

/// Everything the application is configured with, and its defaults; `Setting.all` names the flags
/// and environment variables that change it.
public struct AppConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var databasePath = "./weatherboard.sqlite"
    /// A PostgreSQL URL; when set, the site keeps its data there instead of `databasePath`.
    public var databaseURL: String?
    public var publicDirectory = InstalledFiles.folder("Public")
    public var templatesDirectory = InstalledFiles.folder("Templates")
    public var migrationsDirectory = InstalledFiles.folder("Migrations")
    /// Addresses of proxies in front of this node (nginx): their requests count as the client
    /// address they append to `X-Forwarded-For`.
    public var trustedProxies: [String] = []
    /// Client addresses that may read `/metrics` (through a trusted proxy, the client it names).
    public var metricsAddresses = ["127.0.0.1", "::1"]
    /// Mark cookies `Secure` (when served behind HTTPS).
    public var secureCookies = false
    public var logLevel = Logger.Level.info
    public var logFormat = LogFormat.text
    /// Settings of the HTTP server underneath (timeouts, limits, threads). Request bodies are
    /// forms of a few KiB at most (a post is 2,000 bytes, 6 KB percent-encoded): 64 KiB, not the
    /// library's 1 MiB, so that an unfinished body cannot hold a megabyte per connection.
    public var server: ServerConfiguration = {
        var server = ServerConfiguration()
        server.limits.maxBodyBytes = 64 * 1024
        return server
    }()
    /// Weather providers in the order tried: `open-meteo`, `demo`.
    public var weatherProviders = ["open-meteo", "demo"]
    public var openMeteoURL = "https://api.open-meteo.com"
    public var kmaURL = "https://apis.data.go.kr"
    public var airQualityURL = "https://air-quality-api.open-meteo.com"
    /// Open-Meteo's historical archive: each city's 1991–2020 normals, asked once (`ClimateNormals`).
    public var archiveURL = "https://archive-api.open-meteo.com"
    /// The US National Weather Service's API: its active alerts, shown as warnings on the cities
    /// they cover (`NWSAlerts`). Unset: `api.weather.gov` wherever real forecasts are asked (the
    /// demo has no warnings); empty: none.
    public var warningsNWSURL: String?
    static let nwsURL = "https://api.weather.gov"
    /// MeteoAlarm's feeds (Europe's national services' warnings, `MeteoAlarm`). Unset:
    /// `feeds.meteoalarm.org` wherever real forecasts are asked; empty: none.
    public var warningsMeteoAlarmURL: String?
    static let meteoAlarmURL = "https://feeds.meteoalarm.org"
    /// A GeoJSON file of the shapes MeteoAlarm's warnings name by geocode (EMMA_ID, NUTS):
    /// without it, only warnings drawn as polygons find their cities.
    public var warningsMeteoAlarmGeocodes: String?
    /// The KMA gateway for its special weather reports (`KMAWarnings`). Unset: `kmaURL`
    /// wherever WEATHERBOARD_KMA_KEY is given; empty: none.
    public var warningsKMAURL: String?
    /// How often each node asks the warnings' sources for what they have in force.
    public var warningsEvery: TimeInterval = 300
    /// Reports by people with some standing that mark an hour's forecast missed on the bars.
    public var forecastMissedReports = HourReports.defaultMissedAfter
    /// The KMA service key, from the environment only (`WEATHERBOARD_KMA_KEY`, read with the other
    /// settings in `resolve`); when set, the KMA is asked first for Korean cities.
    public var kmaKey: String?
    /// How long a cached forecast is served without asking upstream.
    public var weatherFreshFor: TimeInterval = 1800
    /// How long a page waits for a city's first forecast before showing the page without it.
    public var weatherFirstFetchBudget: TimeInterval = 0.3
    /// Decoded forecasts kept in memory (least recently shown forgotten first; SQLite keeps all).
    public var forecastsInMemory = WeatherService.MemoryLimit()
    /// Whether rendered pages, boards and weather parts are kept and shared (`--page-caches`).
    public var pageCaches = true
    /// Seconds a guest page is kept at most, even when nothing it shows changed.
    public var pageCacheMaximumAge: TimeInterval = 30
    /// How long anything waits on PostgreSQL (connect, statement, lock, pool, answer).
    public var databaseTimeouts = PostgresTimeouts()
    /// PostgreSQL connections the node's pool opens at most; nil: one for every thread that may
    /// use the database at once (request workers, weather fetches, the change feed's notices and a
    /// spare), so none waits for another's. Fewer is allowed: requests then wait up to
    /// `databaseTimeouts.checkout` for one, then get a 503.
    public var databaseConnections: Int?
    /// PostgreSQL streaming replicas that pages read from (`--database-replica-url`, repeatable).
    public var replicaURLs: [String] = []
    /// Seconds a replica may lag behind the primary and still serve reads.
    public var replicaMaximumLag: Double = 1
    /// The pool's maximum as used (the LISTEN connection comes on top of it).
    public var poolSize: Int { databaseConnections ?? server.workerThreads + WeatherService.fetchThreads + 2 }
    /// Upstream fetches a minute for the node, and cold fetches one client may cause.
    public var weatherFetchBudget = WeatherService.FetchBudget()
    /// What an upload may be and how photos are decoded (`PhotoProcessor`).
    var photoLimits = PhotoProcessor.Limits()
    /// Abuse limits (documented in the README).
    public var limits = Limits()
    /// scrypt's cost for new password hashes (tests lower it to stay fast).
    public var passwordCost = 1 << 15
    /// The mail relay, `smtp://user:password@host:port` (`?tls=required`), or nil: without it the
    /// site sends no mail and hides what needs it (e-mail addresses, "Forgot password?").
    public var smtpURL: String?
    /// The sender of the site's mail (`--mail-from`), needed with `smtpURL`.
    public var mailFrom: String?
    /// The site's address as its members reach it (`https://weather.example`), for links in mail;
    /// needed with `smtpURL`.
    public var publicURL: String?
    /// OpenID Connect providers by name (`--oidc-provider NAME=ISSUER`), their client ids
    /// (`--oidc-client-id NAME=ID`), and their secrets: from `WEATHERBOARD_OIDC_SECRET_<NAME>` or
    /// the file `--oidc-secret-file NAME=PATH` names, never the command line.
    public var oidcIssuers: [String: String] = [:]
    public var oidcClientIDs: [String: String] = [:]
    public var oidcSecretFiles: [String: String] = [:]
    public var oidcSecrets: [String: String] = [:]
    /// Sign in with Apple's team key (the `.p8` file), its key id and the team id: the provider
    /// named `apple` then signs its client secret with them for each exchange.
    public var oidcAppleKeyFile: String?
    public var oidcAppleKeyID: String?
    public var oidcAppleTeamID: String?
    /// Seconds between looks at the mail queue for what other nodes queued and what waits for a
    /// retry, and the first retry's wait (doubling to 15 minutes); tests shorten them.
    public var mailPollInterval: TimeInterval = 5
    public var mailRetryBase: TimeInterval = 30
    /// How push services reach the operator (`mailto:` or `https:`, RFC 8292's `sub`); nil: no
    /// Web Push (`--push-contact`).
    public var pushContact: String?
    /// Push: origins allowed besides the known push services (the tests' stand-in), and the
    /// sender's timings; not settings an operator changes.
    public var pushExtraOrigins: [String] = []
    public var pushPollInterval: TimeInterval = 5
    public var pushRetryBase: TimeInterval = 30
    public var pushTimeout = 10
    /// How often each node looks for what is due by the clock (rain alerts, digests): each goes
    /// within this much of its time; tests shorten it.
    public var scheduleInterval: TimeInterval = 60
    /// How often the janitor purges what is past its keeping time.
    var janitorInterval: TimeInterval = 60
    /// The clock every feature reads (tests fix it).
    public var clock: @Sendable () -> Date = { Date() }

    public init() {}

    /// Where the data lives: PostgreSQL when a URL is given, else the SQLite file.
    public var database: AppDatabase.Location {
        databaseURL.map { .postgres(url: $0) } ?? .sqlite(path: databasePath)
    }

    /// The database in words for the log, without a password: "SQLite /srv/site.sqlite",
    /// "PostgreSQL db.internal:5432/weatherboard as app".
    public var databaseDescription: String {
        guard let url = databaseURL else {
            return "SQLite " + (databasePath.hasPrefix("/") ? databasePath : FileManager.default.currentDirectoryPath + "/" + databasePath)
        }
        if let parts = URLComponents(string: url), parts.scheme?.hasPrefix("postgres") == true {
            let place = "\(parts.host ?? "localhost")\(parts.port.map { ":\($0)" } ?? "")\(parts.path)"
            return "PostgreSQL \(place)" + (parts.user.map { " as \($0)" } ?? "")
        }
        // key=value settings: name only what cannot be secret.
        let fields = url.split(separator: " ").filter { field in ["host=", "port=", "dbname=", "user="].contains { field.hasPrefix($0) } }
        return "PostgreSQL " + fields.joined(separator: " ")
    }

    public typealias Limits = SiteLimits

    public static func repositoryFolder(_ name: String) -> String { InstalledFiles.repositoryFolder(name) }
}
