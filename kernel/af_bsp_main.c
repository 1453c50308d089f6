// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP: reliable datagrams striped over Ethernet rails for
 * bulk-synchronous parallel programs.
 *
 * Module entry and exit, and the module parameters. Subsystems register
 * in dependency order: per-namespace state, the socket family, sock_diag,
 * the rail notifier, the "bsp" link kind; exit runs in reverse order.
 * Removing the link kind deletes every bsp device (and releases their
 * rails) in every namespace before anything they use goes away.
 *
 * Unloading: every AF_BSP socket holds a reference on this module, so
 * rmmod fails with EBUSY ("Module af_bsp is in use") while a socket
 * exists; bsp devices and rails do not pin the module and are removed by
 * rmmod.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>
#include <linux/moduleparam.h>

#include "af_bsp.h"
#include "discovery.h"
#include "peer.h"
#include "rail.h"
#include "transport.h"
#include "auth.h"
#include "offload.h"

#define AF_BSP_VERSION "0.1"

int bsp_family = AF_BSP;
module_param_named(family, bsp_family, int, 0444);
MODULE_PARM_DESC(family,
		 "address family number to register (default 23, the retired AF_IRDA)");

unsigned int bsp_default_hello_ms = 100;
module_param_named(hello_interval_ms, bsp_default_hello_ms, uint, 0444);
MODULE_PARM_DESC(hello_interval_ms,
		 "initial net.bsp.hello_interval_ms of each namespace");

unsigned int bsp_default_peer_timeout_ms = 500;
module_param_named(peer_timeout_ms, bsp_default_peer_timeout_ms, uint, 0444);
MODULE_PARM_DESC(peer_timeout_ms,
		 "initial net.bsp.peer_timeout_ms: a peer's rail is dead after this much hello silence");

unsigned int bsp_default_peer_expire_ms = 10000;
module_param_named(peer_expire_ms, bsp_default_peer_expire_ms, uint, 0444);
MODULE_PARM_DESC(peer_expire_ms,
		 "initial net.bsp.peer_expire_ms: a peer with no live rail is forgotten this long after it was last heard");

unsigned int bsp_default_max_peers = 1024;
module_param_named(max_peers, bsp_default_max_peers, uint, 0444);
MODULE_PARM_DESC(max_peers, "initial net.bsp.max_peers of each namespace");

unsigned int bsp_max_chans = 256;
module_param_named(max_chans, bsp_max_chans, uint, 0444);
MODULE_PARM_DESC(max_chans,
		 "default BSP_CHANNELS: most remote sockets one socket has channels to (each allocated when first used)");

unsigned int bsp_max_rails = 4;
module_param_named(max_rails, bsp_max_rails, uint, 0444);
MODULE_PARM_DESC(max_rails,
		 "rails a bsp device accepts (1..8); engine memory per socket grows with it");

unsigned int bsp_unreach_ms = 2000;
module_param_named(unreach_ms, bsp_unreach_ms, uint, 0644);
MODULE_PARM_DESC(unreach_ms,
		 "with no live rail to a node for this long, its messages fail with EHOSTUNREACH");

unsigned int bsp_rto_min_ms = 200;
module_param_named(rto_min_ms, bsp_rto_min_ms, uint, 0644);
MODULE_PARM_DESC(rto_min_ms,
		 "least time before a sender probes for acknowledgements (a probe costs one control packet; a lost packet is resent only once the probe's answer shows it missing)");

unsigned int bsp_close_linger_ms = 30000;
module_param_named(close_linger_ms, bsp_close_linger_ms, uint, 0644);
MODULE_PARM_DESC(close_linger_ms,
		 "without SO_LINGER, close() waits at most this long for unsettled messages (0: until settled, which a receiver that is alive but never reads can make forever)");

