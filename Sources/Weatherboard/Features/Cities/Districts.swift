import Foundation

/// A Korean 시/군/구 or 읍/면/동 that city search knows by name, and the catalog city it belongs
/// to ("강남구 → 서울"), from the shipped `districts.tsv` (`scripts/derive-districts.py`, from the
/// National Geographic Information Institute's boundaries).
public struct District: Sendable, Equatable {
    public enum Level: String, Sendable { case sigungu, emd }
    public let level: Level
    /// 강남구, 역삼동.
    public let nameKo: String
    /// Gangnam-gu, Yeoksam-dong.
    public let nameRoman: String
    /// Every name search finds it by (Korean with and without the suffix, both romanisations).
    public let names: [String]
    /// The GeoNames id of its city.
    public let cityID: Int64

    public func name(_ language: Language) -> String { language == .ko ? nameKo : nameRoman }

    /// The shipped districts, read once (`check` at start-up says why not).
    static let shipped: Result<[District], StartupError> = {
        let text: String
        switch InstalledFiles.catalogText("districts.tsv") {
        case .success(let read): text = read
        case .failure(let problem): return .failure(problem)
        }
        var districts: [District] = []
        districts.reserveCapacity(5_300)
        for (number, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 6, let level = Level(rawValue: String(fields[0])), let city = Int64(fields[5]) else {
                return .failure(StartupError("districts.tsv line \(number + 1) is malformed"))
            }
            districts.append(District(level: level, nameKo: String(fields[2]), nameRoman: String(fields[3]),
                                      names: fields[4].split(separator: "|").map(String.init), cityID: city))
        }
        return .success(districts)
    }()

    /// Throws why the districts cannot be read: a site that silently stopped finding 강남 does not start.
    static func check() throws {
        _ = try shipped.get()
    }

    /// The shipped districts, or none when they cannot be read (start-up has refused that already).
    public static var all: [District] { (try? shipped.get()) ?? [] }
}

/// A 시/군/구's outline (`district-shapes.tsv`, simplified to about 400 m): "use my location"
/// inside it goes to its city (a point in 분당 → 성남, not Seoul, whose reach covers it too).
public struct DistrictOutline: Sendable {
    public let cityID: Int64
    /// Longitudes and latitudes in ten-thousandths of a degree, the ring closed.
    let xs: [Int32]
    let ys: [Int32]
    let bounds: (minX: Int32, maxX: Int32, minY: Int32, maxY: Int32)
    /// Square ten-thousandths: the smaller of two outlines holding a point is the one it is in
    /// (holes are not kept).
    let area: Double

    init?(cityID: Int64, points: [(Int32, Int32)]) {
        let xs = points.map(\.0), ys = points.map(\.1)
        guard points.count >= 4, let minX = xs.min(), let maxX = xs.max(), let minY = ys.min(), let maxY = ys.max() else { return nil }
        self.cityID = cityID
        self.xs = xs
        self.ys = ys
        bounds = (minX, maxX, minY, maxY)
        var twice = 0.0
        for i in 0..<(points.count - 1) {
            twice += Double(xs[i]) * Double(ys[i + 1]) - Double(xs[i + 1]) * Double(ys[i])
        }
        area = abs(twice) / 2
    }

    /// Even-odd ray casting.
    func contains(x: Int32, y: Int32) -> Bool {
        guard x >= bounds.minX, x <= bounds.maxX, y >= bounds.minY, y <= bounds.maxY else { return false }
        var inside = false
        var j = xs.count - 1
        for i in 0..<xs.count {
            if (ys[i] > y) != (ys[j] > y) {
                let crossing = Double(xs[j] - xs[i]) * Double(y - ys[i]) / Double(ys[j] - ys[i]) + Double(xs[i])
                if Double(x) < crossing { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    static let shipped: Result<[DistrictOutline], StartupError> = {
        let text: String
        switch InstalledFiles.catalogText("district-shapes.tsv") {
        case .success(let read): text = read
        case .failure(let problem): return .failure(problem)
        }
        var outlines: [DistrictOutline] = []
        for (number, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t")
            let points = fields.count == 2 ? fields[1].split(separator: " ").compactMap { pair -> (Int32, Int32)? in
                let xy = pair.split(separator: ",")
                guard xy.count == 2, let x = Int32(xy[0]), let y = Int32(xy[1]) else { return nil }
                return (x, y)
            } : []
            guard fields.count == 2, let city = Int64(fields[0]), points.count == fields[1].split(separator: " ").count,
                  let outline = DistrictOutline(cityID: city, points: points)
            else { return .failure(StartupError("district-shapes.tsv line \(number + 1) is malformed")) }
            outlines.append(outline)
        }
        return .success(outlines)
    }()

    static func check() throws { _ = try shipped.get() }

    public static var all: [DistrictOutline] { (try? shipped.get()) ?? [] }
}
