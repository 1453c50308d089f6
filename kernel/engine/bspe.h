/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Public API of the AF_BSP protocol engine ("bspe").
 *
 * The engine is a sans-I/O state machine in plain C shared by the kernel
 * module and the user-space UDP transport. Documentation/protocol.rst
 * specifies the protocol; this header specifies how a transport drives it.
 *
 * Model
 * -----
 * One engine instance (struct bspe_ep) is one endpoint: one AF_BSP socket
 * (or one user-space UDP endpoint) identified by (node, port). It holds a
 * bounded table of channels; a channel is the state for one remote endpoint
 * (remote node, remote port) in both directions: outgoing messages with
 * their packets, incoming reassembly, and per rail a sequence space in each
 * direction. Rail liveness is kept per remote node inside the endpoint and
 * fed by the caller (hellos) and by the engine itself (repeated timeouts).
 *
 * Concurrency: the engine has no locks. The caller serialises every call on
 * one endpoint. In the kernel that is the spin lock bsp_transport.lock of
 * the socket's transport (kernel/transport.c), taken with bottom halves
 * disabled in process, softirq and hrtimer context alike; not lock_sock,
 * which softirq cannot take. In user space it is the UDP transport's mutex
 * (userlib/src/udp_transport.cpp). Callbacks run synchronously inside the
 * calls, with that serialisation held: they must not call back into the
 * same endpoint and must not sleep (queue work instead).
 *
 * Memory: the engine never allocates. The caller obtains the size of the
 * endpoint's fixed part with bspe_mem_size() (a few hundred bytes plus a
 * dozen bytes per possible channel: table, free list, hash buckets),
 * provides that much memory to bspe_init(), and frees it after bspe_fini().
 * A channel's base memory (bspe_chan_size() bytes: its state, receive
 * windows, one send descriptor per rail, one message, one reassembly slot,
 * and cfg.chan_priv bytes for the caller) is obtained through
 * ops->chan_alloc when the channel opens and returned through
 * ops->chan_free when it closes. What a channel holds beyond that (send
 * rings up to snd_wnd descriptors, messages up to msg_wnd, reassembly
 * slots, the failover queue) is obtained through ops->chan_alloc when it
 * holds more in flight and returned when that settles; an allocation
 * that fails makes the send wait or drops the fragment (to be sent again),
 * counted as grow_nomem. cfg.max_chans is a ceiling on open
 * channels, not a preallocation. A sender the endpoint does not know gets a
 * channel only from a packet that passed every validation. Every window and
 * table is bounded by the configuration; input beyond them is refused and
 * counted by reason.
 *
 * Work: per packet, per timer expiry and per pacing release the engine
 * visits only the channels concerned (lists of channels with unsettled
 * messages and with deadlines, a FIFO of messages in submission order),
 * never the whole table; channels are found by a hash keyed with
 * cfg.hash_key. Rail state changes (bspe_rail_set, a rail the engine
 * declares dead) visit every open channel.
 *
 * Payload bytes never pass through the engine on transmit: a message stays
 * owned by the caller (an opaque cookie) and the engine asks the caller to
 * transmit "this header + bytes [off, off + len) of message cookie". On
 * receive the engine validates the packet and, if it accepts the fragment,
 * asks the caller to place the payload bytes at an offset of the message
 * being reassembled in a slot (rx_data); when a message is complete and in
 * order it is delivered (deliver). Time is a u64 nanosecond clock passed in
 * by the caller with every event; it must not go backwards.
 */
#ifndef _BSPE_H
#define _BSPE_H

#include "bspe_shim.h"
#include "bspe_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BSPE_MAX_RAILS		8
#define BSPE_MAX_WND		4096	/* largest snd_wnd / rcv_wnd */
#define BSPE_MAX_MSG_WND	256	/* largest msg_wnd */
#define BSPE_MAX_FRAGS		65536	/* largest fragments per message */

/* bspe_cfg.flags */
#define BSPE_CFG_CSUM		0x01	/* set BSPE_F_CSUM on every packet sent */
#define BSPE_CFG_REQUIRE_CSUM	0x02	/* drop received packets without checksum */
#define BSPE_CFG_AUTO_OPEN	0x04	/* open a channel for unknown senders */
#define BSPE_CFG_AUTH		0x08	/* MAC every packet, require it on receive */
/*
 * The caller accounts receive memory itself (the kernel: sk_rmem_alloc):
 * cfg.rcvbuf no longer refuses messages (it still sizes the explicit-ack
 * threshold); rx_data refuses a fragment with -ENOBUFS when there is no
 * room, counted as BSPE_DROP_NOBUFS. bspe_rx_resume() says room is back.
 */
#define BSPE_CFG_EXT_RCVBUF	0x80

