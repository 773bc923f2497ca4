#!/usr/bin/env bash
# Compiles the iOS adapters (Sources/SwitchbackApple) and the guides' iOS wiring (Examples/AppleSnippets)
# against the core and AppleSurface's declared model of UIKit, WebKit, AuthenticationServices,
# SafariServices, Security and SwiftUI, in Swift 6 language mode with warnings as errors, then runs the
# adapters' glue tests on that model. Exit 0 when everything compiles and passes; the compiler's or the
# tests' errors and a non-zero status otherwise.
# usage: scripts/apple-typecheck.sh [--skip-tests]
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$PWD/.build-apple"   # its own build folder: the model's module names must not reach the main build
swift build --build-tests --package-path AppleSurface --scratch-path "$scratch"
echo "apple-typecheck: Sources/SwitchbackApple and Examples/AppleSnippets compile against the core and the Apple API model" >&2
if [ "${1:-}" != "--skip-tests" ]; then
  swift test --skip-build --package-path AppleSurface --scratch-path "$scratch"
  echo "apple-typecheck: the adapters' glue tests pass on the model" >&2
fi
