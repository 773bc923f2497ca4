#!/usr/bin/env bash
# Runs Switchback's tests on a fresh Linux machine, in named stages: installs what a stage needs, starts
# the real third-party peers it tests against on loopback, and stops them again.
#
# usage: scripts/test.sh                   every stage, in order (what CI runs)
#        scripts/test.sh STAGE [STAGE ...]  those stages only, in the order given
#        scripts/test.sh --list             the stage names, one a line
#        scripts/test.sh ... -- ARGS        ARGS go to every `swift test` (a --filter, say)
#
# The app library builds in .build, the tools and the WebKitGTK host (which is built on them) in
# Tools/.build, the Apple model in .build-apple, the release check in .build-release, the fuzz targets in
# Fuzz/.build. Peers are looked up in $SWITCHBACK_PEERS, else ../shared/peers beside the checkout;
# PostgreSQL is started by scripts/postgres.sh. On a Mac, see CONTRIBUTING.md ("Running the tests").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

stages=(format apple core api interop tools release crosschecks fuzz examples docc webkit)
describe() {
  case "$1" in
    format) echo "the code is formatted as .swift-format says" ;;
    apple) echo "the iOS adapters and the guides' wiring compile against the Apple API model; their glue tests" ;;
    core) echo "the app library: warning-free build, its tests (interop excepted)" ;;
    api) echo "the app-side products' public API against the newest release tag: every break allowed for" ;;
    interop) echo "the core client and the CLI against glewlwyd, an OpenID provider written by others" ;;
    tools) echo "the companion, the emulator, the CLI and the scenarios, with PostgreSQL (interop excepted)" ;;
    release) echo "the app-side products in release: no warnings of our own" ;;
    crosschecks) echo "joserfc, sd-jwt and pymdoccbor check the emulator's tokens and the verifiers" ;;
    fuzz) echo "every fuzz target for 20 s from its committed corpus; the CBOR reader against cbor2" ;;
    examples) echo "demo --all, the benchmarks' smoke run, the README's and the guides' code, an app's dependencies" ;;
    docc) echo "the DocC catalogs build without warnings" ;;
    webkit) echo "the WebKitGTK host's tests and every preset with every user agent on a real engine" ;;
  esac
}

log() { echo "test.sh: $*" >&2; }

# The interop tests, which need glewlwyd: the core's suite and the CLI's two tests against it.
core_interop='GlewlwydInteropTests'
tools_interop='discoveryAgainstGlewlwyd|LoginCommandTests/glewlwyd\('

selected=()
test_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --list) for stage in "${stages[@]}"; do echo "$stage"; done; exit 0 ;;
    --help | -h) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; for stage in "${stages[@]}"; do printf '  %-12s %s\n' "$stage" "$(describe "$stage")"; done; exit 0 ;;
    --) shift; test_args=("$@"); break ;;
    -*) log "unknown option $1 (stages: ${stages[*]})"; exit 2 ;;
    *)
      if [[ " ${stages[*]} " != *" $1 "* ]]; then log "unknown stage $1 (stages: ${stages[*]})"; exit 2; fi
      selected+=("$1") ;;
  esac
  shift
