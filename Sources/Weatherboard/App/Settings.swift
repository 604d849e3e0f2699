import Foundation
import HTTPServer
import Logging

/// One setting of the command line: its flag (`--name`), its environment variable
/// (`WEATHERBOARD_NAME`), its help, and how a value is read into the configuration. The
/// defaults are `AppConfiguration`'s own; this list is the only place names are written.
struct Setting {
    let name: String
    let help: String
    /// A switch takes no value on the command line (`--secure-cookies`) and `1` in the environment.
    var isSwitch = false
    /// Its default is worked out on the machine it runs on (from its CPUs): an environment file
    /// made elsewhere says the rule, not this machine's number.
    var dependsOnTheMachine = false
    let apply: (inout AppConfiguration, String) throws -> Void
    /// The value as the help shows it (of a fresh configuration: the default).
    let shown: (AppConfiguration) -> String

    var flag: String { "--\(name)" }
    var environmentName: String { "WEATHERBOARD_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }

    /// A bad value or an unknown setting, said the way the command line reports it.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    static func text(_ name: String, _ help: String, _ field: WritableKeyPath<AppConfiguration, String>) -> Setting {
        Setting(name: name, help: help, apply: { $0[keyPath: field] = $1 }, shown: { $0[keyPath: field] })
    }

    static func number(_ name: String, _ help: String, atLeast minimum: Int = 1, _ field: WritableKeyPath<AppConfiguration, Int>) -> Setting {
        Setting(name: name, help: help, apply: { configuration, text in
            guard let value = Int(text), value >= minimum else { throw Problem(description: "--\(name) must be a whole number, at least \(minimum)") }
            configuration[keyPath: field] = value
        }, shown: { String($0[keyPath: field]) })
    }

    /// The same setting, its default worked out from the machine it runs on.
    var onThisMachine: Setting {
        var setting = self
        setting.dependsOnTheMachine = true
        return setting
    }

