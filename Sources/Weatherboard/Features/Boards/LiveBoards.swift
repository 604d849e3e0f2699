import Foundation
import HTTPServer
import Synchronization

/// The boards' and conversations' event streams (Server-Sent Events): what the change stream
/// says happened to posts, sent to every open page it concerns, as far as its reader may see it.
///
/// An event is encoded once and the same bytes go to everyone who may see it: its type, its id
/// and the few fields a page needs (`{"type":"post","id":123}`); the page fetches whatever is
/// personal. A reader is sent nothing by a person they blocked or muted, nor about replies under
/// a blocked person's post (as blocked and muted now: `resilence` follows blocks made anywhere), nothing
/// hidden by reports except their own posts (and the replies under a hidden post only to its
/// author), nothing under a removed post. Agreement counts are sent at most once a second per post.
///
/// Events are numbered on this node and stamped with its clock (`node-serial-milliseconds`); the
/// last few minutes are kept, so that a page reconnecting with `Last-Event-ID` gets what it
/// missed, or `reload` when that is gone. A page is rendered with its topic's position
/// (`position(of:)`, taken before its rows are read: the topic's newest event then), so that it
/// resumes from there even if it heard nothing since; the position changes only with the topic,
/// so an unchanged page renders to the same bytes. A position another node numbered is replayed
/// by time: every kept event from `crossNodeMargin` before it, if this node was running then and
/// has kept everything of the topic since.
final class LiveBoards: Sendable {
    /// Where a page listens: a city's board, or one conversation (a post and its replies).
    enum Topic: Hashable, Sendable {
        case board(Int64)
        case conversation(Int64)
    }

    /// One encoded event as kept for replay.
    struct Sent: Sendable {
        let serial: UInt64
        let at: Double
        let topics: [Topic]
        /// The post's or reply's author, and the author of the post a reply is under.
        let author: Int64?
        let conversationAuthor: Int64?
        /// Hidden by reports now: everyone but its author is told it is gone.
        let onlyNotTo: Int64?
        /// Under a post hidden by reports: only that post's author may hear it.
        let onlyTo: Int64?
        let bytes: [UInt8]
    }

    /// What decides who may hear of a reply: the post it is under.
    struct Conversation: Sendable {
        let author: Int64?
        let hidden: Bool
        let removed: Bool
    }

    /// A page listening.
    struct Listener: Sendable {
        let stream: ResponseStream
        let viewer: Int64?
        var blocked: Set<Int64>
        /// People the reader has muted: their own posts and replies are not announced (others'
        /// replies under them are; the page shows the muted post collapsed).
        var muted: Set<Int64> = []

        func mayHear(_ event: Sent) -> Bool {
            if let author = event.author, blocked.contains(author) || muted.contains(author) { return false }
            if let author = event.conversationAuthor, blocked.contains(author) { return false }
            if let hidden = event.onlyNotTo, hidden == viewer { return false }
            if let only = event.onlyTo, only != viewer { return false }
            return true
        }
    }

    private struct State {
        var nextSerial: UInt64 = 1
        var kept: [Sent] = []
        var nextListener: UInt64 = 0
        var listeners: [Topic: [UInt64: Listener]] = [:]
        /// Agreement counts waiting for their post's second to pass, and when each post's was last sent.
        var pendingCounts: [Int64: PostEvent] = [:]
        var countSentAt: [Int64: Double] = [:]
        /// The newest event dropped from `kept`, and per board the newest of its own: a replay
        /// reaches no further back. A board's page may be kept a while (`BoardSnapshots`) with the
        /// position of its read; a quiet board has dropped nothing however busy the others are.
        var dropped = Mark()
        var droppedBoards: [Int64: Mark] = [:]
        /// Each topic's newest event: every board's, each conversation's while it is kept.
        var newest: [Topic: Mark] = [:]
    }

    /// An event's number and time.
    struct Mark {
        var serial: UInt64 = 0
        var at: Double = 0
    }
    private let state = Mutex(State())
    /// This node's prefix of event ids.
    let node: String
    private let clock: @Sendable () -> Date
    /// The post a reply is under, as it stands (read once per event, not per listener).
    private let conversation: @Sendable (Int64) -> Conversation?
    /// Whom a member blocked and has muted now (nil: could not be read).
    private let silenced: @Sendable (Int64) -> (blocked: Set<Int64>, muted: Set<Int64>)?
    /// How long events are kept for replay, and how many at most.
    static let keptFor: TimeInterval = 300
    static let keptAtMost = 5_000
    /// A comment line this often keeps proxies from closing an idle stream.
    static let heartbeat: TimeInterval = 25
    /// The most a replay sends (half of a stream's unread budget, `maxStreamBufferedBytes`).
    static let longestReplay = 32 * 1024
    /// How far before a position from another node a replay by time starts: events reach each
    /// node a moment after their write (the change stream), and the nodes' clocks may differ by
    /// a little (NTP keeps them within milliseconds). Pages ignore events they already show.
    static let crossNodeMargin: TimeInterval = 2
    /// When this node began numbering events (a position from before it is another process's).
    private let startedAt: Double

