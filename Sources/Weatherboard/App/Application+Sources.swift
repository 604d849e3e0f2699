import Foundation
import HTTPServer
import Logging
import Metrics

/// What the configuration makes: the upstream sources, the providers, the queues' settings, the
/// server's, and which lane a request takes.
extension Application {
    /// The configured providers with their client ids and secrets (from the environment or a
    /// file: never the command line).
    static func openIDProviders(_ configuration: AppConfiguration) throws -> [OpenIDProviders.Provider] {
        try configuration.oidcIssuers.sorted { $0.key < $1.key }.map { name, issuer in
            guard let clientID = configuration.oidcClientIDs[name] else { throw StartupError("--oidc-provider \(name) needs --oidc-client-id \(name)=…") }
            let file = try configuration.oidcSecretFiles[name].map { path in
                do { return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) } catch {
                    throw StartupError("--oidc-secret-file \(name): \(path) cannot be read")
                }
            }
            if name == "apple", let path = configuration.oidcAppleKeyFile {
                guard let keyID = configuration.oidcAppleKeyID, let teamID = configuration.oidcAppleTeamID else {
                    throw StartupError("--oidc-apple-key-file needs --oidc-apple-key-id and --oidc-apple-team-id")
                }
                let apple: AppleClientSecret
                do { apple = try AppleClientSecret(pem: try String(contentsOfFile: path, encoding: .utf8), keyID: keyID, teamID: teamID) } catch {
                    throw StartupError("--oidc-apple-key-file: \(path) is not a readable P-256 key (the .p8 file Apple gave)")
                }
                return OpenIDProviders.Provider(name: name, issuer: issuer, clientID: clientID, clientSecret: "", apple: apple)
            }
            guard let secret = configuration.oidcSecrets[name] ?? Environment.value("WEATHERBOARD_OIDC_SECRET_" + name.uppercased()) ?? file,
                  !secret.isEmpty else {
                throw StartupError("--oidc-provider \(name) needs its client secret: WEATHERBOARD_OIDC_SECRET_\(name.uppercased()) or --oidc-secret-file \(name)=PATH")
            }
            return OpenIDProviders.Provider(name: name, issuer: issuer, clientID: clientID, clientSecret: secret)
        }
    }

    static func makeProviders(_ configuration: AppConfiguration, logger: Logger? = nil) throws -> [WeatherProvider] {
        var names = configuration.weatherProviders
        if configuration.kmaKey != nil && !names.contains("kma") { names.insert("kma", at: 0) }
        return try names.map { name -> WeatherProvider in
            switch name {
            case "open-meteo": return OpenMeteoProvider(baseURL: configuration.openMeteoURL)
            case "demo": return DemoProvider()
            case "kma":
                guard let key = configuration.kmaKey else { throw StartupError("the kma provider needs WEATHERBOARD_KMA_KEY") }
                return KMAProvider(baseURL: configuration.kmaURL, serviceKey: key, logger: logger)
            default: throw StartupError("unknown weather provider '\(name)' (known: kma, open-meteo, demo)")
            }
        }
    }

    /// The forecasts' service, with the sources the configuration names.
    static func makeWeather(_ configuration: AppConfiguration, providers: [WeatherProvider], database: AppDatabase,
                            metrics: any MetricsFactory, logger: Logger) -> WeatherService {
        WeatherService(providers: providers, airQualityProviders: makeAirQualityProviders(configuration),
                       normalsProvider: makeNormalsProvider(configuration), database: database,
                       freshFor: configuration.weatherFreshFor, firstFetchBudget: configuration.weatherFirstFetchBudget,
                       memoryLimit: configuration.forecastsInMemory, budget: configuration.weatherFetchBudget, logger: logger,
                       clock: configuration.clock, metrics: metrics)
    }

    /// The air's sources follow the forecast's: Open-Meteo's air-quality service where Open-Meteo
    /// (or KMA, which has no air quality) is asked, the demo's figures where the demo is.
    static func makeAirQualityProviders(_ configuration: AppConfiguration) -> [AirQualityProvider] {
        var providers: [AirQualityProvider] = []
        let names = configuration.weatherProviders
        if names.contains("open-meteo") || configuration.kmaKey != nil {
            providers.append(OpenMeteoAirQuality(baseURL: configuration.airQualityURL))
        }
        if names.contains("demo") { providers.append(DemoAirQuality()) }
        return providers
    }

    /// Normals come from Open-Meteo's archive wherever real forecasts are asked (the demo's
    /// figures bring their own); an empty `--archive-url` asks for none.
    static func makeNormalsProvider(_ configuration: AppConfiguration) -> NormalsProvider? {
        guard !configuration.archiveURL.isEmpty, configuration.weatherProviders.contains("open-meteo") || configuration.kmaKey != nil
        else { return nil }
        return OpenMeteoArchive(baseURL: configuration.archiveURL)
    }

    /// Warnings come wherever real forecasts are asked (the demo has none) or a source's URL is
    /// given; an empty URL asks that source for none.
    static func makeWarningProviders(_ configuration: AppConfiguration) throws -> [WarningProvider] {
        let real = configuration.weatherProviders.contains("open-meteo") || configuration.kmaKey != nil
        var providers: [WarningProvider] = []
        if let url = configuration.warningsNWSURL ?? (real ? AppConfiguration.nwsURL : nil), !url.isEmpty {
            providers.append(NWSAlerts(baseURL: url))
        }
        if let url = configuration.warningsMeteoAlarmURL ?? (real ? AppConfiguration.meteoAlarmURL : nil), !url.isEmpty {
            let geocodes = try configuration.warningsMeteoAlarmGeocodes.map(WarningGeocodes.init(file:)) ?? WarningGeocodes()
            providers.append(MeteoAlarm(baseURL: url, geocodes: geocodes))
        }
        if let key = configuration.kmaKey, let url = configuration.warningsKMAURL ?? Optional(configuration.kmaURL), !url.isEmpty {
            providers.append(KMAWarnings(baseURL: url, serviceKey: key))
        }
        return providers
    }

    /// The mail queue's settings for `--smtp-url`, or nil without one; a relay without a sender
    /// address or the site's public address is refused at start (its links would point nowhere).
    static func mailSettings(_ configuration: AppConfiguration) throws -> MailSender.Settings? {
        guard let url = configuration.smtpURL else { return nil }
        guard let from = configuration.mailFrom.flatMap(MailAddress.init) else {
            throw Setting.Problem(description: "--smtp-url needs --mail-from (the address the site's mail comes from)")
        }
        guard let publicURL = configuration.publicURL else {
            throw Setting.Problem(description: "--smtp-url needs --public-url (the site's address, for the links in its mail)")
        }
        return .init(relay: try SMTPRelay(parsing: url), from: from, publicURL: publicURL, pollInterval: configuration.mailPollInterval,
                     retryBase: configuration.mailRetryBase)
    }

    /// The push queue's settings with a contact (`--push-contact`), or nil without one.
    static func pushSettings(_ configuration: AppConfiguration) -> PushSender.Settings? {
        configuration.pushContact.map { contact in
            PushSender.Settings(contact: contact, extraOrigins: configuration.pushExtraOrigins, pollInterval: configuration.pushPollInterval,
                                retryBase: configuration.pushRetryBase, timeout: configuration.pushTimeout)
        }
    }

    /// The server as configured: behind a proxy every visitor arrives from it, so its
    /// connections are not one client's; bodies as large as a photo where photos are taken.
    static func serverConfiguration(_ configuration: AppConfiguration) -> ServerConfiguration {
        var server = configuration.server
        server.host = configuration.host
        server.port = configuration.port
        server.serverName = "weatherboard"
        server.uncappedAddresses = Set(configuration.trustedProxies)
        server.limits.bodyLimit = PhotoUpload.bodyLimit(default: server.limits.maxBodyBytes, photoBytes: configuration.photoLimits.maxBytes)
        return server
    }

    /// The quick lane: static files and the other addresses that never read the database
    /// (`Identity.anonymousPrefixes`); and, while the database has stopped answering
    /// (`AppDatabase.isStalled`) or the main lane is stalled (every worker held), a guest's pages that may be kept (`PageCache`: no
    /// session, no message, whatever headers the client sends), one that is not moving back to
    /// the main lane before it reads anything (`Lane.Moved`). Otherwise guests' pages keep the
    /// main lane's order: tried on the quick lane they slowed real traffic (docs/performance.md).
    static func lane(of request: Request, _ conditions: LaneConditions, databaseStalled: @autoclosure () -> Bool) -> Lane {
        if Identity.anonymousPrefixes.contains(where: { request.path.hasPrefix($0) }) { return .quick }
        let mayBeKept = (request.method == "GET" || request.method == "HEAD") && (request.path == "/" || request.path.hasPrefix("/city/"))
            && request.cookie(SessionStore.cookieName) == nil && request.cookie(Flash.cookieName) == nil
        return mayBeKept && (databaseStalled() || conditions.mainLaneStalled) ? .quick : .main
    }
}