/**
 * struct bspe_cfg - configuration of one endpoint
 * @node:		this endpoint's node.
 * @port:		this endpoint's port.
 * @nrails:		rails of this node (1..BSPE_MAX_RAILS); rail r of every
 *			node is on the same network.
 * @flags:		BSPE_CFG_*.
 * @max_chans:		most channels (remote endpoints) open at a time.
 * @frag_size:		payload bytes per DATA packet (MTU - BSPE_HDR_LEN).
 * @snd_wnd:		per (channel, rail) send ring: packets outstanding.
 * @rcv_wnd:		per (channel, rail) receive window in sequence numbers.
 * @msg_wnd:		messages in flight per channel and direction (send
 *			queue and reassembly slots); must not exceed the peer's.
 * @rail_fail_probes:	unanswered timeout probes on a rail before the engine
 *			declares that rail dead for the peer node.
 * @reserved:		zero.
 * @max_msg:		largest message in bytes (<= BSPE_MAX_FRAGS fragments).
 * @sndbuf_pkts:	packets outstanding over the whole endpoint.
 * @rcvbuf:		bytes of reassembly + delivered-not-consumed messages.
 * @nprocs:		p of the n/(2p) explicit-ack rule (processes in group).
 * @rtt_init_ns:	initial round-trip estimate.
 * @rtt_min_ns:		lower clamp of the estimate.
 * @rtt_max_ns:		upper clamp of the estimate.
 * @rto_min_ns:		floor of the conservative sender timeout.
 * @prod_max_ns:	cap of the exponential prod back-off.
 * @ack_delay_ns:	delay of a due explicit ack, to let it be piggybacked.
 * @unreach_ns:		with no live rail to a node for this long, its messages
 *			fail with -EHOSTUNREACH.
 * @stripe_min:		a message is striped over L live rails if its length is
 *			at least L * stripe_min bytes (0: frag_size).
 * @incarnation:	this endpoint's incarnation (never 0), carried as
 *			src_inc: strictly newer (serial arithmetic on u32)
 *			than that of any earlier endpoint on the same
 *			(@node, @port) within @timewait_ns.
 * @key:		with BSPE_CFG_AUTH, the 128-bit key of the packet MAC
 *			(shared by every endpoint this one talks to).
 * @timewait_ns:	how long the tombstone of a peer endpoint that closed
 *			keeps its late frames out (TIME-WAIT).
 * @evict_ns:		a channel idle (nothing unsettled either way, no
 *			packet) for this long is evicted by the EVICT
 *			handshake (Documentation/protocol.rst "Idle channel
 *			eviction"); 0: never.
 * @chan_priv:		bytes the caller wants in every channel's allocation
 *			(bspe_chan_priv()), zeroed at open; at most 65536.
 * @hash_key:		key of the channel lookup hash (SipHash-2-4 of the
 *			remote address): fill with random bytes, so that
 *			nobody can pick addresses that share a bucket.
 *
 * Fill with bspe_cfg_default() and override. Windows need not be powers of
 * two.
 */
struct bspe_cfg {
	u32	node;
	u16	port;
	u8	nrails;
	u8	flags;
	u16	max_chans;
	u16	frag_size;
	u16	snd_wnd;
	u16	rcv_wnd;
	u16	msg_wnd;
	u8	rail_fail_probes;
	u8	reserved;
	u32	max_msg;
	u32	sndbuf_pkts;
	u32	rcvbuf;
	u32	nprocs;
	u32	stripe_min;
	u64	rtt_init_ns;
	u64	rtt_min_ns;
	u64	rtt_max_ns;
	u64	rto_min_ns;
	u64	prod_max_ns;
	u64	ack_delay_ns;
	u64	unreach_ns;
	u64	timewait_ns;
	u64	evict_ns;
	u32	incarnation;
	u32	chan_priv;
	u8	key[BSPE_KEY_LEN];
	u64	hash_key[2];
};

/* Reasons a received packet (or part of it) is refused; index of drops[]. */
enum bspe_drop {
	BSPE_DROP_TRUNCATED,	/* shorter than header or header+payload_len */
	BSPE_DROP_VERSION,	/* unknown version */
	BSPE_DROP_TYPE,		/* unknown type, or HELLO handed to bspe_rx */
	BSPE_DROP_FLAGS,	/* undefined flags set */
	BSPE_DROP_CSUM,		/* checksum wrong (or missing when required) */
	BSPE_DROP_ADDR,		/* dst node/port not this endpoint */
	BSPE_DROP_RAIL,		/* rail or ack_rail >= nrails */
	BSPE_DROP_NOCHAN,	/* unknown sender and no channel available */
	BSPE_DROP_MALFORMED,	/* inconsistent fields (frag/len/unit/seq/base) */
	BSPE_DROP_TOOBIG,	/* msg_len > max_msg */
	BSPE_DROP_EPOCH,	/* epoch more than one ahead of ours */
	BSPE_DROP_SEQ_WINDOW,	/* seq beyond the rail receive window */
	BSPE_DROP_MSG_WINDOW,	/* msg_id beyond the reassembly window */
	BSPE_DROP_NOBUFS,	/* rcvbuf exhausted: only next expected accepted */
	BSPE_DROP_NOMEM,	/* caller's rx_data refused the fragment */
	BSPE_DROP_DUP,		/* duplicate (already received) */
	BSPE_DROP_AUTH,		/* MAC missing, wrong, or not configured */
	BSPE_DROP_STALE,	/* for or from an earlier incarnation */
	BSPE_DROP_MAX,
};