    /// `NAME=VALUE[,NAME=VALUE…]`, NAME in a-z.
    static func pairs(_ text: String, _ setting: String, _ each: (String, String) throws -> Void) throws {
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 20, parts[0].allSatisfy({ ("a"..."z").contains($0) }), !parts[1].isEmpty else {
                throw Problem(description: "--\(setting) must be NAME=VALUE, NAME in a-z")
            }
            try each(parts[0], parts[1])
        }
    }

    /// Every setting of `weatherboard serve`, in the order the help lists them.
    static var all: [Setting] {
        [
            .text("host", "Address to listen on; '::' for every IPv4 and IPv6 address.", \.host),
            Setting(name: "port", help: "Port to listen on.", apply: { configuration, text in
                guard let port = Int(text), (0...65535).contains(port) else { throw Problem(description: "--port must be between 0 and 65535") }
                configuration.port = port
            }, shown: { String($0.port) }),
            .text("db", "SQLite database file (the embedded default).", \.databasePath),
            Setting(name: "database-url", help: "PostgreSQL instead of SQLite, e.g. postgres://user@host:5432/weatherboard (libpq's URL or key=value form).",
                    apply: { configuration, text in
                guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") || text.contains("=") else {
                    throw Problem(description: "--database-url must be a postgres:// URL or libpq key=value settings")
                }
                configuration.databaseURL = text
            }, shown: { $0.databaseURL == nil ? "none: SQLite" : "set" }),
            .number("database-statement-timeout", "PostgreSQL: seconds a statement may run (the client gives up 2 s later).",
                    \.databaseTimeouts.statement),
            .number("database-lock-timeout", "PostgreSQL: seconds a statement may wait for a lock.", \.databaseTimeouts.lock),
            Setting(name: "database-connections", help: "PostgreSQL: connections the node's pool opens at most (plus one for LISTEN; default: workers + \(WeatherService.fetchThreads + 2)); unused ones close after a minute.",
                    apply: { configuration, text in
                guard let count = Int(text), count >= 1 else { throw Problem(description: "--database-connections must be a whole number, at least 1") }
                configuration.databaseConnections = count
            }, shown: { "workers + \(WeatherService.fetchThreads + 2) (\($0.poolSize) here)" }).onThisMachine,
            Setting(name: "database-replica-url", help: "PostgreSQL: a streaming replica that pages read from (repeatable; in the environment, comma-separated). A member reads the primary until the replica has replayed their last write.",
                    apply: { configuration, text in
                for url in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !url.isEmpty {
                    guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") || url.contains("=") else {
                        throw Problem(description: "--database-replica-url must be a postgres:// URL or libpq key=value settings")
                    }
                    configuration.replicaURLs.append(url)
                }
            }, shown: { $0.replicaURLs.isEmpty ? "none" : "\($0.replicaURLs.count) set" }),
            Setting(name: "database-replica-max-lag", help: "PostgreSQL: seconds a replica may lag behind the primary and still serve reads; past it, reads go to the primary.",
                    apply: { configuration, text in
                guard let seconds = Double(text), seconds >= 0.1, seconds <= 60 else {
                    throw Problem(description: "--database-replica-max-lag must be 0.1 to 60 seconds")
                }
                configuration.replicaMaximumLag = seconds
            }, shown: { String(format: "%g", $0.replicaMaximumLag) }),
            Setting(name: "trusted-proxies", help: "Comma-separated addresses of proxies in front (nginx); their X-Forwarded-For names the client.",
                    apply: { configuration, text in
                configuration.trustedProxies = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }, shown: { $0.trustedProxies.isEmpty ? "none" : $0.trustedProxies.joined(separator: ",") }),
            Setting(name: "metrics-from", help: "Comma-separated client addresses that may read /metrics (Prometheus text format); 'none' turns it off.",
                    apply: { configuration, text in
                configuration.metricsAddresses = text == "none" ? []
                    : text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }, shown: { $0.metricsAddresses.isEmpty ? "none" : $0.metricsAddresses.joined(separator: ",") }),
            Setting(name: "smtp-url", help: "The mail relay, smtp://user:password@host:port (STARTTLS when offered; ?tls=required insists; smtps:// for TLS from the start). Prefer the environment: command lines are visible to every user. Unset: no mail, and no e-mail features.",
                    apply: { configuration, text in
                _ = try SMTPRelay(parsing: text)
                configuration.smtpURL = text
            }, shown: { $0.smtpURL.flatMap { try? SMTPRelay(parsing: $0).description } ?? "none: no mail" }),
            Setting(name: "mail-from", help: "The address the site's mail comes from (needed with --smtp-url).", apply: { configuration, text in
                guard MailAddress(text) != nil else { throw Problem(description: "--mail-from must be an address like weather@example.org") }
                configuration.mailFrom = text
            }, shown: { $0.mailFrom ?? "none" }),
            Setting(name: "public-url", help: "The site's address as members reach it, e.g. https://weather.example (links in mail; needed with --smtp-url).",
                    apply: { configuration, text in
                let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
                guard let parts = URLComponents(string: trimmed), ["http", "https"].contains(parts.scheme ?? ""), parts.host?.isEmpty == false,
                      parts.query == nil, parts.fragment == nil, parts.user == nil else {
                    throw Problem(description: "--public-url must look like https://weather.example")
                }
                configuration.publicURL = trimmed
            }, shown: { $0.publicURL ?? "none" }),
            Setting(name: "oidc-provider", help: "An OpenID Connect provider to sign in with, NAME=ISSUER (NAME in a-z; https, or http on loopback; repeatable, comma-separated in the environment): e.g. google=https://accounts.google.com. Its client id comes from --oidc-client-id, its secret from WEATHERBOARD_OIDC_SECRET_<NAME> or --oidc-secret-file.",
                    apply: { configuration, text in
                try Self.pairs(text, "oidc-provider") { name, issuer in
                    guard OpenIDProviders.isAcceptable(issuer) else { throw Problem(description: "--oidc-provider \(name): the issuer must be https:// (http:// only on loopback)") }
                    configuration.oidcIssuers[name] = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
                }
            }, shown: { $0.oidcIssuers.isEmpty ? "none" : $0.oidcIssuers.keys.sorted().joined(separator: ", ") }),
            Setting(name: "oidc-client-id", help: "An OpenID provider's client id, NAME=CLIENT_ID (repeatable).",
                    apply: { configuration, text in try Self.pairs(text, "oidc-client-id") { configuration.oidcClientIDs[$0] = $1 } },
                    shown: { $0.oidcClientIDs.isEmpty ? "none" : "\($0.oidcClientIDs.count) set" }),
            Setting(name: "oidc-secret-file", help: "A file holding an OpenID provider's client secret, NAME=PATH (repeatable); or WEATHERBOARD_OIDC_SECRET_<NAME>.",
                    apply: { configuration, text in try Self.pairs(text, "oidc-secret-file") { configuration.oidcSecretFiles[$0] = $1 } },
                    shown: { $0.oidcSecretFiles.isEmpty ? "none" : "\($0.oidcSecretFiles.count) set" }),
            Setting(name: "oidc-apple-key-file", help: "Sign in with Apple: the team's private key (the .p8 file) that signs the client secret of the provider named apple.",
                    apply: { $0.oidcAppleKeyFile = $1 }, shown: { $0.oidcAppleKeyFile ?? "none" }),
            Setting(name: "oidc-apple-key-id", help: "Sign in with Apple: that key's id.",
                    apply: { $0.oidcAppleKeyID = $1 }, shown: { $0.oidcAppleKeyID ?? "none" }),
            Setting(name: "oidc-apple-team-id", help: "Sign in with Apple: the team id.",
                    apply: { $0.oidcAppleTeamID = $1 }, shown: { $0.oidcAppleTeamID ?? "none" }),
            Setting(name: "push-contact", help: "How push services reach you (mailto:ops@example.org or an https: page); unset: no Web Push.",
                    apply: { configuration, text in
                guard text.hasPrefix("mailto:") && MailAddress(String(text.dropFirst(7))) != nil || text.hasPrefix("https://") else {
                    throw Problem(description: "--push-contact is mailto:ADDRESS or an https:// address")
                }
                configuration.pushContact = text
            }, shown: { $0.pushContact ?? "none: no Web Push" }),
            .text("migrations", "Folder of the migrations: sqlite/ and postgres/, NNNN_name.sql in each.", \.migrationsDirectory),
            .text("public", "Folder of static files served under /static/.", \.publicDirectory),
            .text("templates", "Folder of the string catalogs (strings/en.json, strings/ko.json).", \.templatesDirectory),
            Setting(name: "secure-cookies", help: "Mark cookies Secure, for a site served over HTTPS.", isSwitch: true,
                    apply: { $0.secureCookies = $1 == "1" }, shown: { $0.secureCookies ? "on" : "off" }),
            Setting(name: "log-level", help: "trace, debug, info, notice (start and stop), warning, error.", apply: { configuration, text in
                guard let level = Logger.Level(rawValue: text) else { throw Problem(description: "unknown --log-level \(text)") }
                configuration.logLevel = level
            }, shown: { $0.logLevel.rawValue }),
            Setting(name: "log-format", help: "text (a line an event) or json (an object a line, for a log collector).", apply: { configuration, text in
                guard let format = LogFormat(rawValue: text) else { throw Problem(description: "--log-format is text or json") }
                configuration.logFormat = format
            }, shown: { $0.logFormat.rawValue }),
            Setting(name: "access-log", help: "on: a line per request at info (request id, method, path, status, bytes, duration, client address); off: errors and state changes only.",
                    apply: { configuration, text in
                guard text == "on" || text == "off" else { throw Problem(description: "--access-log is on or off") }
                configuration.server.accessLog = text == "on"
            }, shown: { $0.server.accessLog ? "on" : "off" }),
            Setting(name: "page-caches", help: "on: guest pages, boards and weather parts are kept and shared; off: every page is rendered afresh (to compare, or to rule the caches out).",
                    apply: { configuration, text in
                guard text == "on" || text == "off" else { throw Problem(description: "--page-caches is on or off") }
                configuration.pageCaches = text == "on"
            }, shown: { $0.pageCaches ? "on" : "off" }),
            .number("workers", "Threads running request handlers (default: twice the CPUs, at least 4).", \.server.workerThreads).onThisMachine,
            .number("quick-workers", "Threads of the quick lane: static files and guests' pages, beside the workers (default: the CPUs, at least 2; 0: one lane for all).", atLeast: 0,
                    \.server.quickWorkerThreads).onThisMachine,
            Setting(name: "header-timeout", help: "Seconds a client may take to send a request's head before a 408.", apply: { configuration, text in
                guard let seconds = Int(text), seconds >= 1 else { throw Problem(description: "--header-timeout must be at least 1") }
                configuration.server.headerTimeout = .seconds(seconds)
            }, shown: { String($0.server.headerTimeout.components.seconds) }),
            .number("max-connections", "Most simultaneous connections; more are answered 503.", \.server.maxConnections),
            .number("max-connections-per-address", "Most simultaneous connections from one client address; more are answered 503.",
                    \.server.maxConnectionsPerAddress),
            .number("max-streams", "Most live event streams open at once; more are answered 503.", \.server.maxStreams),
            .number("max-streams-per-address", "Most live event streams from one client; more are answered 503.",
                    \.server.maxStreamsPerAddress),
            .number("max-buffered-bytes", "Bytes all connections may hold in buffers together; past it, large holders are refused 503 or dropped.",
                    \.server.maxBufferedBytes),
            Setting(name: "weather", help: "Weather providers to try, in order, comma-separated: open-meteo, demo.", apply: { configuration, text in
                configuration.weatherProviders = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }, shown: { $0.weatherProviders.joined(separator: ",") }),
            .text("open-meteo-url", "Base URL of the Open-Meteo API, e.g. a proxy.", \.openMeteoURL),
            .text("air-quality-url", "Base URL of Open-Meteo's air-quality API (PM10 and PM2.5), e.g. a proxy.", \.airQualityURL),
            .text("archive-url", "Base URL of Open-Meteo's historical archive (each city's 1991–2020 normals, asked once), e.g. a proxy.", \.archiveURL),
            Setting(name: "warnings-nws-url", help: "Base URL of the US National Weather Service's API (its active alerts, shown as warnings); empty for none. Default: \(AppConfiguration.nwsURL) with real forecasts, none with the demo's.",
                    apply: { $0.warningsNWSURL = $1 }, shown: { $0.warningsNWSURL ?? "" }),
            Setting(name: "warnings-meteoalarm-url", help: "Base URL of MeteoAlarm's feeds (the warnings of Europe's national weather services); empty for none. Default: \(AppConfiguration.meteoAlarmURL) with real forecasts, none with the demo's.",
                    apply: { $0.warningsMeteoAlarmURL = $1 }, shown: { $0.warningsMeteoAlarmURL ?? "" }),
            Setting(name: "warnings-meteoalarm-geocodes", help: "A GeoJSON file of the areas MeteoAlarm's warnings name by code (features with properties type and code, as MeteoAlarm publishes them); without it only warnings drawn as polygons are placed.",
                    apply: { $0.warningsMeteoAlarmGeocodes = $1.isEmpty ? nil : $1 }, shown: { $0.warningsMeteoAlarmGeocodes ?? "" }),
            Setting(name: "warnings-kma-url", help: "Base URL of the KMA API gateway for its special weather reports (the warnings of Korea); empty for none. Default: --kma-url's wherever WEATHERBOARD_KMA_KEY is set.",
                    apply: { $0.warningsKMAURL = $1 }, shown: { $0.warningsKMAURL ?? "" }),
            Setting(name: "warnings-every", help: "Seconds between asking the warnings' sources what they have in force.", apply: { configuration, text in
                guard let seconds = Double(text), seconds >= 1, seconds <= 86_400 else { throw Problem(description: "--warnings-every must be 1 to 86400 seconds") }
                configuration.warningsEvery = seconds
            }, shown: { String(Int($0.warningsEvery)) }),
            .number("forecast-missed-reports", "Reports by people with accounts older than a day that mark an hour's forecast missed (precipitation under 20 %, or a clear sky over 80 %).",
                    \.forecastMissedReports),
            .text("kma-url", "Base URL of the KMA API gateway (the key comes only from WEATHERBOARD_KMA_KEY).", \.kmaURL),
            Setting(name: "weather-fresh-minutes", help: "Minutes a fetched forecast is served before asking again.", apply: { configuration, text in
                guard let minutes = Int(text), minutes >= 1 else { throw Problem(description: "--weather-fresh-minutes must be at least 1") }
                configuration.weatherFreshFor = TimeInterval(minutes * 60)
            }, shown: { String(Int($0.weatherFreshFor / 60)) }),
            .number("forecasts-in-memory", "Decoded forecasts kept in memory, at most.", \.forecastsInMemory.forecasts),
            .number("weather-fetches-per-minute", "Upstream weather fetches a minute for this node (Open-Meteo's free tier allows 600).",
                    \.weatherFetchBudget.perMinute),
            .number("weather-cold-fetches-per-client", "Fetches for cities with nothing cached one client may cause in an hour.",
                    \.weatherFetchBudget.coldPerClient),
            .number("weather-cold-fetches-per-hour", "Fetches for cities with nothing cached this node may make in an hour, all clients together.",
                    \.weatherFetchBudget.coldPerHour),
            .number("normals-fetches-per-hour", "Cities whose 1991–2020 normals this node may fetch in an hour (thirty years of days each).",
                    \.weatherFetchBudget.normalsPerHour),
            .number("sign-ins-per-minute", "Sign-in attempts allowed per account and per address each minute.", \.limits.signInsPerMinute),
            .number("failed-sign-ins-for-brake", "Failed sign-ins a minute across the site that put on the site-wide brake.",
                    \.limits.failedSignInsForBrake),
            .number("sign-ins-per-second-under-brake", "Password checks a second for browsers an account does not know, per priority, while the brake is on.",
                    \.limits.signInsPerSecondUnderBrake),
            .number("sign-ups-per-hour", "Sign-ups allowed per address each hour.", \.limits.signUpsPerHour),
            .number("searches-per-minute", "Searches in posts allowed per address each minute (per node).", \.limits.searchesPerMinute),
            .number("seconds-between-posts", "Seconds between two posts or replies by one person.", atLeast: 0, \.limits.secondsBetweenPosts),
            .number("posts-per-day", "Posts and replies per person per day.", \.limits.postsPerDay),
            .number("reports-per-day", "Reports per person per day (a new member: a third).", \.limits.reportsPerDay),
            .number("report-threshold", "Members' reports that hide a post pending review (weighed by standing: docs/standing.md).", \.limits.reportThreshold),
            .number("reactions-per-hour", "\"Agree\" toggles per person per hour.", \.limits.reactionsPerHour),
            .number("photos-per-day", "Photos per member per day.", \.limits.photos.perDay),
            .number("photo-megabytes-per-member", "Megabytes of photos (as stored) a member may keep.", atLeast: 1, \.limits.photoMegabytesPerMember),
            .number("photo-budget", "Megabytes of photos (as stored) the site keeps at most; past it, photos are refused.", atLeast: 1, \.limits.photoBudgetMegabytes),
        ]
    }

    /// An environment file (`EnvironmentFile=` of a systemd unit) naming every setting, each
    /// commented out at its default with its help above it: the package's
    /// `/etc/weatherboard/weatherboard.env`, complete because it is made from this list.
    static var environmentFileText: String {
        let defaults = AppConfiguration()
        return "# Weatherboard's settings: uncomment a line to change it (`weatherboard serve --help` says more).\n"
            + "# Values are taken literally: no quotes, no $VARIABLES. A flag on the command line wins over this file.\n"
            + all.map { setting in
                let shown = setting.shown(defaults)
                // A default the help describes ("workers + 6") is said, not offered as a value.
                var applied = defaults
                let literal = setting.isSwitch || (!setting.dependsOnTheMachine
                    && (try? setting.apply(&applied, shown)) != nil && setting.shown(applied) == shown)
                let value = setting.isSwitch ? "1" : literal ? shown : ""
                let note = literal || setting.dependsOnTheMachine ? "" : " Default: \(shown)."
                return "\n# \(setting.help)\(note)\n#\(setting.environmentName)=\(value)"
            }.joined(separator: "\n") + "\n"
    }

    /// The help's list: flag, environment variable, default.
    static var helpText: String {
        let defaults = AppConfiguration()
        return "Every setting is a flag or an environment variable; a flag wins over the environment, the environment over the default.\n\n"
            + all.map { setting in
                let flag = setting.isSwitch ? setting.flag : "\(setting.flag) <value>"
                return "  \(flag)\n      \(setting.help) (env \(setting.environmentName); default \(setting.shown(defaults)))"
            }.joined(separator: "\n")
    }
}

