#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How often one command validates its scenario: a breakpoint on dpas_scenario_validate counts
# the calls (gdb, batch mode; nothing of the library is changed for it). A request is validated
# and evaluated once: `dpas cost` on the reference scenario at most 4 times, with a calibration
# too (78 before its rows timed the collectives of a validated scenario; 160 before
# the request layer: every row validated again), a sweep once per point and once for its base.
# Usage: validations.sh DPAS
set -u
dpas=$1
count() {
  gdb -nx -batch -ex 'set breakpoint pending on' -ex 'break dpas_scenario_validate' \
      -ex 'ignore 1 100000000' -ex run -ex 'info breakpoints' --args "$dpas" "$@" 2>/dev/null |
    sed -n 's/.*breakpoint already hit \([0-9]*\) time.*/\1/p'
}
status=0
check() { # LIMIT ARGS...
  local limit=$1
  shift
  local n
  n=$(count "$@")
  echo "dpas $*: ${n:-?} validations (at most $limit)"
  if [ -z "$n" ] || [ "$n" -gt "$limit" ]; then
    status=1
  fi
}
check 4 cost ReferenceJobAttackSurface
check 4 cost ReferenceJobAttackSurface -o json
check 4 cost ReferenceJobAttackSurface --calibration "$(dirname "$0")/../data/nccl-scaling/xxrjun_h100_10nodes_x8gpus_five_tests.log"
check 4 show ReferenceJobAttackSurface
check 4 memory ReferenceJobAttackSurface --zero 3
check 5 sweep ReferenceJobAttackSurface --dp 8,16,32,64 --schedule sharded
exit $status
