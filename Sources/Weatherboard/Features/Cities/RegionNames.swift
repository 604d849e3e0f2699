import Foundation

/// GeoNames' names for the regions cities lie in (first-order divisions: states, provinces,
/// prefectures), from the shipped `regions.tsv` (`scripts/derive-regions.py`). The catalog
/// carries only the codes, which mean nothing to a reader outside the US ("11, France").
enum RegionNames {
    /// "FR\t11" → "Ile-de-France"; read once, on first use.
    private static let names: [String: String] = {
        guard let file = InstalledFiles.catalog("regions.tsv"),
              let text = try? String(contentsOf: file, encoding: .utf8) else { return [:] }
        var names: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            names["\(fields[0])\t\(fields[1])"] = String(fields[2])
        }
        return names
    }()

    /// The region's name, if GeoNames gives one for the code.
    static func name(country: String, code: String) -> String? {
        code.isEmpty ? nil : names["\(country)\t\(code)"]
    }
}
