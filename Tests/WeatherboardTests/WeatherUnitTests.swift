import Foundation
import Testing
@testable import Weatherboard

@Suite struct PaletteTests {
    @Test("palette vectors, ±1 per channel", arguments: [
        (0.0, "#4FA3E0"), (3.0, "#60B8DC"), (12.3, "#9BD695"), (21.0, "#F3CB57"), (33.0, "#D74946"),
        (-20.0, "#4B3F9E"), (40.0, "#8E1F5C"), (-35.0, "#4B3F9E"), (55.0, "#8E1F5C"),
    ])
    func vectors(celsius: Double, hex: String) throws {
        let got = Palette.color(celsius)
        let want = try #require(Palette.RGB(hex: hex))
        for (a, b) in [(got.r, want.r), (got.g, want.g), (got.b, want.b)] {
            #expect(abs(a * 255 - b * 255) <= 1.01, "\(celsius) °C → \(got.hex), want \(hex)")
        }
    }

    @Test func stylesheetHasAClassPerDegree() {
        let css = Palette.stylesheet()
        #expect(css.contains(".hi-m20{--hi:#4B3F9E}"))
        #expect(css.contains(".lo-0{--lo:#4FA3E0}"))
        #expect(css.contains(".chip-40{background:#8E1F5C}"))
    }
}

@Suite struct ComparisonTests {
    @Test func wording() {
        #expect(Comparison.phrase(today: 12.4, reference: 9.2) == ("compare_warmer", 3))
        #expect(Comparison.phrase(today: 2, reference: 7.6) == ("compare_colder", 6))
        #expect(Comparison.phrase(today: 5.2, reference: 4.9) == ("compare_same", 0))
    }
}

@Suite struct KMAGridTests {
    @Test("grid vectors", arguments: [
        (37.5665, 126.9780, 60, 127), // Seoul City Hall
        (35.1796, 129.0756, 98, 76),  // Busan
        (33.4996, 126.5312, 53, 38),  // Jeju
    ])
    func vectors(latitude: Double, longitude: Double, nx: Int, ny: Int) {
        let cell = KMAGrid.cell(latitude: latitude, longitude: longitude)
        #expect(cell.nx == nx && cell.ny == ny, "got \(cell)")
    }
}

@Suite struct CityIndexTests {
    static let index: CityIndex = {
        let url = CityCatalog.bundledFile!
        return CityIndex(cities: try! CityCatalog.parse(String(contentsOf: url, encoding: .utf8)))
    }()

    /// The byte-wise fold gives what Foundation's gives, for every ASCII name in the catalog and
    /// for separators at the edges, doubled and mixed; anything else is left to Foundation.
    @Test func foldingASCIIByBytesIsFoundationsFolding() {
        var names = ["", " ", "---", "  New--York,, City  ", "\tSaint\r\nDenis", "A\u{0B}B\u{0C}C", "Paris 15e Arrondissement",
                     "O'Fallon", "St. Louis", "ABC-xyz_09"]
        for city in Self.index.cities { names += [city.nameEn, city.slug.replacingOccurrences(of: "-", with: " ")] }
        var compared = 0
        for name in names {
            guard let bytewise = CityIndex.foldASCII(name) else { continue }
            compared += 1
            #expect(bytewise == CityIndex.foldUnicode(name), "\(name.debugDescription)")
        }
        #expect(compared > 60_000)
        #expect(CityIndex.foldASCII("São Paulo") == nil && CityIndex.foldASCII("서울") == nil)
        #expect(CityIndex.fold("São  Paulo") == "sao paulo")
    }

    /// An application opened on the catalog the last one read gets the same index; a catalog
    /// that differs in one field gets its own.
    @Test func anIndexIsReusedOnlyForTheSameCatalog() {
        let cache = CityIndexCache()
        let catalog = Self.index.cities
        let first = cache.index(of: catalog)
        #expect(cache.index(of: catalog) === first)
        var renamed = catalog
        renamed[renamed.count - 1].nameEn += " Town"
        let other = cache.index(of: renamed)
        #expect(other !== first)
        #expect(other.search(renamed[renamed.count - 1].nameEn).cities.first?.id == renamed[renamed.count - 1].id)
    }

    @Test func prefixSearchInBothLanguagesRankedByPopulation() {
        #expect(Self.index.search("sao paulo").cities.first?.slug == "sao-paulo")
        #expect(Self.index.search("São").cities.first?.slug == "sao-paulo")
        #expect(Self.index.search("서울").cities.first?.slug == "seoul")
        #expect(Self.index.search("new y").cities.first?.slug == "new-york-city")
        #expect(Self.index.search("s").cities.count == 20)
        let populations = Self.index.search("b").cities.map(\.population)
        #expect(populations == populations.sorted(by: >))
        #expect(Self.index.search("").cities.isEmpty)
    }

    @Test func exactHitAndNearest() {
        #expect(Self.index.exactMatch("서울")?.slug == "seoul")
        #expect(Self.index.nearest(latitude: 37.57, longitude: 126.98)?.slug == "seoul")
        #expect(Self.index.nearest(latitude: 35.18, longitude: 129.07)?.slug == "busan")
    }