/**
 * struct bspe_stats - counters, per (channel, rail), summed by bspe_stats_get()
 * @data_tx: DATA packets sent (incl. retx).
 * @data_rx: DATA packets accepted (new fragment).
 * @bytes_tx: payload bytes sent.
 * @bytes_rx: payload bytes accepted.
 * @retx_hole: resent: hole learned from ack/eoh.
 * @retx_prod: resent: answering a prod.
 * @retx_timeout: resent: after a sender timeout probe.
 * @retx_failover: resent on another rail (rail died).
 * @spurious_rx: retransmission received twice.
 * @dup_rx: duplicate DATA received.
 * @acks_tx: explicit ACK packets sent.
 * @acks_rx: explicit ACK packets received.
 * @ackreq_tx: DATA sent with BSPE_F_ACKREQ.
 * @acked_piggy: sent packets freed by ack fields.
 * @acked_implicit: sent packets freed by the epoch rule.
 * @prods_tx: PROD packets sent.
 * @prods_rx: PROD packets received.
 * @prods_early: prod answered without data: back-off.
 * @probes_tx: sender timeout probes sent.
 * @timeouts: sender timeouts fired.
 * @rail_down: rail declared dead (by caller or engine).
 * @rail_up: rail declared alive again.
 * @msgs_tx: messages completed (sender).
 * @msgs_rx: messages delivered (receiver).
 * @msgs_failed: messages completed with an error.
 * @chan_closes: channels freed: the peer closed.
 * @chan_resets: channels reset: newer peer incarnation.
 * @chan_restarts: channels started afresh after a message failed (the
 *		peer unreachable), so that later messages can be delivered.
 * @msgs_abandoned: messages partly received when their channel was reset
 *		or restarted: dropped (their sender saw them fail, or is
 *		gone); those received whole are delivered.
 * @chans_opened: channels allocated (endpoint).
 * @chan_visits: channels visited by timer/push walks.
 * @chans_evicted: idle channels freed by eviction (endpoint).
 * @evicts_tx: EVICT requests sent (retries included).
 * @evicts_kept: EVICT requests refused by the peer (KEEP received).
 * @evicts_gone: EVICT|REPLY answers sent for a channel no longer held.
 * @grow_nomem: channel memory the engine could not allocate (ops->chan_alloc
 *		returned NULL) to grow a send ring, the failover queue, the
 *		message ring or a reassembly slot: the send waited for room, or
 *		the fragment was dropped (also counted in @drops, nomem) to be
 *		sent again.
 * @drops: refused input by reason.
 *
 * "pkt" counts packets; every DATA packet sent is counted once in @data_tx
 * and, if it is a retransmission, once more in exactly one retx_* cause.
 */
struct bspe_stats {
	u64	data_tx;
	u64	data_rx;
	u64	bytes_tx;
	u64	bytes_rx;
	u64	retx_hole;
	u64	retx_prod;
	u64	retx_timeout;
	u64	retx_failover;
	u64	spurious_rx;
	u64	dup_rx;
	u64	acks_tx;
	u64	acks_rx;
	u64	ackreq_tx;
	u64	acked_piggy;
	u64	acked_implicit;
	u64	prods_tx;
	u64	prods_rx;
	u64	prods_early;
	u64	probes_tx;
	u64	timeouts;
	u64	rail_down;
	u64	rail_up;
	u64	msgs_tx;
	u64	msgs_rx;
	u64	msgs_failed;
	u64	chan_closes;
	u64	chan_resets;
	u64	chan_restarts;
	u64	msgs_abandoned;
	u64	chans_opened;
	u64	chan_visits;
	u64	chans_evicted;
	u64	evicts_tx;
	u64	evicts_kept;
	u64	evicts_gone;
	u64	grow_nomem;
	u64	drops[BSPE_DROP_MAX];
};

/**
 * struct bspe_xmit - "transmit this packet"
 * @hdr:	BSPE_HDR_LEN header bytes, ready for the wire.
 * @node:	destination node (map to the MAC/IP of its NIC on @rail).
 * @rail:	rail to send on.
 * @msg:	sender's message cookie (NULL for ACK/PROD).
 * @off:	payload: bytes [@off, @off + @len) of @msg.
 * @len:	payload length.
 *
 * The header is complete except the checksum or MAC: the caller seals it
 * with bspe_seal() (or the bspe_seal_begin()/update/final stream) over the
 * header and payload before sending.
 */
