#!/bin/bash
# Two "hosts" on this machine: network namespaces joined by a veth pair, each with an address of
# its own (10.213.7.1 and .2, inside the namespaces only), and Open MPI between them over TCP
# alone (btl tcp,self; pml ob1, so no transport can take shared memory). mpirun starts in the
# first namespace and launches the second host's daemon through its remote agent, pointed at
# netns_agent.sh (the "ssh" that enters a namespace). Runs MPIRUN PROGRAM ARGS... there with one
# process per host; exits 77 (CTest's skip) saying why where namespaces cannot be made.
#   two_hosts.sh MPIRUN PROGRAM [ARGS...]
set -u
mpirun=$1
shift
skip() {
  echo "SKIPPED: the two-hosts test needs network namespaces, and $*"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "this user is not root"
command -v ip >/dev/null || skip "there is no 'ip' (iproute2; scripts/setup.sh installs it)"
command -v nsenter >/dev/null || skip "there is no 'nsenter' (util-linux)"

here=$(cd "$(dirname "$0")" && pwd)
a=tessel-ha-$$ b=tessel-hb-$$ va=tsa$$ vb=tsb$$  # interface names: at most 15 characters
dir=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # the namespaces go with the test, also when it is stopped
# A command in a namespace. ip netns exec re-mounts / (which a chroot, the build userland,
# cannot) and /sys; nsenter enters the namespace without the first.
in_ns() {
  local ns=$1
  shift
  nsenter --net="/run/netns/$ns" "$@"
}
ip netns add "$a" 2>"$dir/err" || skip "'ip netns add' failed: $(cat "$dir/err")"
ip netns add "$b" 2>"$dir/err" || skip "'ip netns add' failed: $(cat "$dir/err")"
ip link add "$va" type veth peer name "$vb" 2>"$dir/err" || skip "'ip link add type veth' failed: $(cat "$dir/err")"
ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" &&
  in_ns "$a" ip addr add 10.213.7.1/24 dev "$va" && in_ns "$b" ip addr add 10.213.7.2/24 dev "$vb" &&
  in_ns "$a" ip link set lo up && in_ns "$b" ip link set lo up &&
  in_ns "$a" ip link set "$va" up && in_ns "$b" ip link set "$vb" up ||
  skip "the namespaces could not be joined"
printf '10.213.7.1 slots=1\n10.213.7.2 slots=1\n' >"$dir/hosts"
export TESSEL_NETNS_HOSTS="10.213.7.1=$a 10.213.7.2=$b"
echo "two hosts: 10.213.7.1 (namespace $a) and 10.213.7.2 (namespace $b), Open MPI over TCP"
# mpirun on the first host: in its namespace, with a /sys of the namespace's own, as ip netns exec
# mounts (where Open MPI finds the namespace's interfaces; the machine's /sys shows the machine's),
# and a host name of its own (processes with one host name count as one node, joined through
# shared memory). Bounded below CTest's limit, so that the namespaces go even when the job hangs.
timeout 240 nsenter --net="/run/netns/$a" unshare --mount --propagation unchanged --uts \
  /bin/sh -c 'mount -t sysfs sysfs /sys && hostname "$0" && exec "$@"' "$a" \
  "$mpirun" --allow-run-as-root --hostfile "$dir/hosts" -np 2 --map-by node --bind-to none \
  --prtemca prte_ssh_agent "$here/netns_agent.sh" \
  --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.213.7.0/24 \
  -x TESSEL_NETNS_HOSTS -x TESSEL_NUM_DEVICES -x OMP_NUM_THREADS -x OMP_PROC_BIND \
  -x TESSEL_MPI_DIGESTS -x TESSEL_MPI_DIGESTS_MODE -x TESSEL_COST_MODEL \
  sh -c 'echo "process $OMPI_COMM_WORLD_RANK runs on $(hostname), $(ip -br -4 addr show | grep -o "10\.213\.7\.[0-9]*")"; exec "$0" "$@"' "$@"
