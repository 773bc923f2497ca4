#!/usr/bin/env bash
# Runs every Switchback test on a fresh machine: installs what the tests need, starts the real
# third-party peers on loopback, runs `swift test`, and stops the peers again.
# usage: scripts/test.sh [extra swift test arguments]
# Peers are looked up in $SWITCHBACK_PEERS, else ../shared/peers beside the checkout.
# PostgreSQL is started by scripts/postgres.sh (SWITCHBACK_TEST_POSTGRES_URL points the tests at it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

log() { echo "test.sh: $*" >&2; }

find_peers() {
  local candidate
  for candidate in "${SWITCHBACK_PEERS:-}" "$root/../shared/peers"; do
    if [ -n "$candidate" ] && [ -x "$candidate/glewlwyd/up.sh" ]; then realpath "$candidate"; return 0; fi
  done
  return 1
}

free_port() {
  local port
  for port in $(seq "$1" "$(($1 + 50))"); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  return 1
}

# apt packages the build and the tests need
need=()
command -v curl >/dev/null || need+=(curl)
command -v openssl >/dev/null || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2 || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2; }
fi

cleanup=()
on_exit() { local step; for step in "${cleanup[@]}"; do eval "$step" || true; done; }
trap on_exit EXIT

# glewlwyd, the real OpenID provider for the interop tests
if peers=$(find_peers); then
  port=$(free_port 4593)
  dir=$(mktemp -d /tmp/switchback-glewlwyd.XXXXXX)
  rmdir "$dir"
  log "starting glewlwyd on port $port"
  if env_lines=$(bash "$peers/glewlwyd/up.sh" --port "$port" --dir "$dir"); then
    set -a; eval "$env_lines"; set +a
    export GLEWLWYD_LOGIN="$peers/glewlwyd/login.sh"
    cleanup+=("bash '$peers/glewlwyd/down.sh' --dir '$dir' 2>/dev/null")
  else
    log "glewlwyd did not start; its interop tests will skip (or fail under CI=true)"
  fi
else
  log "no peers folder found; interop tests will skip (or fail under CI=true)"
fi

# PostgreSQL, for the companion's shared store (installed from Debian's packages when missing)
pg_port=$(free_port 5433)
pg_dir=$(mktemp -d /tmp/switchback-postgres.XXXXXX)
log "starting PostgreSQL on port $pg_port"
if pg_env=$(bash scripts/postgres.sh up --dir "$pg_dir" --port "$pg_port"); then
  while IFS= read -r line; do export "$line"; done <<<"$pg_env"
  cleanup+=("bash scripts/postgres.sh down --dir '$pg_dir'")
else
  log "PostgreSQL did not start; its tests will skip (or fail under CI=true)"
fi

# The code is formatted as .swift-format says (scripts/format.sh formats it).
bash scripts/format.sh --check

# The Apple adapters and the guides' iOS wiring, compiled against the core and a declared model of Apple's
# API (AppleSurface/), warnings as errors, and their glue tests: a core change that breaks them fails here.
bash scripts/apple-typecheck.sh

# Two packages share one build directory: the app-side library (this folder) and the tools (Tools/: the
# companion, the emulator, the demo, the CLI, the benchmarks), which depends on it by path.
tools=(--package-path Tools --scratch-path "$root/.build")

# Our own targets build without warnings (dependencies' warnings are theirs); a fresh clone compiles
# every file, so CI sees every warning.
build_log=$(mktemp /tmp/switchback-build.XXXXXX)
cleanup+=("rm -f '$build_log'")
# The packages share one build folder, and SwiftPM may reuse the build plan it cached for the other
# package when no file was added since (a Tools build then compiles nothing and its tests run stale
# binaries): drop the cached plan before each package's build.
replan() { rm -f "$root"/.build/*/debug/description.json "$root"/.build/*/release/description.json; }
replan
swift build --build-tests 2>&1 | tee "$build_log"
replan
swift build --build-tests "${tools[@]}" 2>&1 | tee -a "$build_log"
if grep -E "^$root/(Sources|Tests|Examples|Tools/Sources|Tools/Tests|Tools/Examples)/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" >&2; then
  log "the build above warns in the project's own code"
  exit 1
fi
# A warning inside a macro's expansion (#expect, #require) is printed against the macro, and the next line
# names the file that used it.
if grep -E -A1 "^macro expansion [^:]+:[0-9]+:[0-9]+: warning:" "$build_log" \
  | grep -E '^`- '"$root"'/(Sources|Tests|Examples|Tools/Sources|Tools/Tests|Tools/Examples)/[^:]+:[0-9]+:[0-9]+: note: expanded code originates here' >&2; then
  log "the build above warns in a macro's expansion in the project's own code"
  exit 1
fi
swift test --skip-build "$@"
swift test --skip-build "${tools[@]}" "$@"
bin="$(swift build --show-bin-path "${tools[@]}")"

# The app-side products as an app ships them, in release: some warnings (a public import no public
# declaration uses) appear only without the debug build's testability. Its own build folder, so the debug
# build above stays as it is; about 5 minutes from cold. (Tools' release build takes about 15 minutes; it
# is checked by hand, see CONTRIBUTING.md.)
release_log=$(mktemp /tmp/switchback-release.XXXXXX)
cleanup+=("rm -f '$release_log'")
swift build -c release --scratch-path "$root/.build-release" 2>&1 | tee "$release_log" | tail -1
if grep -E "^$root/Sources/[^:]+:[0-9]+:[0-9]+: warning:" "$release_log" >&2; then
  log "the release build above warns in the project's own code"
  exit 1
