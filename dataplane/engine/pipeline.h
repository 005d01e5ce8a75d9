/* SPDX-License-Identifier: BSD-3-Clause
 * A pipeline: a list of stage instances run by one engine. One pipeline per
 * polling lcore (stage contexts are per lcore, like per-NAPI GRO state).
 * The poll loop knows engines only through this header.
 */
#ifndef LISTRX_PIPELINE_H
#define LISTRX_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "stage.h"
#include "pmu.h"
#include "sink.h"

#define LRX_PIPELINE_MAX_STAGES 16
/* a stage instance's, a config section's or a key's name, with its NUL */
#define LRX_NAME_LEN 64

enum lrx_engine_kind {
	LRX_ENGINE_PACKET, /* per packet: for each stage an indirect call */
	LRX_ENGINE_BURST,  /* per stage: one indirect call over the burst */
	LRX_ENGINE_HYBRID, /* burst through the first K stages, then per packet */
	LRX_ENGINE_STATIC, /* direct calls, no indirect dispatch */
	LRX_ENGINE_GRAPH,  /* DPDK rte_graph nodes, rte_graph_walk */
};

enum lrx_stats_level {
	LRX_STATS_OFF,      /* nothing counted in the hot path beyond rx */
	LRX_STATS_COUNTERS, /* calls, packets, drops */
	LRX_STATS_CYCLES,   /* + TSC cycles per stage call */
};

/* One stage instance of a pipeline: the stage, its typed config (parsed
 * and checked when the config was read: stage_keys.h) and the ballast the
 * engine runs with it. */
struct lrx_stage_conf {
	const struct lrx_stage *stage;
	void *conf;            /* stage->conf_size bytes, owned by the caller;
				* NULL for a stage without keys */
	unsigned footprint_kb; /* ballast executed per packet in this stage
				* (lrx_footprint_check) */
};

struct lrx_pipeline_conf {
	enum lrx_engine_kind engine;
	unsigned hybrid_k;            /* for LRX_ENGINE_HYBRID */
	uint16_t burst;               /* 1..LRX_BURST_MAX */
	enum lrx_stats_level stats_level;
	uint16_t prefetch;            /* packets ahead, 0 = off (prefetch.h) */
	unsigned n_stages;
	struct lrx_stage_conf stages[LRX_PIPELINE_MAX_STAGES];
	int socket_id;
	unsigned lcore_id;            /* for per-lcore names (rte_graph) */
	struct rte_rcu_qsbr *qsbr;    /* the lcore's quiescent states, for
				       * the stages' map writers (stage.h) */
};

/* Per stage instance, the VPP `show runtime` figures. */
struct lrx_stage_stats {
	uint64_t calls;       /* process_one or process_burst calls */
	uint64_t packets;     /* packets into the stage */
	uint64_t cycles;      /* TSC, when stats level is cycles */
	uint64_t drops[LRX_DROP_MAX];
	uint64_t tx, redirected, consumed, delivered;
	uint64_t pmu[LRX_PMU_MAX_EVENTS]; /* [pmu] stages: counts by event index */
	/* not a counter: where the burst engine's branch-free exit
	 * accounting counts the packets that go on (engine_exit_word) */
	uint64_t went_on_scratch;
};

struct lrx_pipeline;

/* Parses "packet", "burst", "hybrid:K" (K 1..LRX_PIPELINE_MAX_STAGES),
 * "static", "graph". Returns 0 or -EINVAL. */
int lrx_engine_parse(const char *text, enum lrx_engine_kind *kind,
		     unsigned *hybrid_k);
const char *lrx_engine_name(enum lrx_engine_kind kind);

/* [run] interleave: the engines one lcore polls with in turn ("none": 0);
 * an item ENGINE/prefetch=K runs that engine's pipeline with [pipeline]
 * prefetch = K, so that prefetch distances are compared in one process. */
