/* SPDX-License-Identifier: BSD-3-Clause
 * The registration of l3-demux's modules (l3_module.h): one line each in
 * L3_MODULES, with its header above. The stage lists their keys and
 * counters after its own, in this order, calls their init in this order
 * (fini in the reverse) and their hooks; its context and config are the
 * shared part and each module's, composed here.
 */
#ifndef LRX_L3_MODULES_H
#define LRX_L3_MODULES_H

#include "l3_module.h"
#include "route.h"
#include "ipv6.h"
#include "reasm.h"
#include "nf_hook.h"
#include "udp.h"
#include "tcp.h"
#include "icmp.h"
#include "arp.h"

#define L3_MODULES(X) X(route) X(ipv6) X(reasm) X(nf_hook) X(udp) X(tcp) X(icmp) X(arp)

/* The keys of l3_demux.c (the dispatcher, IP input). */
struct l3_conf {
	unsigned dispatch, list_split;
	bool trust_ip_csum_hint;
	struct l3_groups mcast_groups;
};

struct l3_demux {
	struct l3_ctx core;       /* first: the handlers get &core */
#define L3_MODULE_STATE(m) struct l3_##m m;
	L3_MODULES(L3_MODULE_STATE)
#undef L3_MODULE_STATE
};

struct l3_demux_conf {
	struct l3_conf core;
#define L3_MODULE_CONF(m) struct l3_##m##_conf m;
	L3_MODULES(L3_MODULE_CONF)
#undef L3_MODULE_CONF
};

static inline struct l3_demux *l3_demux_of(struct l3_ctx *c)
{
	return container_of(c, struct l3_demux, core);
}

/* l3_udp_of(c)...: a module's state, from the shared context; and each
 * module's descriptor (its file defines it) */
#define L3_MODULE_OF(m)                                                       \
	static inline struct l3_##m *l3_##m##_of(struct l3_ctx *c)            \
	{                                                                     \
		return &l3_demux_of(c)->m;                                    \
	}                                                                     \
	extern const struct l3_module l3_##m##_module;
L3_MODULES(L3_MODULE_OF)
#undef L3_MODULE_OF

/* l3_modules.c: the stage's tables (its own rows, then each module's)
 * and hooks (the modules', and those of the stage in flush), set before
 * it registers; the modules' init (in order, undone on a failure) and
 * fini (in reverse). */
void l3_modules_register(struct lrx_stage *stage, const struct lrx_value_key *keys,
			 const struct lrx_stage_counter *counters,
			 void (*flush)(void *ctx, bool budget_used));
int l3_modules_init(struct l3_demux *d, const struct l3_demux_conf *conf,
		    const struct lrx_stage_init *init);
void l3_modules_fini(void *ctx);

#endif
