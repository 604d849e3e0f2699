import Foundation
import HTTPServer

/// A person with an account, as every feature sees them (the one a request is from, an author,
/// a moderator): it always has its id (a new account is a `NewUser` until it is inserted, so no
/// code holds a person without one). Their password's hash is not part of it: only the
/// accounts' store reads it, when a password is checked.
public struct User: Codable, Sendable, Equatable {
    public let id: Int64
    public var username: String
    public var usernameKey: String
    public var displayName: String
    public var role: String
    public var createdAt: Date
    /// The site's own account (`SiteAccount`): it writes the warnings' threads, and nobody signs
    /// in as it, blocks or mutes it.
    public var isSite = false
    /// No time zone was ever set for the member (read with the session): their pages take the
    /// browser's (`MemberTimeZone`).
    public var timeZoneUnset = false

    enum CodingKeys: String, CodingKey {
        case id, username, role
        case usernameKey = "username_key", displayName = "display_name", createdAt = "created_at"
    }

    public var isAdmin: Bool { role == "admin" }

    /// The columns `init(row:)` reads, in its order.
    static let columns = "id, username, username_key, display_name, role, created_at, is_system, time_zone_source"
    /// How many columns `columns` names (a query may select more after them).
    static let columnCount = 8

    init(row: any SQLRow) {
        self.init(id: row.int64(0), username: row.string(1), usernameKey: row.string(2), displayName: row.string(3),
                  role: row.string(4), createdAt: row.date(5), isSite: row.int(6) != 0,
                  timeZoneUnset: row.int(7) == MemberTimeZone.Source.unset.rawValue)
    }

    init(id: Int64, username: String, usernameKey: String, displayName: String, role: String, createdAt: Date, isSite: Bool = false,
         timeZoneUnset: Bool = false) {
        self.id = id
        self.username = username
        self.usernameKey = usernameKey
        self.displayName = displayName
        self.role = role
        self.createdAt = createdAt
        self.isSite = isSite
        self.timeZoneUnset = timeZoneUnset
    }
}

/// An account about to be created (sign-up, `create-admin`).
struct NewUser {
    var username: String
    var displayName: String
    var passwordHash: String
    var role: String
    var createdAt: Date
    /// The browser's zone when it gave one at sign-up.
    var timeZone: MemberTimeZone = .default
}

extension User {
    static func find(username: String, _ db: any SQLConnection) throws -> User? {
        try db.one("SELECT \(columns) FROM users WHERE username_key = ?", [username.lowercased()], User.init(row:))
    }

    static func find(id: Int64, _ db: any SQLConnection) throws -> User? {
        try db.one("SELECT \(columns) FROM users WHERE id = ?", [id], User.init(row:))
    }

    /// The person a `/users/{username}`-style route names, or 404.
    static func named(_ request: Request, in database: AppDatabase) throws -> User {
        guard let user = try database.readStatement({ try User.find(username: request.parameters["username"] ?? "", $0) }) else {
            throw HTTPError(.notFound)
        }
        return user
    }
}

extension User {
    /// What is wrong with a username's form (its characters and length), as catalog keys.
    static func usernameFormProblems(_ value: String) -> [String] {
        var problems: [String] = []
        if !value.unicodeScalars.allSatisfy({ ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" }) {
            problems.append("error_username_characters")
        }
        if !(3...20).contains(value.count) { problems.append("error_username_length") }
        return problems
    }
}
