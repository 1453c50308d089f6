#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo run by `make demo` (tests/vm/run-vm --script tests/vm/demo/demo.sh):
# a cluster of 4 nodes (network namespaces) with 2 rails each is built with
# stock `ip`, af_bsp.ko discovers the peers, and the BSPlib examples run on
# it with bsprun over AF_BSP sockets; then everything is taken down again.
# bspvm-timeout: 300
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

B=$BSPVM_REPO/build/default
BSPRUN=$B/tools/bsprun/bsprun
[ -x "$BSPRUN" ] || fail "$BSPRUN not built (make all)"

echo "== guest kernel $(uname -r): insmod kernel/af_bsp.ko"
af_bsp_load
modinfo "$AF_BSP_KO" | grep -E '^(description|version):'

echo "== 4 nodes x 2 rails: ip link add bsp0 type bsp; ip link set dev ethR master bsp0"
bsp_nodes 4 2
bsp_wait_peers 3
echo "-- node n0: ip -d link show bsp0; ip link show master bsp0"
ip -n n0 -d link show bsp0
ip -n n0 link show master bsp0
echo "-- node n0: peers discovered by hello frames (/proc/net/af_bsp/peers)"
ip netns exec n0 cat /proc/net/af_bsp/peers

run4()
{
	BSP_TRANSPORT=afbsp BSP_VERBOSE=1 "$BSPRUN" -n 4 --hosts n0,n1,n2,n3 \
		--launch 'ip netns exec {host}' --timeout 120 "$@"
}
for prog in inprod sort matvec; do
	echo "== bsprun -n 4 --hosts n0,n1,n2,n3 --launch 'ip netns exec {host}' $prog"
	run4 "$B/examples/$prog" || fail "$prog failed"
done

echo "-- node n0: AF_BSP counters (/proc/net/af_bsp/stats)"
ip netns exec n0 cat /proc/net/af_bsp/stats

echo "== teardown: ip netns del, rmmod af_bsp"
bsp_nodes_cleanup
af_bsp_unload
echo "== demo done"
exit 0