unsigned int bsp_default_reasm_timeout_ms = 10000;
module_param_named(reasm_timeout_ms, bsp_default_reasm_timeout_ms, uint, 0444);
MODULE_PARM_DESC(reasm_timeout_ms,
		 "default of net.bsp.reasm_timeout_ms: a channel whose reassembly makes no progress for this long is closed");

unsigned int bsp_default_chan_idle_ms = 60000;
module_param_named(chan_idle_ms, bsp_default_chan_idle_ms, uint, 0444);
MODULE_PARM_DESC(chan_idle_ms,
		 "default of net.bsp.chan_idle_ms: a channel idle for this long is evicted (0: never)");

unsigned int bsp_default_rmem = 4 << 20;
module_param_named(rmem_default, bsp_default_rmem, uint, 0444);
MODULE_PARM_DESC(rmem_default,
		 "default of net.bsp.rmem_default: SO_RCVBUF of a new socket, bytes");

unsigned int bsp_default_wmem = 4 << 20;
module_param_named(wmem_default, bsp_default_wmem, uint, 0444);
MODULE_PARM_DESC(wmem_default,
		 "default of net.bsp.wmem_default: SO_SNDBUF of a new socket, bytes");

static bool bsp_selftest;
module_param_named(selftest, bsp_selftest, bool, 0444);
MODULE_PARM_DESC(selftest,
		 "at load, check that the engine's SipHash equals the kernel's siphash() (fail the load otherwise)");

bool bsp_checksum = true;
module_param_named(checksum, bsp_checksum, bool, 0444);
MODULE_PARM_DESC(checksum,
		 "checksum every packet and drop received packets without a valid one");

static int __init af_bsp_init(void)
{
	int err;

	if (bsp_family <= 0 || bsp_family >= AF_MAX) {
		pr_err("family=%d out of range 1..%d\n", bsp_family,
		       AF_MAX - 1);
		return -EINVAL;
	}
	if (!bsp_default_hello_ms || !bsp_default_peer_timeout_ms ||
	    !bsp_default_peer_expire_ms ||
	    !bsp_default_max_peers || !bsp_max_chans ||
	    bsp_max_chans > U16_MAX || !bsp_max_rails ||
	    bsp_max_rails > BSP_MAX_RAILS ||
	    bsp_default_reasm_timeout_ms < 100 ||
	    bsp_default_reasm_timeout_ms > 3600000 ||
	    bsp_default_chan_idle_ms > 3600000) {
		pr_err("module parameter out of range\n");
		return -EINVAL;
	}

	if (bsp_selftest) {
		err = bsp_auth_selftest();
		if (err)
			return err;
	}

	err = bsp_pernet_register();
	if (err)
		return err;
	err = bsp_socket_register();
	if (err)
		goto out_pernet;
	err = bsp_diag_register();
	if (err)
		goto out_socket;
	err = bsp_rail_notifier_register();
	if (err)
		goto out_diag;
	err = bsp_rail_dev_register();
	if (err)
		goto out_notifier;

	bsp_offload_register();
	pr_info("version %s, family %d, EtherType 0x%04x\n",
		AF_BSP_VERSION, bsp_family, ETH_P_BSP);
	return 0;

out_notifier:
	bsp_rail_notifier_unregister();
out_diag:
	bsp_diag_unregister();
out_socket:
	bsp_socket_unregister();
out_pernet:
	bsp_pernet_unregister();
	return err;
}

static void __exit af_bsp_exit(void)
{
	bsp_offload_unregister();
	bsp_rail_dev_unregister();
	bsp_rail_notifier_unregister();
	bsp_diag_unregister();
	bsp_socket_unregister();
	bsp_pernet_unregister();
	pr_info("unloaded\n");
}

module_init(af_bsp_init);
module_exit(af_bsp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("AF_BSP reliable multirail datagram sockets for BSP programs");
MODULE_VERSION(AF_BSP_VERSION);
MODULE_ALIAS_NETPROTO(AF_BSP);
MODULE_ALIAS_RTNL_LINK("bsp");
