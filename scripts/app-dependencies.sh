#!/usr/bin/env bash
# Resolves a minimal app package that depends on this checkout's app-side products (Switchback,
# SwitchbackApple, SwitchbackTesting), as an iOS team adding Switchback would, and prints the packages it
# resolves. Fails when any server-side package (Hummingbird, SwiftNIO, PostgresNIO, AsyncHTTPClient,
# ArgumentParser, service lifecycle) is among them: those belong to Tools/ only.
# usage: scripts/app-dependencies.sh [DIRECTORY]   (a temporary directory when none is given)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$(mktemp -d /tmp/switchback-app.XXXXXX)}"
mkdir -p "$dir/Sources/App"
cat > "$dir/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [.package(name: "Switchback", path: "$root")],
    targets: [.target(name: "App", dependencies: [
        .product(name: "Switchback", package: "Switchback"),
        .product(name: "SwitchbackApple", package: "Switchback"),
        .product(name: "SwitchbackTesting", package: "Switchback"),
    ])]
)
MANIFEST
echo "import Switchback" > "$dir/Sources/App/App.swift"
if ! log=$(swift package resolve --package-path "$dir" 2>&1); then
  echo "$log" >&2
  exit 1
fi
pins=$(python3 -c 'import json,sys; print(" ".join(sorted(p["identity"] for p in json.load(open(sys.argv[1]))["pins"])))' "$dir/Package.resolved")
count=$(wc -w <<<"$pins")
echo "app-dependencies: an app using Switchback resolves $count packages: $pins" >&2
for server in hummingbird swift-nio postgres-nio async-http-client swift-argument-parser swift-service-lifecycle; do
  if [[ " $pins " == *" $server "* ]]; then
    echo "app-dependencies: $server is resolved by an app-only package; it belongs to Tools/" >&2
    exit 1
  fi
done
