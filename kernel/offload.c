// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP super-frames: transmit without per-frame work.
 *
 * A frame costs the same skb, qdisc, device and receive-softirq work
 * whatever its size, so at small MTUs that cost, not the bytes, bounds
 * the throughput. The flusher of a socket's transmit queue
 * (bsp_unlock_flush) therefore chains consecutive frames for the same
 * (peer, rail) into one skb, as UDP's fraglist GRO does: the first frame is
 * the head, the others hang on its frag_list, in order, each a complete
 * AF_BSP frame with its own header, checksum state and MAC. The chain
 * travels as one skb (SKB_GSO_FRAGLIST) through every device that
 * advertises NETIF_F_GSO_FRAGLIST and NETIF_F_FRAGLIST (veth, bridge);
 * anywhere else validate_xmit_skb (or a qdisc such as tbf) calls this
 * EtherType's gso_segment, which turns it back into the frames it was
 * made of, each with the head's link-layer header, and fills in their
 * checksums if the device cannot. Nothing is rewritten: every member was
 * sealed as a frame of its own (bsp_frame_seal).
 *
 * A chain received whole (veth hands it to the rail's packet_type as it
 * is) is split the same way by bsp_gso_rx_split, and every frame then
 * goes through bsp_rail_rcv's checks one after the other, in order.
 *
 * Contexts: the chain is built by the flusher, in process or softirq
 * context, from frames that only it holds; gso_segment runs wherever the
 * stack segments (device transmit, qdisc enqueue), the split in the
 * rail's receive softirq.
 */
#include <linux/netdevice.h>
#include <linux/moduleparam.h>

#include "offload.h"
#include "engine/bspe_wire.h"

bool bsp_tx_gso = true;
module_param_named(tx_gso, bsp_tx_gso, bool, 0644);
MODULE_PARM_DESC(tx_gso,
		 "chain consecutive frames for one peer and rail into GSO super-frames (default on)");

/*
 * Every frame chained is exactly its header and payload_len bytes, so
 * that a chain flattened into one buffer can be cut again
 * (bsp_gso_rx_flat).
 */
static bool bsp_gso_frame_ok(const struct sk_buff *skb)
{
	const struct bspe_hdr *h = (const struct bspe_hdr *)skb->data;

	return skb_headlen(skb) >= BSPE_HDR_LEN &&
	       skb->len == BSPE_HDR_LEN + ntohs(h->payload_len);
}

/*
 * @c starts with frame @head; it may grow to @max_len bytes, @max_segs
 * frames. False if @head cannot be a chain's head.
 */
bool bsp_gso_start(struct bsp_gso_chain *c, struct sk_buff *head,
		   unsigned int max_len, unsigned int max_segs)
{
	if (max_segs < 2 || head->len > max_len || !bsp_gso_frame_ok(head) ||
	    skb_has_frag_list(head) || skb_cloned(head) || skb_shared(head))
		return false;
	c->head = head;
	c->tail = NULL;
	c->max_len = max_len;
	c->max_segs = max_segs;
	c->segs = 1;
	c->seg_max = head->len;
	return true;
}

/*
 * May frame @skb join @c? Segmentation gives every member the head's
 * checksum state (ip_summed, csum_start and csum_offset relative to the
 * frame), so only frames sealed alike are chained. A chain's frames go to
 * one socket (node and port) from one socket: the XDP pre-filter, which
 * judges a flattened chain by its first header only (generic XDP), drops
 * or steers every frame of it as it would have one by one.
 */
bool bsp_gso_fits(const struct bsp_gso_chain *c, const struct sk_buff *skb)
{
	const struct sk_buff *head = c->head;

	if (c->segs >= c->max_segs || skb->len > c->max_len - head->len)
		return false;
	if (skb_has_frag_list(skb) || skb_cloned(skb) || skb_shared(skb) ||
	    skb_headroom(skb) < LL_MAX_HEADER || !bsp_gso_frame_ok(skb))
		return false;
	if (((const struct bspe_hdr *)skb->data)->dst_port !=
	    ((const struct bspe_hdr *)head->data)->dst_port)
		return false;
	if (skb->ip_summed != head->ip_summed)
		return false;
	return skb->ip_summed != CHECKSUM_PARTIAL ||
	       (skb_checksum_start_offset(skb) ==
		skb_checksum_start_offset(head) &&
		skb->csum_offset == head->csum_offset);
}

