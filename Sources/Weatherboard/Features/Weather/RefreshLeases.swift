import Foundation
import Logging

/// One refresh of a city at a time across nodes: the node that takes a city's lease (a row in
/// the shared database) fetches it; the others wait for what it stores.
struct RefreshLeases: Sendable {
    let store: ForecastStore
    let logger: Logger
    /// This node's name in the lease table.
    let node = UUID().uuidString
    /// How long a lease holds if its node never releases it (it died mid-fetch): longer than a
    /// provider's timeout.
    static let duration: TimeInterval = 30
    /// How often a waiting node looks whether the holder has stored its answer.
    static let pollEvery: TimeInterval = 0.1

    /// Takes the city's lease unless another node holds an unexpired one.
    func claim(_ city: City, now: Date) -> Bool {
        let now = now.timeIntervalSince1970
        do {
            return try store.claimLease(cityID: city.id, holder: node, until: now + Self.duration, now: now)
        } catch {
            logger.error("could not take the weather lease for \(city.slug): \(error)")
            return true // the database is failing: better one fetch too many than none
        }
    }

    func release(_ city: City) {
        do {
            try store.releaseLease(cityID: city.id, holder: node)
        } catch {
            logger.error("could not release the weather lease for \(city.slug) (other nodes wait for it up to \(Int(Self.duration)) s): \(error)")
        }
    }

    /// Waits (on a fetch thread, never a request's) until `stored` gives a forecast newer than
    /// `known` or the lease is gone, at most `duration`; then whatever is stored.
    func awaitHolder(_ city: City, newerThan known: Date?, stored: () -> Forecast?) -> Forecast? {
        let deadline = Date().addingTimeInterval(Self.duration)
        while Date() < deadline {
            if let forecast = stored(), known.map({ forecast.fetchedAt > $0 }) ?? true { return forecast }
            do {
                if try !store.isLeased(cityID: city.id) { break }
            } catch {
                logger.error("could not see whether the weather lease for \(city.slug) is held; reading what is stored: \(error)")
                break
            }
            Thread.sleep(forTimeInterval: Self.pollEvery)
        }
        return stored()
    }
}
