/* SPDX-License-Identifier: BSD-3-Clause
 * The stage interface: one descriptor per stage, the engines know stages
 * only through it. A stage supplies one inline core and two thin loops
 * around it (process_one for the per-packet engines, process_burst for the
 * listified ones), so that the engines differ only in iteration order and
 * dispatch (shared/DESIGN.md).
 */
#ifndef LISTRX_STAGE_H
#define LISTRX_STAGE_H

#include <assert.h> /* static_assert in C11 and C++ */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "drop_reason.h"
#include "map_layout.h"
#include "value.h"

/* Largest burst an engine hands a stage (--burst is 1..LRX_BURST_MAX). */
#define LRX_BURST_MAX 512

/* ---- Next: what happens to a packet after a stage ----------------------
 * Encoded in 32 bits: kind in the low 4 bits, argument (drop reason or
 * port id) above. Compared as integers, so a whole burst that goes one way
 * is detected with one comparison per packet.
 */
typedef uint32_t lrx_next_t;

enum lrx_next_kind {
	LRX_NEXT_CONTINUE = 0, /* to the next stage (deliver after the last) */
	LRX_NEXT_DROP = 1,     /* freed, counted under arg = lrx_drop_reason */
	LRX_NEXT_TX = 2,       /* sent out of port arg (XDP_TX: the ingress port) */
	LRX_NEXT_REDIRECT = 3, /* sent out of port arg (XDP_REDIRECT) */
	LRX_NEXT_CONSUMED = 4, /* the stage kept it (GRO held/merged it) */
	LRX_NEXT_DELIVER = 5,  /* handed to "the socket layer": counted, freed */
	LRX_NEXT_KIND_MAX,     /* the number of kinds */
};

#define LRX_NEXT_KIND_BITS 4
#define LRX_NEXT_KIND_MASK ((1u << LRX_NEXT_KIND_BITS) - 1)
static_assert(LRX_NEXT_KIND_MAX <= LRX_NEXT_KIND_MASK + 1,
	       "every next kind fits in LRX_NEXT_KIND_BITS");

static inline lrx_next_t lrx_next_make(enum lrx_next_kind kind, uint32_t arg)
{
	return (arg << LRX_NEXT_KIND_BITS) | (uint32_t)kind;
}
static inline enum lrx_next_kind lrx_next_kind(lrx_next_t next)
{
	return (enum lrx_next_kind)(next & LRX_NEXT_KIND_MASK);
}
static inline uint32_t lrx_next_arg(lrx_next_t next)
{
	return next >> LRX_NEXT_KIND_BITS;
}
#define LRX_NEXT_CONTINUE_V ((lrx_next_t)LRX_NEXT_CONTINUE)
#define LRX_NEXT_CONSUMED_V ((lrx_next_t)LRX_NEXT_CONSUMED)
#define LRX_NEXT_DELIVER_V ((lrx_next_t)LRX_NEXT_DELIVER)
static inline lrx_next_t lrx_next_drop(enum lrx_drop_reason reason)
{
	return lrx_next_make(LRX_NEXT_DROP, (uint32_t)reason);
}
static inline lrx_next_t lrx_next_tx(uint16_t port)
{
	return lrx_next_make(LRX_NEXT_TX, port);
}
static inline lrx_next_t lrx_next_redirect(uint16_t port)
{
	return lrx_next_make(LRX_NEXT_REDIRECT, port);
}

/* ---- Configuration keys ------------------------------------------------
 * A stage's keys are a table of the value layer (value.h: name, default,
 * help, type, and the field of the stage's typed config the value goes
 * to). The config loader parses every key into that config once, when it
 * reads it, and reports a bad value with file and line; init gets the
 * config parsed and checks only what is more than one value (a key that
 * needs another, a file that must load). */

/* What init gets: the stage's typed config (conf_size bytes, every key
 * parsed), where to allocate, and a buffer for a message naming a bad
 * value. */