/* Frame @skb (off any list, bsp_gso_fits) is chained after @c's last. */
void bsp_gso_add(struct bsp_gso_chain *c, struct sk_buff *skb)
{
	struct sk_buff *head = c->head;

	skb_reset_network_header(skb);
	skb_reset_transport_header(skb);
	skb->next = NULL;
	if (c->tail)
		c->tail->next = skb;
	else
		skb_shinfo(head)->frag_list = skb;
	c->tail = skb;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
	c->segs++;
	c->seg_max = max(c->seg_max, skb->len);
}

/*
 * @c is complete: its head becomes a super-frame if it has members. Its
 * gso_size is its longest frame (what a qdisc checks against its maximum
 * packet size, skb_gso_validate_mac_len), its transport header is its
 * network header, so that qdisc_pkt_len_init counts exactly one link
 * header per frame. Frames that leave their checksum to nobody (a MAC,
 * or checksums off) are CHECKSUM_UNNECESSARY, which the stack requires of
 * a GSO skb it need not checksum.
 */
struct sk_buff *bsp_gso_finish(struct bsp_gso_chain *c, struct bsp_net *bn)
{
	struct sk_buff *head = c->head;
	struct skb_shared_info *si = skb_shinfo(head);

	if (c->segs == 1)
		return head;
	skb_reset_network_header(head);
	skb_reset_transport_header(head);
	si->gso_size = c->seg_max;
	si->gso_segs = c->segs;
	si->gso_type = SKB_GSO_FRAGLIST;
	if (head->ip_summed != CHECKSUM_PARTIAL)
		head->ip_summed = CHECKSUM_UNNECESSARY;
	atomic_long_inc(&bn->tx_gso);
	atomic_long_add(c->segs, &bn->tx_gso_segs);
	return head;
}

static bool bsp_gso_is_chain(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->gso_type == SKB_GSO_FRAGLIST &&
	       skb_has_frag_list(skb) && skb_mac_header_was_set(skb);
}

/*
 * gso_segment of the EtherType: @skb (data at the AF_BSP header of its
 * first frame, link header before it) back into its frames, each with a
 * copy of the link header. Anything but a chain of this module's is
 * refused (dropped by the caller).
 */
static struct sk_buff *bsp_gso_segment(struct sk_buff *skb,
				       netdev_features_t features)
{
	struct sk_buff *segs, *seg;
	unsigned int n = 0;
	int err = 0;

	if (!bsp_gso_is_chain(skb))
		return ERR_PTR(-EINVAL);
	segs = skb_segment_list(skb, features, skb_mac_header_len(skb));
	if (IS_ERR(segs))
		return segs;
	for (seg = segs; seg; seg = seg->next) {
		n++;
		/* can_checksum_protocol: only NETIF_F_HW_CSUM sums us */
		if (!err && seg->ip_summed == CHECKSUM_PARTIAL &&
		    !(features & NETIF_F_HW_CSUM))
			err = skb_checksum_help(seg);
	}
	if (err) {
		kfree_skb_list(segs->next);
		segs->next = NULL;
		kfree_skb(segs);	/* the reference skb_segment_list took */
		return ERR_PTR(err);
	}
	if (skb->dev) {
		struct bsp_net *bn = bsp_pernet(dev_net(skb->dev));

		atomic_long_inc(&bn->tx_gso_sw);
		atomic_long_add(n, &bn->tx_gso_sw_segs);
	}
	return segs;
}

/*
 * A chain whose frag_list was pulled into one buffer on its way (generic
 * XDP linearises every skb; so does a device that has NETIF_F_FRAGLIST
 * but not NETIF_F_SG): its frames are cut again at their headers' lengths
 * (bsp_gso_frame_ok), each a clone of @skb, its link header the head's.
 * They must be exactly gso_segs frames that fill @skb, or none is kept.
 */
