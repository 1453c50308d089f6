// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP: reliable datagrams striped over Ethernet rails for
 * bulk-synchronous parallel programs.
 *
 * Module entry and exit. Each subsystem (socket family, rail devices,
 * discovery, sock_diag) registers itself from here in dependency order
 * and unregisters in reverse order.
 */
#include <linux/module.h>
#include <linux/init.h>

#define AF_BSP_VERSION "0.1"

static int __init af_bsp_init(void)
{
	pr_info("af_bsp: version %s loaded\n", AF_BSP_VERSION);
	return 0;
}

static void __exit af_bsp_exit(void)
{
	pr_info("af_bsp: unloaded\n");
}

module_init(af_bsp_init);
module_exit(af_bsp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("AF_BSP reliable multirail datagram sockets for BSP programs");
MODULE_VERSION(AF_BSP_VERSION);
