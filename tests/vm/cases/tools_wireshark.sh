#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 150
# The Wireshark dissector (tools/wireshark/af_bsp.lua) on real traffic: dumpcap
# captures the rail of node 1 while it sends node 2 a message of 4 fragments
# (the second dropped once by the XDP injector on node 2) and a 10-byte message
# marked LAST; tshark -X lua_script decodes the capture and every field is
# checked against what was sent: nodes, ports, rail, sequence numbers, message
# ids, lengths, offsets, fragment unit, flags (RETX on the resends, which are
# of the lost fragment only; LAST|ACKREQ), the hole [1, 2) the receiver
# reports, the final acknowledgement, incarnations, hellos, checksums,
# payload bytes. A pcap of malformed frames written here gets exactly the
# expected expert infos.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
need_cmd tshark
need_cmd ethtool
LUA=$BSPVM_REPO/tools/wireshark/af_bsp.lua
FAULT=$(find_built tools/bsp-fault/bsp-fault)
WORK=$(mktemp -d /tmp/tools_wireshark.XXXXXX)
on_exit "rm -rf '$WORK'"
# tshark as root warns on every run; its config and plugins stay out of $HOME
export HOME=$WORK XDG_CONFIG_HOME=$WORK
ts() { tshark -X "lua_script:$LUA" "$@" 2>&1 | grep -v '^Running as user'; }

# ---- malformed frames (no VM state needed) ----
cat >"$WORK/bad.py" <<'PY'
import struct, sys
def hdr(t, flags, plen, ver=3, off=0, unit=1428, mlen=1428, inc=5):
    return struct.pack("!BBHIIHHBBHIIIIIIIIIIHHQ", ver, t, flags, 1, 2, 5000, 6000, 0, 0, 0,
                       inc, 0, 0, 0, 0, 0, 0, 0, mlen, off, unit, plen, 0)
eth = b"\xff" * 6 + b"\x02\0\0\0\0\1" + struct.pack("!H", 0x88b5)
frames = [
    b"\x02\x01",                                   # 1 short: < 4 bytes
    hdr(1, 0, 0, ver=1),                           # 2 version 1
    hdr(7, 0, 0),                                  # 3 type 7
    hdr(1, 0, 1428)[:40],                          # 4 DATA shorter than 72
    hdr(1, 0, 1428) + b"x" * 100,                  # 5 payload_len beyond the frame
    hdr(1, 0x4000, 1428) + b"x" * 1428,            # 6 undefined flag
    hdr(2, 0x0002, 0, unit=0, mlen=0),             # 7 LAST on an ACK
    hdr(1, 0, 1000, off=1428, mlen=4000) + b"x" * 1000,  # 8 payload_len != fragment
    hdr(3, 0, 0, unit=0, mlen=0)[:28] + struct.pack("!II", 7000, 0) + hdr(3, 0, 0, unit=0, mlen=0)[36:],  # 9 seq - base > 4096
    hdr(2, 0, 0, unit=0, mlen=0, inc=0),           # 10 src_inc 0
    struct.pack("!BBH", 3, 4, 0) + b"\0" * 20,     # 11 HELLO shorter than 40
]
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, p in enumerate(frames):
        d = eth + p
        f.write(struct.pack("<IIII", i, 0, len(d), len(d)) + d)
PY
python3 "$WORK/bad.py" "$WORK/bad.pcap" || fail "writing bad.pcap"
got=$(ts -r "$WORK/bad.pcap" -T fields -e frame.number -e _ws.expert.message |
	sed 's/\t/: /')
echo "$got"
expect_eq "$got" "1: 2 byte(s), less than the 4 common bytes
2: version 1 (this is version 3)
3: type 7
4: DATA of 40 bytes (the header is 72)
5: payload_len 1428, only 100 byte(s) after the header
6: undefined flags 0x4000
7: flags 0x0002 on ACK
8: payload_len 1000, the fragment at 1428 of 4000 is 1428
9: seq more than 4096 beyond base
10: source incarnation 0
11: HELLO of 24 bytes (needs 40)" "expert info of the malformed frames"
log "malformed frames: ok"

# ---- a real transfer, captured on node 1 ----
af_bsp_load
bsp_nodes 2 1
# The module leaves DATA, ACK and PROD checksums to the device
# (CHECKSUM_PARTIAL), which a capture on the sending host sees unfilled, as
# with TCP; without the offload the stack fills them in before the capture
# point, so the dissector checks every checksum as computed by the kernel.
for i in 0 1; do
	ip netns exec "n$i" ethtool -K eth0 tx off >/dev/null || fail "ethtool -K eth0 tx off in n$i"
