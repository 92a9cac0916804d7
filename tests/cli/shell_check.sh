#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The generated man pages and completions, installed: `man dpas-cost` and `man dpas` find their
# pages under the prefix and show the key table's flags; the bash completion, sourced, completes
# a command, a partial flag of a command, a list kind and a format (COMPREPLY checked).
# usage: shell_check.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp" >/dev/null
fail() { echo "shell_check: $*" >&2; exit 1; }
export MANPATH="$tmp/share/man" MANWIDTH=100
page=$(man -P cat dpas-cost 2>&1) || fail "man dpas-cost: $page"
grep -q -- '--calibration FILE' <<<"$page" || fail "man dpas-cost lacks --calibration FILE"
grep -q -- '--memory-bandwidth' <<<"$page" || fail "man dpas-cost lacks --memory-bandwidth"
page=$(man -P cat dpas-sweep 2>&1) || fail "man dpas-sweep: $page"
grep -q -- '--data FILE' <<<"$page" || fail "man dpas-sweep lacks --data"
page=$(man -P cat dpas 2>&1) || fail "man dpas: $page"
grep -q 'dpas-calibrate' <<<"$page" || fail "man dpas does not point to dpas-calibrate"
# shellcheck disable=SC1091
source "$tmp/share/bash-completion/completions/dpas"
complete_words() { # the words typed so far, the last one partial: COMPREPLY
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _dpas
  echo " ${COMPREPLY[*]} "
}
[[ $(complete_words dpas sw) == " sweep " ]] || fail "dpas sw: $(complete_words dpas sw)"
got=$(complete_words dpas "")
for c in show eval list rules cost inventory memory sweep calibrate serve help; do
  [[ $got == *" $c "* ]] || fail "dpas <TAB> lacks $c: $got"
done
page=$(man -P cat dpas-memory 2>&1) || fail "man dpas-memory: $page"
got=$(complete_words dpas cost --cal)
[[ $got == " --calibration " ]] || fail "dpas cost --cal: $got"
got=$(complete_words dpas sweep --pl)
[[ $got == " --plot " ]] || fail "dpas sweep --pl: $got"
got=$(complete_words dpas sweep --f)
[[ $got == *" --f "* && $got == *" --font "* && $got == *" --fleet "* ]] || fail "dpas sweep --f: $got"
got=$(complete_words dpas rules --pl)
[[ $got == "  " ]] || fail "dpas rules --pl (rules has no --plot): $got"
got=$(complete_words dpas list mo)
[[ $got == " models " ]] || fail "dpas list mo: $got"
got=$(complete_words dpas cost -o j)
[[ $got == " json " ]] || fail "dpas cost -o j: $got"
got=$(complete_words dpas help ca)
[[ $got == " calibrate " ]] || fail "dpas help ca: $got"
echo "man pages and bash completion: ok"
