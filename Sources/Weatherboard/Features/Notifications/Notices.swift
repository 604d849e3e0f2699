import Foundation

/// What a member is told about.
enum NoticeKind: String, CaseIterable {
    case reply, mention, reaction
    case reportDecided = "report_decided", removed, restored
    /// Rain likely in one of the member's windows, and that it no longer is.
    case rain, rainCleared = "rain_cleared"
    /// An official warning begun (or raised) in a city the member follows, and an update of one
    /// they were told of that changes what to do (`WarningAlerts`).
    case warning, warningUpdate = "warning_update"
}

/// Writing notices, always inside the transaction of what caused them (a reply, a reaction, a
/// decision), so that nobody is told of something that was not saved; each one told is a change
/// (`.notice`), so that their open pages' counts follow. Nobody is told of their own doing, nor
/// of anything by a person they blocked or have muted.
enum Notices {
    /// Tells `recipient` of `kind` about `postID`, done by `actor` (nil: a moderator, unnamed).
    static func tell(_ recipient: Int64?, _ kind: NoticeKind, post postID: Int64, actor: Int64?, now: Double,
                     _ db: any SQLConnection, _ changes: ChangeLog) throws {
        guard let recipient, recipient != actor, try !silences(recipient, actor, now: now, db) else { return }
        try write(recipient, kind, post: postID, alert: nil, actor: actor, now: now, pushUntil: nil, db, changes)
    }

    /// Tells a member of a rain alert (`.rain`, `.rainCleared`); a push goes only before
    /// `pushUntil`, the window's end (quiet hours that last past it hold it for good).
    static func tell(_ recipient: Int64, _ kind: NoticeKind, alert alertID: Int64, pushUntil: Double, now: Double,
                     _ db: any SQLConnection, _ changes: ChangeLog) throws {
        try write(recipient, kind, post: nil, alert: alertID, actor: nil, now: now, pushUntil: pushUntil, db, changes)
    }

    /// Tells a member of a warning (`.warning`, `.warningUpdate`); a push goes only before the
    /// warning's end, and through quiet hours when `urgent` (severe or extreme) and the member
    /// lets such warnings pass them.
    static func tell(_ recipient: Int64, _ kind: NoticeKind, warningAlert alertID: Int64, urgent: Bool, pushUntil: Double, now: Double,
                     _ db: any SQLConnection, _ changes: ChangeLog) throws {
        try write(recipient, kind, post: nil, alert: nil, warningAlert: alertID, urgent: urgent, actor: nil, now: now, pushUntil: pushUntil,
                  db, changes)
    }

