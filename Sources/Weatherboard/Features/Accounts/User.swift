import Foundation
import GRDB
import HTTPServer

/// A person with an account, as stored: it always has its id (a new account is a `NewUser`
/// until it is inserted, so no code holds a person without one).
public struct User: Codable, Sendable, Equatable, FetchableRecord, TableRecord {
    public static let databaseTableName = "users"

    public let id: Int64
    public var username: String
    public var usernameKey: String
    public var displayName: String
    public var passwordHash: String
    public var role: String
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, username, role
        case usernameKey = "username_key", displayName = "display_name", passwordHash = "password_hash", createdAt = "created_at"
    }

    public var isAdmin: Bool { role == "admin" }

    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSince1970 }
}

/// An account about to be created (sign-up, `create-admin`).
struct NewUser {
    var username: String
    var displayName: String
    var passwordHash: String
    var role: String
    var createdAt: Date

    /// Inserts the account; the stored person, with its id.
    func insert(_ db: Database) throws -> User {
        try db.execute(sql: """
            INSERT INTO users (username, username_key, display_name, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [username, username.lowercased(), displayName, passwordHash, role, createdAt.timeIntervalSince1970])
        return User(id: db.lastInsertedRowID, username: username, usernameKey: username.lowercased(), displayName: displayName,
                    passwordHash: passwordHash, role: role, createdAt: createdAt)
    }
}

extension User {
    static func find(username: String, _ db: Database) throws -> User? {
        try User.filter(Column("username_key") == username.lowercased()).fetchOne(db)
    }

    /// By id, through a cached statement (every signed-in request asks).
    static func find(id: Int64, _ db: Database) throws -> User? {
        try User.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [id])
    }

    /// The person a `/users/{username}`-style route names, or 404.
    static func named(_ request: Request, in database: AppDatabase) throws -> User {
        guard let user = try database.pool.read({ try User.find(username: request.parameters["username"] ?? "", $0) }) else {
            throw HTTPError(.notFound)
        }
        return user
    }
}