struct rte_rcu_qsbr;
struct lrx_stage_init {
	const char *instance;   /* stage name as written in the pipeline */
	int socket_id;          /* NUMA node of the polling lcore */
	uint16_t burst;         /* the engine's burst size */
	uint16_t prefetch;      /* [pipeline] prefetch distance, 0 = off
				 * (stages/prefetch.h) */
	unsigned lcore_id;      /* the lcore that runs this instance */
	/* the polling lcore's quiescent states (DPDK rte_rcu_qsbr, thread
	 * 0; its poll loop reports one after every poll): what a stage
	 * whose data another thread writes while it runs (an eBPF
	 * program's maps, map_write) gives its writers to wait on; NULL:
	 * no other thread writes */
	struct rte_rcu_qsbr *qsbr;
	const void *conf;       /* the typed config; init keeps no pointer
				 * into it */
	char *err;              /* init writes a message here when it fails */
	size_t err_len;
};

/* What start() checks a stage against: the run, once every lcore's
 * pipeline is built and the ports are started. */
struct lrx_stage_start {
	const char *instance;   /* stage name as written in the pipeline */
	const uint16_t *ports;  /* the run's ports (DPDK port ids) */
	unsigned n_ports;
	char *err;              /* why start refuses the run */
	size_t err_len;
	char *warn;             /* a warning the run prints and goes on */
	size_t warn_len;
};

/* What a counter means to the accounting: the report sums and shows
 * counters by role, never by name. */
enum lrx_counter_role {
	LRX_COUNTER_COUNT = 0,  /* anything that counts up */
	LRX_COUNTER_IN,         /* packets a merging stage took in (segments) */
	LRX_COUNTER_OUT,        /* packets it put out, a merged one once */
	LRX_COUNTER_MERGED,     /* packets appended to another one: their mbufs
				 * leave inside it, with no fate of their own
				 * (dev_gro_receive's GRO_MERGED, ip_frag_reasm) */
	LRX_COUNTER_GAUGE,      /* a level, not a count: a period keeps it */
	LRX_COUNTER_MADE,       /* packets the stage made (emit: act_mirred's
				 * mirror copies); each has a fate of its own:
				 * rx + made = tx + delivered + dropped +
				 * merged + held */
};

/* Stage-specific counter (beyond calls/packets/cycles/drops, which the
 * engines take): e.g. the SNMP InHdrErrors of l3-demux. */
struct lrx_stage_counter {
	const char *name;
	size_t offset;          /* offset of a uint64_t inside the stage ctx */
	enum lrx_counter_role role;
};

/* A counter a stage keeps per port: the kernel's per-device core stats
 * (dev_core_stats_rx_dropped_inc, ..._rx_otherhost_dropped_inc) of the
 * ports its packets came in on. Port p's uint64_t is at offset +
 * p * stride in the ctx, for p < RTE_MAX_ETHPORTS. The report sums them
 * per port into the port table. */
struct lrx_stage_port_counter {
	const char *name;
	size_t offset;
	size_t stride;
};

/* ---- Placement: where a stage may stand in a pipeline ------------------
 * The pipeline loader (dataplane/app/config.c) checks these for every stage and
 * knows no stage by name. */
enum lrx_stage_provides {
	LRX_PROVIDES_META = 1u << 0, /* fills the packet metadata (meta.h), as
				      * build_skb fills the skb */
	LRX_PROVIDES_SKB = 1u << 1,  /* works on the built skb before ip_rcv
				      * (build_skb, napi_gro_receive) */
};

enum lrx_stage_position {
	LRX_POSITION_ANY = 0,
	LRX_POSITION_FIRST,     /* before every other stage, on the raw frame
				 * (a driver hook: native XDP) */
	LRX_POSITION_AFTER_SKB, /* after the last LRX_PROVIDES_SKB stage, with
				 * a LRX_PROVIDES_META stage in the pipeline
				 * (netif_receive_generic_xdp) */
};