done
bsp_wait_peers 1
in_n1() { nsenter --net=/run/netns/n1 "$@"; }
expect_ok in_n1 "$FAULT" attach eth0
on_exit "in_n1 $FAULT detach eth0 >/dev/null 2>&1"
# the first transmission of the fragment at offset 1428 (the be32 at 56)
in_n1 "$FAULT" rule eth0 0 --offset 56 --mask 0xffffffff --value 1428 --count 1 >/dev/null ||
	fail "fault rule"

cat >"$WORK/xfer.py" <<'PY'
import ctypes, os, socket, struct, sys, time
F = int(open("/sys/module/af_bsp/parameters/family").read())
SOL_BSP, BSP_CMSG_SEND, BSP_SEND_LAST = 290, 2, 1
libc = ctypes.CDLL(None, use_errno=True)
def addr(node, port):
    return struct.pack("=HHI8x", F, port, node)
def call(fn, s, a):
    assert fn(s.fileno(), a, len(a)) == 0, os.strerror(ctypes.get_errno())
M0 = bytes((i * 7 + 3) % 251 for i in range(4 * 1428))
M1 = b"last-msg!!"
s = socket.socket(F, socket.SOCK_RDM, 0)
role, ready, done = sys.argv[1:4]
if role == "recv":
    call(libc.bind, s, addr(0, 6000))
    open(ready, "w").close()
    s.settimeout(30)
    assert s.recv(65536) == M0, "message 0 differs"
    assert s.recv(65536) == M1, "message 1 differs"
    print("received 2")
    open(done, "w").close()
    time.sleep(0.5)
else:
    open(done + ".want", "w").write(M0[2856:4284].hex() + "\n")
    call(libc.bind, s, addr(0, 5000))
    call(libc.connect, s, addr(2, 6000))
    assert s.send(M0) == len(M0)
    assert s.sendmsg([M1], [(SOL_BSP, BSP_CMSG_SEND, struct.pack("=I", BSP_SEND_LAST))]) == len(M1)
    for t in range(300):
        if os.path.exists(done):
            break
        time.sleep(0.1)
    time.sleep(0.3)
PY

# dumpcap (tshark's capture engine) starts much faster than tshark
ip netns exec n0 dumpcap -i eth0 -f "ether proto 0x88b5" -w "$WORK/cap.pcapng" \
	>"$WORK/tshark.out" 2>&1 &
cap=$!
on_exit "kill $cap 2>/dev/null"
for ((t = 0; t < 200; t++)); do
	grep -q "^Capturing on" "$WORK/tshark.out" && break
	sleep 0.1
done
grep -q "^Capturing on" "$WORK/tshark.out" || fail "tshark did not start: $(cat "$WORK/tshark.out")"
ip netns exec n1 python3 "$WORK/xfer.py" recv "$WORK/ready" "$WORK/done" >"$WORK/recv.out" 2>&1 &
rcv=$!
for ((t = 0; t < 200; t++)); do
	[ -e "$WORK/ready" ] && break
	sleep 0.1
done
ip netns exec n0 python3 "$WORK/xfer.py" send "$WORK/ready" "$WORK/done" || fail "sender"
wait "$rcv" || fail "receiver: $(cat "$WORK/recv.out")"
expect_eq "$(cat "$WORK/recv.out")" "received 2" "receiver"
sleep 0.5
kill -INT "$cap"
wait "$cap"
expect_eq "$(in_n1 "$FAULT" stats eth0 | grep '^rule 0 ' | grep -o 'dropped=[0-9]*')" \
	"dropped=1" "frames the injector dropped"
log "captured: $(tail -n 1 "$WORK/tshark.out")"

# every field of every frame, in capture order, one tshark run: 19 header
# fields (hello fields empty), then 6 hello fields, the highest expert
# severity and the payload
F="bsp.type bsp.src_node bsp.src_port bsp.dst_node bsp.dst_port bsp.rail bsp.ack_rail
bsp.seq bsp.ack bsp.eoh bsp.msg_id bsp.msg_len bsp.frag_off bsp.frag_unit bsp.payload_len
bsp.flags bsp.src_inc bsp.dst_inc bsp.csum.status bsp.hello.node_id bsp.hello.rail
bsp.hello.nrails bsp.hello.cluster_id bsp.hello.mtu bsp.hello.seq _ws.expert.severity bsp.payload"
args=()
for f in $F; do args+=(-e "$f"); done
ts -r "$WORK/cap.pcapng" -Y bsp -T fields -E 'separator=|' -E occurrence=a "${args[@]}" \
	>"$WORK/all"