struct bspe_xmit {
	u8	hdr[BSPE_HDR_LEN];
	u32	node;
	u8	rail;
	void	*msg;
	u32	off;
	u32	len;
};

/**
 * struct bspe_rx_frag - "place these payload bytes"
 * @chan:	channel index.
 * @chan_cookie: the caller's cookie for the channel.
 * @slot:	reassembly slot (0..msg_wnd-1) of the message.
 * @first:	1 if this is the first fragment accepted for this message in
 *		this slot: the caller allocates @msg_len bytes for it now.
 * @next:	1 if the message is the next one its channel delivers (its
 *		completion makes it readable at once).
 * @msg_id:	message number.
 * @msg_len:	total length of the message.
 * @off:	offset of the payload in the message.
 * @data:	payload inside the packet passed to bspe_rx(); NULL if it was
 *		passed with BSPE_RX_HDR_ONLY: the payload is then bytes
 *		[BSPE_HDR_LEN, BSPE_HDR_LEN + @len) of the caller's packet,
 *		which the caller reads itself.
 * @len:	payload length.
 * @flags:	header flags (BSPE_F_SYNC tells barrier traffic).
 *
 * The engine accepted a new fragment of the message being reassembled in
 * (@chan, @slot).
 */
struct bspe_rx_frag {
	int		chan;
	void		*chan_cookie;
	u32		slot;
	int		first;
	int		next;
	u32		msg_id;
	u32		msg_len;
	u32		off;
	const void	*data;
	u32		len;
	u16		flags;
};

/**
 * struct bspe_delivery - a complete message, delivered once, in order per channel
 * @chan:	channel index.
 * @chan_cookie: the caller's cookie for the channel.
 * @node:	sender's node.
 * @port:	sender's port.
 * @slot:	reassembly slot (0..msg_wnd-1) that holds the message.
 * @msg_id:	message number.
 * @msg_len:	length of the message.
 * @flags:	header flags: BSPE_F_SYNC if barrier traffic.
 *
 * The caller takes the slot's buffer (it may reuse the slot after return)
 * and reports with bspe_rx_consumed() when the reader consumed it.
 */
struct bspe_delivery {
	int	chan;
	void	*chan_cookie;
	u32	node;
	u16	port;
	u32	slot;
	u32	msg_id;
	u32	msg_len;
	u16	flags;
};

/**
 * struct bspe_ops - actions out
 * @xmit:	transmit a packet (may drop it: loss is recovered).
 * @rx_data:	place a fragment; return 0, or a negative errno to refuse it
 *		(-ENOBUFS: counted as BSPE_DROP_NOBUFS, the channel prods the
 *		sender again once bspe_rx_resume() is called; any other error
 *		counted as BSPE_DROP_NOMEM; the sender will resend).
 * @deliver:	hand a complete message to the reader.
 * @rx_abort:	a partially reassembled message in (@chan, @slot) is
 *		discarded (channel closed/reset): free its buffer.
 * @complete:	message @msg is settled: @status 0 (acknowledged, the caller
 *		may free it) or a negative errno (-EHOSTUNREACH, -ECONNRESET).
 *		Reported exactly once per message accepted by bspe_send().
 * @timer:	(re)arm the endpoint's single timer for absolute time @when;
 *		a later arm replaces an earlier one. Call bspe_timer() then.
 * @rail_event:	the engine declared rail @rail of @node dead (@up 0) on
 *		its own evidence (unanswered timeout probes while another rail
 *		lives), or found such a rail alive again (@up 1: it keeps
 *		probing a rail it declared dead, every 8 timeouts, until a probe
 *		is answered on it). The rail layer may also bring it back with
 *		bspe_rail_set(.., 1) (a hello on it).
 * @chan_alloc:	channel memory: @size bytes, aligned to 8, or NULL. For
 *		a channel being opened @size is bspe_chan_size() (NULL: the
 *		open fails with -ENOMEM); other sizes grow an open channel's
 *		rings (NULL: the send waits, or the fragment is dropped and
 *		sent again). Charge it to the endpoint's owner; it runs in
 *		every context the engine is called in (kernel: softirq too).
 * @chan_free:	return @mem (@size bytes, as allocated): a channel closed,
 *		or a ring it no longer needs.
 * @chan_new:	optional. A packet that passed every validation comes from
 *		(@node, @port), unknown to the endpoint (BSPE_CFG_AUTO_OPEN):
 *		return BSPE_CHAN_* flags to open a channel for it, or a negative
 *		errno to refuse (counted as BSPE_DROP_NOCHAN). @cookie and
 *		@rails (live rails to @node, preset from other channels to it,
 *		else all) may be changed. Without it, such channels open with no
 *		flags.
 *
 * @new_inc:	optional. A fresh incarnation for this endpoint's channels,
 *		newer (serial arithmetic) than every one given out before
 *		and than cfg.incarnation; asked for when a channel is freed
 *		while its peer may still know it (eviction, local close). The
 *		kernel draws it from the counter its sockets' incarnations
 *		come from, so that a later socket on the same port is newer
 *		still. Without it the engine counts up from cfg.incarnation.
 * All callbacks are mandatory except @rail_event, @rx_abort, @chan_new and
 * @new_inc.
 * Each gets the @ctx given to bspe_init() as its first argument.
 */