extension AppConfiguration {
    /// The configuration the defaults, then the environment, then `arguments` (`--name value`,
    /// `--name=value`, `--switch`) make. Unknown settings and bad values throw.
    /// - Parameter bothEngines: the command names a SQLite file and a PostgreSQL database on
    ///   purpose (`copy-to`); otherwise `--db` beside a URL is refused.
    static func resolve(arguments: [String], environment: [String: String], bothEngines: Bool = false) throws -> AppConfiguration {
        var configuration = AppConfiguration()
        let settings = Setting.all
        for setting in settings {
            if let value = environment[setting.environmentName], !value.isEmpty { try setting.apply(&configuration, value) }
        }
        // Secret: from the environment only, never a flag (other users see command lines).
        configuration.kmaKey = environment["WEATHERBOARD_KMA_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        var rest = arguments[...]
        var dbFlagGiven = false
        while let argument = rest.popFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]), inlineValue = parts.count > 1 ? String(parts[1]) : nil
            guard name.hasPrefix("--"), let setting = settings.first(where: { $0.flag == name }) else {
                throw Setting.Problem(description: "unknown setting \(argument)")
            }
            if setting.isSwitch {
                try setting.apply(&configuration, inlineValue == "0" ? "0" : "1")
                continue
            }
            guard let value = inlineValue ?? rest.popFirst() else { throw Setting.Problem(description: "\(name) needs a value") }
            try setting.apply(&configuration, value)
            if setting.name == "db" { dbFlagGiven = true }
        }
        // No silent engine switch: a SQLite file named on the command line while a PostgreSQL URL
        // is set (a restore drill in a shell that exported the live site's URL) would otherwise
        // be ignored, and the command would act on the live database.
        if dbFlagGiven, configuration.databaseURL != nil, !bothEngines {
            let source = arguments.contains { $0 == "--database-url" || $0.hasPrefix("--database-url=") }
                ? "--database-url" : "WEATHERBOARD_DATABASE_URL"
            throw Setting.Problem(description: "--db \(configuration.databasePath) names a SQLite file, but \(source) names a PostgreSQL "
                                    + "database too: give one (unset WEATHERBOARD_DATABASE_URL to use the file)")
        }
        return configuration
    }
}
