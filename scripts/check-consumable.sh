#!/usr/bin/env bash
# Builds a throwaway package that depends on this one and serves with its HTTPServer library: a
# package with unsafe build flags cannot be a dependency, and this proves ours can (issue 21 #3).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
identity=$(basename "$here" | tr '[:upper:]' '[:lower:]')
consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT
mkdir -p "$consumer/Sources/Consumer"
cat >"$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [.package(path: "$here")],
    targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "HTTPServer", package: "$identity")])]
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
echo "a package depending on $identity builds against HTTPServer"