struct bspe_ops {
	void	(*xmit)(void *ctx, const struct bspe_xmit *x);
	int	(*rx_data)(void *ctx, const struct bspe_rx_frag *f);
	void	(*deliver)(void *ctx, const struct bspe_delivery *d);
	void	(*rx_abort)(void *ctx, int chan, u32 slot);
	void	(*complete)(void *ctx, void *msg, int status);
	void	(*timer)(void *ctx, u64 when);
	void	(*rail_event)(void *ctx, u32 node, u8 rail, int up);
	void	*(*chan_alloc)(void *ctx, size_t size);
	void	(*chan_free)(void *ctx, void *mem, size_t size);
	int	(*chan_new)(void *ctx, u32 node, u16 port, void **cookie,
			    u8 *rails);
	u32	(*new_inc)(void *ctx);
};

struct bspe_ep;

/**
 * bspe_cfg_default() - fill a configuration with the defaults
 * @cfg: the configuration to fill.
 *
 * 1 rail, 1444-byte fragments, 1 ms RTT, ...: the caller overrides what it
 * needs, then checks the result with bspe_cfg_check().
 */
void bspe_cfg_default(struct bspe_cfg *cfg);

/**
 * bspe_cfg_check() - check a configuration
 * @cfg: the configuration.
 *
 * Return: 0 if @cfg is usable, else -EINVAL.
 */
int bspe_cfg_check(const struct bspe_cfg *cfg);

/**
 * bspe_mem_size() - memory of an endpoint's fixed part
 * @cfg: the endpoint's configuration.
 *
 * Return: bytes of memory the fixed part of an endpoint with @cfg needs
 * (the endpoint, its channel table, free list and hash buckets), 0 if @cfg
 * is invalid.
 */
size_t bspe_mem_size(const struct bspe_cfg *cfg);

/**
 * bspe_chan_size() - memory of one channel
 * @cfg: the endpoint's configuration.
 *
 * An endpoint with n open channels holds bspe_mem_size() + n *
 * bspe_chan_size() bytes, plus what its channels hold in flight beyond
 * one packet per rail, one message and one reassembly each (see
 * Documentation/protocol.rst, "Channel memory and work").
 *
 * Return: bytes of one channel's base allocation (ops->chan_alloc) with
 * @cfg, caller's chan_priv included; 0 if @cfg is invalid.
 */
size_t bspe_chan_size(const struct bspe_cfg *cfg);

/**
 * bspe_init() - initialise an endpoint
 * @mem: memory for it, aligned to at least 8.
 * @size: bytes at @mem, at least bspe_mem_size(@cfg).
 * @cfg: its configuration (copied).
 * @ops: the caller's callbacks (kept).
 * @ctx: first argument of every callback (kept).
 *
 * Return: the endpoint, or NULL if @cfg is invalid or @size too small.
 */
struct bspe_ep *bspe_init(void *mem, size_t size, const struct bspe_cfg *cfg,
			  const struct bspe_ops *ops, void *ctx);

/**
 * bspe_fini() - tear an endpoint down
 * @ep: the endpoint.
 *
 * Every message not yet settled is completed with -ECONNRESET, every
 * partial reassembly aborted, every channel returned through
 * ops->chan_free. The endpoint's memory is the caller's again afterwards.
 */
void bspe_fini(struct bspe_ep *ep);

/**
 * bspe_close_notify() - tell every peer that this endpoint closes
 * @ep: the endpoint.
 * @now: current time in ns.
 *
 * On each live rail of each channel an ACK with BSPE_F_CLOSE that
 * acknowledges everything received. Peers settle what it acknowledges, fail
 * what it did not with -ECONNRESET and free the channel. Called just before
 * bspe_fini(). From then on nothing leaves the endpoint (no DATA, probe,
 * prod or ACK) and bspe_send() returns -ESHUTDOWN.
 */
void bspe_close_notify(struct bspe_ep *ep, u64 now);