/* One value of a shortcut's placement key and where it puts the stage. */
struct lrx_stage_place {
	const char *value;               /* "native" */
	enum lrx_stage_position position;
	const char *why;                 /* for the error when the pipeline
					  * cannot hold it there, or NULL */
};

/* A key of a shortcut section, and the stage key it sets. */
struct lrx_stage_alias {
	const char *key;        /* key in the shortcut section ("jit") */
	const char *stage_key;  /* the stage's key it sets ("exec") */
	const char *option;     /* command-line option ("--xdp-jit"), or NULL */
	const char *arg;        /* the option's value in --help ("P") */
	const char *help;       /* --help text */
	const char *if_yes;     /* a yes/no key: the stage value for yes */
	const char *if_no;      /* ... and for no */
};

/* A short top-level section ([xdp]) and command-line options for one
 * stage: a value of add_key adds the stage to the pipeline where the
 * place_key's value says (the first place is the default); a pipeline that
 * names the stage already must have it there. Its keys win over
 * [stage.NAME]'s. */
struct lrx_stage_shortcut {
	const char *section;
	const struct lrx_stage_alias *keys;     /* NULL-key terminated */
	const char *add_key;                    /* "prog" */
	const char *add_empty;                  /* message for an empty add_key */
	const char *place_key;                  /* "mode" */
	const struct lrx_stage_place *places;   /* NULL-value terminated */
};

/* A table of a stage (an eBPF program's map), for the report, as
 * `bpftool map dump` shows it. */
struct lrx_stage_map {
	const char *name;
	const char *type;       /* "array", "hash", "percpu_array", "percpu_hash" */
	uint32_t key_size, value_size, max_entries;
	/* the fields of its keys and values (map_layout.h); NULL: bytes only */
	const struct lrx_map_layout *layout;
};

/* A write into a stage's maps (map_write): what to write, and what came
 * of it over the stage instances it is handed to in turn. */
struct lrx_stage_map_write {
	const char *params;     /* NAME:KEY=VALUE[,FLAG] or NAME:KEY (del) */
	bool del;
	unsigned found;         /* maps of that name */
	unsigned written;       /* of them, written */
	int rc;                 /* the first error (-errno), 0: none */
	char err[256];          /* what it was, naming the map */
};

/* ---- The descriptor ----------------------------------------------------- */
struct lrx_stage {
	const char *name;
	const char *summary;                 /* one line for --help */
	size_t ctx_size;                     /* allocated cache-aligned, zeroed */
	const struct lrx_value_key *keys;    /* NULL-name terminated, or NULL */
	size_t conf_size;                    /* the struct the keys fill */
	const struct lrx_stage_counter *counters; /* NULL-name terminated, or NULL */
	/* per-port device counters, NULL-name terminated, or NULL */
	const struct lrx_stage_port_counter *port_counters;

	/* Placement (above): what it provides to the stages after it, what
	 * must come before it, and its optional shortcut section. */
	unsigned provides;                   /* enum lrx_stage_provides bits */
	unsigned needs;                      /* bits a stage before it must provide
					      * ("requires" is a C++20 keyword) */
	const struct lrx_stage_shortcut *shortcut;

	/* Returns 0 or -errno, with a message in init->err. */
	int (*init)(void *ctx, const struct lrx_stage_init *init);
	/* Optional: once every lcore's pipeline is built and the ports are
	 * started, before the first poll: what the stage names elsewhere in
	 * the run is there (rps: a backlog on each lcore of its map;
	 * tc-ingress: the ports of its filters and redirects; netfilter: the
	 * input devices of its rules). 0, or -errno (-EINVAL: the config
	 * names what the run lacks) with a message in start->err; a warning
	 * in start->warn does not stop the run. */
	int (*start)(void *ctx, const struct lrx_stage_start *start);
	void (*fini)(void *ctx);
	/* Optional, called before the mbuf pools exist: bytes of the mbuf
	 * private area an instance with this config wants (VPP keeps its
	 * metadata in the buffer); [mempool] priv_size = auto takes the
	 * largest. */
	uint32_t (*mbuf_priv)(const void *conf);
	/* Optional, called before the mbuf pools exist: the most packets an
	 * instance with this config can hold between polls (socket queues no
	 * reader drains, backlogs), when each mbuf charges mbuf_size bytes
	 * (sizeof(struct rte_mbuf) + private area + data room, as the
	 * kernel's skb->truesize): the pool gets room for them, or an
	 * explicit [mempool] mbufs too small for them is refused. */
	uint32_t (*mbuf_hold)(const void *conf, uint32_t mbuf_size);

