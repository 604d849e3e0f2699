import Foundation

/// Photos as stored: served by their hash while a post shows them.
enum PhotosFeature {
    static func install(_ site: Site) -> PhotosController {
        let photos = PhotosController(database: site.database, clock: site.clock)
        photos.addRoutes(to: site.router)
        site.holds("photos", upTo: photos.byteBound) { photos.keptBytes }
        return photos
    }
}
