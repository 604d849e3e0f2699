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

    /// Makes `path` (which must not exist) by `write` filling a new private file beside it, then
    /// giving that file its name: `path` appears only whole. If `write` fails, nothing is left at
    /// `path` nor under the temporary name (a SQLite database's `-wal` and `-shm` included).
    static func createWhole(_ path: String, _ write: (_ temporary: String) throws -> Void) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".partial-" + String(UInt32.random(in: .min ... .max), radix: 16)
        func removeTemporary() {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
        }
        try createNew(temporary)
        do {
            try write(temporary)
            // A SQLite file closed cleanly has moved its -wal into itself; one left over would be
            // part of the data, and would not follow the file to its new name.
            var info = stat()
            if lstat(temporary + "-wal", &info) == 0 && info.st_size > 0 {
                throw Failure(description: "\(temporary)-wal was left holding data; the copy is not whole")
            }
            // link(2) gives the name only if nothing holds it (no overwrite, no link followed).
            guard link(temporary, path) == 0 else {
                let reason = errno == EEXIST ? "it exists (a backup never overwrites)" : String(cString: strerror(errno))
                throw Failure(description: "cannot create \(path): \(reason)")
            }
        } catch {
            removeTemporary()
            throw error
        }
        removeTemporary()
        let folder = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder) // the new name survives a crash from here on
            Glibc.close(folder)
        }
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
