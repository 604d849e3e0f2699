import Foundation
import HTTPServer
import Logging

/// The cities' boards: posts, conversations, reports, blocks and mutes, the live stream, and
/// the renders kept for the next reader they are the same for.
final class BoardsFeature: Sendable {
    let live: LiveBoards
    /// Boards as rendered (and deflated), for the next reader they are the same for.
    let cache: BoardCache
    /// New replies as open pages fetch them, rendered once per what their render reads.
    let sharedReplies: SharedReplies
    /// Board pages as everyone sees them, where every change reaches this process as it commits.
    let snapshots: BoardSnapshots?
    let view: BoardView
    let surges: Surges
    private let effects: any BoardEffects

    /// The city page with the post form as typed: a refused post is shown where it was written
    /// (the city page's feature gives it).
    typealias CityPageWithComposer = @Sendable (City, AppContext, Composer, HTTPStatus) throws -> Response

    /// `effects`: who is told of a post, a reply, an agreement (the notifications feature's).
    init(_ site: Site, versions: PageVersions, effects: any BoardEffects) {
        let logger = site.logger, clock = site.clock, conversations = BoardStore(database: site.database, effects: effects)
        self.effects = effects
        live = LiveBoards(node: site.database.changes.node, clock: clock,
                          conversation: { id in
                              do {
                                  return try conversations.conversationState(of: id)
                              } catch {
                                  // The event still goes out; only who may see it is unknown, so nobody's stream gets it.
                                  logger.error("live: could not read conversation \(id) to address its event: \(error)")
                                  return nil
                              }
                          },
                          silenced: { member in
                              do {
                                  return try conversations.silencedIDs(by: member, now: clock())
                              } catch {
                                  // The streams keep what they had; the member's next page reads it afresh.
                                  logger.error("live: could not read whom member \(member) silenced: \(error)")
                                  return nil
                              }
                          })
        site.database.changes.subscribe { [live] change, _ in live.consume(change) }
        site.run("live", LiveBoards.Ticking(live: live))
        snapshots = site.database.hearsEveryCommitAtOnce && site.keepsPages ? BoardSnapshots(versions: versions) : nil
        cache = BoardCache(enabled: site.keepsPages)
        sharedReplies = SharedReplies(enabled: site.keepsPages, versions: versions)
        view = BoardView(database: site.database, pages: site.pages, clock: clock, snapshots: snapshots,
                         livePosition: { [live] in live.position(of: $0) })
        surges = Surges(database: site.database, clock: clock, logger: logger, changed: { [live] in live.surgeChanged($0) })
        site.holds("boards", upTo: cache.byteBound) { [cache] in cache.keptBytes }
        site.holds("shared_replies", upTo: sharedReplies.byteBound) { [sharedReplies] in sharedReplies.keptBytes }
        if let snapshots { site.holds("board_snapshots", upTo: snapshots.byteBound) { snapshots.keptBytes } }
    }

    /// Ports: `inEventMode` (a warning in force in a city changes the posting pace: the warnings
    /// feature's), `photos` (the decoder), `cityPage`.
    func install(_ site: Site, cities: CityIndex, photos: PhotoProcessor, inEventMode: @escaping @Sendable (Int64) -> Bool,
                 cityPage: @escaping CityPageWithComposer) {
        let router = site.router, pages = site.pages, clock = site.clock, limits = site.limits
        let store = BoardStore(database: site.database, effects: effects)
        let rules = PostingRules(secondsBetweenPosts: limits.secondsBetweenPosts, postsPerDay: limits.postsPerDay,
                                 inEventMode: inEventMode, photoLimits: limits.photos)
        BoardController(pages: pages, store: store, index: cities, rules: rules, photos: photos, clock: clock,
                        publicURL: site.publicURL, logger: site.logger, cityPageWithComposer: cityPage).addRoutes(to: router)
        ConversationController(pages: pages, store: store, board: view, rules: rules,
                               reactionLimit: RateLimit(limit: limits.reactionsPerHour, window: 3600),
                               clock: clock, logger: site.logger, sharedReplies: sharedReplies).addRoutes(to: router)
        LiveController(live: live, store: store, index: cities, clientAddress: site.clientAddress, clock: clock).addRoutes(to: router)
        SafetyController(pages: pages, store: store, database: site.database, board: view, limits: limits, clock: clock).addRoutes(to: router)
        let observations = ObservationDataController(database: site.database, index: cities, clock: clock)
        observations.addRoutes(to: router)
        site.holds("observations", upTo: observations.byteBound) { observations.keptBytes }
    }
}
