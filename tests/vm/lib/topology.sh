# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Test topology (Documentation/testing.rst) for VM cases, sourced by bash (inside the guest):
#
#   . "$BSPVM_REPO/tests/vm/lib/topology.sh"
#   topo_create 4 2              # nodes n0..n3, rails rail0 and rail1
#   topo_exec 0 ping -c1 "$(topo_ip 1 0)"
#   topo_rate 0 1 100mbit        # tbf on node 0's rail 1, both directions
#   topo_netem 2 0 loss 5%       # netem on node 2's rail 0, both directions
#   topo_link_down 3 1; topo_link_up 3 1
#   topo_destroy                 # also run automatically when the case exits
#
# Nodes are network namespaces n0..n{N-1}. Rail r is a bridge "rail<r>" in
# the root namespace; node i is attached to it by a veth pair whose node end
# is "eth<r>" inside namespace n<i> and whose switch end is "n<i>r<r>" in the
# root namespace. Node ends get 10.<r+1>.0.<i+1>/24 and the MAC address
# 02:b5:00:<r>:00:<i> (hex), so tests can name them. IPv6 is disabled on
# rails to keep them free of background traffic (ND, MLD).
#
# Direction words used below: "tx" is the node's egress (qdisc on eth<r> in
# the node), "rx" the node's ingress (qdisc on n<i>r<r>, the switch port's
# egress), "both" (the default) both.

if [ -z "${BSPVM_REPO:-}" ]; then
	echo "topology.sh is meant for cases run by tests/vm/run-vm" >&2
	# Sourced, return ends it; run as a script, return fails and exit does.
	# shellcheck disable=SC2317
	return 1 2>/dev/null || exit 1
fi
# shellcheck source=assert.sh
. "$BSPVM_REPO/tests/vm/lib/assert.sh"

TOPO_NODES=0
TOPO_RAILS=0
# Per "<node>,<rail>,<tx|rx>": tbf arguments and netem arguments in force.
declare -gA TOPO_TBF=()
declare -gA TOPO_NETEM=()
# Per "<node>,<rail>,<tx|rx>": set while our qdiscs are installed there.
declare -gA TOPO_QDISC=()

_topo_check()
{
	local i=$1 r=$2

	[[ "$i" =~ ^[0-9]+$ && "$i" -lt "$TOPO_NODES" ]] ||
		fail "topology: no node '$i' (have $TOPO_NODES)"
	[[ "$r" =~ ^[0-9]+$ && "$r" -lt "$TOPO_RAILS" ]] ||
		fail "topology: no rail '$r' (have $TOPO_RAILS)"
}

# _topo_dirs DIR: the directions a direction word stands for.
_topo_dirs()
{
	case "$1" in
	both) echo "tx rx" ;;
	tx | rx) echo "$1" ;;
	*) fail "topology: direction must be tx, rx or both, not '$1'" ;;
	esac
}

# topo_ns NODE: the namespace name of a node.
topo_ns()
{
	echo "n$1"
}

# topo_ip NODE RAIL: the IPv4 address of a node on a rail.
topo_ip()
{
	echo "10.$(($2 + 1)).0.$(($1 + 1))"
}

# topo_mac NODE RAIL: the MAC address of a node's interface on a rail.
topo_mac()
{
	printf '02:b5:00:%02x:%02x:%02x\n' "$2" $(($1 >> 8)) $(($1 & 255))
}

# topo_ifname NODE RAIL: the switch-side (root namespace) veth of a node.
topo_ifname()
{
	echo "n$1r$2"
}

# topo_exec NODE CMD...: run CMD inside a node's namespace.
topo_exec()
{
	local i=$1

	shift
	ip netns exec "n$i" "$@"
}

