# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for the af_bsp VM cases (tests/vm/cases/kernel_*.sh), sourced
# after tests/vm/lib/assert.sh:
#
#   . "$BSPVM_REPO/tests/kernel/vmlib.sh"
#
# ktest_bin NAME        path of a guest test program of tests/kernel/ (or
#                       an example of tools/examples/)
# find_built PATH       path of any program of a build tree (see below)
# bsp_nodes N R [MTU]   N node namespaces n0..n{N-1}, R rails: bridge
#                       rail<r> in the root namespace, veth n<i>r<r> per
#                       node and rail (eth<r> inside the node), a bsp0
#                       master per node with its rails enslaved in order,
#                       node id i+1; removed at case exit
# bsp_wait_peers N      wait (bounded) until every node sees N-1 peers on
#                       every rail
# bsp_wait_bound NS PORT [N]  wait (bounded) until N sockets (default 1) of
#                       namespace NS are bound to PORT, and 0.3 s more for
#                       their bind() to finish: start senders only after
#                       their receiver is there (a message to a remote port
#                       nobody binds fails after unreach_ms)
# bsp_unload            rmmod af_bsp, retrying while the last sockets'
#                       RCU-deferred frees still pin the module

# The directories test programs are built into: the superproject's
# build/default (make all), or a private build/<name> of the same layout.
ktest_bin()
{
	local d s

	for d in "$BSPVM_REPO"/build/default "$BSPVM_REPO"/build/*; do
		for s in kernel tools/examples; do
			if [ -x "$d/$s/$1" ]; then
				echo "$d/$s/$1"
				return 0
			fi
		done
	done
	fail "test program $1 not built (make all, or cmake --build build/default)"
}

# find_built PATH       a program of build/default (make all), else the most
#                       recently built copy among the build trees of the same
#                       layout (a private build/<name>); PATH relative to the
#                       tree, e.g. bench/exchange
find_built()
{
	local f=$BSPVM_REPO/build/default/$1

	# The newest of build/<tree>/PATH: tree names are ours (no spaces or newlines).
	# shellcheck disable=SC2012
	[ -x "$f" ] || f=$(ls -t "$BSPVM_REPO"/build/*/"$1" 2>/dev/null | head -n 1)
	[ -x "$f" ] || fail "$1 not built (cmake --build build/default)"
	echo "$f"
}

# bsplib_tree          sets EXCHANGE (bench/exchange), TREE (the build tree it is
#                       in) and BSPRUN (that tree's bsprun, else any built one): the
#                       BSPlib programs and their launcher come from one build
bsplib_tree()
{
	EXCHANGE=$(find_built bench/exchange)
	TREE=${EXCHANGE%/bench/exchange}
	BSPRUN=$TREE/tools/bsprun/bsprun
	[ -x "$BSPRUN" ] || BSPRUN=$(find_built tools/bsprun/bsprun)
}

# bsp_rail_addresses N R  IPv4 address 10.(r+1).0.(i+1)/24 on eth<r> of node n<i>,
#                       for the programs (Open MPI, the UDP transport) that use IP
#                       over the rails of bsp_nodes
bsp_rail_addresses()
{
	local i r

	for ((i = 0; i < $1; i++)); do
		for ((r = 0; r < $2; r++)); do
			ip -n "n$i" addr add "10.$((r + 1)).0.$((i + 1))/24" dev "eth$r" ||
				fail "address on n$i eth$r"
		done
	done
}

BSP_NODES=0
BSP_RAILS=0

bsp_nodes_cleanup()
{
	local i r

	for ((i = 0; i < BSP_NODES; i++)); do
		ip netns del "n$i" 2>/dev/null
	done
	for ((r = 0; r < BSP_RAILS; r++)); do
		ip link del "rail$r" 2>/dev/null
	done
	return 0
}

# bsp_node_ns I: namespace nI, node id I + 1, its bsp0 (no rails yet)
bsp_node_ns()
{
	ip netns add "n$1" || fail "netns n$1"
	ip -n "n$1" link set lo up
	ip netns exec "n$1" sysctl -qw net.bsp.node_id=$(($1 + 1)) ||
		fail "net.bsp.node_id in n$1"
	ip -n "n$1" link add bsp0 type bsp || fail "ip link add bsp0 type bsp in n$1"
}

bsp_nodes()
{
	local n=$1 rails=$2 mtu=${3:-1500} i r

	BSP_NODES=$n
	BSP_RAILS=$rails
	on_exit bsp_nodes_cleanup
	modprobe veth || fail "modprobe veth"
	modprobe bridge || fail "modprobe bridge"
	for ((r = 0; r < rails; r++)); do
		ip link add "rail$r" type bridge || fail "bridge rail$r"
		ip link set "rail$r" mtu "$mtu" up
		# no STP/learning delays: forward at once
		echo 0 >"/sys/class/net/rail$r/bridge/forward_delay" 2>/dev/null
	done
	for ((i = 0; i < n; i++)); do
		bsp_node_ns "$i"
		for ((r = 0; r < rails; r++)); do
			ip link add "n${i}r$r" mtu "$mtu" type veth peer name "eth$r" mtu "$mtu" netns "n$i" ||
				fail "veth n${i}r$r"
			ip link set "n${i}r$r" master "rail$r" up
			ip -n "n$i" link set "eth$r" master bsp0 || fail "enslave eth$r in n$i"
			ip -n "n$i" link set "eth$r" up
		done
		ip -n "n$i" link set bsp0 up
	done
}