    /// Issue 42 #5: the city whose area a point is in. Haeundae beach is 10.6 km from Gijang's
    /// point and 13.3 km from Busan's, well inside Busan's reach: Busan. A town's own centre is
    /// still the town, though a big city reaches it (Bucheon, 20 km from Seoul's point); a point
    /// in no city's reach is the nearest city's.
    @Test func thePointsCityIsTheOneWhoseAreaItIsIn() {
        #expect(Self.index.nearest(latitude: 35.1587, longitude: 129.1604)?.slug == "busan")
        #expect(Self.index.nearest(latitude: 35.2442, longitude: 129.2139)?.slug == "gijang")
        #expect(Self.index.nearest(latitude: 37.49889, longitude: 126.78306)?.slug == "bucheon-si")
        #expect(Self.index.nearest(latitude: 37.44, longitude: 127.13)?.slug == "seongnam-si")
        // The middle of the Sea of Japan, far from every city: still the nearest one, not the biggest.
        let sea = Self.index.nearest(latitude: 39.5, longitude: 134.5)
        let nearest = Self.index.cities.min { CityIndex.haversine(39.5, 134.5, $0.latitude, $0.longitude) < CityIndex.haversine(39.5, 134.5, $1.latitude, $1.longitude) }
        #expect(sea?.slug == nearest?.slug)
    }

    @Test func koreanCitiesCarryTheirKMAGrid() {
        let seoul = Self.index.city(slug: "seoul")
        #expect(seoul?.nameKo == "서울")
        #expect(seoul?.kmaNx == 60 && seoul?.kmaNy == 127)
        #expect(Self.index.city(slug: "tokyo")?.kmaNx == nil)
        #expect(Self.index.city(id: 1835848)?.slug == "seoul")
    }

    /// Measured, not asserted: the README quotes this figure.
    @Test func searchSpeedIsReported() {
        let queries = ["s", "se", "seo", "서", "서울", "new", "sao paulo", "london", "b", "zzz"]
        let clock = ContinuousClock()
        var found = 0
        let elapsed = clock.measure {
            for _ in 0..<100 { for query in queries { found += Self.index.search(query).cities.count } }
        }
        // the queries did find cities (all but "zzz"); the time itself is only reported
        #expect(found >= 100 * 9)
        #expect(Self.index.search("zzz").cities.isEmpty)
        print("city search: \(elapsed / 1000) per query over \(Self.index.cities.count) cities")
    }
}

@Suite struct DemoProviderTests {
    @Test func isDeterministicAndCoversYesterdayToFiveDaysAhead() throws {
        let city = try #require(CityIndexTests.index.city(slug: "seoul"))
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let a = try DemoProvider().forecast(for: city, now: now)
        let b = try DemoProvider().forecast(for: city, now: now)
        #expect(a == b)
        #expect(a.daily.count == 7)
        #expect(a.hourly.count == 7 * 24)
        for day in a.daily {
            let hours = a.hours(on: day.date).compactMap(\.temperature)
            #expect(day.high == hours.max() && day.low == hours.min())
        }
    }
}

/// Card text sits on a plate over a gradient from the day's high colour to its low colour: the
/// plate's ink must reach 4.5:1 on every point of every day's gradient, in both colour schemes.
@Suite struct GradientContrastTests {
    @Test(arguments: [("light", Palette.lightPlate), ("dark", Palette.darkPlate)])
    func plateTextReaches4_5OnEveryGradient(scheme: String, plate: Palette.Plate) {
        var worst = (contrast: 21.0, pair: "")
        for high in Palette.range {
            for low in Palette.range where low <= high {
                let (top, bottom) = (Palette.color(Double(high)), Palette.color(Double(low)))
                for step in 0...10 { // CSS interpolates a gradient in sRGB
                    let f = Double(step) / 10
                    let behind = Palette.RGB(r: top.r + (bottom.r - top.r) * f, g: top.g + (bottom.g - top.g) * f,
                                             b: top.b + (bottom.b - top.b) * f)
                    let contrast = Palette.contrast(plate.ink, plate.over(behind))
                    if contrast < worst.contrast { worst = (contrast, "\(low)…\(high) at \(f)") }
                }
            }
        }
        #expect(worst.contrast >= 4.5, "\(scheme): \(String(format: "%.2f", worst.contrast)):1 for \(worst.pair)")
        #expect(Palette.contrast(plate.ink, plate.over(Palette.noValue)) >= 4.5)
    }

    @Test func thePlatesComeFromThePaletteStylesheet() {
        let css = Palette.stylesheet()
        #expect(css.contains(":root{--plate:rgb(255 255 255 / 0.82);--plate-ink:#000000}"))
        #expect(css.contains("@media (prefers-color-scheme: dark){:root{--plate:rgb(20 21 24 / 0.82);--plate-ink:#ECECEF}}"))
    }
}