#define LRX_ENGINE_LIST_MAX 8
#define LRX_ENGINE_PREFETCH_PIPELINE (-1) /* the item has no /prefetch=K */
struct lrx_engine_list {
	unsigned n;
	enum lrx_engine_kind kind[LRX_ENGINE_LIST_MAX];
	unsigned hybrid_k[LRX_ENGINE_LIST_MAX];
	int prefetch[LRX_ENGINE_LIST_MAX];
};
#define LRX_ENGINE_LIST_VALID                                                  \
	"none, or 2 to 8 engines separated by commas (packet, burst, hybrid:K, static, graph; " \
	"an engine may come twice: packet,packet is an A/A comparison; ENGINE/prefetch=K "      \
	"with K 0..16 runs it with that prefetch distance)"
/* The value layer's CUSTOM parse (lib/value.h) of a struct lrx_engine_list. */
int lrx_engine_list_parse(const char *text, void *out);
/* "packet,burst" (the engines' names, hybrid:K with its K, /prefetch=K
 * where given) into buf. */
void lrx_engine_list_name(const struct lrx_engine_list *l, char *buf, size_t len);
/* Item i of l ("burst/prefetch=4") into buf. */
void lrx_engine_list_item_name(const struct lrx_engine_list *l, unsigned i, char *buf,
			       size_t len);

/* The mbuf private area the stages of conf want (their mbuf_priv hooks),
 * aligned to RTE_MBUF_PRIV_ALIGN: [mempool] priv_size = auto. */
uint32_t lrx_pipeline_conf_mbuf_priv(const struct lrx_pipeline_conf *conf);
/* The packets the stages of conf can hold between polls (their mbuf_hold
 * hooks), each mbuf charging mbuf_size bytes. */
uint64_t lrx_pipeline_conf_mbuf_hold(const struct lrx_pipeline_conf *conf,
				     uint32_t mbuf_size);

/* The keys of every [stage.NAME] beyond the stage's own: the engine's
 * (footprint_kb), over struct lrx_stage_conf. */
extern const struct lrx_value_key lrx_stage_conf_keys[];
/* Whether stage index of a pipeline can run footprint_kb of ballast:
 * 0, or -EINVAL / -ENOTSUP with the reason in why. The config loader
 * asks; lrx_pipeline_create asserts it. */
int lrx_footprint_check(unsigned index, unsigned footprint_kb, char *why, size_t why_len);
/* Builds the stage contexts and the engine from a checked conf (its
 * stages' configs parsed, footprints checked: creation asserts them). On
 * a failure of a stage's init (a combination of values, a file, memory)
 * returns -errno with a message in err naming the stage. */
int lrx_pipeline_create(const struct lrx_pipeline_conf *conf,
			struct lrx_pipeline **out, char *err, size_t err_len);
void lrx_pipeline_destroy(struct lrx_pipeline *p);
/* Every stage's start hook (stage.h), once all pipelines are built and
 * the ports started; ports: the run's DPDK port ids. Returns 0 or the
 * first -errno with "stage 'NAME' (position N): why" in err; warnings go
 * to warn, one per line. */
int lrx_pipeline_start(struct lrx_pipeline *p, const uint16_t *ports, unsigned n_ports,
		       char *err, size_t err_len, char *warn, size_t warn_len);

/* Runs n received packets (ownership passes to the pipeline) through the
 * stages; every packet ends in the sink or held by a stage. */
void lrx_pipeline_process(struct lrx_pipeline *p, struct rte_mbuf **pkts,
			  uint16_t n, struct lrx_sink *sink);

/* End of one poll (napi_complete_done / napi_gro_flush): flushes stages
 * that hold packets and runs what they release into the sink. */
void lrx_pipeline_poll_end(struct lrx_pipeline *p, bool budget_used,
			   struct lrx_sink *sink);

/* One poll of (port, queue): rx_burst of up to `budget` packets (the
 * caller passes the burst size, or less when --packets is nearly reached),
 * process, poll_end (budget_used = received == budget). Returns the number
 * received. The graph engine does its RX in its source node. */
uint16_t lrx_pipeline_poll(struct lrx_pipeline *p, uint16_t port,
			   uint16_t queue, uint16_t budget,
			   struct lrx_sink *sink);

