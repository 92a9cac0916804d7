#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C sources are as .clang-format lays them out: exit 1 naming the files that are not
# (`make format` fixes them). Generated files (networks.inc) and embedded data are left out.
# usage: scripts/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files 'include/*.h' 'src/*.c' 'src/*.h' 2>/dev/null || find include src -name '*.[ch]')
bad=0
for f in $files; do
  if [ "${1:-}" = "--fix" ]; then
    clang-format -i "$f"
  elif ! clang-format "$f" | cmp -s - "$f"; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=1
  fi
done
exit $bad
