#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The emulated cluster leaves nothing behind:
#   1. TERM while MPI processes run inside its namespaces: the namespaces, the daemons and the
#      ranks are gone, and the script exits 143;
#   2. KILL (no trap can run): what it left is found by its prefix and dead pid and removed by the
#      next run (--sweep-stale);
#   3. not root: it skips (exit 77) with a message saying why, and creates nothing.
# usage: cleanup_check.sh EMUCLUSTER
set -euo pipefail
emu=$1
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the emulated cluster needs root"; exit 77; }

fail() { echo "FAIL: $*"; exit 1; }
ours() { ip netns list | awk '{print $1}' | grep -c "^dpascl-$1-" || true; }
wait_for() { # CONDITION-COMMAND, seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do eval "$1" && return 0; sleep 0.1; done
  return 1
}

# 1. TERM with ranks running inside the namespaces
marker="sleep 120.$$"  # a duration of its own, to find the ranks by
bash "$emu" --hosts 2 -- sh -c "\"\$DPAS_CLUSTER_MPIRUN\" -np 2 $marker" &
pid=$!
wait_for '[ "$(ours $pid)" -eq 4 ] && pgrep -f "^$marker" >/dev/null' 30 ||
  fail "the cluster (4 namespaces) and its 2 ranks did not come up"
[ "$(pgrep -f "^$marker" | wc -l)" -eq 2 ] || fail "expected 2 ranks running"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 143 ] || fail "exit status $rc after TERM, expected 143"
[ "$(ours $pid)" -eq 0 ] || fail "namespaces left after TERM: $(ip netns list | grep "dpascl-$pid-")"
wait_for '! pgrep -f "^$marker" >/dev/null' 5 || fail "ranks left running after TERM"
echo "ok: TERM removed the namespaces and ended the ranks (exit 143)"

# 2. KILL: nothing can clean up at once; the next run's sweep does
# (the command, left orphaned, is ended here by its pid: it would hold ctest's output open)
bash "$emu" --hosts 2 -- sleep "121.$$" &
pid=$!
wait_for '[ "$(ours $pid)" -eq 4 ] && pgrep -P $pid -f "^sleep 121.$$" >/dev/null' 30 ||
  fail "the cluster and its command did not come up"
sleeper=$(pgrep -P "$pid" -f "^sleep 121.$$")
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
kill "$sleeper" 2>/dev/null || true
[ "$(ours $pid)" -eq 4 ] || fail "expected the killed run's 4 namespaces to be left"
bash "$emu" --sweep-stale
[ "$(ours $pid)" -eq 0 ] || fail "--sweep-stale left: $(ip netns list | grep "dpascl-$pid-")"
echo "ok: after KILL, --sweep-stale removed the dead run's namespaces"

# 3. not root: a clear skip, nothing created
before=$(ip netns list | wc -l)
rc=0
err=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash "$emu" --hosts 2 -- true 2>&1) || rc=$?
[ "$rc" -eq 77 ] || fail "not root: exit $rc, expected 77 ($err)"
case "$err" in *"SKIP: network namespaces need root"*) ;; *) fail "not root: message \"$err\"" ;; esac
[ "$(ip netns list | wc -l)" -eq "$before" ] || fail "not root: namespaces were created"
echo "ok: not root: $err"