# topo_create N R: create N nodes and R rails (1 <= N <= 250, 1 <= R <= 16).
# Loads veth, bridge, sch_tbf and sch_netem. Registers topo_destroy to run at
# case exit. (Commands are batched: every process costs ~0.1 s under TCG.)
topo_create()
{
	local n=$1 r=$2 i k host old_inherit old_v6

	[[ "$n" =~ ^[0-9]+$ && "$n" -ge 1 && "$n" -le 250 ]] ||
		fail "topo_create: node count must be 1..250, not '$n'"
	[[ "$r" =~ ^[0-9]+$ && "$r" -ge 1 && "$r" -le 16 ]] ||
		fail "topo_create: rail count must be 1..16, not '$r'"
	[ "$TOPO_NODES" = 0 ] || fail "topo_create: a topology already exists"
	# The kernel's automatic module loading would run the initramfs'
	# modprobe, which has none of these: load them from the host root.
	modprobe -a veth bridge sch_tbf sch_netem ||
		fail "modprobe veth bridge sch_tbf sch_netem failed"
	TOPO_NODES=$n
	TOPO_RAILS=$r
	on_exit topo_destroy
	# New devices and namespaces start with IPv6 disabled: new namespaces
	# inherit the root's conf/default while devconf_inherit_init_net is 1.
	old_inherit=$(sysctl -n net.core.devconf_inherit_init_net)
	old_v6=$(sysctl -n net.ipv6.conf.default.disable_ipv6)
	sysctl -q -w net.core.devconf_inherit_init_net=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null ||
		fail "cannot disable IPv6 for new devices"
	{
		for ((k = 0; k < r; k++)); do
			echo "link add rail$k type bridge stp_state 0 forward_delay 0 mcast_snooping 0"
			echo "link set rail$k up"
		done
		for ((i = 0; i < n; i++)); do
			echo "netns add n$i"
			for ((k = 0; k < r; k++)); do
				host=n${i}r$k
				echo "link add $host type veth peer name eth$k netns n$i address $(topo_mac "$i" "$k")"
				echo "link set $host master rail$k up"
			done
		done
	} | ip -batch - || fail "cannot create the topology (ip -batch failed)"
	sysctl -q -w net.core.devconf_inherit_init_net="$old_inherit" \
		net.ipv6.conf.default.disable_ipv6="$old_v6" >/dev/null
	for ((i = 0; i < n; i++)); do
		{
			echo "link set lo up"
			for ((k = 0; k < r; k++)); do
				echo "addr add $(topo_ip "$i" "$k")/24 dev eth$k"
				echo "link set eth$k up"
			done
		} | ip -n "n$i" -batch - || fail "cannot configure node n$i"
	done
	# veth sets the carrier of both ends when the second goes up, and
	# bridge ports without STP forward at once: no waiting needed here.
}

# topo_destroy: remove every namespace, veth and bridge of the topology. Safe
# to call more than once or on a partial topology.
topo_destroy()
{
	local i k

	[ "$TOPO_NODES" != 0 ] || return 0
	{
		for ((i = 0; i < TOPO_NODES; i++)); do
			for ((k = 0; k < TOPO_RAILS; k++)); do
				echo "link del n${i}r$k"
			done
			echo "netns del n$i"
		done
		for ((k = 0; k < TOPO_RAILS; k++)); do
			echo "link del rail$k"
		done
	} | ip -force -batch - 2>/dev/null
	TOPO_NODES=0
	TOPO_RAILS=0
	TOPO_TBF=()
	TOPO_NETEM=()
	TOPO_QDISC=()
	return 0
}

# _topo_apply_one NODE RAIL tx|rx: rebuild the qdiscs of one direction from
# TOPO_TBF and TOPO_NETEM (netem at the root, tbf as its child).
_topo_apply_one()
{
	local i=$1 r=$2 d=$3 key=$1,$2,$3 nsarg=() dev tbf netem

	if [ "$d" = tx ]; then
		nsarg=(-n "n$i")
		dev=eth$r
	else
		dev=n${i}r$r
	fi
	tbf=${TOPO_TBF[$key]:-}
	netem=${TOPO_NETEM[$key]:-}
	[ -n "$tbf$netem${TOPO_QDISC[$key]:-}" ] || return 0
	# One tc process per change: drop our old root qdisc (if any), add the
	# new ones.
	{
		[ -z "${TOPO_QDISC[$key]:-}" ] || echo "qdisc del dev $dev root"
		if [ -n "$netem" ]; then
			echo "qdisc add dev $dev root handle 1: netem $netem"
			[ -z "$tbf" ] ||
				echo "qdisc add dev $dev parent 1:1 handle 10: tbf $tbf"
		elif [ -n "$tbf" ]; then
			echo "qdisc add dev $dev root handle 10: tbf $tbf"
		fi
	} | tc "${nsarg[@]}" -batch - ||
		fail "tc on $dev (node $i rail $r $d) failed for netem '$netem' tbf '$tbf'"
	if [ -n "$netem$tbf" ]; then
		TOPO_QDISC[$key]=1
	else
		unset "TOPO_QDISC[$key]"
	fi
}

