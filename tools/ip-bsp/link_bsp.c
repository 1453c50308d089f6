// SPDX-License-Identifier: GPL-2.0
/*
 * link_bsp.so: iproute2 plugin for links of kind "bsp" (the AF_BSP master
 * device), so that
 *
 *   ip link add bsp0 type bsp [ node ID ] [ cluster ID ] [ hello MS ]
 *                             [ peer_timeout MS ] [ peer_expire MS ]
 *                             [ max_peers N ]
 *   ip link set bsp0 type bsp ...            (same options)
 *   ip -d [-j] link show bsp0                (node, cluster, timers, peers,
 *                                             auth, rails and their state)
 *
 * work with the stock ip of the distribution. ip (ip/iplink.c,
 * get_link_kind) dlopen()s $IP_LIB_DIR/link_<kind>.so (default IP_LIB_DIR
 * /usr/lib/ip) and looks up the symbol <kind>_link_util. The plugin calls
 * back into the ip binary for netlink attribute building and for the
 * text/JSON printers (ip is linked with -rdynamic and exports them).
 *
 * There is no iproute2 development package: the structure and the
 * prototypes below are declared here and follow the ABI of iproute2 6.1
 * (Debian 12: iproute2 6.1.0, ip/ip_common.h struct link_util,
 * include/json_print.h, include/color.h, include/libnetlink.h). They have
 * been stable from 4.16 (when print_ifla_xstats lost its sockaddr_nl) to
 * 6.1; a newer iproute2 must be checked against its headers.
 *
 * Attributes: IFLA_BSP_* of <linux/bsp.h>; Documentation/admin-guide.rst,
 * "ip link and the bsp device".
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <linux/bsp.h>

/* ---- iproute2 6.1 ABI (see the comment at the top) ---- */

struct link_util {
	struct link_util *next;
	const char *id;
	int maxattr;
	int (*parse_opt)(struct link_util *lu, int argc, char **argv,
			 struct nlmsghdr *n);
	void (*print_opt)(struct link_util *lu, FILE *f, struct rtattr *tb[]);
	void (*print_xstats)(struct link_util *lu, FILE *f,
			     struct rtattr *xstats);
	void (*print_help)(struct link_util *lu, int argc, char **argv,
			   FILE *f);
	int (*parse_ifla_xstats)(struct link_util *lu, int argc, char **argv);
	int (*print_ifla_xstats)(struct nlmsghdr *n, void *arg);
};

enum output_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = 4,
};

#define BSP_IP_COLOR_NONE 0	/* enum color_attr COLOR_NONE */

/* Exported by /usr/sbin/ip. */
int addattr32(struct nlmsghdr *n, int maxlen, int type, uint32_t data);
int print_color_u64(enum output_type t, int color, const char *key,
		    const char *fmt, uint64_t value);
int print_color_string(enum output_type t, int color, const char *key,
		       const char *fmt, const char *value);
int print_color_bool(enum output_type t, int color, const char *key,
		     const char *fmt, bool value);
void open_json_object(const char *str);
void close_json_object(void);
void open_json_array(enum output_type type, const char *delim);
void close_json_array(enum output_type type, const char *delim);

/* struct iplink_req of iproute2 6.1: the request's room for attributes. */
#define BSP_IP_REQ_MAX	1024

/* ---- the plugin ---- */

struct bsp_opt {
	const char *name;
	int attr;
	uint32_t min, max;
	const char *what;
};

/* The bounds are those of the kernel's policy (rail_dev.c). */
static const struct bsp_opt bsp_opts[] = {
	{ "node", IFLA_BSP_NODE_ID, 1, UINT32_MAX, "ID" },
	{ "cluster", IFLA_BSP_CLUSTER_ID, 0, UINT32_MAX, "ID" },
	{ "hello", IFLA_BSP_HELLO_MS, 1, 60000, "MS" },
	{ "peer_timeout", IFLA_BSP_PEER_TIMEOUT_MS, 1, UINT32_MAX, "MS" },
	{ "peer_expire", IFLA_BSP_PEER_EXPIRE_MS, 1, UINT32_MAX, "MS" },
	{ "max_peers", IFLA_BSP_MAX_PEERS, 1, 65536, "N" },
};