[ -s "$WORK/all" ] || fail "no AF_BSP frame decoded"
# notes (0x400000: a hole reported, a retransmission) only, no warning or error
expect_eq "$(cut -d'|' -f26 "$WORK/all" | tr ',' '\n' | sort -u | xargs)" "4194304" \
	"severities of the expert infos in real traffic"
expect_eq "$(cut -d'|' -f19 "$WORK/all" | sort -u | xargs)" "good" \
	"checksum status of every frame"
grep -v '^4|' "$WORK/all" | cut -d'|' -f1-19 | tr '|' ' ' >"$WORK/frames"
cat "$WORK/frames"
# hellos of node 1: node, rail, rails, cluster, MTU
expect_eq "$(awk -F'|' '$1 == 4 && $20 == 1 { print $20, $21, $22, $23, $24 }' "$WORK/all" |
	sort -u)" "1 0 1 0 1500" "hellos of node 1: node rail nrails cluster mtu"
# payload bytes of the fragment at 2856, as sent
expect_eq "$(awk -F'|' '$1 == 1 && $13 == 2856 { print $27; exit }' "$WORK/all" | tr -d ':')" \
	"$(cat "$WORK/done.want")" "payload of the fragment at 2856"

# flags in decimal (column 16) and a RETX column (20) for the checks below
while read -r -a c; do
	f=$((c[15]))
	c[15]=$f
	echo "${c[*]} $(((f & 4) != 0))"
done <"$WORK/frames" >"$WORK/frames.d"

# DATA from 1:5000 to 2:6000: type src sport dst dport rail ack_rail seq ack
# eoh msg_id msg_len frag_off frag_unit payload_len flags src_inc dst_inc
# csum_status retx
data=$(awk '$1 == 1 && $2 == 1 && $3 == 5000 && $4 == 2 && $5 == 6000' "$WORK/frames.d")
first=$(awk '$20 == 0 { print $8, $11, $12, $13, $14, $15 }' <<<"$data")
expect_eq "$first" "0 0 5712 0 1428 1428
1 0 5712 1428 1428 1428
2 0 5712 2856 1428 1428
3 0 5712 4284 1428 1428
4 1 10 0 1428 10" "first transmissions: seq msg_id msg_len frag_off frag_unit payload_len"
# Resends (RETX): only the lost fragment, at least once (a slow guest may
# prod again while the first resend travels, and get a second one)
retx=$(awk '$20 == 1 { print $8, $11, $13, $15 }' <<<"$data")
[ -n "$retx" ] || fail "no resend of the lost fragment"
expect_eq "$(sort -u <<<"$retx")" "1 0 1428 1428" "resends (RETX): seq msg_id frag_off payload_len"
expect_eq "$(awk '{ print $6 }' <<<"$data" | sort -u | xargs)" "0" "rail of every DATA frame"
# the LAST message: LAST and ACKREQ set, no RETX, FAILOVER, PROBE, REPLY,
# CLOSE; no DATA frame carries PROBE, REPLY, CLOSE or AUTH (no cluster key)
lastf=$(awk '$11 == 1 { print $16 }' <<<"$data")
(((lastf & 0x3) == 0x3 && (lastf & 0x1cc) == 0)) || fail "flags of the LAST message: $lastf"
while read -r f; do
	(((f & 0x03c0) == 0)) || fail "DATA with flags $f"
done <<<"$(awk '{ print $16 }' <<<"$data")"

# node 2's answers: the hole [1, 2) on rail 0, then everything (ack 5)
back=$(awk '$2 == 2 && $3 == 6000 && $4 == 1 && $5 == 5000' "$WORK/frames.d")
[ -n "$back" ] || fail "no frame from 2:6000 to 1:5000"
awk '$7 == 0 && $9 == 1 && $10 == 2' <<<"$back" | grep -q . ||
	fail "no report of the hole [1, 2) on rail 0: $back"
expect_eq "$(tail -n 1 <<<"$back" | awk '{ print $9, $10 }')" "5 5" \
	"node 2's last acknowledgement: ack eoh"
# incarnations: node 2 addresses node 1's endpoint by the incarnation its
# DATA carried, once it has heard from it
inc1=$(head -n 1 <<<"$data" | awk '{ print $17 }')
[ "$inc1" -ne 0 ] || fail "src_inc 0"
expect_eq "$(awk '{ print $18 }' <<<"$back" | sort -u | xargs)" "$inc1" "dst_inc of node 2's frames"
expect_eq "$(awk '{ print $17 }' <<<"$data" | sort -u | xargs)" "$inc1" "src_inc of node 1's DATA"
# one decoded DATA frame, for the record
ts -r "$WORK/cap.pcapng" -V -Y "bsp.flags.retx == 1" -O bsp | sed -n '/^AF_BSP/,$p'
log "ok"
