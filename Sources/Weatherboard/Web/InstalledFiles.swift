import Foundation

/// Where the files the site reads at run time are found: the migrations, the static files, the
/// string catalogs and the city catalog. In this order:
/// 1. `../share/weatherboard/` beside the executable, with symbolic links resolved (an install:
///    `/usr/bin/weatherboard` reads `/usr/share/weatherboard/`, its own version's files wherever it
///    is started; `scripts/package-deb.sh` lays it out);
/// 2. the working directory's own `Migrations/`, `Public/`, `Templates/` (a checkout: `swift run`);
/// 3. in a debug build only, the checkout it was built from (tests, run from anywhere).
/// A release binary never reads the build machine's paths.
public enum InstalledFiles {
    /// `share/weatherboard` for the running executable, if it is there.
    public static let share: String? = {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let folder = URL(fileURLWithPath: executable).deletingLastPathComponent() // bin
            .deletingLastPathComponent().appendingPathComponent("share/weatherboard").path
        return FileManager.default.fileExists(atPath: folder + "/Migrations") ? folder : nil
    }()

    /// A top-level folder: `Migrations`, `Public` or `Templates`.
    public static func folder(_ name: String) -> String {
        if let share { return share + "/" + name }
        let local = FileManager.default.currentDirectoryPath + "/" + name
        if FileManager.default.fileExists(atPath: local) { return local }
        #if DEBUG
        return repositoryFolder(name)
        #else
        return local // absent: the start-up error names it
        #endif
    }

    /// A catalog shipped with the site (`cities.tsv`, `regions.tsv`, `confusables.txt`): in
    /// `share/weatherboard/` when installed, in `Sources/Weatherboard/Features/<feature>/` in a checkout.
    /// A catalog's text, or why it cannot be had (a start-up error: the site does not start without it).
    static func catalogText(_ file: String, feature: String = "Cities") -> Result<String, StartupError> {
        guard let url = catalog(file, feature: feature) else {
            return .failure(StartupError("\(file) is not installed: it belongs in share/weatherboard/ beside the binary's bin/ folder (docs/operations.md, \"Installing\")"))
        }
        do {
            return .success(try String(contentsOf: url, encoding: .utf8))
        } catch {
            return .failure(StartupError("cannot read \(url.path): \(error.localizedDescription)"))
        }
    }

    public static func catalog(_ file: String, feature: String = "Cities") -> URL? {
        let checkout = "Sources/Weatherboard/Features/\(feature)/" + file
        var candidates = share.map { [$0 + "/" + file] } ?? []
        candidates.append(FileManager.default.currentDirectoryPath + "/" + checkout)
        #if DEBUG
        candidates.append(repositoryFolder(checkout))
        #endif
        return candidates.first { FileManager.default.fileExists(atPath: $0) }.map { URL(fileURLWithPath: $0) }
    }

    /// A top-level path of the checkout this was built from: next to the working directory
    /// first, else relative to this source file (tests, and debug builds: `InstalledFiles`).
    public static func repositoryFolder(_ name: String) -> String {
        let local = FileManager.default.currentDirectoryPath + "/" + name
        if FileManager.default.fileExists(atPath: local) { return local }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent() // Web
            .deletingLastPathComponent() // Weatherboard
            .deletingLastPathComponent() // Sources
            .deletingLastPathComponent() // repository
        return root.appendingPathComponent(name).path
    }
}