static struct sk_buff *bsp_gso_rx_flat(struct bsp_net *bn,
				       struct sk_buff *skb)
{
	unsigned int off = 0, len, n = 0, segs = skb_shinfo(skb)->gso_segs;
	struct sk_buff *list = NULL, **pos = &list, *nskb;
	const struct bspe_hdr *h;
	struct bspe_hdr hbuf;

	if (skb_unclone(skb, GFP_ATOMIC))
		goto bad;
	skb_gso_reset(skb);
	while (off < skb->len) {
		h = skb_header_pointer(skb, off, sizeof(hbuf), &hbuf);
		if (!h || ++n > segs)
			goto bad;
		len = BSPE_HDR_LEN + ntohs(h->payload_len);
		if (len > skb->len - off)
			goto bad;
		nskb = skb_clone(skb, GFP_ATOMIC);
		if (!nskb)
			goto bad;
		*pos = nskb;
		pos = &nskb->next;
		if (!pskb_pull(nskb, off) || pskb_trim(nskb, len))
			goto bad;
		skb_reset_network_header(nskb);
		off += len;
	}
	if (n != segs)
		goto bad;
	consume_skb(skb);
	atomic_long_inc(&bn->rx_gso_flat);
	atomic_long_add(n, &bn->rx_gso_segs);
	return list;
bad:
	kfree_skb_list(list);
	atomic_long_inc(&bn->rx_gso_bad);
	kfree_skb(skb);
	return NULL;
}

/*
 * Softirq, bsp_rail_rcv: @skb (data at the network header) is returned as
 * it is if it is not a super-frame, else as the list of its frames (data
 * at each one's AF_BSP header, the head's link header as theirs), in
 * order. NULL if it was a malformed chain: dropped and counted, none of
 * its frames processed.
 */
struct sk_buff *bsp_gso_rx_split(struct bsp_net *bn, struct sk_buff *skb)
{
	struct sk_buff *segs, *seg;
	unsigned int n = 0, hlen;

	if (!skb_is_gso(skb) ||
	    !(skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST))
		return skb;
	if (!skb_mac_header_was_set(skb) || skb_network_offset(skb))
		goto bad;
	if (skb_shinfo(skb)->gso_type == SKB_GSO_FRAGLIST &&
	    !skb_has_frag_list(skb))
		return bsp_gso_rx_flat(bn, skb);
	if (!bsp_gso_is_chain(skb))
		goto bad;
	hlen = skb_mac_header_len(skb);
	segs = skb_segment_list(skb, NETIF_F_SG | NETIF_F_FRAGLIST, hlen);
	if (IS_ERR(segs))
		goto bad;
	consume_skb(skb);	/* the reference skb_segment_list took */
	for (seg = segs; seg; seg = seg->next) {
		__skb_pull(seg, hlen);
		/*
		 * The head kept the members' truesize (bsp_gso_add; 6.1's
		 * skb_segment_list does not give it back): a frame kept in
		 * its message is charged its own only.
		 */
		if (seg != segs && seg->truesize < segs->truesize)
			segs->truesize -= seg->truesize;
		n++;
	}
	atomic_long_inc(&bn->rx_gso);
	atomic_long_add(n, &bn->rx_gso_segs);
	return segs;
bad:
	atomic_long_inc(&bn->rx_gso_bad);
	kfree_skb(skb);
	return NULL;
}

static struct packet_offload bsp_packet_offload __read_mostly = {
	.type = cpu_to_be16(ETH_P_BSP),
	.priority = 10,
	.callbacks = {
		.gso_segment = bsp_gso_segment,
	},
};

void bsp_offload_register(void)
{
	dev_add_offload(&bsp_packet_offload);
}

/* After it, no gso_segment runs (dev_remove_offload waits for them). */
void bsp_offload_unregister(void)
{
	dev_remove_offload(&bsp_packet_offload);
}
