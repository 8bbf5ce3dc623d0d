#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts the SPDX licence line first in every source file of the repository, and does nothing to a
# file that already has it, so it can be run again after any merge:
#   .java files:                      // SPDX-License-Identifier: Apache-2.0   (the first line)
#   shell scripts (*.sh, or a #! line naming sh or bash):
#                                     # SPDX-License-Identifier: Apache-2.0    (after the #! line)
# Skipped: build output (target/), hidden directories (.git, .mvn, .ci, .bundle, ...).
# The build's check (docs/src/test/java/metrale/docs/SpdxHeadersTest.java) applies the same rules
# and names every file that lacks the line.
#
# Usage: scripts/spdx-headers.sh [--check]   (--check lists the files that lack it, exit 1 if any)
set -euo pipefail

# All in one function, called on the last line: bash reads a script as it runs, and this script
# may edit files, itself included, so it must have read everything before the first edit.
main() {
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

java_line='// SPDX-License-Identifier: Apache-2.0'
sh_line='# SPDX-License-Identifier: Apache-2.0'
check=false
[ "${1:-}" = "--check" ] && check=true

is_shell() {
  case "$1" in
    *.sh) return 0 ;;
    *.java|*.md|*.xml|*.cmd|*.ptx|*.cu|*.json|*.log|*.txt|*.properties|*.svg) return 1 ;;
  esac
  local first
  first="$(head -n 1 "$1" 2>/dev/null || true)"
  [[ "$first" =~ ^#!.*(/|env\ )(ba)?sh([[:space:]]|$) ]]
}

missing=0
changed=0
while IFS= read -r -d '' f; do
  f="${f#./}"
  if [[ "$f" == *.java ]]; then
    if [ "$(head -n 1 "$f")" != "$java_line" ]; then
      if $check; then echo "$f"; missing=$((missing + 1)); continue; fi
      { printf '%s\n' "$java_line"; cat "$f"; } > "$f.spdx.tmp" && cat "$f.spdx.tmp" > "$f" && rm -f "$f.spdx.tmp"
      changed=$((changed + 1))
    fi
  elif is_shell "$f"; then
    if head -n 1 "$f" | grep -q '^#!'; then
      [ "$(sed -n 2p "$f")" = "$sh_line" ] && continue
      if $check; then echo "$f"; missing=$((missing + 1)); continue; fi
      { head -n 1 "$f"; printf '%s\n' "$sh_line"; tail -n +2 "$f"; } > "$f.spdx.tmp"
    else
      [ "$(head -n 1 "$f")" = "$sh_line" ] && continue
      if $check; then echo "$f"; missing=$((missing + 1)); continue; fi
      { printf '%s\n' "$sh_line"; cat "$f"; } > "$f.spdx.tmp"
    fi
    # cat > keeps the file's mode (an executable script stays executable).
    cat "$f.spdx.tmp" > "$f" && rm -f "$f.spdx.tmp"
    changed=$((changed + 1))
  fi
done < <(find . \( -name target -o -name '.?*' \) -prune -o -type f -print0)

if $check; then
  [ "$missing" -eq 0 ] || { echo "spdx-headers: $missing file(s) lack the SPDX line; run scripts/spdx-headers.sh" >&2; exit 1; }
  exit 0
fi
echo "spdx-headers: added the SPDX line to $changed file(s)" >&2
}

main "$@"; exit $?
