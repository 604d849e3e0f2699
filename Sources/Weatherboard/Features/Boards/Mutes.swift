import Foundation

/// Mute beside block (issue 45 #3): a member hides a person's posts and replies from themselves,
/// collapsed where they would be, for a day, a week or until they unmute; the muted person
/// still sees them and can still reply. While it lasts the muted person tells them nothing
/// (`Notices`), and their posts neither stream to them nor come up in their searches.
enum MuteDuration: String, CaseIterable {
    case day, week, always

    /// When a mute made at `now` ends; nil: when the member unmutes.
    func until(_ now: Date) -> Date? {
        switch self {
        case .day: now.addingTimeInterval(86_400)
        case .week: now.addingTimeInterval(7 * 86_400)
        case .always: nil
        }
    }
}

/// A mute as stored: whom, and until when (nil: until unmuted).
struct Mute: Equatable {
    var mutedID: Int64
    var until: Date?
}

/// The mutes' queries. A mute counts while `activeSQL` holds at the moment asked about: one
/// that ran out is no mute, though its row stays until the member mutes or unmutes again.
enum Mutes {
    /// `m` is a mute in force at the argument `?` it is given.
    static func active(_ alias: String, at placeholder: String) -> String {
        "(\(alias).until IS NULL OR \(alias).until > \(placeholder))"
    }

    /// The people `muterID` has muted at `now`.
    static func mutedIDs(by muterID: Int64, now: Date, _ db: any SQLConnection) throws -> Set<Int64> {
        Set(try db.all("SELECT m.muted_id FROM mutes m WHERE m.muter_id = ? AND \(active("m", at: "?"))", [muterID, now]) { $0.int64(0) })
    }

    /// Whether `muterID` has `personID` muted at `now`, and until when.
    static func mute(of personID: Int64, by muterID: Int64, now: Date, _ db: any SQLConnection) throws -> Mute? {
        try db.one("SELECT m.muted_id, m.until FROM mutes m WHERE m.muter_id = ? AND m.muted_id = ? AND \(active("m", at: "?"))",
                   [muterID, personID, now]) { Mute(mutedID: $0.int64(0), until: $0.optionalDate(1)) }
    }

    /// Mutes `personID` for `muterID` until `until` (nil: until unmuted); muting again sets the new end.
    static func set(_ personID: Int64, by muterID: Int64, until: Date?, now: Date, _ db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO mutes (muter_id, muted_id, until, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (muter_id, muted_id) DO UPDATE SET until = excluded.until, created_at = excluded.created_at
            """, muterID, personID, until, now)
    }

    static func remove(_ personID: Int64, by muterID: Int64, _ db: any SQLConnection) throws {
        try db.execute("DELETE FROM mutes WHERE muter_id = ? AND muted_id = ?", muterID, personID)
    }
}