    private static func write(_ recipient: Int64, _ kind: NoticeKind, post postID: Int64?, alert alertID: Int64?,
                              warningAlert warningAlertID: Int64? = nil, urgent: Bool = false, actor: Int64?,
                              now: Double, pushUntil: Double?, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        // As the member chose (`NotificationChoices`): off on the site, a notice is kept read (a
        // push or an e-mail still has what to say); off everywhere, nothing is written.
        let choices = try NotificationChoices.of(recipient, db), topic = NotificationChoices.Topic(kind)
        let onSite = choices.isOn(topic, .site)
        let pushAt = urgent && choices.warningsPassQuiet ? now : choices.pushTime(after: Date(timeIntervalSince1970: now)).timeIntervalSince1970
        let byPush = choices.isOn(topic, .push) && pushAt < (pushUntil ?? .infinity)
        let byMail = choices.isOn(topic, .email) ? choices.address.flatMap(MailAddress.init) : nil
        guard onSite || byPush || byMail != nil else { return }
        let id = try db.one("""
            INSERT INTO notifications (user_id, kind, post_id, alert_id, warning_alert_id, actor_id, created_at, read_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, [recipient, kind.rawValue, postID, alertID, warningAlertID, actor, now, onSite ? nil : now]) { $0.int64(0) } ?? 0
        if byPush {
            try PushStore.enqueue(notification: id, for: recipient, now: now, notBefore: pushAt,
                                  expires: pushUntil ?? pushAt + PushStore.keptFor, db)
        }
        if let byMail {
            try MailQueue.enqueue(.notice, userID: recipient, to: byMail, detail: String(id), language: choices.language,
                                  now: Date(timeIntervalSince1970: now), expires: pushUntil.map(Date.init(timeIntervalSince1970:)), db)
        }
        try changes.emit(.notice(recipient))
    }

    /// Agreement is told as one notice per post while it is unread ("3 people agreed with your
    /// post in Seoul", counted when the list is read, as agreement stands then); it never names them.
    static func agreed(with postID: Int64, author: Int64?, by actor: Int64, now: Double, _ db: any SQLConnection,
                       _ changes: ChangeLog) throws {
        guard let author, author != actor, try !silences(author, actor, now: now, db) else { return }
        let counted = try db.execute("""
            UPDATE notifications SET people = people + 1, created_at = ?
            WHERE user_id = ? AND kind = 'reaction' AND post_id = ? AND read_at IS NULL
            """, now, author, postID)
        if counted == 0 { try tell(author, .reaction, post: postID, actor: actor, now: now, db, changes) }
    }

    /// The last agreement taken back: an unread notice of it goes (it would say "0 people").
    static func agreementWithdrawn(from postID: Int64, _ db: any SQLConnection) throws {
        try db.execute("""
            DELETE FROM notifications WHERE kind = 'reaction' AND post_id = ?1 AND read_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM reactions x WHERE x.post_id = ?1)
            """, postID)
    }

    /// The people `body` mentions (`@username`) who exist, at most `mentionsPerPost`, told once
    /// each; `except` are told already (the author of the post a reply answers).
    static func mentions(in body: String, post postID: Int64, author: Int64, except: Int64?, now: Double,
                         _ db: any SQLConnection, _ changes: ChangeLog) throws {
        for username in Mentions.usernames(in: body).prefix(mentionsPerPost) {
            guard let person = try db.one("SELECT id FROM users WHERE username_key = ?", [username.lowercased()], { $0.int64(0) }),
                  person != except else { continue }
            try tell(person, .mention, post: postID, actor: author, now: now, db, changes)
        }
    }

    /// A post naming many people notifies the first few (it cannot be made into a mass mailing).
    static let mentionsPerPost = 5

    /// How long notices are kept.
    static let keptFor: TimeInterval = 90 * 86_400
    static let keeping = [Keeping("notifications", "created_at", for: keptFor),
                          // The rain alerts a notice told of go with it.
                          Keeping("rain_alerts", "told_at", for: keptFor),
                          Keeping("warning_alerts", "told_at", for: keptFor)]

    /// Whether `person` blocked `other`, or has them muted at `now`.
    private static func silences(_ person: Int64, _ other: Int64?, now: Double, _ db: any SQLConnection) throws -> Bool {
        guard let other else { return false }
        return try BoardStore.blocks(person, other, db)
            || Mutes.mute(of: other, by: person, now: Date(timeIntervalSince1970: now), db) != nil
    }
}

/// The board's writes as notices: a reply tells the author of the post it answers, mentions tell
/// the people named, agreement tells the author.
struct BoardNotices: BoardEffects {
    func posted(_ id: Int64, body: String, author: Int64, now: Double, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        try Notices.mentions(in: body, post: id, author: author, except: nil, now: now, db, changes)
    }

    func replied(_ id: Int64, body: String, author: Int64, answering parentAuthor: Int64?, now: Double, _ db: any SQLConnection,
                 _ changes: ChangeLog) throws {
        try Notices.tell(parentAuthor, .reply, post: id, actor: author, now: now, db, changes)
        try Notices.mentions(in: body, post: id, author: author, except: parentAuthor, now: now, db, changes)
    }

    func agreed(with postID: Int64, author: Int64?, by actor: Int64, now: Double, _ db: any SQLConnection, _ changes: ChangeLog) throws {
        try Notices.agreed(with: postID, author: author, by: actor, now: now, db, changes)
    }

    func agreementWithdrawn(from postID: Int64, _ db: any SQLConnection) throws {
        try Notices.agreementWithdrawn(from: postID, db)
    }
}
