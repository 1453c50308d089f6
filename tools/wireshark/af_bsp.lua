-- SPDX-License-Identifier: GPL-2.0
--
-- Wireshark/tshark dissector for AF_BSP, wire format version 3
-- (Documentation/protocol.rst, kernel/engine/bspe_wire.h): DATA, ACK and
-- PROD (72-byte header, payload after it) and HELLO (40 bytes), over
-- Ethernet with EtherType 0x88B5; over UDP (libbsp's user-space transport)
-- with "Decode As... AF_BSP" or the preference "UDP port".
--
--   tshark -X lua_script:tools/wireshark/af_bsp.lua -r capture.pcap -V
--   wireshark -X lua_script:...   (or copy it to ~/.local/lib/wireshark/plugins/)
--
-- Malformed packets (short, another version, unknown type, undefined or
-- forbidden flags, lengths that disagree, wrong checksums) are marked with
-- expert info (bsp.expert.*) and decoded as far as they are whole.
-- Documentation/wireshark.rst lists the fields.

local bsp = Proto("bsp", "AF_BSP")

-- Wireshark 4.0 embeds Lua 5.2: no bitwise operators, bit32 instead.
local band, bnot, rshift = bit32.band, bit32.bnot, bit32.rshift

local ETH_P_BSP = 0x88B5
local HDR_LEN = 72
local HELLO_LEN = 40
local VERSION = 3

local types = { [1] = "DATA", [2] = "ACK", [3] = "PROD", [4] = "HELLO" }

-- header flags (bspe_hdr.flags)
local F = {
	{ 0x0001, "ACKREQ" }, { 0x0002, "LAST" }, { 0x0004, "RETX" },
	{ 0x0008, "FAILOVER" }, { 0x0010, "SYNC" }, { 0x0020, "CSUM" },
	{ 0x0040, "PROBE" }, { 0x0080, "REPLY" }, { 0x0100, "CLOSE" },
	{ 0x0200, "AUTH" }, { 0x0400, "BUSY" }, { 0x0800, "EVICT" },
	{ 0x1000, "KEEP" }, { 0x2000, "WNDREQ" },
}
local F_ALL = 0x3fff
local F_CSUM, F_AUTH = 0x0020, 0x0200
-- flags a control packet (ACK/PROD) may carry; DATA must not carry PROBE,
-- REPLY or CLOSE (protocol.rst, validity rule 3)
local F_CTRL = 0x0001 + 0x0020 + 0x0200 + 0x0040 + 0x0080 + 0x0100 + 0x0400 +
	0x0800 + 0x1000
local F_EVICT = 0x0800
local F_NOT_DATA = 0x0040 + 0x0080 + 0x0100 + 0x0400 + 0x0800 + 0x1000

local pf = {
	version = ProtoField.uint8("bsp.version", "Version"),
	type = ProtoField.uint8("bsp.type", "Type", base.DEC, types),
	flags = ProtoField.uint16("bsp.flags", "Flags", base.HEX),
	src_node = ProtoField.uint32("bsp.src_node", "Source node"),
	dst_node = ProtoField.uint32("bsp.dst_node", "Destination node"),
	src_port = ProtoField.uint16("bsp.src_port", "Source port"),
	dst_port = ProtoField.uint16("bsp.dst_port", "Destination port"),
	rail = ProtoField.uint8("bsp.rail", "Rail"),
	ack_rail = ProtoField.uint8("bsp.ack_rail", "Ack rail"),
	csum = ProtoField.uint16("bsp.csum", "Checksum", base.HEX),
	csum_status = ProtoField.string("bsp.csum.status", "Checksum status"),
	src_inc = ProtoField.uint32("bsp.src_inc", "Source incarnation"),
	dst_inc = ProtoField.uint32("bsp.dst_inc", "Destination incarnation"),
	seq = ProtoField.uint32("bsp.seq", "Sequence number"),
	base = ProtoField.uint32("bsp.base", "Base (lowest held)"),
	ack = ProtoField.uint32("bsp.ack", "Acknowledgement (next expected)"),
	eoh = ProtoField.uint32("bsp.eoh", "End of hole"),
	hole = ProtoField.string("bsp.hole", "Missing range"),
	hole_len = ProtoField.uint32("bsp.hole_len", "Missing packets"),
	epoch = ProtoField.uint32("bsp.epoch", "Epoch"),
	msg_id = ProtoField.uint32("bsp.msg_id", "Message id"),
	msg_len = ProtoField.uint32("bsp.msg_len", "Message length"),
	frag_off = ProtoField.uint32("bsp.frag_off", "Fragment offset"),
	frag_unit = ProtoField.uint16("bsp.frag_unit", "Fragment unit"),
	payload_len = ProtoField.uint16("bsp.payload_len", "Payload length"),
	mac = ProtoField.uint64("bsp.mac", "MAC", base.HEX),
	payload = ProtoField.bytes("bsp.payload", "Payload"),
	padding = ProtoField.bytes("bsp.padding", "Padding"),
	-- HELLO
	cluster_id = ProtoField.uint32("bsp.hello.cluster_id", "Cluster id"),
	node_id = ProtoField.uint32("bsp.hello.node_id", "Node id"),
	h_rail = ProtoField.uint8("bsp.hello.rail", "Rail"),
	nrails = ProtoField.uint8("bsp.hello.nrails", "Rails of the node"),
	mtu = ProtoField.uint16("bsp.hello.mtu", "MTU"),
	caps = ProtoField.uint32("bsp.hello.caps", "Capabilities", base.HEX),
	cap_csum = ProtoField.bool("bsp.hello.caps.csum", "Checksum capable", 32, nil, 0x1),
	cap_xdp = ProtoField.bool("bsp.hello.caps.xdp", "XDP fast path", 32, nil, 0x2),
	incarnation = ProtoField.uint32("bsp.hello.incarnation", "Incarnation"),
	hello_seq = ProtoField.uint32("bsp.hello.seq", "Hello sequence"),
	interval = ProtoField.uint16("bsp.hello.interval_ms", "Interval (ms)"),
	h_auth = ProtoField.bool("bsp.hello.flags.auth", "AUTH", 16, nil, 0x0001),
}
local flag_fields = {}
for _, f in ipairs(F) do
	local fld = ProtoField.bool("bsp.flags." .. f[2]:lower(), f[2], 16, nil, f[1])
	flag_fields[#flag_fields + 1] = fld
	pf["flag_" .. f[2]:lower()] = fld
end
local fields = {}
for _, v in pairs(pf) do fields[#fields + 1] = v end
bsp.fields = fields

local ex = {
	short = ProtoExpert.new("bsp.expert.short", "Packet too short",
		expert.group.MALFORMED, expert.severity.ERROR),
	version = ProtoExpert.new("bsp.expert.version", "Unknown protocol version",
		expert.group.MALFORMED, expert.severity.ERROR),
	type = ProtoExpert.new("bsp.expert.type", "Unknown packet type",
		expert.group.MALFORMED, expert.severity.ERROR),
	flags = ProtoExpert.new("bsp.expert.flags", "Flags not allowed",
		expert.group.MALFORMED, expert.severity.ERROR),
	length = ProtoExpert.new("bsp.expert.length", "Inconsistent lengths",
		expert.group.MALFORMED, expert.severity.ERROR),
	fields = ProtoExpert.new("bsp.expert.fields", "Inconsistent header fields",
		expert.group.MALFORMED, expert.severity.ERROR),
	csum = ProtoExpert.new("bsp.expert.csum", "Bad checksum",
		expert.group.CHECKSUM, expert.severity.ERROR),
	hole = ProtoExpert.new("bsp.expert.hole", "Receiver reports a hole",
		expert.group.SEQUENCE, expert.severity.NOTE),
	retx = ProtoExpert.new("bsp.expert.retx", "Retransmission",
		expert.group.SEQUENCE, expert.severity.NOTE),
}
bsp.experts = { ex.short, ex.version, ex.type, ex.flags, ex.length, ex.fields,
	ex.csum, ex.hole, ex.retx }

local pref_udp = 0
bsp.prefs.udp_port = Pref.uint("UDP port", 0,
	"Decode this UDP port as AF_BSP (0: none; libbsp chooses its ports)")

-- Internet checksum (RFC 1071) of tvb bytes [off, off+len), with the 16-bit
-- field at csum_off counted as zero.
local function inet_csum(tvb, off, len, csum_off)
	local sum = 0
	local i = 0
	while i + 1 < len do
		if off + i ~= csum_off then
			sum = sum + tvb(off + i, 2):uint()
		end
		i = i + 2
	end
	if i < len then sum = sum + tvb(off + i, 1):uint() * 256 end
	while sum > 0xffff do sum = band(sum, 0xffff) + rshift(sum, 16) end
	return band(bnot(sum), 0xffff)
end

local function flag_names(flags)
	local n = {}
	for _, f in ipairs(F) do
		if band(flags, f[1]) ~= 0 then n[#n + 1] = f[2] end
	end
	if band(flags, bnot(F_ALL)) ~= 0 then
		n[#n + 1] = string.format("0x%04x", band(flags, bnot(F_ALL)))
	end
	return table.concat(n, ",")
end

local function dissect_hello(tvb, pinfo, tree, len)
	if len < HELLO_LEN then
		tree:add_proto_expert_info(ex.short,
			string.format("HELLO of %d bytes (needs %d)", len, HELLO_LEN))
		pinfo.cols.info = "HELLO (short)"
		return
	end
	local flags = tvb(2, 2):uint()
	local ft = tree:add(pf.flags, tvb(2, 2))
	ft:add(pf.h_auth, tvb(2, 2))
	if band(flags, bnot(0x0001)) ~= 0 then
		ft:add_proto_expert_info(ex.flags, string.format(
			"undefined hello flags 0x%04x", band(flags, 0xfffe)))
	end
	tree:add(pf.cluster_id, tvb(4, 4))
	tree:add(pf.node_id, tvb(8, 4))
	tree:add(pf.h_rail, tvb(12, 1))
	tree:add(pf.nrails, tvb(13, 1))
	tree:add(pf.mtu, tvb(14, 2))
	local ct = tree:add(pf.caps, tvb(16, 4))
	ct:add(pf.cap_csum, tvb(16, 4))
	ct:add(pf.cap_xdp, tvb(16, 4))
	tree:add(pf.incarnation, tvb(20, 4))
	tree:add(pf.hello_seq, tvb(24, 4))
	tree:add(pf.interval, tvb(28, 2))
	local ck = tree:add(pf.csum, tvb(30, 2))
	local want = inet_csum(tvb, 0, HELLO_LEN, 30)
	if want == tvb(30, 2):uint() then
		tree:add(pf.csum_status, "good")
	else
		tree:add(pf.csum_status, "bad")
		ck:add_proto_expert_info(ex.csum,
			string.format("checksum 0x%04x, should be 0x%04x", tvb(30, 2):uint(), want))
	end
	tree:add(pf.mac, tvb(32, 8))
	if len > HELLO_LEN then tree:add(pf.padding, tvb(HELLO_LEN, len - HELLO_LEN)) end
	pinfo.cols.info = string.format("HELLO node %u rail %u/%u cluster %u seq %u mtu %u%s",
		tvb(8, 4):uint(), tvb(12, 1):uint(), tvb(13, 1):uint(), tvb(4, 4):uint(),
		tvb(24, 4):uint(), tvb(14, 2):uint(), band(flags, 1) ~= 0 and " AUTH" or "")
end

local function dissect_hdr(tvb, pinfo, tree, len, ptype)
	local tname = types[ptype]
	if len < HDR_LEN then
		tree:add_proto_expert_info(ex.short,
			string.format("%s of %d bytes (the header is %d)", tname, len, HDR_LEN))
		pinfo.cols.info = tname .. " (short)"
		return
	end
	local flags = tvb(2, 2):uint()
	local ft = tree:add(pf.flags, tvb(2, 2))
	ft:append_text(" (" .. flag_names(flags) .. ")")
	for _, fld in ipairs(flag_fields) do ft:add(fld, tvb(2, 2)) end
	if band(flags, bnot(F_ALL)) ~= 0 then
		ft:add_proto_expert_info(ex.flags,
			string.format("undefined flags 0x%04x", band(flags, bnot(F_ALL))))
	end
	if band(flags, F_AUTH) ~= 0 and band(flags, F_CSUM) ~= 0 then
		ft:add_proto_expert_info(ex.flags, "AUTH together with CSUM")
	end
	if ptype == 1 and band(flags, F_NOT_DATA) ~= 0 then
		ft:add_proto_expert_info(ex.flags, "PROBE, REPLY, CLOSE, BUSY, EVICT or KEEP on DATA")
	elseif ptype ~= 1 and band(flags, F_ALL, bnot(F_CTRL)) ~= 0 then
		ft:add_proto_expert_info(ex.flags,
			string.format("flags 0x%04x on %s", band(flags, F_ALL, bnot(F_CTRL)), tname))
	elseif ptype == 3 and band(flags, 0x0040) ~= 0 then
		ft:add_proto_expert_info(ex.flags, "PROBE on PROD")
	end

	tree:add(pf.src_node, tvb(4, 4))
	tree:add(pf.dst_node, tvb(8, 4))
	tree:add(pf.src_port, tvb(12, 2))
	tree:add(pf.dst_port, tvb(14, 2))
	tree:add(pf.rail, tvb(16, 1))
	tree:add(pf.ack_rail, tvb(17, 1))
	local ck = tree:add(pf.csum, tvb(18, 2))
	tree:add(pf.src_inc, tvb(20, 4))
	tree:add(pf.dst_inc, tvb(24, 4))
	tree:add(pf.seq, tvb(28, 4))
	tree:add(pf.base, tvb(32, 4))
	tree:add(pf.ack, tvb(36, 4))
	tree:add(pf.eoh, tvb(40, 4))
	local ack, eoh = tvb(36, 4):uint(), tvb(40, 4):uint()
	local holelen = (eoh - ack) % 4294967296
	if holelen ~= 0 then
		local h = tree:add(pf.hole, tvb(36, 8),
			string.format("[%u, %u) on rail %u", ack, eoh, tvb(17, 1):uint()))
		h:set_generated()
		tree:add(pf.hole_len, tvb(36, 8), holelen):set_generated()
		h:add_proto_expert_info(ex.hole, string.format(
			"%u packet(s) missing on rail %u", holelen, tvb(17, 1):uint()))
	end
	tree:add(pf.epoch, tvb(44, 4))
	tree:add(pf.msg_id, tvb(48, 4))
	tree:add(pf.msg_len, tvb(52, 4))
	tree:add(pf.frag_off, tvb(56, 4))
	tree:add(pf.frag_unit, tvb(60, 2))
	local plt = tree:add(pf.payload_len, tvb(62, 2))
	tree:add(pf.mac, tvb(64, 8))

	local src_inc = tvb(20, 4):uint()
	local seq, base = tvb(28, 4):uint(), tvb(32, 4):uint()
	local msg_id, msg_len = tvb(48, 4):uint(), tvb(52, 4):uint()
	local off, unit = tvb(56, 4):uint(), tvb(60, 2):uint()
	local plen = tvb(62, 2):uint()
	if src_inc == 0 then
		tree:add_proto_expert_info(ex.fields, "source incarnation 0")
	end
	if (seq - base) % 4294967296 > 4096 then
		tree:add_proto_expert_info(ex.fields, "seq more than 4096 beyond base")
	end
	if holelen > 4096 then
		tree:add_proto_expert_info(ex.fields, "eoh more than 4096 beyond ack")
	end
	if band(flags, F_AUTH) == 0 and tvb(64, 8):uint64() ~= UInt64(0) then
		tree:add_proto_expert_info(ex.fields, "mac set without AUTH")
	end
	if band(flags, F_AUTH) ~= 0 and tvb(18, 2):uint() ~= 0 then
		tree:add_proto_expert_info(ex.fields, "csum set with AUTH")
	end
	if ptype == 1 then
		local want
		if msg_len == 0 then want = 0 else want = math.min(unit, msg_len - off) end
		if unit == 0 then
			tree:add_proto_expert_info(ex.fields, "fragment unit 0")
		elseif off % unit ~= 0 then
			tree:add_proto_expert_info(ex.fields,
				"fragment offset not a multiple of the fragment unit")
		elseif msg_len ~= 0 and off >= msg_len then
			tree:add_proto_expert_info(ex.fields, "fragment offset beyond the message")
		elseif msg_len == 0 and off ~= 0 then
			tree:add_proto_expert_info(ex.fields, "offset in an empty message")
		elseif plen ~= want then
			plt:add_proto_expert_info(ex.length, string.format(
				"payload_len %u, the fragment at %u of %u is %u", plen, off, msg_len, want))
		end
		if band(flags, 0x0004) ~= 0 then
			tree:add_proto_expert_info(ex.retx, band(flags, 0x0008) ~= 0 and
				"retransmission after a rail failure" or "retransmission")
		end
	elseif plen ~= 0 or (msg_id ~= 0 and band(flags, F_EVICT) == 0) or msg_len ~= 0 or
		off ~= 0 or unit ~= 0 then
		tree:add_proto_expert_info(ex.fields, tname .. " with message fields or payload")
	end

	local avail = len - HDR_LEN
	if plen > avail then
		plt:add_proto_expert_info(ex.length, string.format(
			"payload_len %u, only %u byte(s) after the header", plen, avail))
		if avail > 0 then tree:add(pf.payload, tvb(HDR_LEN, avail)) end
	else
		if plen > 0 then tree:add(pf.payload, tvb(HDR_LEN, plen)) end
		if avail > plen then tree:add(pf.padding, tvb(HDR_LEN + plen, avail - plen)) end
		if band(flags, F_CSUM) ~= 0 and band(flags, F_AUTH) == 0 then
			local want = inet_csum(tvb, 0, HDR_LEN + plen, 18)
			if want == tvb(18, 2):uint() then
				tree:add(pf.csum_status, "good")
			else
				tree:add(pf.csum_status, "bad")
				ck:add_proto_expert_info(ex.csum, string.format(
					"checksum 0x%04x, should be 0x%04x", tvb(18, 2):uint(), want))
			end
		end
	end

	local info = string.format("%s %u:%u → %u:%u rail %u seq %u ack %u",
		tname, tvb(4, 4):uint(), tvb(12, 2):uint(), tvb(8, 4):uint(), tvb(14, 2):uint(),
		tvb(16, 1):uint(), seq, ack)
	if holelen ~= 0 then info = info .. string.format(" hole [%u,%u)", ack, eoh) end
	if ptype == 1 then
		info = info .. string.format(" msg %u off %u/%u", msg_id, off, msg_len)
	elseif band(flags, F_EVICT) ~= 0 then
		info = info .. string.format(" attempt %u", msg_id)
	end
	if flags ~= 0 then info = info .. " [" .. flag_names(flags) .. "]" end
	pinfo.cols.info = info
end

function bsp.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "AF_BSP"
	local t = tree:add(bsp, tvb())
	if len < 4 then
		t:add_proto_expert_info(ex.short, string.format("%d byte(s), less than the 4 common bytes", len))
		pinfo.cols.info = "short packet"
		return len
	end
	t:add(pf.version, tvb(0, 1))
	local ptype = tvb(1, 1):uint()
	local tt = t:add(pf.type, tvb(1, 1))
	local v = tvb(0, 1):uint()
	if v ~= VERSION then
		-- nothing after the first 4 bytes may be interpreted (protocol.rst)
		t:add(pf.flags, tvb(2, 2))
		t:add_proto_expert_info(ex.version, string.format("version %u (this is version %u)", v, VERSION))
		pinfo.cols.info = string.format("version %u", v)
		return len
	end
	if not types[ptype] then
		t:add(pf.flags, tvb(2, 2))
		tt:add_proto_expert_info(ex.type, string.format("type %u", ptype))
		pinfo.cols.info = string.format("unknown type %u", ptype)
		return len
	end
	t:append_text(", " .. types[ptype])
	if ptype == 4 then
		dissect_hello(tvb, pinfo, t, len)
	else
		dissect_hdr(tvb, pinfo, t, len, ptype)
	end
	return len
end

DissectorTable.get("ethertype"):add(ETH_P_BSP, bsp)
DissectorTable.get("udp.port"):add_for_decode_as(bsp)

function bsp.prefs_changed()
	local udp = DissectorTable.get("udp.port")
	if pref_udp ~= 0 then udp:remove(pref_udp, bsp) end
	pref_udp = bsp.prefs.udp_port
	if pref_udp ~= 0 then udp:add(pref_udp, bsp) end
end
