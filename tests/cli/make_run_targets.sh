#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make run` builds only what the dpas command needs (issue 31: it built all 179 targets, tests,
# benches and fuzz replays, to print one scenario). The target the Makefile's run recipe builds
# is read from the Makefile; a fresh build tree is configured as the default preset does (Ninja)
# and that target's build is planned, not run (ninja -n): its link steps must be the library,
# the CLI's library and the dpas executable, nothing else.
# usage: make_run_targets.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "make_run_targets: $*" >&2; exit 1; }
recipe=$(sed -n '/^run:/,/^$/p' "$src/Makefile")
target=$(grep -o -- '--target [A-Za-z0-9_.]*' <<<"$recipe" | awk '{print $2}')
[ -n "$target" ] || fail "the run recipe names no --target: $recipe"
[ "$(wc -w <<<"$target")" = 1 ] || fail "the run recipe builds several targets: $target"
cmake -S "$src" -B "$tmp" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
links=$(ninja -C "$tmp" -n "$target" | grep -o 'Linking C [a-z ]* [^ ]*$' | awk '{print $NF}' | sort | tr '\n' ' ')
want="dpas libdpas.a libdpas_cli_lib.a "
[ "$links" = "$want" ] || fail "make run ($target) links '$links'; want '$want'"
steps=$(ninja -C "$tmp" -n "$target" | wc -l)
all=$(ninja -C "$tmp" -n all | wc -l)
echo "make run builds $target: $steps of the $all steps of a full build, linking $links"