    init(node: String, clock: @escaping @Sendable () -> Date, conversation: @escaping @Sendable (Int64) -> Conversation? = { _ in nil },
         silenced: @escaping @Sendable (Int64) -> (blocked: Set<Int64>, muted: Set<Int64>)? = { _ in nil }) {
        self.node = String(node.prefix(8)).lowercased()
        self.clock = clock
        self.conversation = conversation
        self.silenced = silenced
        startedAt = clock().timeIntervalSince1970
    }

    /// Where `topic` stands now, as a page rendered from rows read after this reflects it
    /// (`data-live-position`, sent back as `Last-Event-ID`): its newest event; for a topic with
    /// none kept, the newest dropped (nothing after it is missing), or this node's start.
    func position(of topic: Topic) -> String {
        state.withLock { state in
            let mark: Mark
            if let newest = state.newest[topic] {
                mark = newest
            } else if case .conversation = topic, state.dropped.serial > 0 {
                mark = state.dropped
            } else {
                mark = Mark(serial: 0, at: startedAt)
            }
            return Self.id(node: node, serial: mark.serial, at: mark.at)
        }
    }

    static func id(node: String, serial: UInt64, at time: Double) -> String {
        "\(node)-\(serial)-\(Int(clampedSeconds: time * 1000))"
    }

    /// Streams open now (tests and the benchmark read it).
    var listenerCount: Int { state.withLock { $0.listeners.values.reduce(0) { $0 + $1.count } } }

    // MARK: - Listening

    /// Adds a page's stream: first what it missed since `lastEventID` (or `reload`), then
    /// everything new, until the stream ends.
    func listen(_ topic: Topic, stream: ResponseStream, viewer: Int64?, blocked: Set<Int64>, muted: Set<Int64> = [], lastEventID: String?) {
        let listener = Listener(stream: stream, viewer: viewer, blocked: blocked, muted: muted)
        var opening = Array("retry: 3000\n: open\n\n".utf8)
        let key = state.withLock { state -> UInt64 in
            if let lastEventID {
                opening += replay(after: lastEventID, to: listener, on: topic, state)
            }
            state.nextListener += 1
            state.listeners[topic, default: [:]][state.nextListener] = listener
            return state.nextListener
        }
        stream.onEnd { [weak self] in
            self?.state.withLock { state in
                state.listeners[topic]?[key] = nil
                if state.listeners[topic]?.isEmpty == true { state.listeners[topic] = nil }
            }
        }
        stream.write(opening)
    }

    private func replay(after lastEventID: String, to listener: Listener, on topic: Topic, _ state: State) -> [UInt8] {
        let parts = lastEventID.split(separator: "-")
        guard parts.count == 3, let last = UInt64(parts[1]), let milliseconds = Int(parts[2]) else { return reload(state) }
        let dropped: Mark
        if case .board(let city) = topic { dropped = state.droppedBoards[city] ?? Mark() } else { dropped = state.dropped }
        let missedSince: (Sent) -> Bool
        if parts[0] == node {
            guard last < state.nextSerial, last >= dropped.serial else { return reload(state) }
            missedSince = { $0.serial > last }
        } else {
            // Another node's numbering (or another process's): by time, if this node kept all since.
            let since = Double(milliseconds) / 1000 - Self.crossNodeMargin
            guard since >= startedAt, since > dropped.at else { return reload(state) }
            missedSince = { $0.at >= since }
        }
        var missed: [UInt8] = []
        for sent in state.kept where missedSince(sent) && sent.topics.contains(topic) && listener.mayHear(sent) {
            missed += sent.bytes
            // More than the stream may hold unread: a reload is cheaper, and it always fits.
            if missed.count > Self.longestReplay { return reload(state) }
        }
        return missed
    }

    // MARK: - Publishing