/**
 * bspe_seal() - fill a packet's checksum or MAC
 * @ep: the endpoint that made the packet.
 * @hdr: a copy of bspe_xmit.hdr at the start of the outgoing packet.
 * @payload: the packet's payload bytes.
 * @len: their number.
 *
 * Seals a packet the engine handed to ops->xmit: fills the checksum or the
 * MAC (with the endpoint's key) as the header's flags say.
 */
void bspe_seal(const struct bspe_ep *ep, void *hdr, const void *payload,
	       u32 len);

/**
 * bspe_seal_begin() - start sealing a packet whose payload comes in pieces
 * @ep: the endpoint that made the packet.
 * @s: the sealing state to start.
 * @hdr: a copy of bspe_xmit.hdr at the start of the outgoing packet.
 *
 * The streaming form of bspe_seal(): feed the payload to
 * bspe_seal_update() in order, then call bspe_seal_final() on @hdr.
 */
void bspe_seal_begin(const struct bspe_ep *ep, struct bspe_seal_ctx *s,
		     void *hdr);

/**
 * bspe_get_cfg() - an endpoint's configuration
 * @ep: the endpoint.
 *
 * Return: its current configuration (read-only view).
 */
const struct bspe_cfg *bspe_get_cfg(const struct bspe_ep *ep);

/* bspe_chan_open() flags */
#define BSPE_CHAN_GROUP		0x01	/* remote endpoint is a group member */

/**
 * bspe_chan_open() - open the channel to a remote endpoint
 * @ep: the endpoint.
 * @node: the remote node.
 * @port: the remote port.
 * @flags: BSPE_CHAN_* flags.
 * @cookie: the caller's cookie for the channel (passed back in callbacks).
 *
 * Opens the channel to (@node, @port), or returns the existing one,
 * updating its flags and cookie.
 *
 * Return: the channel index >= 0 (0..max_chans-1, reused after a close),
 * -ENOSPC if max_chans channels are open, -ENOMEM if ops->chan_alloc
 * failed, -EINVAL for our own address.
 */
int bspe_chan_open(struct bspe_ep *ep, u32 node, u16 port, u32 flags,
		   void *cookie);

/**
 * bspe_chan_find() - find the channel to a remote endpoint
 * @ep: the endpoint.
 * @node: the remote node.
 * @port: the remote port.
 *
 * Return: index of the channel to (@node, @port), or -ENOENT.
 */
int bspe_chan_find(const struct bspe_ep *ep, u32 node, u16 port);

/**
 * bspe_chan_priv() - the caller's private part of a channel
 * @ep: the endpoint.
 * @chan: an open channel.
 *
 * Return: the caller's cfg.chan_priv bytes of @chan, or NULL.
 */
void *bspe_chan_priv(const struct bspe_ep *ep, int chan);

/**
 * bspe_chan_count() - number of open channels
 * @ep: the endpoint.
 *
 * Return: the number of open channels.
 */
u32 bspe_chan_count(const struct bspe_ep *ep);

/**
 * bspe_node_close() - close every channel to a node
 * @ep: the endpoint.
 * @node: the node (it restarted).
 * @now: current time in ns.
 *
 * Each channel is closed as by bspe_chan_close().
 *
 * Return: the number of channels closed.
 */
u32 bspe_node_close(struct bspe_ep *ep, u32 node, u64 now);

/**
 * bspe_chan_close() - close a channel
 * @ep: the endpoint.
 * @chan: the channel.
 * @now: current time in ns.
 *
 * Pending messages complete with -ECONNRESET, partial reassemblies are
 * aborted, the channel's memory goes back through ops->chan_free and its
 * index may be reused.
 *
 * Return: 0, or -EINVAL if @chan is not open.
 */
int bspe_chan_close(struct bspe_ep *ep, int chan, u64 now);

/* bspe_send() flags */
#define BSPE_SEND_LAST		0x01	/* last message to this peer in superstep */
#define BSPE_SEND_SYNC		0x02	/* barrier traffic (implicit ack one epoch later) */

/**
 * bspe_send() - submit a message
 * @ep: the endpoint.
 * @chan: the channel to send it on.
 * @msg: the caller's cookie for its bytes, passed back in xmit and complete.
 * @len: its length in bytes (0 allowed).
 * @flags: BSPE_SEND_* flags.
 * @now: current time in ns.
 *
 * Return: 0 (the message will be completed exactly once through
 * ops->complete), -EAGAIN (msg_wnd messages already queued on the channel),
 * -EMSGSIZE (@len > max_msg), -EINVAL (bad channel or flags), -EHOSTUNREACH
 * (no live rail to the node for unreach_ns), -ESHUTDOWN (after
 * bspe_close_notify()).
 */
int bspe_send(struct bspe_ep *ep, int chan, void *msg, u32 len, u32 flags,
	      u64 now);

