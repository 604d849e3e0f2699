import ArgumentParser
import Foundation
import HTTPServer
import Logging

/// The `weatherboard` command line. Every setting (`Setting.all`) can also come from a
/// `WEATHERBOARD_…` environment variable; a flag wins over the environment, the environment
/// over the default (`AppConfiguration`).
public struct WeatherboardCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "weatherboard",
        abstract: "Weatherboard: today's weather compared with yesterday and tomorrow, and each city's board.",
        subcommands: [Serve.self, Migrate.self, ImportCities.self, CreateAdmin.self, DemoteAdmin.self, CopyTo.self, Backup.self, VerifyBackup.self, EnvironmentFile.self],
        defaultSubcommand: Serve.self
    )
    public init() {}
}

/// The settings of `Setting.all`, taken from the command line's remaining arguments and the
/// environment; shared by every command (each uses what it needs: the database and migrations,
/// or everything for `serve`). `Databases` says whether the command works on one database (then
/// `--db` beside a PostgreSQL URL is refused) or, like `copy-to`, names a source and a target.
struct EngineSettings<Databases: DatabasesNamed>: ParsableArguments {
    @Argument(parsing: .allUnrecognized, help: "Settings: see `weatherboard serve --help`.")
    var settings: [String] = []

    /// Checked while parsing, so a bad or unknown setting is a usage error.
    func validate() throws { _ = try configuration() }

    func configuration() throws -> AppConfiguration {
        do {
            return try AppConfiguration.resolve(arguments: settings, environment: ProcessInfo.processInfo.environment,
                                                bothEngines: Databases.sourceAndTarget)
        } catch let problem as Setting.Problem {
            throw ValidationError(problem.description)
        }
    }
}

protocol DatabasesNamed { static var sourceAndTarget: Bool { get } }
/// Every command but `copy-to`: one database, SQLite or PostgreSQL.
enum OneDatabase: DatabasesNamed { static var sourceAndTarget: Bool { false } }
/// `copy-to`: a SQLite file (`--db`) into a PostgreSQL database (`--database-url`).
enum SourceAndTarget: DatabasesNamed { static var sourceAndTarget: Bool { true } }

typealias SettingArguments = EngineSettings<OneDatabase>

enum Environment {
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}

