#!/bin/sh
# Open MPI's remote launcher (prte_ssh_agent) for the two-hosts test (two_hosts.sh): where mpirun
# would run "ssh [OPTIONS] HOST COMMAND", this runs COMMAND inside HOST's network namespace, as
# "ip netns exec" does: it enters the namespace and mounts a /sys of its own (Open MPI finds the
# namespace's interfaces there), under a host name of its own (the namespace's: processes with
# the same host name count as one node, and Open MPI would join them through shared memory). "ip netns exec" itself re-mounts /, which a chroot (the build
# userland) cannot, hence nsenter. TESSEL_NETNS_HOSTS maps hosts to namespaces: "ADDRESS=NAMESPACE ...".
while [ $# -gt 0 ]; do
  case "$1" in -*) shift ;; *) break ;; esac  # ssh's options (-x, ...)
done
host=$1
shift
for pair in $TESSEL_NETNS_HOSTS; do
  if [ "${pair%%=*}" = "$host" ]; then
    exec nsenter --net="/run/netns/${pair#*=}" unshare --mount --propagation unchanged --uts \
      /bin/sh -c "mount -t sysfs sysfs /sys && hostname ${pair#*=} && $*"
  fi
done
echo "netns_agent.sh: no namespace for host '$host' in TESSEL_NETNS_HOSTS='$TESSEL_NETNS_HOSTS'" >&2
exit 1
