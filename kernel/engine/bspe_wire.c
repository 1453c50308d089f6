// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding and decoding helpers of the AF_BSP wire format
 * that are independent of engine state: hello frames, packet type, checksum.
 */
#include "bspe_wire.h"

void bspe_hello_build(void *out, const struct bspe_hello_info *hi)
{
	struct bspe_hello h;

	memset(&h, 0, sizeof(h));
	h.version = BSPE_VERSION;
	h.type = BSPE_T_HELLO;
	h.cluster_id = bspe_htonl(hi->cluster_id);
	h.node_id = bspe_htonl(hi->node_id);
	h.rail = hi->rail;
	h.nrails = hi->nrails;
	h.mtu = bspe_htons(hi->mtu);
	h.caps = bspe_htonl(hi->caps);
	h.incarnation = bspe_htonl(hi->incarnation);
	h.hello_seq = bspe_htonl(hi->hello_seq);
	h.interval_ms = bspe_htons(hi->interval_ms);
	h.csum = bspe_csum_fold(bspe_csum_add(&h, BSPE_HELLO_LEN, 0));
	memcpy(out, &h, sizeof(h));
}

int bspe_hello_parse(const void *pkt, u32 len, struct bspe_hello_info *hi)
{
	struct bspe_hello h;

	if (len < BSPE_HELLO_LEN)
		return -EBADMSG;
	memcpy(&h, pkt, sizeof(h));
	if (h.version != BSPE_VERSION)
		return -EPROTONOSUPPORT;
	if (!bspe_csum_ok(&h, BSPE_HELLO_LEN))
		return -EBADMSG;
	if (h.type != BSPE_T_HELLO || h.flags)
		return -EBADMSG;
	if (h.nrails == 0 || h.rail >= h.nrails)
		return -EBADMSG;
	hi->cluster_id = bspe_ntohl(h.cluster_id);
	hi->node_id = bspe_ntohl(h.node_id);
	hi->rail = h.rail;
	hi->nrails = h.nrails;
	hi->mtu = bspe_ntohs(h.mtu);
	hi->caps = bspe_ntohl(h.caps);
	hi->incarnation = bspe_ntohl(h.incarnation);
	hi->hello_seq = bspe_ntohl(h.hello_seq);
	hi->interval_ms = bspe_ntohs(h.interval_ms);
	if (hi->mtu < BSPE_HDR_LEN + 1)
		return -EBADMSG;
	return 0;
}

int bspe_pkt_type(const void *pkt, u32 len)
{
	const u8 *p = pkt;

	if (len < 4)
		return -EBADMSG;
	if (p[0] != BSPE_VERSION)
		return -EPROTONOSUPPORT;
	if (p[1] == 0 || p[1] > BSPE_T_MAX)
		return -EBADMSG;
	return p[1];
}

void bspe_csum_fill(void *hdr, const void *payload, u32 payload_len)
{
	struct bspe_hdr *h = hdr;
	u32 sum;

	h->csum = 0;
	sum = bspe_csum_add(h, BSPE_HDR_LEN, 0);
	if (payload_len)
		sum = bspe_csum_add(payload, payload_len, sum);
	h->csum = bspe_csum_fold(sum);
}

int bspe_csum_ok(const void *pkt, u32 len)
{
	return bspe_csum_fold(bspe_csum_add(pkt, len, 0)) == 0;
}
