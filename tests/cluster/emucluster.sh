#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An emulated cluster on one Linux machine: N "hosts", each a network namespace with one link
# (a veth pair) to a Linux bridge that lives in a namespace of its own, the links between hosts
# shaped with tbf (a rate; this kernel kind has no netem, so no added delay), a launcher
# namespace for mpirun, the OpenMPI hostfile and the rsh agent that starts OpenMPI's daemons
# inside the hosts' namespaces (each with a host name of its own, emuhostI: a UTS namespace per
# daemon). It runs a command with the cluster up and always takes it down
# again (trap on EXIT, INT and TERM; a later run also removes what a killed run left, found by
# the unique prefix and the dead owner's pid). Nothing touches the machine's own network: every
# address lives only inside namespaces this script created.
#
# usage: emucluster.sh [--hosts N] [--ranks-per-host G] [--rate RATE] [--dir DIR] -- COMMAND...
#        emucluster.sh --sweep-stale      remove what killed runs left, and exit
#
#   --hosts N           emulated hosts (default 4, 1..64)
#   --ranks-per-host G  slots per host in the hostfile (default 1, 1..64)
#   --rate RATE         tbf rate of every host's link, each way, in tc's units (default 1gbit;
#                       "none": unshaped)
#   --burst SIZE        tbf burst (default 256kb; see below)
#   --dir DIR           where the hostfile, rsh agent and mpirun wrapper go (default: a new
#                       temporary directory, removed afterwards)
#
# COMMAND runs in the machine's namespace with, in its environment:
#   DPAS_CLUSTER_MPIRUN   a wrapper: "$DPAS_CLUSTER_MPIRUN" -np N PROGRAM ARGS runs mpirun inside
#                         the launcher namespace, with the hostfile, the rsh agent and TCP on the
#                         cluster's subnet only
#   DPAS_CLUSTER_HOSTFILE, DPAS_CLUSTER_HOSTS, DPAS_CLUSTER_RANKS_PER_HOST, DPAS_CLUSTER_RATE,
#   DPAS_CLUSTER_SUBNET, DPAS_CLUSTER_DIR
# and the script exits with COMMAND's status (77: the cluster cannot be made here, with the
# reason on stderr; 2: bad usage).
set -euo pipefail

PREFIX=dpascl
SUBNET=10.77.0        # /24, only inside this script's namespaces
hosts=4 rph=1 rate=1gbit burst=256kb dir= own_dir=0 wrote=0

die() { echo "emucluster: $*" >&2; exit 2; }
skip() { echo "emucluster: SKIP: $*" >&2; exit 77; }

# Namespaces are named PREFIX-PID-ROLE; a run whose PID is gone left them behind.
sweep_stale() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    case "$ns" in "$PREFIX"-*-*) ;; *) continue ;; esac
    pid=${ns#"$PREFIX"-}
    pid=${pid%%-*}
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    if ! kill -0 "$pid" 2>/dev/null; then
      kill_ns_procs "$ns"
      ip netns delete "$ns" 2>/dev/null || true
    fi
  done
  local d
  for d in "${TMPDIR:-/tmp}/$PREFIX"-*; do
    [ -d "$d" ] || continue
    pid=${d##*/"$PREFIX"-}
    pid=${pid%%.*}
    [[ "$pid" =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && rm -rf -- "$d"
  done
  return 0
}

# Processes left inside one of our namespaces (OpenMPI daemons of a killed run): ours to end.
kill_ns_procs() {
  local pids
  pids=$(ip netns pids "$1" 2>/dev/null || true)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    sleep 0.2
    pids=$(ip netns pids "$1" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
  fi
}

while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=${2:-}; shift 2 || die "--hosts needs a value" ;;
    --ranks-per-host) rph=${2:-}; shift 2 || die "--ranks-per-host needs a value" ;;
    --rate) rate=${2:-}; shift 2 || die "--rate needs a value" ;;
    --burst) burst=${2:-}; shift 2 || die "--burst needs a value" ;;
    --dir) dir=${2:-}; shift 2 || die "--dir needs a value" ;;
    --sweep-stale) [ "$(id -u)" -eq 0 ] || skip "not root"; sweep_stale; exit 0 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option \"$1\" (see --help)" ;;
  esac
