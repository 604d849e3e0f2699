import Foundation

/// The map of Korea the site draws (`korea-map.tsv`, `scripts/derive-map.py`, from the National
/// Geographic Information Institute's 시/도 boundaries): each 시/도's outline as SVG path data,
/// the projection that places a city on it, and the 시/도 each Korean catalog city lies in.
struct KoreaMap: Sendable {
    struct Region: Sendable {
        let code: String
        let nameKo: String
        let nameEn: String
        let path: String
        func name(_ language: Language) -> String { language == .ko ? nameKo : nameEn }
    }

    let west: Double, north: Double, scale: Double, cosine: Double
    let width: Int, height: Int
    let regions: [Region]
    /// A Korean catalog city's GeoNames id → its 시/도's code.
    let regionOf: [Int64: String]

    /// Pixels on the picture of a point.
    func place(latitude: Double, longitude: Double) -> (x: Double, y: Double) {
        ((longitude - west) * cosine * scale, (north - latitude) * scale)
    }

    static let shipped: Result<KoreaMap, StartupError> = {
        let text: String
        switch InstalledFiles.catalogText("korea-map.tsv", feature: "Map") {
        case .success(let read): text = read
        case .failure(let problem): return .failure(problem)
        }
        var view: [Double] = []
        var regions: [Region] = []
        var regionOf: [Int64: String] = [:]
        for (number, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            switch (fields.first, fields.count) {
            case ("view", 7):
                view = fields.dropFirst().compactMap(Double.init)
            case ("sido", 5):
                regions.append(Region(code: fields[1], nameKo: fields[2], nameEn: fields[3], path: fields[4]))
            case ("city", 3) where Int64(fields[1]) != nil:
                regionOf[Int64(fields[1]) ?? 0] = fields[2]
            default:
                return .failure(StartupError("korea-map.tsv line \(number + 1) is malformed"))
            }
        }
        guard view.count == 6, !regions.isEmpty else { return .failure(StartupError("korea-map.tsv has no projection or no regions")) }
        return .success(KoreaMap(west: view[0], north: view[1], scale: view[2], cosine: view[3], width: Int(view[4]), height: Int(view[5]),
                                 regions: regions, regionOf: regionOf))
    }()
}
