import Foundation

/// The Korea Meteorological Administration's 5 km forecast grid: a Lambert conformal conic
/// projection (Earth radius 6371.00877 km, standard parallels 30° and 60°, origin 126° E 38° N
/// at grid cell 43, 136).
public enum KMAGrid {
    public static func cell(latitude: Double, longitude: Double) -> (nx: Int, ny: Int) {
        let radiansPerDegree = Double.pi / 180
        let re = 6371.00877 / 5.0 // Earth radius in grid units
        let slat1 = 30 * radiansPerDegree, slat2 = 60 * radiansPerDegree
        let olon = 126 * radiansPerDegree, olat = 38 * radiansPerDegree
        let xo = 43.0, yo = 136.0
        var sn = tan(Double.pi * 0.25 + slat2 * 0.5) / tan(Double.pi * 0.25 + slat1 * 0.5)
        sn = log(cos(slat1) / cos(slat2)) / log(sn)
        var sf = tan(Double.pi * 0.25 + slat1 * 0.5)
        sf = pow(sf, sn) * cos(slat1) / sn
        var ro = tan(Double.pi * 0.25 + olat * 0.5)
        ro = re * sf / pow(ro, sn)
        var ra = tan(Double.pi * 0.25 + latitude * radiansPerDegree * 0.5)
        ra = re * sf / pow(ra, sn)
        var theta = longitude * radiansPerDegree - olon
        if theta > Double.pi { theta -= 2 * Double.pi }
        if theta < -Double.pi { theta += 2 * Double.pi }
        theta *= sn
        let x = ra * sin(theta) + xo
        let y = ro - ra * cos(theta) + yo
        return (Int((x + 0.5).rounded(.down)), Int((y + 0.5).rounded(.down)))
    }
}