/* Releases everything still held (at exit) into the sink, as far as the
 * sink has room: complete the sink and drain again while something is
 * held (lrx_pipeline_held). */
void lrx_pipeline_drain(struct lrx_pipeline *p, struct lrx_sink *sink);
/* Packets the stages hold now (their held hooks). */
uint64_t lrx_pipeline_held(const struct lrx_pipeline *p);

/* burst, hybrid:K and graph call (some) stages once per vector */
bool lrx_engine_calls_vectors(enum lrx_engine_kind kind);

/* [pmu] stages: reads g's counters around every stage call of the vector
 * engines (burst, hybrid's burst part, graph). Returns -ENOTSUP for the
 * per-packet engines (a read pair per packet per stage would cost more
 * than most stages), with the reason in why. g NULL switches it off. */
int lrx_pipeline_set_pmu(struct lrx_pipeline *p, const struct lrx_pmu *g, char *why,
			 size_t why_len);

/* Whether set_pmu reads the counters around stage i's calls: every stage
 * of burst and graph, the first K of hybrid:K, none of the others. */
bool lrx_pipeline_stage_attributable(const struct lrx_pipeline *p, unsigned i);

unsigned lrx_pipeline_stage_count(const struct lrx_pipeline *p);
const char *lrx_pipeline_stage_name(const struct lrx_pipeline *p, unsigned i);
void lrx_pipeline_stage_stats(const struct lrx_pipeline *p, unsigned i,
			      struct lrx_stage_stats *out);
/* Stage-specific counters of stage i: calls fn for each, in the
 * descriptor's order. */
void lrx_pipeline_stage_counters(const struct lrx_pipeline *p, unsigned i,
				 void (*fn)(void *arg, const struct lrx_stage_counter *c,
					    uint64_t value),
				 void *arg);
/* The per-port device counters (stage.h: port_counters) of every stage
 * for port_id: calls fn for each, in pipeline order. */
void lrx_pipeline_port_counters(const struct lrx_pipeline *p, uint16_t port_id,
				void (*fn)(void *arg, const char *name,
					   uint64_t value),
				void *arg);
/* Stage i's maps (stage.h: map_at, map_next); false past the last, or
 * when the stage has none. */
bool lrx_pipeline_stage_map_at(const struct lrx_pipeline *p, unsigned i, unsigned map,
			       struct lrx_stage_map *out);
bool lrx_pipeline_stage_map_next(const struct lrx_pipeline *p, unsigned i, unsigned map,
				 uint32_t *cursor, void *key, void *value);
/* Whether a stage has maps that map_write writes from another thread
 * (its lcore must report quiescent states then: stage.h, qsbr). */
bool lrx_pipeline_writable_maps(const struct lrx_pipeline *p);
/* Stage i's map_write (stage.h) when it is an instance of the stage
 * named stage; false when it is not or has no map_write. */
bool lrx_pipeline_stage_map_write(struct lrx_pipeline *p, unsigned i, const char *stage,
				  struct lrx_stage_map_write *w);
/* --trace (trace.h): puts the trace wrappers in place of the stages'
 * entries until the traced packets are out. Before the workers start. */
struct lrx_trace;
int lrx_pipeline_set_trace(struct lrx_pipeline *p, struct lrx_trace *t);
/* The traced packets' fates among sink[from..n) (the poll and the drain
 * call it while tracing). */
struct lrx_sink;
void lrx_pipeline_trace_sink(struct lrx_pipeline *p, const struct lrx_sink *sink, uint32_t from);
/* --capture-drops: the same wrappers mark each packet a stage drops with
 * that stage, for the capture's comment; a run without capture does not
 * pay for it. Before the workers start. */
int lrx_pipeline_mark_drop_stage(struct lrx_pipeline *p);
/* The stage that dropped m (marked as above), or NULL. */
const char *lrx_pipeline_drop_stage(const struct lrx_pipeline *p, const struct rte_mbuf *m);
unsigned lrx_pipeline_footprint_bytes(const struct lrx_pipeline *p);

#endif
