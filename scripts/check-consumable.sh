#!/usr/bin/env bash
# Builds a throwaway package that depends on this one at a version, as a dependency from anywhere
# else would (SwiftPM lets a path, branch or revision dependency use unsafe build flags, but not a
# versioned one), and uses its HTTPServer library (issue 21 #3). The version is a tag on a clone
# of the committed HEAD.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$here" "$work/weatherboard"
git -C "$work/weatherboard" tag 0.0.1
consumer="$work/consumer"
mkdir -p "$consumer/Sources/Consumer"
cat >"$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [.package(url: "file://$work/weatherboard", exact: "0.0.1")],
    targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "HTTPServer", package: "weatherboard")])]
)
MANIFEST
cat >"$consumer/Sources/Consumer/main.swift" <<'SOURCE'
import HTTPServer

// Enough to prove the library links: a router with one route.
final class Context: RequestContext {
    init(request: Request) {}
}

let router = Router<Context>()
router.get("/") { _, _ in Response(status: .ok, body: Array("hello".utf8)) }
print("routes: \(router.hasRoute(for: Request(method: "GET", target: "/")))")
SOURCE
(cd "$consumer" && swift build 2>&1 | tail -3)
echo "a package depending on weatherboard 0.0.1 builds against HTTPServer"