/**
 * bspe_rx() - a packet arrived
 * @ep: the endpoint.
 * @rail: the rail it arrived on.
 * @pkt: the packet: struct bspe_hdr, payload following contiguously.
 * @len: its length in bytes.
 * @now: current time in ns.
 *
 * Return: 0 if it was accepted, else a negative errno, every refusal
 * counted in drops[]: -EBADMSG (malformed, bad checksum, misaddressed,
 * wrong rail, impossible epoch), -EPROTONOSUPPORT (version), -EACCES (MAC missing or wrong),
 * -ESTALE (for or from an earlier incarnation), -ENOENT (unknown sender):
 * invalid, and invalid input never changes engine state;
 * -ENOBUFS (outside a window, receive buffers low), -EALREADY (duplicate),
 * or rx_data's error: a valid packet whose data was not taken; its
 * acknowledgment fields and epoch were still processed.
 */
int bspe_rx(struct bspe_ep *ep, u8 rail, const void *pkt, u32 len, u64 now);

/* bspe_rx_ext() flags */
/*
 * The caller vouches for the packet's checksum: it never left this host
 * (the kernel's CHECKSUM_PARTIAL) or the device verified it. The engine
 * still requires BSPE_F_CSUM where the configuration does.
 */
#define BSPE_RX_CSUM_OK		0x01
/*
 * Only the header is contiguous at @pkt (BSPE_HDR_LEN bytes); @len is still
 * the whole packet's length. The engine cannot read the payload: a packet
 * with BSPE_F_CSUM is refused (BSPE_DROP_CSUM) unless BSPE_RX_CSUM_OK is
 * given too, an endpoint with BSPE_CFG_AUTH refuses every such packet
 * (BSPE_DROP_AUTH), and rx_data gets @data NULL.
 */
#define BSPE_RX_HDR_ONLY	0x02

/**
 * bspe_rx_ext() - a packet arrived, with what the caller knows of it
 * @ep: the endpoint.
 * @rail: the rail it arrived on.
 * @pkt: the packet (or its header only, with BSPE_RX_HDR_ONLY).
 * @len: the packet's length in bytes.
 * @rx_flags: BSPE_RX_* flags.
 * @now: current time in ns.
 *
 * bspe_rx() is bspe_rx_ext() with @rx_flags 0.
 *
 * Return: as bspe_rx().
 */
int bspe_rx_ext(struct bspe_ep *ep, u8 rail, const void *pkt, u32 len,
		u32 rx_flags, u64 now);

/**
 * bspe_timer() - the endpoint's timer fired
 * @ep: the endpoint.
 * @now: current time in ns.
 *
 * The timer armed through ops->timer fired (early or late calls are fine).
 */
void bspe_timer(struct bspe_ep *ep, u64 now);

/**
 * bspe_superstep_done() - a barrier completed
 * @ep: the endpoint.
 * @epoch: the superstep whose barrier completed.
 * @now: current time in ns.
 *
 * The user's barrier of superstep @epoch has completed (every process has
 * received all data of superstep @epoch - 1). Packets sent from now on
 * carry @epoch. Epochs only grow; a smaller or equal @epoch is ignored.
 */
void bspe_superstep_done(struct bspe_ep *ep, u32 epoch, u64 now);

/**
 * bspe_set_follow() - streams follow counts in this superstep
 * @ep: the endpoint.
 * @follow: nonzero from the completion of a barrier (after
 *          bspe_superstep_done()) to the end of that superstep's exchange,
 *          zero then.
 *
 * While set, every member sends its data to a destination right after its
 * first message there (the messaging layer's count message), not once it
 * has every count of its own. Then data expected (bspe_expect()) is not
 * queued behind the sender's other destinations: it is prodded for once
 * the channel is quiet, not the whole endpoint; and a member's second
 * packet says nothing of the other members' counts, so no guessed
 * expectation is started by it (Documentation/protocol.rst, "Prods").
 * bspe_superstep_done() clears it.
 */
void bspe_set_follow(struct bspe_ep *ep, int follow);

/**
 * bspe_group_reset() - the caller's group changed
 * @ep: the endpoint.
 * @now: current time in ns.
 *
 * The caller's group changed (BSP_GROUP): the endpoint's epoch starts again
 * from 0, like the caller's, and no channel is a group member any more (the
 * caller marks the new members with bspe_chan_open(.., BSPE_CHAN_GROUP, ..)
 * afterwards). Messages already submitted are kept; the epoch rule of the
 * new group never settles them (its barriers say nothing about them), only
 * acknowledgements do.
 */
void bspe_group_reset(struct bspe_ep *ep, u64 now);

/**
 * bspe_rx_consumed() - the reader consumed delivered messages
 * @ep: the endpoint.
 * @bytes: bytes of delivered messages consumed (they free rcvbuf).
 * @now: current time in ns.
 */
void bspe_rx_consumed(struct bspe_ep *ep, u32 bytes, u64 now);