extension WeatherboardCommand {
    /// `weatherboard serve`: applies migrations and serves the site.
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve the site (the default command).",
                                                        discussion: Setting.helpText)

        @OptionGroup var settings: SettingArguments

        func run() throws {
            let configuration = try settings.configuration()
            // Every line the node writes from here is stamped the same way (`--log-format`).
            SiteLogHandler.bootstrap(configuration.logFormat)
            var logger = Logger(label: "weatherboard")
            logger.logLevel = configuration.logLevel
            try ValidationErrorExit.reporting("start") {
                let application = try Self.startWhenTheDatabaseAnswers(configuration, log: { logger.warning("\($0)") })
                try application.run()
            }
        }

        /// A node started before its PostgreSQL (both rebooting, the server still recovering, its
        /// connection slots full) waits for it rather than exiting: it tries again 1, 2, 4 … at most
        /// 30 seconds apart, and says so once (and again only when the reason changes, and when it
        /// answers), not on every try; meanwhile its port answers every request 503 with
        /// `Retry-After` (`/healthz` included), so a balancer sees a node that is not ready rather
        /// than one that is gone. Anything else (a migration that fails, a bad setting) ends the
        /// command at once.
        /// - Parameter waiting: told the port the waiting node answers on (tests).
        static func startWhenTheDatabaseAnswers(_ configuration: AppConfiguration, maximumDelay: Double = 30,
                                                log: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
                                                waiting: (Int) -> Void = { _ in }) throws -> Application {
            var configuration = configuration
            var delay = 1.0
            var attempt = 1
            var standIn: Server?
            var said: String?
            let began = Date()
            defer { standIn.map(NotReadyYet.stop) }
            while true {
                do {
                    let application = try Application(configuration: configuration)
                    standIn.map(NotReadyYet.stop) // the port is the application's from here
                    standIn = nil
                    if said != nil { log("database answered after \(attempt) attempts (\(Int(Date().timeIntervalSince(began))) s)") }
                    return application
                } catch let error as SQLError where configuration.databaseURL != nil && error.isTemporary {
                    if said != error.message {
                        log("database not answering: \(error.message); waiting for it (trying again up to every \(Int(maximumDelay)) s, the port answers 503)")
                        said = error.message
                    }
                    if standIn == nil {
                        let server = try NotReadyYet.serve(configuration)
                        configuration.port = server.port // the same port once ready (it matters with port 0)
                        waiting(server.port)
                        standIn = server
                    }
                    Thread.sleep(forTimeInterval: delay)
                    delay = min(maximumDelay, delay * 2)
                    attempt += 1
                }
            }
        }
    }

    /// What a node's port answers while it waits for its database: 503 to everything, at once,
    /// on the event loop (nothing here blocks), with a page a person can read.
    enum NotReadyYet {
        static let page = Array("""
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Starting · Weatherboard</title>\
            <meta name="viewport" content="width=device-width, initial-scale=1"></head><body><main>\
            <h1>Weatherboard is starting</h1><p>Its database is not answering yet. Please try again in a few seconds.</p>\
            <p lang="ko">사이트가 시작하는 중입니다. 잠시 후 다시 시도해 주세요.</p></main></body></html>
            """.utf8)

        static func serve(_ configuration: AppConfiguration) throws -> Server {
            var settings = configuration.server
            settings.host = configuration.host
            settings.port = configuration.port
            settings.serverName = "weatherboard"
            settings.workerThreads = 1
            settings.shutdownTimeout = .seconds(1)
            let answer: @Sendable (Request) -> Response = { request in
                var response = request.path == "/healthz" ? Response.text("database not answering\n", status: .serviceUnavailable)
                                                          : Response.html(page, status: .serviceUnavailable)
                response.headers.set("Retry-After", "5")
                response.headers.set("Cache-Control", "no-store")
                return response
            }
            let server = Server(configuration: settings, logger: Logger(label: "weatherboard.waiting"), immediate: answer, responder: answer)
            try server.start()
            return server
        }

        static func stop(_ server: Server) {
            server.shutdown()
            server.wait()
        }
    }

    /// `weatherboard migrate`: applies pending migrations and reports them.
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and list them.")

        @OptionGroup var settings: SettingArguments

        func run() throws {
            let configuration = try settings.configuration()
            try ValidationErrorExit.reporting("migrate") {
                let (_, applied) = try AppDatabase.open(configuration.database, migrationsDirectory: configuration.migrationsDirectory)
                if applied.isEmpty {
                    print("no pending migrations")
                } else {
                    for name in applied { print("applied migration \(name)") }
                }
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

        @OptionGroup var settings: SettingArguments

        @Option(help: "A catalog file made by scripts/derive-cities.py (default: the one shipped).")
        var file: String?

        func run() throws {
            let configuration = try settings.configuration()
            try ValidationErrorExit.reporting("import") {
                let (db, _) = try AppDatabase.open(configuration.database, migrationsDirectory: configuration.migrationsDirectory)
                let added = try CityCatalog.importCities(into: db, from: file.map { URL(fileURLWithPath: $0) } ?? CityCatalog.bundledFile)
                print("imported \(added) cities")
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

        @OptionGroup var settings: SettingArguments

        func run() throws {
            let configuration = try settings.configuration()
            let (db, _) = try AppDatabase.open(configuration.database, migrationsDirectory: configuration.migrationsDirectory)
            let accounts = AccountStore(database: db)
            if try accounts.user(named: username) != nil {
                try accounts.promote(username: username)
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
            try accounts.create(NewUser(username: username, displayName: username, passwordHash: hash, role: "admin", createdAt: Date()))
            print("created admin \(username)")
        }
    }

    /// `weatherboard demote-admin <username>`: makes an admin a regular user again; the last
    /// admin stays.
    struct DemoteAdmin: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "demote-admin", abstract: "Make an admin a regular user (not the last admin).")

        @Argument(help: "The username.")
        var username: String

        @OptionGroup var settings: SettingArguments

        func run() throws {
            let configuration = try settings.configuration()
            let (db, _) = try AppDatabase.open(configuration.database, migrationsDirectory: configuration.migrationsDirectory)
            do {
                try AccountStore(database: db).demote(username: username)
            } catch AccountStore.DemotionRefusal.notAnAdmin {
                throw ValidationErrorExit(message: "\(username) is not an admin")
            } catch AccountStore.DemotionRefusal.lastAdmin {
                throw ValidationErrorExit(message: "\(username) is the last admin and stays one")
            }
            print("\(username) is no longer an admin")
        }
    }
}

extension WeatherboardCommand {
    /// `weatherboard copy-to --database-url URL`: the SQLite site (`--db`) into an empty
    /// PostgreSQL database, migrated first; counts checked; running it again is a no-op.
    struct CopyTo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "copy-to",
            abstract: "Copy the SQLite site (--db) into an empty PostgreSQL database (--database-url).",
            discussion: "The target is migrated first and written in one transaction: a failed copy leaves it empty, and a repeated one finds the rows there and changes nothing.")

        @OptionGroup var settings: EngineSettings<SourceAndTarget>

        func run() throws {
            let configuration = try settings.configuration()
            guard let url = configuration.databaseURL else {
                throw ValidationErrorExit(message: "copy-to needs the target: --database-url postgres://…")
            }
            try ValidationErrorExit.reporting("copy") {
                let (source, _) = try AppDatabase.open(.sqlite(path: configuration.databasePath), migrationsDirectory: configuration.migrationsDirectory)
                let (target, _) = try AppDatabase.open(.postgres(url: url), migrationsDirectory: configuration.migrationsDirectory)
                let outcome = try DatabaseCopy.copy(from: source, to: target)
                print(outcome.alreadyCopied ? "the target already holds this site; nothing copied" : "copied (rows and checksums equal in both):")
                for table in outcome.tables { print("  \(table)") }
            }
        }
    }

    /// `weatherboard backup PATH`: a consistent copy of the live site in a new SQLite file, taken
    /// while it serves: every table read from one snapshot (either engine), written into a new
    /// migrated file under a temporary name, checked table by table, then given its name.
    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent copy of the site (SQLite or PostgreSQL) to a new SQLite file.",
            discussion: "Safe while the site serves. Every table's rows and checksum are compared before the file appears at PATH; a failed backup leaves nothing there. Check one with verify-backup; restore a SQLite site by serving the file (--db PATH), PostgreSQL with copy-to from it.")

        @Argument(help: "The new file (must not exist).")
        var path: String

        @OptionGroup var settings: SettingArguments

        func run() throws {
            let configuration = try settings.configuration()
            guard !FileManager.default.fileExists(atPath: path) else { throw ValidationErrorExit(message: "\(path) exists; a backup never overwrites") }
            try ValidationErrorExit.reporting("back up") {
                let (source, _) = try AppDatabase.open(configuration.database, migrationsDirectory: configuration.migrationsDirectory)
                var outcome: DatabaseCopy.Outcome?
                try PrivateFile.createWhole(path) { temporary in
                    let (target, _) = try AppDatabase.open(.sqlite(path: temporary), migrationsDirectory: configuration.migrationsDirectory)
                    do {
                        outcome = try DatabaseCopy.copy(from: source, to: target)
                    } catch {
                        try? target.close()
                        throw error
                    }
                    try target.close()
                }
                print("backed up to \(path) (rows and checksums equal to the site's):")
                for table in outcome?.tables ?? [] { print("  \(table)") }
            }
        }
    }

    /// `weatherboard verify-backup FILE`: whether a backup can be restored, read-only.
    struct VerifyBackup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-backup",
            abstract: "Check a backup file read-only: integrity, foreign keys, migrations, each table's rows and checksum.",
            discussion: "With --against-live, also read the live site's counts (--db or --database-url) and fail if the backup has no rows in a table the site has rows in. Exits 1 on any problem.")

        @Argument(help: "The backup file.")
        var path: String

        @Flag(name: .customLong("against-live"), help: "Compare each table's rows with the live site's.")
        var againstLive = false

        @OptionGroup var settings: SettingArguments

        func run() throws {
            let configuration = try settings.configuration()
            try ValidationErrorExit.reporting("verify \(path)") {
                var check = try BackupCheck.check(path: path, migrationsDirectory: configuration.migrationsDirectory)
                var live: [String: Int] = [:]
                if againstLive {
                    // The live site must be there: opening a SQLite path that is not would make an
                    // empty site to compare with, and any backup would pass.
                    if configuration.databaseURL == nil && !FileManager.default.fileExists(atPath: configuration.databasePath) {
                        throw ValidationErrorExit(message: "--against-live: no live site at \(configuration.databasePath); name it with --db or --database-url")
                    }
                    let (database, _) = try AppDatabase.open(configuration.database, migrationsDirectory: configuration.migrationsDirectory)
                    live = Dictionary(uniqueKeysWithValues: try check.compare(withLive: database).map { ($0.table, $0.live) })
                }
                print("\(path): migrated to \(check.migrations.last ?? "nothing")")
                for table in check.tables {
                    print("  \(table)" + (live[table.table].map { " (live site: \($0) rows)" } ?? ""))
                }
                guard check.problems.isEmpty else {
                    throw ValidationErrorExit(message: "\(path) is not fit to restore from:\n  " + check.problems.joined(separator: "\n  "))
                }
                print("sound: restore from it")
            }
        }
    }
}

extension WeatherboardCommand {
    /// `weatherboard environment-file`: every setting as a commented environment file (what
    /// `scripts/package-deb.sh` ships as `/etc/weatherboard/weatherboard.env`).
    struct EnvironmentFile: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "environment-file",
            abstract: "Print every setting as a commented environment file (for a service's EnvironmentFile=).")

        func run() throws { print(Setting.environmentFileText, terminator: "") }
    }
}

/// A failure reported as one line on standard error with exit status 1.
struct ValidationErrorExit: Error, CustomStringConvertible {
    let message: String
    var description: String { message }

    /// Runs a command's work; a failure a person can act on (a migration, the catalog, the
    /// database, a copy) becomes one line: "cannot <doing>: <why>".
    static func reporting<T>(_ doing: String, _ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch where error is MigrationError || error is StartupError || error is SQLError || error is DatabaseCopy.Failure
                    || error is PrivateFile.Failure {
            throw ValidationErrorExit(message: "cannot \(doing): \(error)")
        }
    }
}