	/* One packet; the returned next decides its fate. */
	lrx_next_t (*process_one)(void *ctx, struct rte_mbuf *pkt);
	/* n packets; nexts[i] is the fate of pkts[i]. Same result as calling
	 * process_one on each in order. */
	void (*process_burst)(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			      lrx_next_t *nexts);

	/* Optional, for stages that hold packets (GRO). Packets a stage
	 * returned CONSUMED for come back, in the order they must continue,
	 * through release(): the engine calls it after every process_one /
	 * process_burst call and after flush(), and runs what it returns
	 * through the stages after this one, before anything else.
	 * flush() is the end-of-poll point (napi_gro_flush): budget_used says
	 * whether the poll used its whole budget (then only old packets are
	 * flushed, as napi_poll does). */
	void (*flush)(void *ctx, bool budget_used);
	/* Returns fewer than max only when it has nothing more to give until
	 * the next process or flush call: an engine that asked for max and
	 * got fewer does not ask again (the kernel hands gro_normal_list one
	 * list, it does not poll it until empty). */
	uint16_t (*release)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	/* Optional: packets the stage took (CONSUMED) and now gives up, each
	 * with its drop reason, as the kernel frees them (kfree_skb_reason: a
	 * reassembly queue that timed out or broke a rule,
	 * inet_frag_rbtree_purge). The engine asks after each flush and puts
	 * them in the sink, so a stage never frees a packet and every packet
	 * ends in one counted fate. Returns how many it wrote (at most max). */
	uint16_t (*drop)(void *ctx, struct rte_mbuf **pkts,
			 enum lrx_drop_reason *reasons, uint16_t max);
	/* Optional: packets the stage took (CONSUMED) that now leave as the
	 * reply built in them, out of their ingress port (TX), as the kernel
	 * sends an error about a packet it held (ip_expire's ICMP time
	 * exceeded about a queue's first fragment). Asked after drop;
	 * returns how many. */
	uint16_t (*send)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	/* Optional: packets the stage took (CONSUMED) that now leave
	 * delivered, as the kernel consumes them (consume_skb: datagrams a
	 * socket's reader took). Asked after drop; returns how many. */
	uint16_t (*consume)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	/* Optional: packets the stage made that leave by a port, each with
	 * its next (a redirect): act_mirred's mirror, whose copy the kernel
	 * transmits while the original goes on. Asked at the end of each
	 * poll, after consume (in the order the stage made them, so every
	 * engine puts them in the sink at the same place); returns how
	 * many it wrote (at most max). A stage may have emit without
	 * flush. */
	uint16_t (*emit)(void *ctx, struct rte_mbuf **pkts, lrx_next_t *nexts,
			 uint16_t max);
	/* Optional, asked once after init: whether this instance, as
	 * configured, makes packets at all (tc-ingress: a filter has a
	 * mirror); false spares it the emit call at every end of poll.
	 * Without it, a stage with emit is asked every poll. */
	bool (*makes_packets)(const void *ctx);
	/* Optional: packets still held, those drop, send and consume have not
	 * taken included (for accounting and the exit flush). */
	uint32_t (*held)(const void *ctx);
	/* Optional: the end of the run (lrx_pipeline_drain, before the
	 * flushes). A stage that frees what it holds when its timers fire,
	 * rather than releasing it (reassembly queues: ip_expire), lets it
	 * all expire here. A stage may have flush() without release() when
	 * it never releases packets. */
	void (*end_run)(void *ctx);

