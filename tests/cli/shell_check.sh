#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The generated man pages and completions, installed: `man dpas-cost` and `man dpas` find their
# pages under the prefix and show the key table's flags (a list's metavar whole: --attr A[,A...]);
# the bash, zsh and fish completions, run by their own shells from where they are installed,
# complete a command, a partial flag of a command, a list kind, a format and `help`'s command
# (bash: COMPREPLY; zsh: its completion system in a pseudo-terminal, zsh_complete.zsh; fish:
# `complete -C`). zsh and fish are Debian packages of scripts/install-deps.sh: missing, a failure.
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
page=$(man -P cat dpas-eval 2>&1) || fail "man dpas-eval: $page"
grep -q -- '--attr A\[,A...\]' <<<"$page" || fail "man dpas-eval: --attr without its A[,A...]"
echo "man pages and bash completion: ok"

# The same cases in zsh and fish: what the shell offers, as "TYPED => MATCH ...".
cases=("dpas sw => sweep"
       "dpas sweep --pl => --plot"
       "dpas cost --cal => --calibration"
       "dpas rules --pl => "
       "dpas list mo => models"
       "dpas cost -o j => json"
       "dpas help ca => calibrate")
all=" show eval list rules cost inventory memory sweep calibrate serve help "
for sh in zsh fish; do
  command -v $sh >/dev/null || fail "$sh is missing (scripts/install-deps.sh installs it)"
done
typed=()
for c in "${cases[@]}"; do typed+=("${c% => *}"); done
here=$(cd "$(dirname "$0")" && pwd)
zgot=$(zsh -f "$here/zsh_complete.zsh" "$tmp/share/zsh/site-functions" "${typed[@]}" "dpas " "dpas sweep --f") ||
  fail "zsh: $zgot"
fgot=""
for t in "${typed[@]}" "dpas " "dpas sweep --f"; do
  # fish prints "MATCH<TAB>description" per line; the matches, in its order
  m=$(fish --no-config -c "source $tmp/share/fish/vendor_completions.d/dpas.fish; complete -C '$t'" |
      cut -f1 | tr '\n' ' ')
  fgot+="$t => ${m% }"$'\n'
done
for sh in zsh fish; do
  [ $sh = zsh ] && got=$zgot || got=$fgot
  for c in "${cases[@]}"; do
    grep -qxF -- "$c" <<<"$got" || fail "$sh: want '$c'; got: $(grep -F -- "${c% => *} =>" <<<"$got")"
  done
  line=$(grep -F -- "dpas  => " <<<"$got")
  for c in $all; do
    [[ " ${line#*=> } " == *" $c "* ]] || fail "$sh: dpas <TAB> lacks $c: $line"
  done
  line=$(grep -F -- "dpas sweep --f => " <<<"$got")
  for f in --f --font --fleet; do
    [[ " ${line#*=> } " == *" $f "* ]] || fail "$sh: dpas sweep --f lacks $f: $line"
  done
done
echo "zsh and fish completion: ok"