    /// Follows the change stream: posts' events go to their pages; after a reconnection that may
    /// have missed other nodes' notices, every page is asked to reload. (A change to everything,
    /// such as a rename or a role, changes names on pages, not what a page holds: no reload.)
    func consume(_ change: PageChange) {
        switch change {
        case .post(let event): publish(event)
        case .notice(let member): tell(member)
        case .silenced(let member): resilence(member)
        case .missed: reloadEveryone()
        case .city, .weather, .warning, .everything: break
        }
    }

    func publish(_ event: PostEvent) {
        let now = clock().timeIntervalSince1970
        if event.kind == .agreed {
            let due = state.withLock { state -> Bool in
                if let last = state.countSentAt[event.id], now - last < 1 {
                    state.pendingCounts[event.id] = event
                    return false
                }
                state.countSentAt[event.id] = now
                state.pendingCounts[event.id] = nil // this count is newer than any held back
                return true
            }
            guard due else { return }
        }
        deliver(event, now: now)
    }

    /// Sends the event to whoever may hear it.
    private func deliver(_ event: PostEvent, now: Double) {
        guard let json = Self.json(event) else { return }
        var conversationAuthor = event.author, onlyTo: Int64? = nil
        if let parent = event.parent {
            guard let under = conversation(parent) else {
                if event.kind != .gone { return } // under a post deleted since: nobody shows it
                send(json, topics: [.board(event.city), .conversation(parent)], author: event.author, conversationAuthor: nil,
                     onlyNotTo: nil, onlyTo: nil, now: now)
                return
            }
            if under.removed { return } // nobody reads the replies of a removed post
            conversationAuthor = under.author
            if under.hidden { onlyTo = under.author ?? -1 }
        }
        send(json, topics: [.board(event.city), .conversation(event.conversation)], author: event.author,
             conversationAuthor: conversationAuthor, onlyNotTo: event.kind == .hidden ? event.author : nil, onlyTo: onlyTo, now: now)
    }

    /// `{"type":"notice"}` to every page `member` has open: their count changed (the page asks
    /// for it; an event carries no one's data).
    func tell(_ member: Int64) {
        let topics = state.withLock { state in
            state.listeners.filter { $0.value.values.contains { $0.viewer == member } }.map(\.key)
        }
        guard !topics.isEmpty else { return }
        send(#"{"type":"notice"}"#, topics: topics, author: nil, conversationAuthor: nil, onlyNotTo: nil, onlyTo: member,
             now: clock().timeIntervalSince1970)
    }

    /// `member` blocked, muted or let back someone (on any node, in any tab): their open
    /// streams hear from now on only what they may (a reply fetched as everyone sees it would
    /// otherwise show a person just blocked, in the reader's other pages).
    func resilence(_ member: Int64) {
        let listening = state.withLock { state in state.listeners.values.contains { $0.values.contains { $0.viewer == member } } }
        guard listening, let (blocked, muted) = silenced(member) else { return }
        state.withLock { state in
            for (topic, group) in state.listeners {
                for (key, listener) in group where listener.viewer == member {
                    state.listeners[topic]?[key]?.blocked = blocked
                    state.listeners[topic]?[key]?.muted = muted
                }
            }
        }
    }

    /// `{"type":"surge"}` to a city's open board pages: its reports' surge began, changed or ended
    /// (the page asks for the line, `/city/{slug}/surge`).
    func surgeChanged(_ city: Int64) {
        send(#"{"type":"surge"}"#, topics: [.board(city)], author: nil, conversationAuthor: nil, onlyNotTo: nil, onlyTo: nil,
             now: clock().timeIntervalSince1970)
    }

    /// Agreement counts held back by the once-a-second rule, once their second has passed.
    func flushCounts() {
        let now = clock().timeIntervalSince1970
        let due = state.withLock { state -> [PostEvent] in
            let due = state.pendingCounts.values.filter { now - (state.countSentAt[$0.id] ?? 0) >= 1 }
            for event in due {
                state.pendingCounts[event.id] = nil
                state.countSentAt[event.id] = now
            }
            state.countSentAt = state.countSentAt.filter { now - $0.value < 2 || state.pendingCounts[$0.key] != nil }
            return due
        }
        for event in due { deliver(event, now: now) }
    }

    /// A comment line to every stream (kept alive through proxies), and held counts sent.
    func beat() {
        let everyone = state.withLock { $0.listeners.values.flatMap { $0.values.map(\.stream) } }
        let comment = Array(":\n\n".utf8)
        for stream in everyone { stream.write(comment) }
    }

