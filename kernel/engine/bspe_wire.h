/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP wire format, version 3 (Documentation/protocol.rst).
 *
 * Every AF_BSP packet starts with the same 4 bytes (version, type, flags).
 * Data and control packets (DATA, ACK, PROD) carry the 72-byte struct
 * bspe_hdr; discovery packets (HELLO) carry the 40-byte struct bspe_hello.
 * Version 1 (56- and 32-byte headers, no incarnations, no MAC) is refused.
 * All multi-byte fields are big-endian. Over Ethernet the packet follows a
 * 14-byte Ethernet header with EtherType ETH_P_BSP (0x88B5); over UDP it is
 * the whole UDP payload.
 */
#ifndef _BSPE_WIRE_H
#define _BSPE_WIRE_H

#include "bspe_shim.h"
#include "bspe_siphash.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BSPE_VERSION		3

/* Packet types (bspe_hdr.type, bspe_hello.type). */
enum bspe_type {
	BSPE_T_DATA	= 1,	/* sequenced: carries one message fragment */
	BSPE_T_ACK	= 2,	/* unsequenced: explicit acknowledgment */
	BSPE_T_PROD	= 3,	/* unsequenced: receiver prods the sender */
	BSPE_T_HELLO	= 4,	/* discovery and per-rail liveness */
	BSPE_T_MAX	= 4,
};

/* Header flags (bspe_hdr.flags). */
#define BSPE_F_ACKREQ	0x0001	/* sender requests an explicit acknowledgment */
#define BSPE_F_LAST	0x0002	/* last packet to this destination in the superstep */
#define BSPE_F_RETX	0x0004	/* retransmission (any cause) */
#define BSPE_F_FAILOVER	0x0008	/* resent on another rail after a rail failure */
#define BSPE_F_SYNC	0x0010	/* barrier traffic: implicit ack one epoch later */
#define BSPE_F_CSUM	0x0020	/* csum is valid and must be verified */
#define BSPE_F_PROBE	0x0040	/* ACK sent by a sender timeout: answer regardless of n/(2p) */
#define BSPE_F_REPLY	0x0080	/* ACK answering a PROD or PROBE */
#define BSPE_F_CLOSE	0x0100	/* ACK: the sending endpoint closes for good */
#define BSPE_F_AUTH	0x0200	/* mac is valid and must be verified */
#define BSPE_F_BUSY	0x0400	/* REPLY: alive, but refusing data for lack of memory */
#define BSPE_F_EVICT	0x0800	/* ACK: idle channel eviction (request, or REPLY) */
#define BSPE_F_KEEP	0x1000	/* EVICT|REPLY: eviction refused, channel kept */
#define BSPE_F_WNDREQ	0x2000	/* DATA: ack now (half the window used, or the receiver waits) */
#define BSPE_F_ALL	0x3fff	/* every defined flag; others must be zero */

/* An ACK's PROBE asks for an answer at once; PROBE|REPLY is that answer. */
static inline int bspe_asks_answer(unsigned int flags)
{
	return (flags & (BSPE_F_PROBE | BSPE_F_REPLY)) == BSPE_F_PROBE;
}

static inline int bspe_answers_probe(unsigned int flags)
{
	return (flags & (BSPE_F_PROBE | BSPE_F_REPLY)) ==
	       (BSPE_F_PROBE | BSPE_F_REPLY);
}

