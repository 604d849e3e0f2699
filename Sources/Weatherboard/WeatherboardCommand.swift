import ArgumentParser
import Foundation
import HTTPServer
import Logging

/// The `weatherboard` command line. Every option can also come from a `WEATHERBOARD_…`
/// environment variable; a flag wins over the environment, the environment over the default.
public struct WeatherboardCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "weatherboard",
        abstract: "Weatherboard: today's weather compared with yesterday and tomorrow, and each city's board.",
        subcommands: [Serve.self, Migrate.self, ImportCities.self, CreateAdmin.self, DemoteAdmin.self],
        defaultSubcommand: Serve.self
    )
    public init() {}
}

/// Options shared by every command that opens the database.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: "SQLite database file (env WEATHERBOARD_DB).")
    var database: String = Environment.value("WEATHERBOARD_DB") ?? "./weatherboard.sqlite"

    @Option(help: "Folder of NNNN_name.sql migrations (env WEATHERBOARD_MIGRATIONS).")
    var migrations: String = Environment.value("WEATHERBOARD_MIGRATIONS") ?? AppConfiguration.repositoryFolder("Migrations")
}

enum Environment {
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}

extension WeatherboardCommand {
    /// `weatherboard serve`: applies migrations and serves the site.
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve the site (the default command).")

        @Option(help: "Address to listen on; '::' for every IPv4 and IPv6 address (env WEATHERBOARD_HOST).")
        var host: String = Environment.value("WEATHERBOARD_HOST") ?? "127.0.0.1"

        @Option(help: "Port to listen on (env WEATHERBOARD_PORT).")
        var port: Int = Environment.value("WEATHERBOARD_PORT").flatMap(Int.init) ?? 8080

        @OptionGroup var database: DatabaseOptions

        @Option(help: "Folder of static files served under /static/ (env WEATHERBOARD_PUBLIC).")
        var `public`: String = Environment.value("WEATHERBOARD_PUBLIC") ?? AppConfiguration.repositoryFolder("Public")

        @Option(help: "Folder of Mustache templates and string catalogs (env WEATHERBOARD_TEMPLATES).")
        var templates: String = Environment.value("WEATHERBOARD_TEMPLATES") ?? AppConfiguration.repositoryFolder("Templates")

        @Flag(help: "Mark cookies Secure, for a site served over HTTPS (env WEATHERBOARD_SECURE_COOKIES=1).")
        var secureCookies = Environment.value("WEATHERBOARD_SECURE_COOKIES") == "1"

        @Option(help: "Log level: trace, debug, info (one line per request), notice, warning, error (env WEATHERBOARD_LOG_LEVEL).")
        var logLevel: String = Environment.value("WEATHERBOARD_LOG_LEVEL") ?? "info"

        @Option(help: "Threads running request handlers (env WEATHERBOARD_WORKERS; default: twice the CPUs, at least 4).")
        var workers: Int = Environment.value("WEATHERBOARD_WORKERS").flatMap(Int.init) ?? ServerConfiguration().workerThreads

        @Option(help: "Seconds a client may take to send a request's head before a 408 (env WEATHERBOARD_HEADER_TIMEOUT).")
        var headerTimeout: Int = Environment.value("WEATHERBOARD_HEADER_TIMEOUT").flatMap(Int.init) ?? 10

        @Option(help: "Most simultaneous connections; more are answered 503 (env WEATHERBOARD_MAX_CONNECTIONS).")
        var maxConnections: Int = Environment.value("WEATHERBOARD_MAX_CONNECTIONS").flatMap(Int.init) ?? 16_384

        @Option(help: "Most simultaneous connections from one client address; more are answered 503 (env WEATHERBOARD_MAX_CONNECTIONS_PER_ADDRESS).")
        var maxConnectionsPerAddress: Int = Environment.value("WEATHERBOARD_MAX_CONNECTIONS_PER_ADDRESS").flatMap(Int.init) ?? 256

        @Option(help: "Weather providers to try, in order, comma-separated: open-meteo, demo (env WEATHERBOARD_WEATHER).")
        var weather: String = Environment.value("WEATHERBOARD_WEATHER") ?? "open-meteo,demo"

        @Option(help: "Base URL of the Open-Meteo API, e.g. a proxy (env WEATHERBOARD_OPEN_METEO_URL).")
        var openMeteoURL: String = Environment.value("WEATHERBOARD_OPEN_METEO_URL") ?? "https://api.open-meteo.com"

