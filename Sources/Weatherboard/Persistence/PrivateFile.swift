import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold password hashes and session digests (the live SQLite database, backups):
/// mode 0600, and never reached through a link someone planted.
enum PrivateFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Creates `path` empty with mode 0600; fails if anything is there already, a symbolic link
    /// included (`O_EXCL | O_NOFOLLOW`: a planted link to a file elsewhere is not followed).
    static func createNew(_ path: String) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "it exists (a backup never overwrites)" : String(cString: strerror(errno))
            throw Failure(description: "cannot create \(path): \(reason)")
        }
        Glibc.close(fd)
    }

    /// A database file about to be opened: created private if absent; if present, a regular file
    /// (not a link) whose group and others lose any access they had.
    static func prepare(_ path: String) throws {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            try createNew(path)
            return
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(description: "\(path) is not a regular file (a symbolic link is not followed)")
        }
        if info.st_mode & 0o077 != 0 { chmod(path, info.st_mode & 0o700) }
    }
}