/*
 * struct bspe_hdr - header of DATA, ACK and PROD packets (72 bytes).
 *
 * @version:	BSPE_VERSION.
 * @type:	enum bspe_type (DATA, ACK or PROD).
 * @flags:	BSPE_F_*.
 * @src_node:	sending node id.
 * @dst_node:	receiving node id.
 * @src_port:	sending endpoint (socket) port on @src_node.
 * @dst_port:	receiving endpoint port on @dst_node.
 * @rail:	rail index the packet is sent on; @seq and @base refer to the
 *		sender's sequence space of (channel, @rail).
 * @ack_rail:	rail whose reverse-direction sequence space @ack and @eoh
 *		describe (piggybacked acknowledgment may be for any rail).
 * @csum:	Internet checksum over header (with @csum zero) and payload,
 *		valid only if BSPE_F_CSUM (never together with BSPE_F_AUTH).
 * @src_inc:	incarnation of the sending channel: the sending endpoint's,
 *		or a newer one once a channel to the same peer was freed
 *		(eviction, local close); never zero.
 * @dst_inc:	incarnation of the receiving channel as the sender last
 *		learned it (the @src_inc of a packet it accepted from there);
 *		zero if it has not heard from the receiver yet.
 * @seq:	DATA: sequence number of this packet in (channel, @rail).
 *		ACK/PROD: the sender's next sequence number on @rail
 *		(lets the peer detect tail loss); unsequenced themselves.
 * @base:	lowest sequence number on @rail the sender still holds; the
 *		receiver treats everything below as settled (acknowledged,
 *		implicitly acknowledged or moved to another rail).
 * @ack:	cumulative acknowledgment for (channel, @ack_rail) in the
 *		reverse direction: next sequence number expected, every packet
 *		below it was received.
 * @eoh:	end of the first hole: first received sequence number after
 *		@ack. The hole is [@ack, @eoh); @eoh == @ack means no hole known.
 * @epoch:	superstep epoch of the sender: the number of the last barrier
 *		whose completion the sender's user has reported.
 * @msg_id:	DATA: per (source, destination) endpoint pair message number.
 *		EVICT: the eviction attempt (nonce) the packet is about.
 * @msg_len:	DATA: total message length in bytes.
 * @frag_off:	DATA: byte offset of this fragment in the message; a multiple
 *		of @frag_unit.
 * @frag_unit:	DATA: fragment size the sender cuts this message into; every
 *		fragment but the last of a message is exactly this long.
 * @payload_len: DATA: payload bytes following the header; zero for ACK/PROD.
 * @mac:	if BSPE_F_AUTH, SipHash-2-4 under the endpoints' shared key of
 *		the header (with @csum and @mac zero) followed by the payload;
 *		else zero.
 */
struct bspe_hdr {
	u8	version;
	u8	type;
	__be16	flags;
	__be32	src_node;
	__be32	dst_node;
	__be16	src_port;
	__be16	dst_port;
	u8	rail;
	u8	ack_rail;
	__sum16	csum;
	__be32	src_inc;
	__be32	dst_inc;
	__be32	seq;
	__be32	base;
	__be32	ack;
	__be32	eoh;
	__be32	epoch;
	__be32	msg_id;
	__be32	msg_len;
	__be32	frag_off;
	__be16	frag_unit;
	__be16	payload_len;
	__be64	mac;
};

#define BSPE_HDR_LEN	72
#define BSPE_HDR_MAC_OFF 64	/* offset of bspe_hdr.mac */
bspe_static_assert(sizeof(struct bspe_hdr) == BSPE_HDR_LEN,
		   "bspe_hdr is 72 bytes on the wire");
bspe_static_assert(offsetof(struct bspe_hdr, mac) == BSPE_HDR_MAC_OFF,
		   "bspe_hdr.mac is the last 8 bytes");

/* Hello capability bits (bspe_hello.caps). */
#define BSPE_CAP_CSUM	0x00000001	/* sender can verify checksums */
#define BSPE_CAP_XDP	0x00000002	/* rail has the XDP fast path loaded */

/* Hello flags (bspe_hello.flags). */
#define BSPE_HELLO_F_AUTH	0x0001	/* mac is valid and must be verified */

/*
 * struct bspe_hello - discovery / liveness frame (40 bytes), sent
 * periodically by the rail layer on every rail, to the broadcast address.
 *
 * @version:	BSPE_VERSION.
 * @type:	BSPE_T_HELLO.
 * @flags:	BSPE_HELLO_F_* (others reserved, must be zero).
 * @cluster_id:	cluster (network) id; hellos of other clusters are ignored.
 * @node_id:	sending node id.
 * @rail:	rail index of the sending NIC.
 * @nrails:	number of rails the sending node has.
 * @mtu:	largest AF_BSP packet (header + payload) the sender accepts on
 *		this rail.
 * @caps:	BSPE_CAP_*.
 * @incarnation: changes whenever the sender's node state is reset (module
 *		reload); peers reset their channels to it when it changes.
 * @hello_seq:	increments with every hello sent on this rail.
 * @interval_ms: the sender's hello period; peers declare the rail dead after
 *		missing several periods.
 * @csum:	Internet checksum over the 40 bytes (with @csum zero). Always
 *		present: a corrupted incarnation or node id would reset or
 *		invent peers, so a hello with a wrong checksum is dropped.
 * @mac:	if BSPE_HELLO_F_AUTH, SipHash-2-4 under the cluster key of the
 *		40 bytes with @csum and @mac zero; else zero. The checksum is
 *		computed after the MAC and covers it.
 */
