/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP authenticated mode: the per-namespace cluster key (auth.c).
 */
#ifndef _BSP_AUTH_H
#define _BSP_AUTH_H

#include "af_bsp.h"
#include "engine/bspe_siphash.h"

struct ctl_table;

/* Any context: copies the key into @key and returns true if one is set. */
bool bsp_key_get(struct bsp_net *bn, u8 key[BSPE_KEY_LEN]);
/* Any context: whether a key is set now. */
bool bsp_key_is_set(struct bsp_net *bn);
/* Namespace exit: forget the key (zeroed). */
void bsp_key_exit_net(struct bsp_net *bn);
/* proc_handler of the write-only sysctl net.bsp.cluster_key. */
int bsp_sysctl_cluster_key(struct ctl_table *ctl, int write, void *buffer,
			   size_t *lenp, loff_t *ppos);
/* Module load with selftest=1: engine SipHash == kernel siphash(). */
int bsp_auth_selftest(void);

#endif /* _BSP_AUTH_H */