fi
log "release build of the app-side products: no warnings of our own"

# A third-party check: the emulator's ID tokens verified by joserfc, a JOSE library written by others.
if ! python3 -c 'import joserfc' 2>/dev/null; then
  log "installing joserfc from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check 'joserfc==1.6.5' >&2
fi
python3 scripts/check_emulator_tokens.py "$bin/switchback"

# A third-party check of the SD-JWT verifier: presentations issued and presented by sd-jwt, the
# OpenWallet Foundation's library, verified by `switchback verify-presentation`, and their tampered
# variants refused.
if ! python3 -c 'import sd_jwt' 2>/dev/null; then
  log "installing sd-jwt from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check 'sd-jwt==0.10.4' >&2
fi
python3 scripts/check_sd_jwt.py "$bin/switchback"

# A third-party round trip of the companion's OpenID4VP verifier: joserfc verifies its request objects and
# encrypts the wallet's answers, sd-jwt issues and presents the credential (both installed above).
python3 scripts/check_openid4vp.py "$bin/switchback" 2>/dev/null

# A third-party check of the companion's ISO mdoc verifier: pymdoccbor (the EUDI wallet project's mdoc
# library) issues the credential, cbor2 and cryptography sign the device authentication, and the tampered
# variants are refused.
if ! python3 -c 'import pymdoccbor' 2>/dev/null; then
  log "installing pymdoccbor from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check 'pymdoccbor==1.4.0' >&2
fi
python3 scripts/check_mdoc.py "$bin/switchback" 2>/dev/null

# The main job, for every provider preset: each must sign in.
"$bin/switchback" demo --all >/dev/null
log "switchback demo --all: every preset signed in"

# Every benchmark section in a smoke run (a fraction of a second per row; the figures mean nothing here,
# BENCHMARKS.md has the measured ones), so that a benchmark cannot stop running unnoticed.
BENCH_SECONDS=0.05 "$bin/SwitchbackBenchmarks" >/dev/null
log "benchmarks: every section ran (smoke mode)"

# The README's getting-started code, against the emulator.
"$bin/GettingStarted" 2>/dev/null
log "GettingStarted: signed in"

# The provider guides' app-side code (Sources/SwitchbackApple/Documentation.docc), against the emulator.
"$bin/Guides" 2>/dev/null
log "Guides: UAE Pass, MitID (app and backend completion), Norwegian BankID, OpenID Connect and Singpass signed in"

# An app that depends on Switchback resolves only the app-side products' dependencies (the README's figure).
app_check=$(mktemp -d /tmp/switchback-app.XXXXXX)
cleanup+=("rm -rf '$app_check'")
bash scripts/app-dependencies.sh "$app_check"

# The DocC catalogs: every symbol and article link resolves (warnings are errors). The symbol graphs come
# from this build; the Apple module compiles to nothing here, so its catalog is checked as articles.
docs=$(mktemp -d /tmp/switchback-docs.XXXXXX)
cleanup+=("rm -rf '$docs'")
replan
swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs="$(swift build --show-bin-path)/../symbolgraph"
for module in Switchback SwitchbackApple; do
  mkdir -p "$docs/$module"
  cp "$graphs/$module.symbols.json" "$docs/$module/"
  docc convert "Sources/$module/Documentation.docc" --additional-symbol-graph-dir "$docs/$module" --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.switchback.$module" --output-path "$docs/$module.doccarchive" --warnings-as-errors >/dev/null
done
log "DocC: the Switchback and SwitchbackApple catalogs build without warnings"

# The WebView host on a real WebKit engine: WebKitGTK under Xvfb (WebKitHost/, a package of its own so
# that the main package needs nothing beyond the toolchain). It shares this package's build directory,
# so only the host itself is compiled again.
webkit_ready() { pkg-config --exists webkit2gtk-4.1 2>/dev/null && command -v xvfb-run >/dev/null; }
if ! webkit_ready; then
  log "installing WebKitGTK and Xvfb"
  webkit_packages=(libwebkit2gtk-4.1-dev xvfb xauth pkg-config)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${webkit_packages[@]}" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${webkit_packages[@]}" >&2; } \
    || log "WebKitGTK could not be installed"
fi
if webkit_ready; then
  started=$(date +%s)
  replan
  swift build --build-tests --package-path WebKitHost --scratch-path "$root/.build"
  xvfb-run -a swift test --skip-build --package-path WebKitHost --scratch-path "$root/.build" "$@"
  log "WebKitGTK $(pkg-config --modversion webkit2gtk-4.1) tests passed in $(( $(date +%s) - started )) s (build included)"
  # The demo's scenarios with every user agent on the engine: each preset with each strategy (signed in,
  # or refused, typed, where the preset says it cannot work), a decline, a kill during the hand-off and
  # MitID's backend completion; screenshots and their index are written and thrown away.
  started=$(date +%s)
  shots=$(mktemp -d /tmp/switchback-webkit.XXXXXX)
  cleanup+=("rm -rf '$shots'")
  xvfb-run -a "$(swift build --show-bin-path --package-path WebKitHost --scratch-path "$root/.build")/switchback-webkit" demo --all \
    --screenshots "$shots" >/dev/null
  log "switchback-webkit demo --all: every preset and user agent on WebKitGTK, in $(( $(date +%s) - started )) s"
elif [ "${CI:-}" = true ]; then
  log "WebKitGTK or Xvfb is missing and CI=true: the real-engine tests must run"
  exit 1
else
  log "WebKitGTK tests skipped: libwebkit2gtk-4.1-dev or xvfb-run is missing and could not be installed"
fi
