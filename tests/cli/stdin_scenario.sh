#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: stdin_scenario.sh DPAS YAML_FILE
set -u
dpas=$1 yaml=$2
fail=0
check() { if ! "$@"; then echo "FAIL: $*"; fail=1; fi; }
for cmd in eval cost inventory memory; do
  a=$("$dpas" $cmd "$yaml" -o json 2>&1); ra=$?
  b=$("$dpas" $cmd - -o json <"$yaml" 2>&1); rb=$?
  # the same rows; the scenario's label names its source ("(standard input)" for -)
  a=${a//$yaml/SRC} b=${b//(standard input)/SRC}
  check test "$ra" = "$rb"
  check test "$a" = "$b"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo '{"workload": "Models.Language.GPT3", "fleet": "Systems.Clusters.Training_1K", "dp_degree": 8,
 "gradient_bytes_per_param": "2 B", "checkpoint_bytes_per_param": "14 B"}' >"$tmp/s.json"
check test "$("$dpas" eval --attr gather_factor -o csv - <"$tmp/s.json" | tail -1)" = "gather_factor,7,1,"
out=$(head -c 1048577 /dev/zero | "$dpas" eval - 2>"$tmp/err"); rc=$?
check test "$rc" = 1
check test -z "$out"
check grep -q "larger than 1 MiB" "$tmp/err"
out=$("$dpas" eval - <"$tmp" 2>"$tmp/err"); rc=$?
check test "$rc" = 1
check test -z "$out"
check grep -q "cannot read the scenario file from standard input" "$tmp/err"
exit $fail