done
[ $# -gt 0 ] || die "give a command after --"
[[ "$hosts" =~ ^[0-9]+$ ]] && [ "$hosts" -ge 1 ] && [ "$hosts" -le 64 ] ||
  die "--hosts must be a whole number from 1 to 64, got \"$hosts\""
[[ "$rph" =~ ^[0-9]+$ ]] && [ "$rph" -ge 1 ] && [ "$rph" -le 64 ] ||
  die "--ranks-per-host must be a whole number from 1 to 64, got \"$rph\""
[ "$rate" = none ] || [[ "$rate" =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$ ]] ||
  die "--rate must be a tc rate such as 1gbit or 500mbit, or none, got \"$rate\""
[[ "$burst" =~ ^[0-9]+[kmg]?b$ ]] || die "--burst must be a tc size such as 256kb, got \"$burst\""

# ---- can this machine make namespaces? ----
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root (run as root, or skip the cluster tests)"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
command -v tc >/dev/null || skip "tc (iproute2) is not installed"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"

sweep_stale
tag="$PREFIX-$$"
BR="$tag-br" CTL="$tag-ctl"
created=()

child=
cleanup() {
  local rc=$? ns
  trap - EXIT INT TERM
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    sleep 0.5
    kill -KILL "$child" 2>/dev/null || true
  fi
  for ns in "${created[@]}"; do kill_ns_procs "$ns"; done
  for ns in "${created[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
  if [ "$own_dir" -eq 1 ]; then
    rm -rf -- "$dir"
  elif [ "$wrote" -eq 1 ]; then
    rm -rf -- "$dir/tmp" "$dir/hostfile" "$dir/hosts.map" "$dir/rsh-agent" "$dir/mpirun"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkns() {
  ip netns add "$1" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
  created+=("$1")
  ip -n "$1" link set lo up
}

# The bridge, in its own namespace; the launcher on it, unshaped.
mkns "$BR"
ip -n "$BR" link add br0 type bridge || skip "cannot create a Linux bridge in a namespace"
ip -n "$BR" link set br0 up
mkns "$CTL"
ip -n "$BR" link add vctl type veth peer name eth0 netns "$CTL" || skip "cannot create a veth pair"
ip -n "$BR" link set vctl master br0 up
ip -n "$CTL" addr add "$SUBNET.254/24" dev eth0
ip -n "$CTL" link set eth0 up

# Hosts: a veth each, shaped both ways (host egress on its end, host ingress on the bridge's).
addrs=()
for ((i = 0; i < hosts; i++)); do
  ns="$tag-h$i"
  mkns "$ns"
  ip -n "$BR" link add "vh$i" type veth peer name eth0 netns "$ns"
  ip -n "$BR" link set "vh$i" master br0 up
  ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  if [ "$rate" != none ]; then
    # the burst: TCP over tbf with a burst much below this runs at half the rate; messages up to
    # about the burst pass at the machine's speed, so calibrate with sizes above it
    tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 50ms &&
      tc -n "$BR" qdisc add dev "vh$i" root tbf rate "$rate" burst "$burst" latency 50ms ||
      skip "tc cannot shape a link with tbf here"
  fi
  addrs+=("$SUBNET.$((i + 1))")
done

# The hostfile, the address -> namespace map, the rsh agent and the mpirun wrapper.
if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/$tag.XXXXXX")
  own_dir=1
else
  mkdir -p "$dir"
fi
wrote=1
: > "$dir/hostfile"
: > "$dir/hosts.map"
for ((i = 0; i < hosts; i++)); do
  echo "${addrs[$i]} slots=$rph" >> "$dir/hostfile"
  echo "${addrs[$i]} $tag-h$i emuhost$i" >> "$dir/hosts.map"
done
# OpenMPI calls the agent as: AGENT [agent options] HOST COMMAND...
cat > "$dir/rsh-agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
ns=\$(awk -v h="\$host" '\$1 == h {print \$2}' "$dir/hosts.map")
name=\$(awk -v h="\$host" '\$1 == h {print \$3}' "$dir/hosts.map")
[ -n "\$ns" ] || { echo "rsh-agent: unknown host \$host" >&2; exit 1; }
# a session directory per host: the hosts share /tmp, and OpenMPI's daemons would race for the
# same one
mkdir -p "$dir/tmp/\$ns"
# a host name of its own (a UTS namespace), as real hosts have: MPI_Get_processor_name, and so
# the "#  Rank" lines of a --sweep, name the host, and a calibration reads its nodes from them
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0" && exec env OMPI_MCA_orte_tmpdir_base="\$1" sh -c "\$2"' \\
  "\$name" "$dir/tmp/\$ns" "\$*"
EOF
# OpenMPI on emulated hosts (docs/measuring.md says why): yield when idle, since each host's one
# slot makes OpenMPI busy-poll as if it had a core of its own; rtc_hwloc_vmhole none, as the
# daemon crashed in hwloc's shared-memory topology without it; PMIx's hash store, not the
# shared-memory one the hosts would share.
cat > "$dir/mpirun" <<EOF
#!/bin/sh
# mpirun inside the launcher namespace, daemons started in the hosts' namespaces by the agent
exec ip netns exec "$CTL" env PMIX_MCA_gds=hash OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \\
  OMPI_MCA_plm_rsh_agent="$dir/rsh-agent" \\
  mpirun --hostfile "$dir/hostfile" --mca btl self,tcp \\
  --mca rtc_hwloc_vmhole none --mca mpi_yield_when_idle 1 --mca btl_tcp_if_include $SUBNET.0/24 --mca oob_tcp_if_include $SUBNET.0/24 "\$@"
EOF
chmod +x "$dir/rsh-agent" "$dir/mpirun"

export DPAS_CLUSTER_MPIRUN="$dir/mpirun" DPAS_CLUSTER_HOSTFILE="$dir/hostfile"
export DPAS_CLUSTER_HOSTS="$hosts" DPAS_CLUSTER_RANKS_PER_HOST="$rph" DPAS_CLUSTER_RATE="$rate"
export DPAS_CLUSTER_SUBNET="$SUBNET.0/24" DPAS_CLUSTER_DIR="$dir"
echo "emucluster: $hosts hosts x $rph ranks, links $rate, namespaces $tag-*, hostfile $dir/hostfile" >&2
# In the background, so that INT or TERM reach the trap at once (and the trap ends the command).
set +e
"$@" &
child=$!
wait "$child"
rc=$?
child=
set -e
exit "$rc"