        @Option(help: "Base URL of the KMA API gateway (env WEATHERBOARD_KMA_URL); the key comes only from WEATHERBOARD_KMA_KEY.")
        var kmaURL: String = Environment.value("WEATHERBOARD_KMA_URL") ?? "https://apis.data.go.kr"

        @Option(help: "Minutes a fetched forecast is served before asking again (env WEATHERBOARD_WEATHER_FRESH_MINUTES).")
        var weatherFreshMinutes: Int = Environment.value("WEATHERBOARD_WEATHER_FRESH_MINUTES").flatMap(Int.init) ?? 30
        @Option(help: "Decoded forecasts kept in memory, at most (env WEATHERBOARD_FORECASTS_IN_MEMORY).")
        var forecastsInMemory: Int = Environment.value("WEATHERBOARD_FORECASTS_IN_MEMORY").flatMap(Int.init) ?? WeatherService.MemoryLimit().forecasts

        @Option(help: "Sign-in attempts allowed per account and per address each minute (env WEATHERBOARD_SIGN_INS_PER_MINUTE).")
        var signInsPerMinute: Int = Environment.value("WEATHERBOARD_SIGN_INS_PER_MINUTE").flatMap(Int.init) ?? 6

        @Option(help: "Sign-ups allowed per address each hour (env WEATHERBOARD_SIGN_UPS_PER_HOUR).")
        var signUpsPerHour: Int = Environment.value("WEATHERBOARD_SIGN_UPS_PER_HOUR").flatMap(Int.init) ?? 10

        @Option(help: "Seconds between two posts by one person (env WEATHERBOARD_SECONDS_BETWEEN_POSTS).")
        var secondsBetweenPosts: Int = Environment.value("WEATHERBOARD_SECONDS_BETWEEN_POSTS").flatMap(Int.init) ?? 10

        @Option(help: "Posts per person per day (env WEATHERBOARD_POSTS_PER_DAY).")
        var postsPerDay: Int = Environment.value("WEATHERBOARD_POSTS_PER_DAY").flatMap(Int.init) ?? 50

        @Option(help: "Reports per person per day (env WEATHERBOARD_REPORTS_PER_DAY).")
        var reportsPerDay: Int = Environment.value("WEATHERBOARD_REPORTS_PER_DAY").flatMap(Int.init) ?? 20

        @Option(help: "Distinct reporters that hide a post pending review (env WEATHERBOARD_REPORT_THRESHOLD).")
        var reportThreshold: Int = Environment.value("WEATHERBOARD_REPORT_THRESHOLD").flatMap(Int.init) ?? 3

        func validate() throws {
            for (name, value) in [("--sign-ins-per-minute", signInsPerMinute), ("--sign-ups-per-hour", signUpsPerHour),
                                  ("--posts-per-day", postsPerDay), ("--reports-per-day", reportsPerDay),
                                  ("--report-threshold", reportThreshold)] where value < 1 {
                throw ValidationError("\(name) must be at least 1")
            }
            guard secondsBetweenPosts >= 0 else { throw ValidationError("--seconds-between-posts cannot be negative") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
            guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        }

        func run() throws {
            var configuration = AppConfiguration()
            configuration.host = host
            configuration.port = port
            configuration.databasePath = database.database
            configuration.migrationsDirectory = database.migrations
            configuration.publicDirectory = `public`
            configuration.templatesDirectory = templates
            configuration.secureCookies = secureCookies
            configuration.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            configuration.server.workerThreads = workers
            configuration.server.headerTimeout = .seconds(headerTimeout)
            configuration.server.maxConnections = maxConnections
            configuration.server.maxConnectionsPerAddress = maxConnectionsPerAddress
            configuration.weatherProviders = weather.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            configuration.openMeteoURL = openMeteoURL
            configuration.kmaURL = kmaURL
            configuration.weatherFreshFor = TimeInterval(weatherFreshMinutes * 60)
            configuration.forecastsInMemory.forecasts = forecastsInMemory
            configuration.limits.signInsPerMinute = signInsPerMinute
            configuration.limits.signUpsPerHour = signUpsPerHour
            configuration.limits.secondsBetweenPosts = secondsBetweenPosts
            configuration.limits.postsPerDay = postsPerDay
            configuration.limits.reportsPerDay = reportsPerDay
            configuration.limits.reportThreshold = reportThreshold
            do {
                let application = try Application(configuration: configuration)
                for name in application.appliedMigrations { print("applied migration \(name)") }
                try application.run()
            } catch let error as MigrationError {
                throw ValidationErrorExit(message: "cannot start: \(error)")
            } catch let error as StartupError {
                throw ValidationErrorExit(message: "cannot start: \(error)")
            }
        }
    }

