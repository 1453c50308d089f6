/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * AF_BSP user-space API: reliable datagram sockets striped over Ethernet
 * rails, for bulk-synchronous parallel programs.
 *
 * See Documentation/ for the meaning of every definition here.
 */
#ifndef _UAPI_LINUX_BSP_H
#define _UAPI_LINUX_BSP_H

/*
 * Address family. sock_register() refuses numbers >= AF_MAX (46 on 6.1),
 * so AF_BSP reuses the number of AF_IRDA, whose stack left the kernel in
 * 4.17 and which no in-tree code registers, uses for rtnetlink or for
 * sock_diag (Documentation/decisions.rst). The module parameter "family"
 * can move it; programs read the number in effect from
 * /sys/module/af_bsp/parameters/family.
 */
#define AF_BSP		23
#define PF_BSP		AF_BSP

/* IEEE 802 local experimental EtherType carrying AF_BSP frames. */
#define ETH_P_BSP	0x88B5

#endif /* _UAPI_LINUX_BSP_H */
