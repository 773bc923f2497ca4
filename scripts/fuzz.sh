#!/usr/bin/env bash
# Runs the libFuzzer targets of Fuzz/ (one per parser an attacker reaches; Documentation/Fuzzing.md).
#
#   scripts/fuzz.sh --list            the targets, one a line
#   scripts/fuzz.sh TARGET SECONDS    builds if needed, runs TARGET on its committed corpus for SECONDS
#   scripts/fuzz.sh all SECONDS       every target, SECONDS each, two at a time
#   scripts/fuzz.sh merge TARGET      folds what runs found into TARGET's committed corpus, minimised (inputs
#                                     named finding-* or harness-*, kept as regressions, stay as they are)
#
# Exits non-zero on a crash, a failed property, a timeout (an input taking over 10 s) or a memory blow-up
# (over 2048 MB); the input is kept in Fuzz/.build/fuzz-out/TARGET/. New inputs the run finds go to that
# folder too, never into the committed corpus (Fuzz/Corpus/TARGET) until `merge`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/Fuzz"

targets() {
  # The names the targets are declared with (Fuzz/Sources/FuzzTargets/Targets+*.swift).
  grep -h -A1 -E 'static let [A-Za-z0-9]+ = FuzzTarget\($' "$fuzz"/Sources/FuzzTargets/Targets+*.swift |
    grep -oE '^ +"[a-z0-9-]+"' | tr -d ' "'
}

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }

case "${1:-}" in
  --list) targets; exit 0 ;;
  -h|--help|"") usage; exit 0 ;;
esac
[ $# -eq 2 ] || { usage >&2; exit 2; }
if [ "$1" = merge ]; then
  target=$2
  targets | grep -qx "$target" || { echo "fuzz.sh: no target $target" >&2; exit 2; }
  binary="$fuzz/.build/release/SwitchbackFuzz"
  [ -x "$binary" ] || { echo "fuzz.sh: run the target first" >&2; exit 1; }
  merged=$(mktemp -d)
  SWIFT_BACKTRACE=enable=no SWITCHBACK_FUZZ_TARGET="$target" "$binary" -merge=1 "$merged" "$fuzz/Corpus/$target" \
    "$fuzz/.build/fuzz-out/$target/corpus" -artifact_prefix="$fuzz/.build/fuzz-out/$target/" >/dev/null 2>&1
  find "$fuzz/Corpus/$target" -type f ! -name 'finding-*' ! -name 'harness-*' -delete
  cp "$merged"/* "$fuzz/Corpus/$target/" 2>/dev/null || true
  rm -rf "$merged"
  echo "fuzz.sh: $target's corpus holds $(ls "$fuzz/Corpus/$target" | wc -l) inputs" >&2
  exit 0
fi
target=$1
seconds=$2
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2; }
if [ "$target" != all ] && ! targets | grep -qx "$target"; then
  echo "fuzz.sh: no target $target; scripts/fuzz.sh --list names them" >&2
  exit 2
fi

# One instrumented binary serves every target (SWITCHBACK_FUZZ_TARGET picks one).
echo "fuzz.sh: building Fuzz/ with -sanitize=fuzzer,address (release)" >&2
# A cached build plan loses the coverage instrumentation of the modules it rebuilds (the fuzzer then finds
# nothing new): the plan is made afresh each time.
# SwiftPM writes the two sanitizers as two -sanitize= options in an order that changes from one run to the next
# (it keeps them in a set), and swiftc takes only the last one: about one build in two had Swift compiled with
# AddressSanitizer and no coverage counters (34 425 counters, BoringSSL's alone: the fuzzer runs blind), the
# other with coverage and no AddressSanitizer. -Xswiftc puts both in one option after SwiftPM's, so it is the
# one swiftc takes. C code (BoringSSL) is compiled by clang, which takes every -fsanitize=.
build() {
  (cd "$fuzz" && swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
    --disable-build-manifest-caching) 2>&1 | grep -E "error|Build complete" | tail -3 >&2
}
# The coverage counters the binary holds (the size of its __sancov_cntrs section, a byte each).
counters() {
  local size
  size=$(readelf -S -W "$binary" 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "__sancov_cntrs") print $(i + 4) }')
  echo $((16#${size:-0}))
}
binary="$fuzz/.build/release/SwitchbackFuzz"
build
[ -x "$binary" ] || { echo "fuzz.sh: the build made no $binary" >&2; exit 1; }
# Both sanitizers must be in the Swift code: coverage counters for every module (about 385 000 counters;
# BoringSSL's alone are 34 425), and AddressSanitizer's checks in the targets' own code.
if [ "$(counters)" -lt 200000 ]; then
  echo "fuzz.sh: the binary has only $(counters) coverage counters: the Swift modules were built without -sanitize=fuzzer" >&2
  exit 1
fi
if ! nm "$fuzz/.build/release/FuzzTargets.build/FuzzTarget.swift.o" 2>/dev/null | grep -q __asan_report; then
  echo "fuzz.sh: the Swift modules were built without -sanitize=address" >&2
  exit 1
fi

run() {
  local name=$1 out="$fuzz/.build/fuzz-out/$1"
  mkdir -p "$out/corpus" "$fuzz/Corpus/$name"
  # Swift's own crash reporter would symbolicate under AddressSanitizer for minutes; libFuzzer reports the crash.
  # LeakSanitizer is off: Swift keeps references inside enum payloads with spare bits set (Data's storage in
  # an optional request, say), which it does not take for pointers, so it reports memory still in use. A
  # real leak still shows as growth, which -rss_limit_mb stops.
  if ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no SWITCHBACK_FUZZ_TARGET="$name" "$binary" "$out/corpus" "$fuzz/Corpus/$name" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=0 -artifact_prefix="$out/" -print_final_stats=1 \
    >"$out/log" 2>&1; then
    local stats
    stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out/log" | tail -1 |
      sed -E 's/^#([0-9]+)[[:space:]]+DONE[[:space:]]+cov: ([0-9]+).*corp: ([0-9]+).*exec\/s: ([0-9]+).*/\1 runs, \2 edges, \3 inputs, \4 runs\/s/' || true)
    printf 'fuzz.sh: %-17s passed: %s\n' "$name" "$stats" >&2
  else
    printf 'fuzz.sh: %-17s FAILED: %s\n' "$name" "$(grep -E 'property failed|ERROR:' "$out/log" | head -2 | tr '\n' ' ' || true)" >&2
    ls "$out"/crash-* "$out"/timeout-* "$out"/oom-* 2>/dev/null | sed 's/^/  kept: /' >&2
    return 1
  fi
}

if [ "$target" != all ]; then
  run "$target"
  exit
fi
failed=0
pids=()
for name in $(targets); do
  run "$name" & pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed
