import Foundation
import Testing
@testable import Weatherboard

/// The string catalogs and templates shipped in the repository.
@Suite struct ResourceTests {
    let templates = AppConfiguration.repositoryFolder("Templates")

    @Test func catalogsHaveTheSameKeys() throws {
        let localization = try Localization(directory: templates + "/strings")
        let english = Set(try #require(localization.catalogs[.en]).keys)
        let korean = Set(try #require(localization.catalogs[.ko]).keys)
        #expect(english.subtracting(korean).isEmpty, "only in en: \(english.subtracting(korean).sorted())")
        #expect(korean.subtracting(english).isEmpty, "only in ko: \(korean.subtracting(english).sorted())")
    }

    @Test func everyKeyATemplateUsesExists() throws {
        let localization = try Localization(directory: templates + "/strings")
        let keys = Set(try #require(localization.catalogs[.en]).keys)
        let files = try FileManager.default.contentsOfDirectory(atPath: templates).filter { $0.hasSuffix(".mustache") }
        #expect(!files.isEmpty)
        let pattern = try Regex(#"\{\{\s*t\.([A-Za-z0-9_]+)\s*\}\}"#)
        var used = 0
        for file in files {
            let text = try String(contentsOfFile: templates + "/" + file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                let key = String(text[match.output[1].range!])
                used += 1
                #expect(keys.contains(key), "\(file) uses t.\(key), which no catalog has")
            }
        }
        #expect(used > 0)
    }

    /// Keys the Swift code names: literal ones, and the families built from a value (each value
    /// listed). A new family built another way fails here until it is listed.
    @Test func everyKeyTheCodeNamesExists() throws {
        let localization = try Localization(directory: templates + "/strings")
        let keys = Set(try #require(localization.catalogs[.en]).keys)
        let sources = AppConfiguration.repositoryFolder("Sources/Weatherboard")
        let files = try #require(FileManager.default.enumerator(atPath: sources)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        let literal = try Regex(#"(?:string|strings)\("([a-z0-9_]+)"(?! \+)|(?:key|lengthKey): "([a-z0-9_]+)""#)
        let built = try Regex(#"strings?\("([a-z0-9_]*)(?:\\\(|" \+)"#)
        let families: [String: [String]] = [
            "reason_": ReportReason.allCases.map(\.rawValue), "action_": ["restore", "remove", "ban", "unban", "level_0", "level_1", "level_2", "level_earned"],
            "level_": ["0", "1", "2"],
            "duration_": ["1d", "7d", "30d", "permanent"], "language_name_": Language.allCases.map(\.rawValue),
            "outcome_": ["pending", "no_violation", "removed"],
            "sky_": Observation.Sky.allCases.map(\.rawValue), "feels_": Observation.Feels.allCases.map(\.rawValue),
            "tally_": Observation.Feels.allCases.map(\.rawValue),
            "day_": ["yesterday", "today", "tomorrow"], "tomorrow_": ["compare_warmer", "compare_colder", "compare_same"],
            "precip_": ["rain", "snow", "mixed"],
            "choice_": NotificationChoices.Topic.allCases.map(\.rawValue),
            "rain_days_": RainWindow.Days.allCases.map(\.rawValue),
            "choices_": NotificationChoices.Channel.allCases.map(\.rawValue),
            "same_hour_": ["compare_warmer", "compare_colder", "compare_same"],
            "normal_high_": ["compare_warmer", "compare_colder", "compare_same"],
            "normal_low_": ["compare_warmer", "compare_colder", "compare_same"],
            "mute_for_": MuteDuration.allCases.map(\.rawValue),
            "warning_source_": ["nws", "kma", "meteoalarm"], "severity_": Warning.Severity.allCases.map(\.rawValue),
            // named through `key` properties and `compassKey`, checked here all the same
            "air_": AirQualityBand.allCases.map(\.rawValue), "uv_": UVBand.allCases.map(\.rawValue),
            "wind_": ["n", "ne", "e", "se", "s", "sw", "w", "nw"],
            "wear_": Clothing.steps.map(\.id) + ["same", "more", "less"], "nowcast_kind_": ["model", "interpolated", "demo"],
            "alert_warning_": ["started", "raised", "extended", "cancelled"], "map_hours_": MapController.hourChoices.map(String.init),
            // ErrorPages: "\(key)_title" and "\(key)_text" for the statuses it words
            "": [400, 403, 404, 405, 413, 429, 500].flatMap { ["error_\($0)_title", "error_\($0)_text"] },
        ]
        var named = 0
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for match in text.matches(of: literal) {
                let key = String(text[(match.output[1].range ?? match.output[2].range)!])
                named += 1
                let known = keys.contains(key)
                #expect(known, "\(file) names \(key), which no catalog has")
            }
            for match in text.matches(of: built) {
                let prefix = String(text[match.output[1].range!])
                #expect(families[prefix] != nil, "\(file) builds keys from \"\(prefix)…\": list its values in this test")
            }
        }
        #expect(named > 20)
        for (prefix, values) in families {
            for value in values {
                let known = keys.contains(prefix + value)
                #expect(known, "no catalog has \(prefix + value)")
            }
        }
    }

    @Test func catalogsThatDifferAreRefusedAtStartup() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strings-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"a": "A", "b": "B"}"#.write(toFile: folder + "/en.json", atomically: true, encoding: .utf8)
        try #"{"a": "가"}"#.write(toFile: folder + "/ko.json", atomically: true, encoding: .utf8)
        #expect(throws: StartupError.self) { try Localization(directory: folder) }
    }

    @Test func aCatalogWithoutAKeyTheTemplatesUseStopsStartup() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/strings", withIntermediateDirectories: true)
        for language in ["en", "ko"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: templates + "/strings/\(language).json"))
            var catalog = try JSONDecoder().decode([String: String].self, from: data)
            catalog["site_name"] = nil
            try JSONEncoder().encode(catalog).write(to: URL(fileURLWithPath: folder + "/strings/\(language).json"))
        }
        #expect(throws: StartupError.self) { try Renderer(templatesDirectory: folder) }
    }
}

/// The command line's settings: one list makes the flags, the environment variables and the help.
@Suite struct SettingsTests {
    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheDefaults() throws {
        let configuration = try AppConfiguration.resolve(
            arguments: ["--port", "9000", "--posts-per-day=7", "--secure-cookies", "--weather", "demo"],
            environment: ["WEATHERBOARD_PORT": "8000", "WEATHERBOARD_DB": "/tmp/x.sqlite", "WEATHERBOARD_REPORT_THRESHOLD": "5",
                          "WEATHERBOARD_KMA_KEY": "secret"])
        #expect(configuration.port == 9000)
        #expect(configuration.databasePath == "/tmp/x.sqlite")
        #expect(configuration.limits.postsPerDay == 7)
        #expect(configuration.limits.reportThreshold == 5)
        #expect(configuration.limits.signUpsPerHour == AppConfiguration().limits.signUpsPerHour)
        #expect(configuration.secureCookies)
        #expect(configuration.weatherProviders == ["demo"])
        #expect(configuration.kmaKey == "secret")
    }

    @Test("unknown settings and bad values are refused", arguments: [
        ["--nope", "1"], ["--port", "70000"], ["--port"], ["--seconds-between-posts", "-1"], ["--posts-per-day", "0"],
        ["--log-level", "loud"], ["--kma-key", "secret"], ["stray"],
    ])
    func refused(_ arguments: [String]) {
        #expect(throws: Setting.Problem.self) { try AppConfiguration.resolve(arguments: arguments, environment: [:]) }
    }

    /// Issue 37 #2: the package's environment file names every setting, and with every line
    /// uncommented it is a valid configuration equal to the defaults (what it says is the default is).
    @Test func theEnvironmentFileNamesEverySettingAtItsDefault() throws {
        let text = Setting.environmentFileText
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("#WEATHERBOARD_") {
            let pair = line.dropFirst().split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            environment[String(pair[0])] = String(pair[1])
        }
        for setting in Setting.all { #expect(environment[setting.environmentName] != nil, "\(setting.environmentName)") }
        environment["WEATHERBOARD_SECURE_COOKIES"] = nil // a switch: its line turns it on
        let configured = try AppConfiguration.resolve(arguments: [], environment: environment)
        let defaults = AppConfiguration()
        for setting in Setting.all { #expect(setting.shown(configured) == setting.shown(defaults), "\(setting.environmentName)") }
    }

    @Test func theReadmeListsEverySetting() throws {
        let readme = try String(contentsOfFile: AppConfiguration.repositoryFolder("README.md"), encoding: .utf8)
        for setting in Setting.all {
            let listed = readme.contains("`\(setting.flag)`") && readme.contains(setting.environmentName)
            #expect(listed, "README.md does not list \(setting.flag) / \(setting.environmentName)")
        }
    }
}