#define BSP_NOPTS (sizeof(bsp_opts) / sizeof(bsp_opts[0]))

static void bsp_usage(FILE *f)
{
	fprintf(f,
		"Usage: ... bsp [ node ID ] [ cluster ID ] [ hello MS ]\n"
		"               [ peer_timeout MS ] [ peer_expire MS ]\n"
		"               [ max_peers N ]\n"
		"\n"
		"Where: ID           := 1..4294967295 (cluster: 0..4294967295)\n"
		"       hello        := 1..60000 (ms between hellos)\n"
		"       peer_timeout := 1..4294967295 (ms)\n"
		"       peer_expire  := 1..4294967295 (ms)\n"
		"       max_peers    := 1..65536\n"
		"Each is the namespace's net.bsp sysctl of the same name.\n");
}

static void bsp_print_help(struct link_util *lu, int argc, char **argv,
			   FILE *f)
{
	(void)lu;
	(void)argc;
	(void)argv;
	bsp_usage(f);
}

static int bsp_parse_u32(const char *s, uint32_t min, uint32_t max,
			 uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int bsp_parse_opt(struct link_util *lu, int argc, char **argv,
			 struct nlmsghdr *n)
{
	bool seen[BSP_NOPTS] = { false };
	size_t i;

	(void)lu;
	while (argc > 0) {
		const struct bsp_opt *o = NULL;
		uint32_t v;

		if (!strcmp(*argv, "help")) {
			bsp_usage(stdout);
			return -1;
		}
		for (i = 0; i < BSP_NOPTS; i++) {
			if (!strcmp(*argv, bsp_opts[i].name)) {
				o = &bsp_opts[i];
				break;
			}
		}
		if (!o) {
			fprintf(stderr, "bsp: unknown option \"%s\"\n", *argv);
			bsp_usage(stderr);
			return -1;
		}
		if (seen[i]) {
			fprintf(stderr, "bsp: duplicate \"%s\"\n", o->name);
			return -1;
		}
		seen[i] = true;
		if (argc < 2) {
			fprintf(stderr, "bsp: \"%s\" needs a value (%s)\n",
				o->name, o->what);
			return -1;
		}
		argc--;
		argv++;
		if (bsp_parse_u32(*argv, o->min, o->max, &v)) {
			fprintf(stderr,
				"bsp: invalid %s \"%s\" (%s in %u..%u)\n",
				o->name, *argv, o->what, o->min, o->max);
			return -1;
		}
		if (addattr32(n, BSP_IP_REQ_MAX, o->attr, v))
			return -1;
		argc--;
		argv++;
	}
	return 0;
}

static uint32_t bsp_rta_u32(const struct rtattr *a)
{
	uint32_t v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static uint8_t bsp_rta_u8(const struct rtattr *a)
{
	return *(const uint8_t *)RTA_DATA(a);
}

/* The kernel marks nests with NLA_F_NESTED (nla_nest_start). */
static bool bsp_is_rail(const struct rtattr *a)
{
	return (a->rta_type & NLA_TYPE_MASK) == IFLA_BSP_RAIL;
}

static void bsp_print_rail(struct rtattr *rail)
{
	struct rtattr *tb[IFLA_BSP_RAIL_MAX + 1] = { NULL };
	struct rtattr *a = RTA_DATA(rail);
	int len = RTA_PAYLOAD(rail);
	char name[IF_NAMESIZE] = "";
	uint32_t ifindex = 0;

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if ((a->rta_type & NLA_TYPE_MASK) <= IFLA_BSP_RAIL_MAX)
			tb[a->rta_type & NLA_TYPE_MASK] = a;
	if (!tb[IFLA_BSP_RAIL_INDEX] || !tb[IFLA_BSP_RAIL_IFINDEX] ||
	    !tb[IFLA_BSP_RAIL_UP])
		return;
	ifindex = bsp_rta_u32(tb[IFLA_BSP_RAIL_IFINDEX]);
	if (!if_indextoname(ifindex, name))
		snprintf(name, sizeof(name), "if%u", ifindex);

	open_json_object(NULL);
	print_color_u64(PRINT_ANY, BSP_IP_COLOR_NONE, "rail", "rail %llu ",
			bsp_rta_u8(tb[IFLA_BSP_RAIL_INDEX]));
	print_color_string(PRINT_ANY, BSP_IP_COLOR_NONE, "dev", "%s ", name);
	print_color_u64(PRINT_JSON, BSP_IP_COLOR_NONE, "ifindex", NULL,
			ifindex);
	print_color_string(PRINT_ANY, BSP_IP_COLOR_NONE, "state", "%s ",
			   bsp_rta_u8(tb[IFLA_BSP_RAIL_UP]) ? "up" : "down");
	close_json_object();
}

static void bsp_print_opt(struct link_util *lu, FILE *f, struct rtattr *tb[])
{
	static const struct {
		int attr;
		const char *key;
		const char *fmt;
	} u32s[] = {
		{ IFLA_BSP_NODE_ID, "node", "node %llu " },
		{ IFLA_BSP_CLUSTER_ID, "cluster", "cluster %llu " },
		{ IFLA_BSP_HELLO_MS, "hello", "hello %llu " },
		{ IFLA_BSP_PEER_TIMEOUT_MS, "peer_timeout", "peer_timeout %llu " },
		{ IFLA_BSP_PEER_EXPIRE_MS, "peer_expire", "peer_expire %llu " },
		{ IFLA_BSP_MAX_PEERS, "max_peers", "max_peers %llu " },
		{ IFLA_BSP_PEERS, "peers", "peers %llu " },
	};
	size_t i;

	(void)lu;
	(void)f;
	if (!tb)
		return;
	for (i = 0; i < sizeof(u32s) / sizeof(u32s[0]); i++)
		if (tb[u32s[i].attr])
			print_color_u64(PRINT_ANY, BSP_IP_COLOR_NONE,
					u32s[i].key, u32s[i].fmt,
					bsp_rta_u32(tb[u32s[i].attr]));
	if (tb[IFLA_BSP_AUTH]) {
		bool on = bsp_rta_u8(tb[IFLA_BSP_AUTH]);

		print_color_bool(PRINT_JSON, BSP_IP_COLOR_NONE, "auth", NULL,
				 on);
		print_color_string(PRINT_FP, BSP_IP_COLOR_NONE, NULL,
				   "auth %s ", on ? "on" : "off");
	}
	if (tb[IFLA_BSP_RAILS]) {
		struct rtattr *a = RTA_DATA(tb[IFLA_BSP_RAILS]);
		int len = RTA_PAYLOAD(tb[IFLA_BSP_RAILS]);
		uint64_t nrails = 0;

		for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
			nrails += bsp_is_rail(a);
		print_color_u64(PRINT_FP, BSP_IP_COLOR_NONE, NULL,
				"rails %llu ", nrails);
		open_json_array(PRINT_JSON, "rails");
		a = RTA_DATA(tb[IFLA_BSP_RAILS]);
		len = RTA_PAYLOAD(tb[IFLA_BSP_RAILS]);
		for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (bsp_is_rail(a))
				bsp_print_rail(a);
		close_json_array(PRINT_JSON, NULL);
	}
}

struct link_util bsp_link_util = {
	.id = "bsp",
	.maxattr = IFLA_BSP_MAX,
	.parse_opt = bsp_parse_opt,
	.print_opt = bsp_print_opt,
	.print_help = bsp_print_help,
};