# bsp_nodes_on NIC...: one node per NIC (n0 on the first, ...), the NIC moved
# into the node's namespace as eth0, its one rail. The NICs meet outside the
# guest (tests/kernel/bench_junk_wire.sh joins two virtio NICs through the
# host); bsp_nodes_cleanup gives them back to the initial namespace.
bsp_nodes_on()
{
	local i=0 nic

	BSP_NODES=$#
	BSP_RAILS=1
	on_exit bsp_nodes_cleanup
	for nic in "$@"; do
		bsp_node_ns "$i"
		ip link set "$nic" netns "n$i" name eth0 || fail "move $nic into n$i"
		ip -n "n$i" link set eth0 master bsp0 || fail "enslave $nic in n$i"
		ip -n "n$i" link set eth0 up
		ip -n "n$i" link set bsp0 up
		i=$((i + 1))
	done
}

# nic_by_mac MAC: the name of the device with that address (empty if none)
nic_by_mac()
{
	local d

	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

# bsp_rails_netem NETEM-ARGS...: the same netem qdisc (tc-netem(8) arguments,
# e.g. "loss 5% duplicate 1%") as the root qdisc of every rail port that
# bsp_nodes made (host side, so it applies to what each node sends), replacing
# what was there; "bsp_rails_netem delay 0ms" takes an impairment back off.
bsp_rails_netem()
{
	local i r

	modprobe sch_netem || fail "modprobe sch_netem"
	for ((i = 0; i < BSP_NODES; i++)); do
		for ((r = 0; r < BSP_RAILS; r++)); do
			tc qdisc replace dev "n${i}r$r" root netem "$@" ||
				fail "netem $* on n${i}r$r"
		done
	done
}

# bsp_fuzzer_ns: a namespace "fz" whose eth0 is a port of rail0, which then
# floods every frame to every port (no learning), so a fuzzer in fz sees the
# unicast traffic of the nodes. Removed when the case exits.
bsp_fuzzer_ns()
{
	local port

	ip netns add fz || fail "netns fz"
	on_exit "ip netns del fz 2>/dev/null"
	ip link add n9r0 type veth peer name eth0 netns fz || fail "veth n9r0"
	on_exit "ip link del n9r0 2>/dev/null"
	ip link set n9r0 master rail0 up
	for port in /sys/class/net/rail0/brif/*; do
		ip link set "${port##*/}" type bridge_slave learning off ||
			fail "learning off"
	done
	ip link set rail0 type bridge fdb_flush || fail "fdb_flush rail0"
	ip -n fz link set lo up
	ip -n fz link set eth0 up
}

# bsp_wait_rails_down NS [NODE]: wait up to 5 s until namespace NS sees no
# live rail to NODE (to any peer without NODE); prints how many are left.
bsp_wait_rails_down()
{
	local ns=$1 node=${2:-} t n

	for ((t = 0; t < 50; t++)); do
		n=$(ip netns exec "$ns" awk -v node="$node" \
			'NR > 2 && (node == "" || $1 == node) && $4 == "up"' \
			/proc/net/af_bsp/peers | wc -l)
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	echo "$n"
}

bsp_wait_peers()
{
	local want=$1 i r t ok table

	for ((t = 0; t < 100; t++)); do
		ok=1
		for ((i = 0; i < BSP_NODES && ok; i++)); do
			table=$(ip netns exec "n$i" cat /proc/net/af_bsp/peers)
			for ((r = 0; r < BSP_RAILS; r++)); do
				if [ "$(echo "$table" | awk -v r="$r" 'NR > 2 && $2 == r && $4 == "up"' |
					wc -l)" -ne "$want" ]; then
					ok=0
					break
				fi
			done
		done
		[ "$ok" = 1 ] && return 0
		sleep 0.1
	done
	for ((i = 0; i < BSP_NODES; i++)); do
		echo "n$i:"
		ip netns exec "n$i" cat /proc/net/af_bsp/peers
	done
	fail "nodes did not discover $want peers on every rail"
}

# A receiver started in the background binds when its process gets there: a
# fixed sleep before the senders is a race on a slow (debug) kernel, where
# starting a process under "ip netns exec" can take seconds.
bsp_wait_bound()
{
	local ns=$1 port=$2 want=${3:-1} end=$((SECONDS + 60)) n

	while :; do
		n=$(ip netns exec "$ns" awk -v p="$port" 'NR > 1 && $1 == p' \
			/proc/net/af_bsp/sockets | wc -l)
		# /proc lists a port once bind() has published it, with the
		# socket's engine made and ready for frames
		[ "$n" -ge "$want" ] && return 0
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.05
	done
	ip netns exec "$ns" cat /proc/net/af_bsp/sockets
	fail "$ns: $want socket(s) not bound to port $port within 60 s ($n are)"
}

bsp_unload()
{
	local t

	for ((t = 0; t < 50; t++)); do
		rmmod af_bsp 2>/dev/null && break
		sleep 0.1
	done
	! module_loaded af_bsp || fail "af_bsp still in use 5 s after its last socket closed"
}
