#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 240
# bsp-ss (tools/bsp-ss) against the real module: in node n0 a helper holds
# four AF_BSP sockets (bound to 5000; automatic port with a pacing rate;
# unbound; bound to 5001, connected to 5000, in a group of 2 at epoch 1, after
# sending 5 bytes to 5000), n1 holds 401 sockets of its own (ports 5000 and
# 10000..10399: a dump of many parts). bsp-ss in each node must list exactly
# that node's sockets (ports, inodes, peer, queues, superstep state, counters,
# socket memory), filter by port, give JSON that parses, and fail with a clear
# message once the module is unloaded.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/vm/lib/topology.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3

bsp_ss_bin()
{
	local d

	for d in "$BSPVM_REPO"/build/default "$BSPVM_REPO"/build/*; do
		if [ -x "$d/tools/bsp-ss/bsp-ss" ]; then
			echo "$d/tools/bsp-ss/bsp-ss"
			return 0
		fi
	done
	fail "bsp-ss not built (make all, or cmake --build build/default)"
}
SS=$(bsp_ss_bin)
log "bsp-ss: $SS"

# Before the module is loaded there is no sock_diag handler for the family.
out=$("$SS" 2>&1)
expect_eq "$?" 1 "bsp-ss exit status without the module"
[[ "$out" == *"AF_BSP sock_diag not available: is af_bsp loaded?"* ]] ||
	fail "bsp-ss without the module: unclear message: $out"

# Usage errors and help.
"$SS" -x >/dev/null 2>&1
expect_eq "$?" 2 "bsp-ss -x exit status"
"$SS" -p 70000 >/dev/null 2>&1
expect_eq "$?" 2 "bsp-ss -p 70000 exit status"
"$SS" -h | grep -q -- '--extended' || fail "bsp-ss -h shows no usage"

af_bsp_load
topo_create 2 1
topo_exec 0 sysctl -qw net.bsp.node_id=77 || fail "sysctl node_id n0"
topo_exec 1 sysctl -qw net.bsp.node_id=78 || fail "sysctl node_id n1"

WORK=$(mktemp -d /tmp/tools_bsp_ss.XXXXXX)
on_exit "rm -rf '$WORK'"

# The helper: creates the sockets, writes their facts as JSON to $1 (renamed
# into place when complete), then holds them until it is killed.
cat >"$WORK/holder.py" <<'PY'
import ctypes, json, os, signal, socket, struct, sys

F = int(open("/sys/module/af_bsp/parameters/family").read())
SOL_BSP, BSP_GROUP, BSP_BARRIER_DONE, BSP_PACING_RATE = 290, 1, 2, 5
libc = ctypes.CDLL(None, use_errno=True)


def addr(node, port):
    return struct.pack("=HHI8x", F, port, node)


def call(fn, s, a):
    if fn(s.fileno(), a, len(a)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def name(s):
    buf = ctypes.create_string_buffer(16)
    ln = ctypes.c_uint(16)
    if libc.getsockname(s.fileno(), buf, ctypes.byref(ln)) != 0:
        raise OSError(ctypes.get_errno(), "getsockname")
    _, port, node = struct.unpack("=HHI", buf.raw[:8])
    return node, port


def facts(s):
    node, port = name(s)
    return {"node": node, "port": port, "inode": os.fstat(s.fileno()).st_ino,
            "rcvbuf": s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)}


out, mode = sys.argv[1], sys.argv[2]
socks = {}
if mode == "main":
    a = socket.socket(F, socket.SOCK_RDM)
    call(libc.bind, a, addr(0, 5000))
    b = socket.socket(F, socket.SOCK_RDM)
    call(libc.bind, b, addr(0, 0))
    b.setsockopt(SOL_BSP, BSP_PACING_RATE, struct.pack("=Q", 1000000))
    c = socket.socket(F, socket.SOCK_RDM)
    d = socket.socket(F, socket.SOCK_RDM)
    call(libc.bind, d, addr(0, 5001))
    node = name(a)[0]
    call(libc.connect, d, addr(node, 5000))
    d.setsockopt(SOL_BSP, BSP_GROUP,
                 struct.pack("=II", 2, 0) + struct.pack("=IHH", node, 5000, 0) +
                 struct.pack("=IHH", node, 5001, 0))
    d.setsockopt(SOL_BSP, BSP_BARRIER_DONE, struct.pack("=I", 1))
    if d.send(b"hello") != 5:
        raise SystemExit("short send")
    socks = {"a": a, "b": b, "c": c, "d": d}
else:
    e = socket.socket(F, socket.SOCK_RDM)
    call(libc.bind, e, addr(0, 5000))
    socks = {"e": e}
    for port in range(10000, 10400):
        s = socket.socket(F, socket.SOCK_RDM)
        call(libc.bind, s, addr(0, port))
        socks["p%d" % port] = s
with open(out + ".tmp", "w") as f:
    json.dump({k: facts(s) for k, s in socks.items()}, f)
os.rename(out + ".tmp", out)
while True:
    signal.pause()
PY

# holder_start NODE MODE FILE: start the helper in a node; its pid is left in
# HOLDER_PID. holder_wait PID FILE: wait (bounded) until its sockets exist.
# (Both helpers start at once: a python start-up takes many seconds in TCG.)
holder_start()
{
	# ip netns exec execs python3: $! is the helper itself
	ip netns exec "$(topo_ns "$1")" python3 "$WORK/holder.py" "$3" "$2" \
		</dev/null >/dev/null &
	HOLDER_PID=$!
	on_exit "kill $HOLDER_PID 2>/dev/null; wait $HOLDER_PID 2>/dev/null"
}
holder_wait()
{
	local pid=$1 file=$2 t

	for ((t = 0; t < 900; t++)); do
		[ -e "$file" ] && return 0
		kill -0 "$pid" 2>/dev/null || fail "socket holder for $file died"
		sleep 0.1
	done
	fail "socket holder for $file not ready after 90 s"
}
holder_start 0 main "$WORK/main.json"
MAIN=$HOLDER_PID
holder_start 1 other "$WORK/other.json"
OTHER=$HOLDER_PID
holder_wait "$MAIN" "$WORK/main.json"
holder_wait "$OTHER" "$WORK/other.json"
# The facts the helpers wrote, as shell variables (one python3 start: each
# costs seconds under TCG): INO_A..INO_E, PORT_B, RCVBUF_A, INODES_N1.
eval "$(python3 - "$WORK/main.json" "$WORK/other.json" <<'PY'
import json, sys
m, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in "abcd":
    print("INO_%s=%d" % (k.upper(), m[k]["inode"]))
print("INO_E=%d" % o["e"]["inode"])
print("PORT_B=%d" % m["b"]["port"])
print("RCVBUF_A=%d" % m["a"]["rcvbuf"])
print("INODES_N1='%s'" % "\n".join(str(i) for i in sorted(v["inode"] for v in o.values())))
PY
)" || fail "reading the helpers' facts"
[ "$PORT_B" -ge 32768 ] || fail "automatic port $PORT_B below 32768"
log "n0 sockets: a=$INO_A b=$INO_B(port $PORT_B) c=$INO_C d=$INO_D; n1: e=$INO_E"

ss0() { topo_exec 0 "$SS" "$@"; }

# ---- the plain list: exactly the four sockets of n0, sorted by port
out=$(ss0 -n -H) || fail "bsp-ss -n -H failed: $out"
log "bsp-ss -n:"$'\n'"$out"
list=$(echo "$out" | awk '{ print $3, $4, $5 }')
expect_eq "$list" "77:0 *:* $INO_C
77:5000 *:* $INO_A
77:5001 77:5000 $INO_D
77:$PORT_B *:* $INO_B" "n0 sockets (local peer inode)"
# "hello" waits in a's receive queue; nothing else is queued for receive
expect_ne "$(echo "$out" | awk '$3 == "77:5000" { print $1 }')" 0 "a's Recv-Q"
expect_eq "$(echo "$out" | awk '$3 != "77:5000" { print $1 }' | sort -u)" 0 "other Recv-Q"
# without -n the unbound port is '*' and there is a header
out=$(ss0) || fail "bsp-ss failed"
expect_eq "$(echo "$out" | head -n 1 | awk '{ print $1, $2, $3 }')" "Recv-Q Send-Q Local" "header"
expect_eq "$(echo "$out" | awk 'NR == 2 { print $3 }')" "77:*" "unbound socket without -n"
expect_eq "$(echo "$out" | wc -l)" 5 "lines of bsp-ss (header + 4)"

# ---- n1 sees only its own sockets
out=$(topo_exec 1 "$SS" -n -H -p 5000) || fail "bsp-ss in n1 failed"
expect_eq "$(echo "$out" | awk '{ print $3, $4, $5 }')" "78:5000 *:* $INO_E" "n1 socket on 5000"

# ---- port filters
expect_eq "$(ss0 -n -H -p 5000 | awk '{ print $5 }')" "$INO_A" "-p 5000"
expect_eq "$(ss0 -n -H -p "$PORT_B" | awk '{ print $5 }')" "$INO_B" "-p $PORT_B"
expect_eq "$(ss0 -n -H --port=0 | awk '{ print $5 }')" "$INO_C" "--port=0 (unbound)"
expect_eq "$(ss0 -n -H -p 6000)" "" "-p 6000 (no socket)"
ss0 -p 6000 >/dev/null || fail "bsp-ss -p 6000 must succeed with an empty list"

# ---- extended: superstep state and pacing
out=$(ss0 -n -H -e) || fail "bsp-ss -e failed"
line_d=$(echo "$out" | awk '$3 == "77:5001"')
line_b=$(echo "$out" | awk -v p="77:$PORT_B" '$3 == p')
[[ "$line_d" == *" epoch:1 group:2 pacing_rate:0 "* ]] || fail "-e for d: $line_d"
[[ "$line_b" == *" epoch:0 group:0 pacing_rate:1000000 "* ]] || fail "-e for b: $line_b"
line_b=$(ss0 -H -e -p "$PORT_B")
[[ "$line_b" == *" pacing_rate:8Mbps "* ]] || fail "-e without -n for b: $line_b"

# ---- counters: d sent one 5-byte message to a socket of its own node
out=$(ss0 -n -H -s -p 5001) || fail "bsp-ss -s failed"
stats=$(echo "$out" | sed -n 2p)
for want in tx_msgs:1 tx_bytes:5 rx_msgs:0 tx_local_msgs:1 tx_remote_msgs:0 tx_errors:0 \
	pkts_tx:0 retransmits:0; do
	[[ " $stats " == *" $want "* ]] || fail "-s for d lacks $want: $stats"
done
out=$(ss0 -n -H -s -p 5000)
stats=$(echo "$out" | sed -n 2p)
for want in tx_msgs:0 rx_msgs:0 rx_bytes:0 rx_dropped:0; do
	[[ " $stats " == *" $want "* ]] || fail "-s for a lacks $want: $stats"
done

# ---- socket memory: r = Recv-Q, rb = SO_RCVBUF
out=$(ss0 -n -H -m -p 5000) || fail "bsp-ss -m failed"
rq=$(echo "$out" | awk 'NR == 1 { print $1 }')
mem=$(echo "$out" | sed -n 2p)
[[ "$mem" == *"skmem:(r$rq,rb$RCVBUF_A,"* ]] || fail "-m for a (Recv-Q $rq, rcvbuf $RCVBUF_A): $mem"

# ---- JSON: parses, and says the same
out=$(ss0 -j -e -s -m) || fail "bsp-ss -j failed"
echo "$out" | python3 -m json.tool >/dev/null || fail "bsp-ss -j is not JSON: $out"
log "JSON parses"
summary=$(echo "$out" | python3 -c '
import json, sys
socks = json.load(sys.stdin)
for s in socks:
    peer = s["peer"]
    print(s["local"]["node"], s["local"]["port"], s["inode"],
          "%d:%d" % (peer["node"], peer["port"]) if peer else "-",
          s["superstep"]["epoch"], s["superstep"]["group_size"], s["superstep"]["pacing_rate"],
          s["stats"]["tx_bytes"], s["meminfo"]["rcvbuf"] > 0, s["recv_q"] > 0)
')
expect_eq "$summary" "77 0 $INO_C - 0 0 0 0 True False
77 5000 $INO_A - 0 0 0 0 True True
77 5001 $INO_D 77:5000 1 2 0 5 True False
77 $PORT_B $INO_B - 0 0 1000000 0 True False" "bsp-ss -j contents"
expect_eq "$(topo_exec 1 "$SS" -j -p 6000)" "[]" "empty JSON list"

# ---- a dump of many parts: 401 sockets in n1, every attribute asked for
log "401 sockets of n1"
out=$(topo_exec 1 "$SS" -n -H -e -s -m) || fail "bsp-ss -e -s -m with 401 sockets failed"
expect_eq "$(echo "$out" | grep -c '^[0-9]')" 401 "socket lines in n1"
expect_eq "$(echo "$out" | grep -c 'skmem:(')" 401 "skmem lines in n1"
expect_eq "$(echo "$out" | grep -c ' tx_msgs:0 ')" 401 "counter lines in n1"
want=$( (echo 5000; seq 10000 10399) | sed 's/^/78:/')
expect_eq "$(echo "$out" | awk '/^[0-9]/ { print $3 }')" "$want" "ports listed in n1"
expect_eq "$(topo_exec 1 "$SS" -n -H -j | python3 -c '
import json, sys
print("\n".join(sorted((str(s["inode"]) for s in json.load(sys.stdin)), key=int)))')" "$(printf '%b' "$INODES_N1")" "inodes of the 401 sockets (JSON)"

# ---- sockets gone with their process
kill "$MAIN" && wait "$MAIN" 2>/dev/null
kill "$OTHER" && wait "$OTHER" 2>/dev/null
expect_eq "$(ss0 -H)" "" "n0 list after the holder exited"
expect_eq "$(topo_exec 1 "$SS" -H)" "" "n1 list after the holders exited"

# ---- module unloaded: a clear error
bsp_unload
out=$(ss0 2>&1)
expect_eq "$?" 1 "bsp-ss exit status after rmmod"
[[ "$out" == *"AF_BSP sock_diag not available: is af_bsp loaded?"* ]] ||
	fail "bsp-ss after rmmod: unclear message: $out"
exit 0
