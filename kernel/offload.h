/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP super-frames (offload.c): consecutive frames for one (peer, rail)
 * chained into one skb, segmented back by the EtherType's packet_offload.
 */
#ifndef _BSP_OFFLOAD_H
#define _BSP_OFFLOAD_H

#include <linux/skbuff.h>

#include "af_bsp.h"

/* bounds of one super-frame (the rail device may lower them) */
#define BSP_GSO_MAX_SIZE	65536u
#define BSP_GSO_MAX_SEGS	64u

extern bool bsp_tx_gso;

/**
 * struct bsp_gso_chain - a super-frame being built
 * @head: its first frame, which the others are chained to
 * @tail: its last frame on the head's frag_list, or NULL
 * @max_len: bytes the super-frame may hold (without link headers)
 * @max_segs: frames it may hold
 * @segs: frames it holds
 * @seg_max: bytes of its longest frame
 */
struct bsp_gso_chain {
	struct sk_buff *head;
	struct sk_buff *tail;
	unsigned int max_len;
	unsigned int max_segs;
	unsigned int segs;
	unsigned int seg_max;
};

bool bsp_gso_start(struct bsp_gso_chain *c, struct sk_buff *head,
		   unsigned int max_len, unsigned int max_segs);
bool bsp_gso_fits(const struct bsp_gso_chain *c, const struct sk_buff *skb);
void bsp_gso_add(struct bsp_gso_chain *c, struct sk_buff *skb);
struct sk_buff *bsp_gso_finish(struct bsp_gso_chain *c, struct bsp_net *bn);

struct sk_buff *bsp_gso_rx_split(struct bsp_net *bn, struct sk_buff *skb);

void bsp_offload_register(void);
void bsp_offload_unregister(void);

#endif /* _BSP_OFFLOAD_H */
