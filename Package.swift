// swift-tools-version:6.2
import PackageDescription

// Our own modules treat every warning as an error (dependencies are built as their authors ship
// them). A setting SwiftPM knows, not `unsafeFlags`: a package with unsafe flags cannot be a
// dependency, and the HTTPServer library is meant to be one (SwiftPM leaves warnings alone when
// it builds a package as someone's dependency).
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "Weatherboard",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "weatherboard", targets: ["weatherboard"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        // The operator's metrics (`/metrics`): the ecosystem's API and its Prometheus exposition.
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
    ],
    targets: [
        // The HTTP/1.1 server: POSIX sockets, epoll, no application knowledge.
        .target(
            name: "HTTPServer",
            dependencies: ["CSystem", "CZlib", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // multipart/form-data bodies (RFC 7578) for the routes that take uploads: a body format
        // beside the server, as Hummingbird keeps its multipart parser out of its core.
        .target(name: "HTTPMultipart", dependencies: ["HTTPServer"], swiftSettings: strict),
        // zlib, the reference deflate implementation (Debian's zlib1g-dev), for gzip responses.
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libcurl (Debian's libcurl4-openssl-dev) for SMTP: STARTTLS, AUTH and the protocol's
        // corners come from a library every Debian machine already has, not from us.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libvips (Debian's libvips-dev), the image library imgproxy and sharp build on: photos are
        // decoded, turned upright and written anew by it, not by code of ours.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // vips's interface is variadic, which Swift cannot call: a few fixed C functions over it.
        .target(name: "CPhotos", dependencies: ["CVips"]),
        // epoll and eventfd, which Glibc's Swift module does not export.
        .target(name: "CSystem"),
        // The application as a library of features on top of HTTPServer.
        .target(
            name: "Weatherboard",
            dependencies: [
                "HTTPServer",
                "HTTPMultipart",
                "CSystem",
                "CZlib",
                "CLibXML2",
                "CCurl",
                "CPhotos",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // Read at run time from the checkout or an install's share/weatherboard (InstalledFiles),
            // not a SwiftPM resource bundle, whose accessor falls back to the build machine's path.
            exclude: ["Features/Cities/cities.tsv", "Features/Cities/regions.tsv", "Features/Cities/districts.tsv", "Features/Cities/district-shapes.tsv", "Features/Map/korea-map.tsv", "Features/Accounts/confusables.txt"],
            swiftSettings: strict,
            plugins: ["CompileTemplatesPlugin"]
        ),
        // Templates/*.mustache into Swift at build time: a template error is a build error, and a
        // page costs the bytes it writes (no dynamic lookups while rendering).
        .executableTarget(name: "TemplateCompiler", swiftSettings: strict),
        .plugin(
            name: "CompileTemplatesPlugin",
            capability: .buildTool(),
            dependencies: ["TemplateCompiler"],
            path: "Sources/CompileTemplatesPlugin"
        ),
        // The thin executable: runs the command line defined in Weatherboard.
        .executableTarget(
            name: "weatherboard",
            dependencies: ["Weatherboard", "HTTPServer"],
            swiftSettings: strict
        ),
        // The bare HTTPServer serving /plaintext and /healthz, for load tests against the peer.
        .executableTarget(
            name: "HTTPServerBench",
            dependencies: ["HTTPServer"],
            swiftSettings: strict
        ),
        // Opens many event streams and times one post's event to all of them (scripts/bench-live.sh).
        .executableTarget(
            name: "LiveLoad",
            dependencies: ["CSystem"],
            swiftSettings: strict
        ),
        // libxml2: XML from the KMA, and HTML and XPath in tests.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        // A raw-socket HTTP client for tests: every byte sent and received is under the test's control.
        .target(
            name: "HTTPTestSupport",
            dependencies: ["HTTPServer", "CSystem"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "HTTPMultipart", "HTTPTestSupport", "CZlib"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WeatherboardTests",
            dependencies: ["Weatherboard", "HTTPServer", "HTTPTestSupport", "CLibXML2", "CZlib", "CPhotos"],
            resources: [.copy("Fixtures")],
            swiftSettings: strict
        ),
    ]
)