done
[ ${#selected[@]} -gt 0 ] || selected=("${stages[@]}")

cleanup=()
timings=()
current=""
on_exit() {
  local status=$? step
  for step in ${cleanup[@]+"${cleanup[@]}"}; do eval "$step" || true; done
  if [ -n "$current" ]; then timings+=("$(printf '%-12s %5d s  FAILED' "$current" $(($(date +%s) - started)))"); fi
  if [ ${#timings[@]} -gt 0 ]; then
    echo "test.sh: stage timings" >&2
    printf '  %s\n' "${timings[@]}" >&2
  fi
  return $status
}
trap on_exit EXIT

# MARK: What stages share, each done once

apt_install() {
  local missing=("$@")
  [ ${#missing[@]} -gt 0 ] || return 0
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2; }
}

base_tools() {
  local need=()
  command -v curl >/dev/null || need+=(curl)
  command -v openssl >/dev/null || need+=(openssl)
  apt_install "${need[@]}"
}

free_port() {
  local port
  for port in $(seq "$1" "$(($1 + 50))"); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  return 1
}

glewlwyd_started=false
start_glewlwyd() {
  $glewlwyd_started && return 0
  glewlwyd_started=true
  local candidate peers=""
  for candidate in "${SWITCHBACK_PEERS:-}" "$root/../shared/peers"; do
    if [ -n "$candidate" ] && [ -x "$candidate/glewlwyd/up.sh" ]; then peers=$(realpath "$candidate"); break; fi
  done
  if [ -z "$peers" ]; then
    log "no peers folder found; interop tests will skip (or fail under CI=true)"
    return 0
  fi
  local port dir env_lines
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
}

postgres_started=false
start_postgres() {
  $postgres_started && return 0
  postgres_started=true
  local port dir env_lines line
  port=$(free_port 5433)
  dir=$(mktemp -d /tmp/switchback-postgres.XXXXXX)
  log "starting PostgreSQL on port $port"
  if env_lines=$(bash scripts/postgres.sh up --dir "$dir" --port "$port"); then
    while IFS= read -r line; do export "$line"; done <<<"$env_lines"
    cleanup+=("bash scripts/postgres.sh down --dir '$dir'")
  else
    log "PostgreSQL did not start; its tests will skip (or fail under CI=true)"
  fi
}

# Our own targets build without warnings (dependencies' warnings are theirs); a fresh clone compiles every
# file, so CI sees every warning. A warning inside a macro's expansion (#expect, #require) is printed
# against the macro, and the next line names the file that used it.
own_warnings() {
  local log_file=$1 dirs=$2
  if grep -E "^$root/($dirs)/[^:]+:[0-9]+:[0-9]+: warning:" "$log_file" >&2; then
    log "the build above warns in the project's own code"
    return 0
  fi
  if grep -E -A1 "^macro expansion [^:]+:[0-9]+:[0-9]+: warning:" "$log_file" \
    | grep -E '^`- '"$root"'/('"$dirs"')/[^:]+:[0-9]+:[0-9]+: note: expanded code originates here' >&2; then
    log "the build above warns in a macro's expansion in the project's own code"
    return 0
  fi
  return 1
}

# Where each package builds. The WebKitGTK host is built on the tools (its scenarios are theirs) and
# shares their folder, so that it compiles only itself: a folder of its own would compile every
# dependency of the tools again, about 7 minutes. Two packages in one folder need SwiftPM to plan each
# build afresh (--disable-build-manifest-caching); otherwise it may reuse the plan it cached for the other.
core=(--package-path .)
tools=(--package-path Tools --scratch-path "$root/Tools/.build" --disable-build-manifest-caching)
webkit=(--package-path WebKitHost --scratch-path "$root/Tools/.build" --disable-build-manifest-caching)

# Builds a package (with its tests) once per run, failing on a warning of our own.
built=" "
build_package() {
  local name=$1 dirs=$2
  shift 2
  [[ "$built" == *" $name "* ]] && return 0
  local build_log
  build_log=$(mktemp /tmp/switchback-build.XXXXXX)
  cleanup+=("rm -f '$build_log'")
  swift build --build-tests "$@" 2>&1 | tee "$build_log"
  if own_warnings "$build_log" "$dirs"; then exit 1; fi
  built="$built$name "
}
build_core() { build_package core 'Sources|Tests|Examples' "${core[@]}"; }
build_tools() { build_package tools 'Tools/Sources|Tools/Tests|Tools/Examples|Sources' "${tools[@]}"; }
tools_bin() { swift build --show-bin-path "${tools[@]}"; }

# MARK: The stages

stage_format() {
  bash scripts/format.sh --check
}

stage_apple() {
  bash scripts/apple-typecheck.sh
}

stage_core() {
  base_tools
  build_core
  swift test --skip-build --skip "$core_interop" ${test_args[@]+"${test_args[@]}"}
}

# The public API of the products an app uses, against the newest release tag (CONTRIBUTING.md, "Versions"):
# a break must be listed in api-breakage-allowlist.txt (one diagnostic a line), which a release removes.
# Before the first tag there is nothing to compare with.
stage_api() {
  local tag
  tag=$(git tag --list '[0-9]*.[0-9]*.[0-9]*' | sort -V | tail -1)
  if [ -z "$tag" ]; then
    log "no release tag yet: nothing to compare the API with"
    return 0
  fi
  local allowed=()
  [ -f api-breakage-allowlist.txt ] && allowed=(--breakage-allowlist-path api-breakage-allowlist.txt)
  swift package diagnose-api-breaking-changes "$tag" --products Switchback SwitchbackApple SwitchbackTesting ${allowed[@]+"${allowed[@]}"}
  log "the public API keeps every declaration of $tag, or its break is allowed for"
}

stage_interop() {
  base_tools
  start_glewlwyd
  build_core
  build_tools
  swift test --skip-build --filter "$core_interop" ${test_args[@]+"${test_args[@]}"}
  swift test --skip-build "${tools[@]}" --filter "$tools_interop" ${test_args[@]+"${test_args[@]}"}
}

stage_tools() {
  base_tools
  start_postgres
  build_tools
  swift test --skip-build "${tools[@]}" --skip "$tools_interop" ${test_args[@]+"${test_args[@]}"}
}

# The app-side products as an app ships them, in release: some warnings (a public import no public
# declaration uses) appear only without the debug build's testability. About 5 minutes from cold. (Tools'
# release build takes about 15 minutes; it is checked by hand, see CONTRIBUTING.md.)
stage_release() {
  local release_log
  release_log=$(mktemp /tmp/switchback-release.XXXXXX)
  cleanup+=("rm -f '$release_log'")
  swift build -c release --scratch-path "$root/.build-release" 2>&1 | tee "$release_log" | tail -1
  if grep -E "^$root/Sources/[^:]+:[0-9]+:[0-9]+: warning:" "$release_log" >&2; then
    log "the release build above warns in the project's own code"
    exit 1
  fi
  log "release build of the app-side products: no warnings of our own"
}

pip_install() {
  local module=$1 requirement=$2
  python3 -c "import $module" 2>/dev/null && return 0
  log "installing $requirement from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check "$requirement" >&2
}

# Checks by libraries written by others: joserfc verifies the emulator's ID tokens and the companion's
# OpenID4VP request objects (and encrypts the wallet's answers); sd-jwt, the OpenWallet Foundation's
# library, issues and presents SD-JWT credentials; pymdoccbor (the EUDI wallet project's) issues mdocs,
# with cbor2 and cryptography signing the device authentication. Tampered variants must be refused.
stage_crosschecks() {
  base_tools
  build_tools
  local bin
  bin=$(tools_bin)
  pip_install joserfc 'joserfc==1.6.5'
  pip_install sd_jwt 'sd-jwt==0.10.4'
  pip_install pymdoccbor 'pymdoccbor==1.4.0'
  python3 scripts/check_emulator_tokens.py "$bin/switchback"
  python3 scripts/check_sd_jwt.py "$bin/switchback"
  python3 scripts/check_openid4vp.py "$bin/switchback" 2>/dev/null
  python3 scripts/check_mdoc.py "$bin/switchback" 2>/dev/null
  python3 scripts/check_status.py "$bin/switchback"
}

# A smoke run of every libFuzzer target (Documentation/Fuzzing.md), 20 s each from its committed corpus,
# two at a time, with AddressSanitizer: a change that crashes, hangs or breaks a property on an input the
# corpus holds fails here. Then the CBOR reader against cbor2 over the CBOR and mdoc corpora. The fuzz build
# is its own package (Fuzz/), in Fuzz/.build.
stage_fuzz() {
  command -v readelf >/dev/null || apt_install binutils
  pip_install cbor2 'cbor2==6.3.0'
  bash scripts/fuzz.sh all 20
  python3 scripts/cbor_differential.py Fuzz/.build/release/SwitchbackFuzz Fuzz/Corpus/cbor Fuzz/Corpus/mdoc
}

stage_examples() {
  base_tools
  build_tools
  local bin app_check
  bin=$(tools_bin)
  # The main job, for every provider preset: each must sign in.
  "$bin/switchback" demo --all >/dev/null
  log "switchback demo --all: every preset signed in"
  # Every benchmark section in a smoke run (a fraction of a second per row; the figures mean nothing here,
  # BENCHMARKS.md has the measured ones), so that a benchmark cannot stop running unnoticed.
  BENCH_SECONDS=0.05 "$bin/SwitchbackBenchmarks" >/dev/null
  log "benchmarks: every section ran (smoke mode)"
  "$bin/GettingStarted" 2>/dev/null
  log "GettingStarted: the README's code signed in"
  "$bin/Guides" 2>/dev/null
  log "Guides: UAE Pass, MitID (app and backend completion), Norwegian BankID, OpenID Connect and Singpass signed in"
  # An app that depends on Switchback resolves only the app-side products' dependencies (the README's figure).
  app_check=$(mktemp -d /tmp/switchback-app.XXXXXX)
  cleanup+=("rm -rf '$app_check'")
  bash scripts/app-dependencies.sh "$app_check"
}

# Every symbol and article link resolves (warnings are errors). The symbol graphs come from the core's
# build folder; the Apple module compiles to nothing here, so its catalog is checked as articles.
stage_docc() {
  local docs graphs module
  docs=$(mktemp -d /tmp/switchback-docs.XXXXXX)
  cleanup+=("rm -rf '$docs'")
  swift package dump-symbol-graph --minimum-access-level public >/dev/null
  graphs="$(swift build --show-bin-path)/../symbolgraph"
  for module in Switchback SwitchbackApple; do
    mkdir -p "$docs/$module"
    cp "$graphs/$module.symbols.json" "$docs/$module/"
    docc convert "Sources/$module/Documentation.docc" --additional-symbol-graph-dir "$docs/$module" --fallback-display-name "$module" \
      --fallback-bundle-identifier "org.switchback.$module" --output-path "$docs/$module.doccarchive" --warnings-as-errors >/dev/null
  done
  log "DocC: the Switchback and SwitchbackApple catalogs build without warnings"
}

# The WebView host on a real WebKit engine: WebKitGTK under Xvfb (WebKitHost/, a package of its own so that
# the main package needs nothing beyond the toolchain).
stage_webkit() {
  webkit_ready() { pkg-config --exists webkit2gtk-4.1 2>/dev/null && command -v xvfb-run >/dev/null; }
  if ! webkit_ready; then
    apt_install libwebkit2gtk-4.1-dev xvfb xauth pkg-config || log "WebKitGTK could not be installed"
  fi
  if ! webkit_ready; then
    if [ "${CI:-}" = true ]; then
      log "WebKitGTK or Xvfb is missing and CI=true: the real-engine tests must run"
      exit 1
    fi
    log "WebKitGTK tests skipped: libwebkit2gtk-4.1-dev or xvfb-run is missing and could not be installed"
    return 0
  fi
  base_tools
  build_package webkit 'WebKitHost/Sources|WebKitHost/Tests' "${webkit[@]}"
  xvfb-run -a swift test --skip-build "${webkit[@]}" ${test_args[@]+"${test_args[@]}"}
  log "WebKitGTK $(pkg-config --modversion webkit2gtk-4.1) tests passed"
  # The demo's scenarios with every user agent on the engine: each preset with each strategy (signed in, or
  # refused, typed, where the preset says it cannot work), a decline, a kill during the hand-off and MitID's
  # backend completion; screenshots and their index are written and thrown away.
  local shots
  shots=$(mktemp -d /tmp/switchback-webkit.XXXXXX)
  cleanup+=("rm -rf '$shots'")
  xvfb-run -a "$(swift build --show-bin-path "${webkit[@]}")/switchback-webkit" demo --all --screenshots "$shots" >/dev/null
  log "switchback-webkit demo --all: every preset and user agent on WebKitGTK"
}

for stage in "${selected[@]}"; do
  log "stage $stage: $(describe "$stage")"
  started=$(date +%s)
  current=$stage
  "stage_$stage"
  current=""
  timings+=("$(printf '%-12s %5d s' "$stage" $(($(date +%s) - started)))")
done
log "stages passed: ${selected[*]}"