/**
 * bspe_rx_resume() - receive memory is available again
 * @ep: the endpoint (with BSPE_CFG_EXT_RCVBUF).
 * @now: current time in ns.
 *
 * Every channel whose fragments rx_data refused with -ENOBUFS (and that
 * took no new message since) prods its sender at once on its live rails,
 * so the refused packets are resent now instead of after the sender's
 * timeout.
 * Until it takes a new message, such a channel answers probes with
 * BSPE_F_BUSY: its sender keeps waiting instead of failing.
 */
void bspe_rx_resume(struct bspe_ep *ep, u64 now);

/**
 * bspe_rx_expire() - end reassemblies that make no progress
 * @ep: the endpoint.
 * @idle_ns: how long without a new fragment counts as no progress.
 * @now: current time in ns.
 *
 * Every channel holding a message being reassembled (or complete but
 * waiting for an earlier one) that accepted no fragment for @idle_ns is
 * closed as by bspe_chan_close() (its partial messages are aborted; a
 * sender still alive finds a fresh channel, its unfinished messages fail).
 *
 * Return: the number of channels closed.
 */
u32 bspe_rx_expire(struct bspe_ep *ep, u64 idle_ns, u64 now);

/**
 * bspe_rail_set() - a rail to a node turned up or down
 * @ep: the endpoint.
 * @node: the remote node.
 * @rail: the rail.
 * @up: 1 if it is up, 0 if it is down.
 * @now: current time in ns.
 *
 * Rail @rail to @node is up or down as the rail layer decided (hellos,
 * carrier). Down: packets outstanding on it are resent on live rails. Up:
 * the rail is used again for new packets.
 */
void bspe_rail_set(struct bspe_ep *ep, u32 node, u8 rail, int up, u64 now);

/* bspe_expect() flags */
#define BSPE_EXPECT_SYNC	0x01	/* count barrier traffic, not data */

/**
 * bspe_expect() - messages expected on a channel in this superstep
 * @ep: the endpoint.
 * @chan: the channel.
 * @total: how many messages the channel's peer sends in the current
 *         superstep in all, those already delivered included (the
 *         messaging layer's total exchange of counts tells it): its
 *         messages carrying the endpoint's epoch that are not barrier
 *         traffic, or with %BSPE_EXPECT_SYNC its barrier traffic
 *         (%BSPE_SEND_SYNC) carrying that epoch.
 * @flags: 0 or %BSPE_EXPECT_SYNC.
 * @now: current time in ns.
 *
 * Until the rest arrived the engine prods the sender when nothing arrives
 * for a round trip, instead of leaving recovery to the sender's timeout.
 * A total, not a number still to come: the engine counts what it has
 * delivered of each epoch, so that messages it delivered and the caller
 * has not read yet are not expected a second time. A smaller @total than
 * delivered (or a peer already past the epoch) expects nothing.
 *
 * Return: 0, or -EINVAL if @chan is not open or @flags is unknown.
 */
int bspe_expect(struct bspe_ep *ep, int chan, u32 total, u32 flags, u64 now);

/**
 * bspe_set_nprocs() - set p of the n/(2p) explicit-ack rule
 * @ep: the endpoint.
 * @nprocs: number of processes in the group, >= 1.
 */
void bspe_set_nprocs(struct bspe_ep *ep, u32 nprocs);

/**
 * bspe_set_pacing() - limit the endpoint's transmit rate
 * @ep: the endpoint.
 * @bytes_per_sec: the rate in bytes per second, 0 for unlimited.
 * @now: current time in ns.
 */
void bspe_set_pacing(struct bspe_ep *ep, u64 bytes_per_sec, u64 now);

/**
 * bspe_stats_get() - sum counters
 * @ep: the endpoint.
 * @chan: a channel, or -1 for all channels (plus endpoint-level drops that
 *        belong to no channel).
 * @rail: a rail, or -1 for all rails.
 * @out: the sums.
 */
void bspe_stats_get(const struct bspe_ep *ep, int chan, int rail,
		    struct bspe_stats *out);

/**
 * bspe_chan_rtt() - round-trip estimate of a channel
 * @ep: the endpoint.
 * @chan: the channel.
 *
 * Return: the current smoothed round-trip estimate for @chan in ns.
 */
u64 bspe_chan_rtt(const struct bspe_ep *ep, int chan);

/**
 * bspe_live_rails() - live rails to a node
 * @ep: the endpoint.
 * @node: the remote node.
 *
 * Return: the number of live rails to @node as the endpoint sees them.
 */
u32 bspe_live_rails(const struct bspe_ep *ep, u32 node);

/**
 * bspe_drop_name() - name of a drop reason
 * @reason: the reason.
 *
 * Return: its name for /proc and tools ("truncated", ...).
 */
const char *bspe_drop_name(enum bspe_drop reason);

#ifdef __cplusplus
}
#endif

#endif /* _BSPE_H */
