/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP XDP pre-filter state (xdp.c): the module keeps the BPF map that
 * the rails' XDP program reads current (Documentation/kernel-design.rst,
 * "XDP receive fast path").
 */
#ifndef _BSP_XDP_H
#define _BSP_XDP_H

#include "af_bsp.h"

/**
 * bsp_xdp_set_state() - register the namespace's XDP state map
 * @bn: the namespace.
 * @fd: a BPF array map file descriptor (struct bsp_xdp_state), or -1 to
 *	give the registered one back.
 *
 * The map is filled from the namespace's tables and kept current. A map
 * registered before is marked inactive and released.
 *
 * Context: process, may sleep (takes RTNL and port_lock).
 * Return: 0, -EBADF (not a map), -EINVAL (wrong layout or flags).
 */
int bsp_xdp_set_state(struct bsp_net *bn, int fd);

/**
 * bsp_xdp_port_set() - mirror a bind or unbind of @port
 * @bn: the namespace.
 * @port: the port.
 * @bound: true on bind, false on unbind.
 *
 * Context: bsp_net.port_lock held.
 */
void bsp_xdp_port_set(struct bsp_net *bn, u16 port, bool bound);

/**
 * bsp_xdp_sync_ids() - copy the node and cluster ids into the map
 * @bn: the namespace.
 *
 * Context: process or softirq; takes port_lock.
 */
void bsp_xdp_sync_ids(struct bsp_net *bn);

/**
 * bsp_xdp_sync_rails() - copy the rails' ifindexes into the map
 * @bn: the namespace.
 *
 * Context: RTNL held; takes port_lock.
 */
void bsp_xdp_sync_rails(struct bsp_net *bn);

/**
 * bsp_xdp_exit_net() - release the map when the namespace's state goes
 * @bn: the namespace.
 */
void bsp_xdp_exit_net(struct bsp_net *bn);

#endif /* _BSP_XDP_H */