    /// `weatherboard migrate`: applies pending migrations and reports them.
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and list them.")

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            do {
                let (_, applied) = try AppDatabase.open(path: database.database, migrationsDirectory: database.migrations)
                if applied.isEmpty {
                    print("no pending migrations")
                } else {
                    for name in applied { print("applied migration \(name)") }
                }
            } catch let error as MigrationError {
                throw ValidationErrorExit(message: "cannot migrate: \(error)")
            }
        }
    }
}

extension WeatherboardCommand {
    /// `weatherboard import-cities`: loads the shipped GeoNames catalog (or another file in the
    /// same format) into the database; cities already there are left alone.
    struct ImportCities: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import-cities",
                                                        abstract: "Import the city catalog (serve does this on first start).")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "A catalog file made by scripts/derive-cities.py (default: the one shipped).")
        var file: String?

        func run() throws {
            do {
                let (db, _) = try AppDatabase.open(path: database.database, migrationsDirectory: database.migrations)
                let added = try CityCatalog.importCities(into: db, from: file.map { URL(fileURLWithPath: $0) } ?? CityCatalog.bundledFile)
                print("imported \(added) cities")
            } catch let error as MigrationError {
                throw ValidationErrorExit(message: "cannot import: \(error)")
            } catch let error as StartupError {
                throw ValidationErrorExit(message: "cannot import: \(error)")
            }
        }
    }
}

extension WeatherboardCommand {
    /// `weatherboard create-admin <username>`: creates an admin, or promotes an existing user.
    /// The password for a new account comes from `WEATHERBOARD_ADMIN_PASSWORD` or standard
    /// input, never from the command line (where other users and shell history would see it).
    struct CreateAdmin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-admin",
            abstract: "Create an admin account, or promote an existing user to admin.",
            discussion: "For a new account the password is read from WEATHERBOARD_ADMIN_PASSWORD, else from the first line of standard input.")

        @Argument(help: "The username.")
        var username: String

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let (db, _) = try AppDatabase.open(path: database.database, migrationsDirectory: database.migrations)
            if try db.pool.read({ try User.find(username: username, $0) }) != nil {
                try db.pool.write { try $0.execute(sql: "UPDATE users SET role = 'admin' WHERE username_key = ?", arguments: [username.lowercased()]) }
                print("\(username) is now an admin")
                return
            }
            if let problem = Validation.username(username) { throw ValidationErrorExit(message: "invalid username: \(problem)") }
            guard let password = Environment.value("WEATHERBOARD_ADMIN_PASSWORD") ?? readLine(strippingNewline: true), !password.isEmpty else {
                throw ValidationErrorExit(message: "no password: set WEATHERBOARD_ADMIN_PASSWORD or pipe it on standard input")
            }
            if let problem = Validation.password(password, username: username) {
                throw ValidationErrorExit(message: "the password is not acceptable (\(problem))")
            }
            let hash = try PasswordHasher().hash(password)
            try db.pool.write { db in
                _ = try NewUser(username: username, displayName: username, passwordHash: hash, role: "admin", createdAt: Date()).insert(db)
            }
            print("created admin \(username)")
        }
    }

    /// `weatherboard demote-admin <username>`: makes an admin a regular user again; the last
    /// admin stays.
    struct DemoteAdmin: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "demote-admin", abstract: "Make an admin a regular user (not the last admin).")

        @Argument(help: "The username.")
        var username: String

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let (db, _) = try AppDatabase.open(path: database.database, migrationsDirectory: database.migrations)
            try db.pool.write { db in
                guard let user = try User.find(username: username, db), user.isAdmin else {
                    throw ValidationErrorExit(message: "\(username) is not an admin")
                }
                let admins = try Int.fetchOne(db, sql: "SELECT count(*) FROM users WHERE role = 'admin'") ?? 0
                guard admins > 1 else { throw ValidationErrorExit(message: "\(username) is the last admin and stays one") }
                try db.execute(sql: "UPDATE users SET role = 'user' WHERE id = ?", arguments: [user.id])
            }
            print("\(username) is no longer an admin")
        }
    }
}

/// A failure reported as one line on standard error with exit status 1.
struct ValidationErrorExit: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