	/* Optional: the stage's maps (an eBPF program's). map_at describes
	 * map i (false past the last). map_next copies the entry at *cursor
	 * or the next one after it into key/value (key_size, value_size
	 * bytes) and moves *cursor past it; false when none is left. Read
	 * from another thread while the stage runs: a value may be torn, as
	 * a `bpftool map dump` of a live map. */
	bool (*map_at)(const void *ctx, unsigned i, struct lrx_stage_map *map);
	bool (*map_next)(const void *ctx, unsigned i, uint32_t *cursor, void *key,
			 void *value);
	/* Optional: one element of the stage's eBPF maps written while it
	 * runs, as `bpftool map update|delete` writes the kernel's map
	 * (telemetry /listrx/STAGE/map_update, map_delete). Called from
	 * another thread, safe against the stage's own lookups; adds to
	 * w->found and w->written, and sets w->rc and w->err at the first
	 * error (rc 0 meanwhile). */
	void (*map_write)(void *ctx, struct lrx_stage_map_write *w);
};

/* The registry: every stage listrx knows. A stage file registers its
 * descriptor with LRX_STAGE_REGISTER(desc) (a constructor, as DPDK's
 * RTE_NODE_REGISTER); the library is linked whole so none is dropped. */
void lrx_stage_register(const struct lrx_stage *stage);
#define LRX_STAGE_REGISTER(desc)                                              \
	static void __attribute__((constructor, used))                        \
	lrx_stage_register_##desc(void) { lrx_stage_register(&(desc)); }
/* A stage's descriptor with its context and config types and its key and
 * counter tables, registered: LRX_STAGE_DEFINE(lrx_stage_x, struct x_ctx,
 * struct x_conf, x_keys, x_counters, .name = "x", .init = ...). */
#define LRX_STAGE_DEFINE(desc, ctx_type, conf_type, keys_, counters_, ...)    \
	const struct lrx_stage desc = {.ctx_size = sizeof(ctx_type),          \
				       .conf_size = sizeof(conf_type),        \
				       .keys = keys_, .counters = counters_,  \
				       __VA_ARGS__};                          \
	LRX_STAGE_REGISTER(desc)
/* A counter of the stage context's field (a uint64_t) */
#define LRX_STAGE_COUNTER(ctx_type, name_, field, ...)                        \
	{.name = name_, .offset = offsetof(ctx_type, field), __VA_ARGS__}

/* The two entry points of a stage whose burst is a loop over its inline
 * core, lrx_next_t core(ctx, pkt): lrx_NAME_process_one and
 * lrx_NAME_process_burst, exported for the static engine
 * (static_entries.h). */
#define LRX_STAGE_ENTRIES_DECLARE(name)                                       \
	lrx_next_t lrx_##name##_process_one(void *ctx, struct rte_mbuf *pkt);  \
	void lrx_##name##_process_burst(void *ctx, struct rte_mbuf **pkts,     \
					uint16_t n, lrx_next_t *nexts);
#define LRX_STAGE_ENTRIES(name, core)                                         \
	lrx_next_t lrx_##name##_process_one(void *ctx, struct rte_mbuf *pkt)   \
	{                                                                     \
		return core(ctx, pkt);                                        \
	}                                                                     \
	void lrx_##name##_process_burst(void *ctx, struct rte_mbuf **pkts,     \
					uint16_t n, lrx_next_t *nexts)         \
	{                                                                     \
		for (uint16_t i = 0; i < n; i++)                              \
			nexts[i] = core(ctx, pkts[i]);                        \
	}
const struct lrx_stage *lrx_stage_find(const char *name);
/* Iterate: returns NULL after the last. */
const struct lrx_stage *lrx_stage_at(unsigned index);

#endif
