#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one golden CLI case: NAME.cmd holds the arguments (shell words, run from the cases
# folder); NAME.out the exact stdout; NAME.code the exit code (0 when absent); NAME.err, when
# present, the exact stderr. The expected files are written by hand from the equations.
# With DPAS_GOLDEN_WRAP set (e.g. "valgrind -q --error-exitcode=99"), the binary runs under it.
set -u
bin=$1
case_file=$2
dir=$(dirname "$case_file")
base=$(basename "${case_file%.cmd}")
cd "$dir" || exit 1
eval "set -- $(cat "$base.cmd")"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
${DPAS_GOLDEN_WRAP:-} "$bin" "$@" >"$out" 2>"$err"
code=$?
want=0
[ -f "$base.code" ] && want=$(cat "$base.code")
status=0
if [ "$code" != "$want" ]; then
  echo "exit code $code, expected $want"
  status=1
fi
if ! diff -u "$base.out" "$out"; then
  echo "stdout differs from $base.out"
  status=1
fi
if [ -f "$base.err" ] && ! diff -u "$base.err" "$err"; then
  echo "stderr differs from $base.err"
  status=1
fi
if [ $status -ne 0 ]; then
  echo "--- stderr was:"
  cat "$err"
fi
exit $status