# _topo_opt_dir ARGS...: parse a leading "--dir DIR" into TOPO_DIR and the
# number of arguments it used into TOPO_SHIFT.
_topo_opt_dir()
{
	TOPO_DIR=both
	TOPO_SHIFT=0
	if [ "${1:-}" = --dir ]; then
		TOPO_DIR=${2:-}
		TOPO_SHIFT=2
	fi
	_topo_dirs "$TOPO_DIR" >/dev/null
}

# topo_rate [--dir tx|rx|both] NODE RAIL RATE [LIMIT [BURST]]: shape a node's
# link on a rail with tbf. RATE in tc units (100mbit, 1gbit); LIMIT is the
# queue (switch buffer) in bytes (default 256k); BURST the bucket in bytes
# (default the larger of 32k and two MTUs of the link). Replaces a previous
# rate; netem settings stay.
topo_rate()
{
	local i r rate limit burst mtu d

	_topo_opt_dir "$@"
	shift "$TOPO_SHIFT"
	[ $# -ge 3 ] || fail "usage: topo_rate [--dir D] NODE RAIL RATE [LIMIT [BURST]]"
	i=$1 r=$2 rate=$3 limit=${4:-262144} burst=${5:-}
	_topo_check "$i" "$r"
	if [ -z "$burst" ]; then
		mtu=$(cat "/sys/class/net/n${i}r$r/mtu")
		burst=$((2 * (mtu + 14)))
		[ "$burst" -ge 32768 ] || burst=32768
	fi
	for d in $(_topo_dirs "$TOPO_DIR"); do
		TOPO_TBF[$i,$r,$d]="rate $rate burst $burst limit $limit"
		_topo_apply_one "$i" "$r" "$d"
	done
}

# topo_netem [--dir tx|rx|both] NODE RAIL NETEM-ARGS...: impair a node's link
# on a rail with netem, e.g. "loss 100%", "delay 5ms 1ms", "delay 2ms reorder
# 25% 50%", "duplicate 10%", "corrupt 1%". Replaces previous netem settings;
# a tbf rate stays (as netem's child).
topo_netem()
{
	local i r d

	_topo_opt_dir "$@"
	shift "$TOPO_SHIFT"
	[ $# -ge 3 ] || fail "usage: topo_netem [--dir D] NODE RAIL NETEM-ARGS..."
	i=$1 r=$2
	shift 2
	_topo_check "$i" "$r"
	for d in $(_topo_dirs "$TOPO_DIR"); do
		TOPO_NETEM[$i,$r,$d]="$*"
		_topo_apply_one "$i" "$r" "$d"
	done
}

# topo_clear [--dir tx|rx|both] NODE RAIL: remove rate and impairments.
topo_clear()
{
	local i r d

	_topo_opt_dir "$@"
	shift "$TOPO_SHIFT"
	[ $# -eq 2 ] || fail "usage: topo_clear [--dir D] NODE RAIL"
	i=$1 r=$2
	_topo_check "$i" "$r"
	for d in $(_topo_dirs "$TOPO_DIR"); do
		unset "TOPO_TBF[$i,$r,$d]" "TOPO_NETEM[$i,$r,$d]"
		_topo_apply_one "$i" "$r" "$d"
	done
}

# topo_rate_all RATE [LIMIT [BURST]] / topo_netem_all NETEM-ARGS...: the same
# for every node and rail, both directions.
topo_rate_all()
{
	local i r

	for ((i = 0; i < TOPO_NODES; i++)); do
		for ((r = 0; r < TOPO_RAILS; r++)); do
			topo_rate "$i" "$r" "$@"
		done
	done
}

topo_netem_all()
{
	local i r

	for ((i = 0; i < TOPO_NODES; i++)); do
		for ((r = 0; r < TOPO_RAILS; r++)); do
			topo_netem "$i" "$r" "$@"
		done
	done
}

# topo_mtu NODE RAIL MTU: set the MTU of both ends of a node's link (veth
# takes up to 65535; the bridge follows its smallest port).
topo_mtu()
{
	local i=$1 r=$2 mtu=$3

	_topo_check "$i" "$r"
	ip link set "n${i}r$r" mtu "$mtu" || fail "cannot set MTU $mtu on n${i}r$r"
	ip -n "n$i" link set "eth$r" mtu "$mtu" ||
		fail "cannot set MTU $mtu on eth$r of n$i"
}

# topo_mtu_all MTU: the same for every node and rail, and the bridges.
topo_mtu_all()
{
	local i r

	for ((i = 0; i < TOPO_NODES; i++)); do
		for ((r = 0; r < TOPO_RAILS; r++)); do
			topo_mtu "$i" "$r" "$1"
		done
	done
	for ((r = 0; r < TOPO_RAILS; r++)); do
		ip link set "rail$r" mtu "$1" || fail "cannot set MTU $1 on rail$r"
	done
}

# _topo_wait_carrier NODE RAIL: wait up to 5 s until the node's eth<RAIL>
# reports LOWER_UP.
_topo_wait_carrier()
{
	local i=$1 r=$2 t

	for ((t = 0; t < 50; t++)); do
		[[ "$(ip -n "n$i" -o link show dev "eth$r")" == *LOWER_UP* ]] &&
			return 0
		sleep 0.1
	done
	return 1
}

# topo_link_down [--local] NODE RAIL: cut a node off a rail. By default the
# switch port (n<i>r<r>) goes down, so the node sees its carrier drop, like a
# pulled cable; with --local the node's own eth<r> is set administratively
# down. (For a silent failure without any link event use topo_netem ... loss
# 100%.)
topo_link_down()
{
	local i r

	if [ "${1:-}" = --local ]; then
		shift
		_topo_check "$1" "$2"
		ip -n "n$1" link set "eth$2" down || fail "cannot set eth$2 of n$1 down"
		return
	fi
	_topo_check "$1" "$2"
	i=$1 r=$2
	ip link set "n${i}r$r" down || fail "cannot set n${i}r$r down"
}

# topo_link_up [--local] NODE RAIL: undo topo_link_down and wait (up to 5 s)
# until the node's eth<r> has its carrier back.
topo_link_up()
{
	local local_=0

	if [ "${1:-}" = --local ]; then
		local_=1
		shift
	fi
	_topo_check "$1" "$2"
	if [ "$local_" = 1 ]; then
		ip -n "n$1" link set "eth$2" up || fail "cannot set eth$2 of n$1 up"
	else
		ip link set "n$1r$2" up || fail "cannot set n$1r$2 up"
	fi
	_topo_wait_carrier "$1" "$2" ||
		fail "eth$2 of n$1 has no carrier after link up"
}

# topo_ping NODE PEER RAIL [COUNT]: ping PEER's address on RAIL from NODE
# (quietly; 1 s deadline per probe). Returns ping's status.
topo_ping()
{
	local i=$1 j=$2 r=$3 c=${4:-1}

	_topo_check "$i" "$r"
	_topo_check "$j" "$r"
	ip netns exec "n$i" ping -q -n -c "$c" -W 1 -I "eth$r" "$(topo_ip "$j" "$r")" \
		>/dev/null 2>&1
}

# topo_ping_mesh RAIL: every node pings every other node over RAIL, all at
# once (1 s deadline each). Prints the pairs that failed as "i->j" and
# returns 1 if there were any.
topo_ping_mesh()
{
	local r=$1 i j pids=() pairs=() bad=() k

	_topo_check 0 "$r"
	for ((i = 0; i < TOPO_NODES; i++)); do
		for ((j = 0; j < TOPO_NODES; j++)); do
			[ "$i" = "$j" ] && continue
			topo_ping "$i" "$j" "$r" &
			pids+=($!)
			pairs+=("$i->$j")
		done
	done
	for k in "${!pids[@]}"; do
		wait "${pids[$k]}" || bad+=("${pairs[$k]}")
	done
	[ ${#bad[@]} -eq 0 ] && return 0
	echo "${bad[*]}"
	return 1
}