struct bspe_hello {
	u8	version;
	u8	type;
	__be16	flags;
	__be32	cluster_id;
	__be32	node_id;
	u8	rail;
	u8	nrails;
	__be16	mtu;
	__be32	caps;
	__be32	incarnation;
	__be32	hello_seq;
	__be16	interval_ms;
	__sum16	csum;
	__be64	mac;
};

#define BSPE_HELLO_LEN	40
bspe_static_assert(sizeof(struct bspe_hello) == BSPE_HELLO_LEN,
		   "bspe_hello is 40 bytes on the wire");

/* Decoded hello (host byte order). */
struct bspe_hello_info {
	u32	cluster_id;
	u32	node_id;
	u8	rail;
	u8	nrails;
	u16	mtu;
	u32	caps;
	u32	incarnation;
	u32	hello_seq;
	u16	interval_ms;
};

/*
 * Encodes @hi into @out (BSPE_HELLO_LEN bytes). With a @key (BSPE_KEY_LEN
 * bytes) the hello carries BSPE_HELLO_F_AUTH and its MAC; with NULL, none.
 */
void bspe_hello_build(void *out, const struct bspe_hello_info *hi,
		      const u8 *key);

/*
 * Decodes and validates a hello of @len bytes; returns 0, -EBADMSG
 * (truncated, bad checksum, wrong type, flags or reserved bits),
 * -EPROTONOSUPPORT (version) or -EACCES: with a @key, the hello has no MAC
 * or a wrong one; without (@key NULL), it has one (the sender is in
 * authenticated mode, we are not). @hi is written only on success.
 */
int bspe_hello_parse(const void *pkt, u32 len, struct bspe_hello_info *hi,
		     const u8 *key);

/*
 * Returns the packet type of a received AF_BSP packet of @len bytes
 * (after the Ethernet/UDP header) or a negative errno if it is too short
 * or of another version; lets the rail layer dispatch HELLO vs the rest.
 */
int bspe_pkt_type(const void *pkt, u32 len);

/*
 * Sealing a DATA/ACK/PROD packet: fills hdr->csum (if the header has
 * BSPE_F_CSUM) or hdr->mac (if it has BSPE_F_AUTH, keyed with @key),
 * zeroing the other. The engine sets the flag in the headers it builds;
 * the transmitting caller seals each packet just before sending (the engine
 * never touches payload bytes on transmit), usually through bspe_seal() of
 * bspe.h, which takes the key from the endpoint. The streaming form
 * accepts the payload in pieces of any length (socket buffer fragments).
 */
struct bspe_seal_ctx {
	struct bspe_siphash sh;
	u64	csum;		/* unfolded ones' complement sum */
	u32	len;		/* bytes absorbed */
	u16	flags;		/* BSPE_F_CSUM / BSPE_F_AUTH of the header */
};

void bspe_seal_key_begin(struct bspe_seal_ctx *s, const u8 *key, void *hdr);
void bspe_seal_update(struct bspe_seal_ctx *s, const void *p, u32 len);
void bspe_seal_final(struct bspe_seal_ctx *s, void *hdr);
void bspe_seal_key(const u8 *key, void *hdr, const void *payload, u32 len);

/*
 * Verifies the MAC of the contiguous packet @pkt of @len bytes (header and
 * payload; the header's mac field is read, not changed): returns 1 if it
 * is right under @key.
 */
int bspe_mac_ok(const u8 *key, const void *pkt, u32 len);

/* Returns true if the checksum of the contiguous packet @pkt/@len holds. */
int bspe_csum_ok(const void *pkt, u32 len);

/*
 * Derives a 128-bit packet key from a shared secret of @len bytes (at least
 * 16 uniformly random bytes): SipHash-2-4 under two fixed public keys of a
 * domain-separation label and the secret. The secret itself never goes on
 * the wire.
 */
void bspe_key_derive(const void *secret, u32 len, u8 key[BSPE_KEY_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* _BSPE_WIRE_H */