    /// `reload`, numbered as the last event sent: a page that reloads and reconnects with it
    /// misses nothing after it.
    private func reload(_ state: State) -> [UInt8] {
        Self.encode(id: Self.id(node: node, serial: state.nextSerial - 1, at: clock().timeIntervalSince1970), json: #"{"type":"reload"}"#)
    }

    private func reloadEveryone() {
        let (everyone, reload) = state.withLock { state in
            (state.listeners.values.flatMap { $0.values.map(\.stream) }, self.reload(state))
        }
        for stream in everyone { stream.write(reload) }
    }

    /// Numbers and keeps the event, then writes the same bytes to every listener of its topics
    /// who may hear it (outside the lock: writing only hands bytes to the event loops).
    private func send(_ json: String, topics: [Topic], author: Int64?, conversationAuthor: Int64?, onlyNotTo: Int64?, onlyTo: Int64?,
                      now: Double) {
        let (listeners, bytes) = state.withLock { state -> ([Listener], [UInt8]) in
            let serial = state.nextSerial
            state.nextSerial += 1
            let sent = Sent(serial: serial, at: now, topics: topics, author: author, conversationAuthor: conversationAuthor,
                            onlyNotTo: onlyNotTo, onlyTo: onlyTo, bytes: Self.encode(id: Self.id(node: node, serial: serial, at: now), json: json))
            state.kept.append(sent)
            for topic in topics { state.newest[topic] = Mark(serial: serial, at: now) }
            let expired = state.kept.prefix { now - $0.at > Self.keptFor }.count
            let over = max(0, state.kept.count - Self.keptAtMost)
            if max(expired, over) > 0 {
                for gone in state.kept.prefix(max(expired, over)) {
                    state.dropped = Mark(serial: gone.serial, at: gone.at)
                    for topic in gone.topics {
                        switch topic {
                        case .board(let city): state.droppedBoards[city] = state.dropped
                        case .conversation:
                            // Its position falls back to `dropped`: as far back as is known.
                            if state.newest[topic]?.serial == gone.serial { state.newest[topic] = nil }
                        }
                    }
                }
                state.kept.removeFirst(max(expired, over))
            }
            var hearing: [Listener] = []
            for topic in Set(topics) {
                guard let group = state.listeners[topic] else { continue }
                for listener in group.values where listener.mayHear(sent) { hearing.append(listener) }
            }
            return (hearing, sent.bytes)
        }
        for listener in listeners { listener.stream.write(bytes) }
    }

    // MARK: - The ticker

    private let ticking = Atomic<Bool>(false)

    /// Four times a second: agreement counts whose second has passed; every `heartbeat`: a
    /// comment line to every stream. On a thread of its own until `stopTicking`.
    func startTicking() {
        guard !ticking.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [weak self] in
            var ticks = 0
            let beatEvery = Int(Self.heartbeat / 0.25)
            while let live = self, live.ticking.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.25)
                live.flushCounts()
                ticks += 1
                if ticks % beatEvery == 0 { live.beat() }
            }
        }
        thread.name = "live-boards"
        thread.start()
    }

    func stopTicking() { ticking.store(false, ordering: .relaxed) }

    // MARK: - Encoding

    /// The event's `data:` (numbers only: nothing a person wrote is in an event).
    static func json(_ event: PostEvent) -> String? {
        switch event.kind {
        case .posted:
            // The city: a page fetches the reply as everyone with no part in it sees it (`sharedReply`).
            event.parent.map { #"{"type":"reply","id":\#(event.id),"post":\#($0),"city":\#(event.city)}"# } ?? #"{"type":"post","id":\#(event.id)}"#
        case .edited: #"{"type":"edit","id":\#(event.id)}"#
        case .gone, .hidden: #"{"type":"gone","id":\#(event.id)}"#
        case .agreed: #"{"type":"agree","id":\#(event.id),"count":\#(event.count ?? 0)}"#
        case .shown: nil // back in its old place: the page shows it on its next load
        }
    }

    /// One event: its id and its data (every event has an id, `reload` too).
    static func encode(id: String, json: String) -> [UInt8] {
        Array("id: \(id)\ndata: \(json)\n\n".utf8)
    }
}

extension LiveBoards {
    /// The streams' clock ticks (a keep-alive and the time-based changes) as background work.
    struct Ticking: BackgroundWork {
        let live: LiveBoards
        func start() { live.startTicking() }
        func stop() { live.stopTicking() }
    }
}
