#!/usr/bin/env zsh
# SPDX-License-Identifier: Apache-2.0
# What zsh's own completion offers for dpas: an interactive zsh in a pseudo-terminal (zsh/zpty)
# with compinit and the generated _dpas on its fpath is sent each line typed and a TAB; compadd,
# wrapped, records the matches it is given that fit what was typed (its -O), then adds them as
# usual. Prints "TYPED => MATCH MATCH ..." per line typed.
# usage: zsh -f zsh_complete.zsh SITE_FUNCTIONS_DIR 'dpas sw' 'dpas cost --cal' ...
emulate -L zsh
zmodload zsh/zpty || { print -u2 "zsh_complete: no zsh/zpty module"; exit 1 }
dir=$1; shift
tmp=$(mktemp -d)
trap 'zpty -d c 2>/dev/null; rm -rf $tmp' EXIT
zpty c "zsh -f -i"
# one line of setup, so that one prompt follows it; the prompt's text is split in the line, so
# that the line's echo is not taken for the prompt
zpty -w c "PS1=\$'\\nREA''DY> '; fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D;"\
" compadd() { if (( \${@[(I)-[OAD]]} )); then builtin compadd \"\$@\"; return; fi;"\
" local -a __m; builtin compadd -O __m \"\$@\"; (( \$#__m )) && print -rl -- \$__m >> $tmp/m;"\
" builtin compadd \"\$@\" }"
zpty -r -m c line '*READY> *' || { print -u2 "zsh_complete: no prompt"; exit 1 }
for typed in "$@"; do
  : > $tmp/m
  # the line and a TAB, then Ctrl-U and a command that ends: its prompt says the TAB is done
  zpty -w -n c "$typed"$'\t'$'\x15'": __end__"$'\n'
  zpty -r -m c line '*__end__*READY> *' || { print -u2 "zsh_complete: no answer to '$typed'"; exit 1 }
  print -r -- "$typed => ${(j: :)${(f)"$(<$tmp/m)"}}"
done
