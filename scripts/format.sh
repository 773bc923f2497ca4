#!/usr/bin/env bash
# Formats the project's Swift code with swift-format and .swift-format (line length 150, four spaces).
# The examples are left as written: the DocC guides quote them line for line.
# usage: scripts/format.sh           format in place
#        scripts/format.sh --check   fail, listing the files, when formatting would change any
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=(Sources Tools/Sources Tests Tools/Tests WebKitHost/Sources WebKitHost/Tests Fuzz/Sources
  AppleSurface/Sources/AuthenticationServices AppleSurface/Sources/SafariServices AppleSurface/Sources/Security
  AppleSurface/Sources/SwiftUI AppleSurface/Sources/UIKit AppleSurface/Sources/WebKit AppleSurface/Sources/_Testing_UIKit)
# Regular files only: the test targets link shared files, which are formatted once, where they live.
files=()
while IFS= read -r -d '' file; do files+=("$file"); done < <(find "${dirs[@]}" -name '*.swift' -type f -print0)
if [ "${1:-}" != "--check" ]; then
  swift format format --in-place --parallel "${files[@]}"
  exit 0
fi
changed=()
for file in "${files[@]}"; do
  if ! swift format format "$file" | cmp -s - "$file"; then changed+=("$file"); fi
done
if [ ${#changed[@]} -gt 0 ]; then
  printf 'format.sh: not formatted (run scripts/format.sh): %s\n' "${changed[@]}" >&2
  exit 1
fi
echo "format.sh: every Swift file is formatted" >&2
