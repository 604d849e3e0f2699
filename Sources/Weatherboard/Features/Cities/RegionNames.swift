import Foundation

/// GeoNames' names for the regions cities lie in (first-order divisions: states, provinces,
/// prefectures), from the shipped `regions.tsv` (`scripts/derive-regions.py`). The catalog
/// carries only the codes, which mean nothing to a reader outside the US ("11, France").
enum RegionNames {
    /// "FR\t11" → "Ile-de-France"; read once, on first use (`check` at start-up says why not).
    private static let names: Result<[String: String], StartupError> = {
        let text: String
        switch InstalledFiles.catalogText("regions.tsv") {
        case .success(let read): text = read
        case .failure(let problem): return .failure(problem)
        }
        var names: [String: String] = [:]
        for (number, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3 else { return .failure(StartupError("regions.tsv line \(number + 1) is malformed")) }
            names["\(fields[0])\t\(fields[1])"] = String(fields[2])
        }
        return .success(names)
    }()

    /// Throws why the names cannot be read: a site whose pages would silently say "11, France"
    /// for want of a file does not start.
    static func check() throws {
        _ = try names.get()
    }

    /// The region's name, if GeoNames gives one for the code.
    static func name(country: String, code: String) -> String? {
        guard !code.isEmpty, case .success(let names) = names else { return nil }
        return names["\(country)\t\(code)"]
    }
}
