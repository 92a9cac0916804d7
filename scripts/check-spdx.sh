#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file of dpas says its licence in its first lines (SPDX-License-Identifier:
# Apache-2.0, the LICENSE at the root): C, headers and generated includes, Python, shell, CMake,
# the Makefile and the page. Exit 1 naming the files that do not. Test data is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='\.(c|h|inc|py|sh|cmake|js|css|html)$|(^|/)CMakeLists\.txt$|(^|/)Makefile$|^\.ci/run$'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files | grep -E "$pattern" | grep -v '^tests/fuzz/corpus/' || true)
else
  files=$(find . -type f -not -path './build*' -not -path './.git/*' -not -path './tests/fuzz/corpus/*' |
    sed 's|^\./||' | grep -E "$pattern" || true)
fi
[ -n "$files" ] || { echo "no source files found"; exit 1; }
bad=0 n=0
for f in $files; do
  n=$((n + 1))
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2\.0'; then
    echo "no SPDX-License-Identifier: Apache-2.0 in the first 3 lines: $f"
    bad=1
  fi
done
grep -q '^ *Apache License$' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE ||
  { echo "LICENSE is not the Apache License 2.0"; bad=1; }
[ "$bad" -eq 0 ] && echo "ok: $n source files carry SPDX-License-Identifier: Apache-2.0"
exit $bad
