/* SPDX-License-Identifier: BSD-3-Clause
 * The `xdp` stage: runs one XDP program on each frame and turns its action
 * into the packet's next, as the kernel's netif_receive_generic_xdp /
 * a driver's XDP hook do (docs/xdp.md):
 *   ABORTED -> drop XDP_ABORTED (trace_xdp_exception), DROP -> drop XDP,
 *   PASS -> continue, TX -> out of the ingress port, REDIRECT -> out of the
 *   bpf_redirect / redirect:PORT port; any other value is treated as
 *   ABORTED, as bpf_warn_invalid_xdp_action does.
 * Placement decides native vs generic: first in the pipeline it sees the
 * raw frame (a driver hook); after build-meta it is xdpgeneric. The key
 * `mode` says which one is meant: where the ingress port/queue are read
 * from (mbuf vs skb-like metadata).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bpf.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "stage_keys.h"
#include "meta.h"
#include "prefetch.h"
#include "static_entries.h"
#include "ebpf/ebpf.h"
#include "ebpf/ebpf_map_init.h"
#include "xdp_builtin.h"
#include "xdp_stage.h"


enum xdp_exec { XDP_EXEC_BUILTIN, XDP_EXEC_JIT, XDP_EXEC_INTERP };

/* returned by the run step when the mbuf cannot hold the context window */
#define XDP_RUN_NO_WINDOW UINT64_MAX

struct xdp_ctx {
	/* counters (per program instance) */
	uint64_t n_aborted, n_drop, n_pass, n_tx, n_redirect;
	uint64_t n_invalid_action; /* out-of-range return values (aborted) */
	uint64_t n_window_error;   /* mbuf too small for the window (aborted) */

	enum xdp_exec exec;
	bool generic;
	uint16_t prefetch;         /* packets ahead in the burst loop */
	uint32_t window;
	lrx_xdp_builtin_fn builtin;
	uint64_t (*jit)(void *);
	const struct rte_bpf *bpf;
	bool burst_interp; /* rte_bpf_exec_burst usable (no bpf_redirect) */
	struct lrx_xdp_prog *prog;
	struct lrx_xdp_hint_src hint_src; /* the metadata kfuncs' values */
	struct lrx_xdp_builtin_conf bconf;
	uint64_t udp_ports[65536 / 64];
};

struct lrx_xdp_prog *lrx_xdp_stage_prog(void *ctx)
{
	return ((struct xdp_ctx *)ctx)->prog;
}

static inline void xdp_ingress(const struct xdp_ctx *xc,
			       const struct rte_mbuf *m, uint16_t *port,
			       uint16_t *queue)
{
	if (xc->generic) {
		const struct lrx_meta *meta = lrx_meta(m);

		*port = meta->ingress_port;
		*queue = meta->ingress_queue;
	} else {
		*port = m->port;
		*queue = 0;
	}
}

/* One built-in program on one frame. */
static __rte_always_inline uint64_t
xdp_builtin_call(struct xdp_ctx *xc, struct rte_mbuf *m, uint32_t *target,
		 lrx_xdp_builtin_fn fn)
{
	uint16_t port, queue;
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);

	xdp_ingress(xc, m, &port, &queue);
	struct lrx_xdp_buff buff = {
		.data = data,
		.data_end = data + rte_pktmbuf_data_len(m),
		.ingress_port = port,
		.rx_queue = queue,
		.redirect_port = LRX_XDP_REDIRECT_NONE,
	};
	uint64_t action = fn(&xc->bconf, &buff);

	*target = buff.redirect_port;
	return action;
}

/* Runs the program on one frame: its action, or XDP_RUN_NO_WINDOW; a
 * redirect's target in *target. A built-in's entry is compared with the
 * known ones and the match's body runs inline (xdp_builtin.h), as the
 * kernel's BPF dispatcher calls an attached program directly. */
static __rte_always_inline uint64_t xdp_run(struct xdp_ctx *xc, struct rte_mbuf *m,
					    uint32_t *target)
{
	uint16_t port, queue;
	struct lrx_xdp_md *md;
	uint64_t action;

	if (xc->exec == XDP_EXEC_BUILTIN) {
		lrx_xdp_builtin_fn fn = xc->builtin;
#define XDP_BUILTIN_CALL(entry, name) \
		if (fn == lrx_xdp_builtin_##entry) \
			return xdp_builtin_call(xc, m, target, lrx_xdp_builtin_##entry##_body);
		LRX_XDP_BUILTINS(XDP_BUILTIN_CALL)
#undef XDP_BUILTIN_CALL
		return xdp_builtin_call(xc, m, target, fn);
	}
	xdp_ingress(xc, m, &port, &queue);
	*target = LRX_XDP_REDIRECT_NONE;
	md = lrx_xdp_md_prepare(m, xc->window, port, queue);
	if (unlikely(md == NULL))
		return XDP_RUN_NO_WINDOW;
	if (xc->hint_src.hints != 0)
		lrx_xdp_md_hints(md, m, &xc->hint_src);
	action = xc->exec == XDP_EXEC_JIT ? xc->jit(md)
					  : rte_bpf_exec(xc->bpf, md);
	if (action == LRX_XDP_REDIRECT)
		*target = lrx_xdp_redirect_take();
	return action;
}

/* Action -> next, counted (the kernel's switch in do_xdp_generic /
 * a driver's XDP run function). */
static inline lrx_next_t xdp_verdict(struct xdp_ctx *xc,
				     const struct rte_mbuf *m, uint64_t action,
				     uint32_t target)
{
	uint16_t port, queue;

	/* PASS first, by a compare: the common action, and no jump table
	 * (an indirect branch per packet) for it */
	if (likely(action == LRX_XDP_PASS)) {
		xc->n_pass++;
		return LRX_NEXT_CONTINUE_V;
	}
	switch (action) {
	case LRX_XDP_DROP:
		xc->n_drop++;
		return lrx_next_drop(LRX_DROP_XDP);
	case LRX_XDP_TX:
		xc->n_tx++;
		xdp_ingress(xc, m, &port, &queue);
		return lrx_next_tx(port);
	case LRX_XDP_REDIRECT:
		if (likely(target != LRX_XDP_REDIRECT_NONE)) {
			xc->n_redirect++;
			return lrx_next_redirect((uint16_t)target);
		}
		/* XDP_REDIRECT without bpf_redirect: xdp_do_redirect fails,
		 * the kernel traces an exception and drops */
		break;
	case LRX_XDP_ABORTED:
		break;
	case XDP_RUN_NO_WINDOW:
		xc->n_window_error++;
		break;
	default:
		xc->n_invalid_action++;
		break;
	}
	xc->n_aborted++;
	return lrx_next_drop(LRX_DROP_XDP_ABORTED);
}

lrx_next_t lrx_xdp_process_one(void *ctx, struct rte_mbuf *pkt)
{
	struct xdp_ctx *xc = ctx;
	uint32_t target;
	uint64_t action = xdp_run(xc, pkt, &target);

	return xdp_verdict(xc, pkt, action, target);
}

/* The interpreter's burst entry (rte_bpf_exec_burst) over the frames that
 * have the window; the others are aborted in place. */
static void xdp_burst_interp(struct xdp_ctx *xc, struct rte_mbuf **pkts,
			     uint16_t n, lrx_next_t *nexts)
{
	void *mds[LRX_BURST_MAX];
	uint64_t rc[LRX_BURST_MAX];
	uint16_t idx[LRX_BURST_MAX];
	uint32_t nv = 0;

	for (uint16_t i = 0; i < n; i++) {
		uint16_t port, queue;
		struct lrx_xdp_md *md;

		xdp_ingress(xc, pkts[i], &port, &queue);
		md = lrx_xdp_md_prepare(pkts[i], xc->window, port, queue);
		if (unlikely(md == NULL)) {
			nexts[i] = xdp_verdict(xc, pkts[i], XDP_RUN_NO_WINDOW,
					       LRX_XDP_REDIRECT_NONE);
			continue;
		}
		if (xc->hint_src.hints != 0)
			lrx_xdp_md_hints(md, pkts[i], &xc->hint_src);
		mds[nv] = md;
		idx[nv++] = i;
	}
	rte_bpf_exec_burst(xc->bpf, mds, rc, nv);
	for (uint32_t k = 0; k < nv; k++)
		nexts[idx[k]] = xdp_verdict(
			xc, pkts[idx[k]], rc[k],
			rc[k] == LRX_XDP_REDIRECT ? lrx_xdp_redirect_take()
						  : LRX_XDP_REDIRECT_NONE);
}

void lrx_xdp_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			   lrx_next_t *nexts)
{
	struct xdp_ctx *xc = ctx;

	if (xc->burst_interp) {
		xdp_burst_interp(xc, pkts, n, nexts);
		return;
	}
	lrx_prefetch_start(pkts, n, xc->prefetch);
	for (uint16_t i = 0; i < n; i++) {
		uint32_t target;
		lrx_prefetch_ahead(pkts, i, n, xc->prefetch);
		uint64_t action = xdp_run(xc, pkts[i], &target);

		nexts[i] = xdp_verdict(xc, pkts[i], action, target);
	}
}

/* ---- Configuration ----------------------------------------------------- */

/* prog: a built-in, with its argument parsed, or an eBPF object's path */
struct xdp_prog_conf {
	char text[256];               /* as given */
	bool object;                  /* bpf:FILE.o or FILE.o */
	uint8_t path_at;              /* the path: text + path_at */
	lrx_xdp_builtin_fn builtin;
	uint16_t redirect_port;       /* redirect:PORT */
	struct lrx_port_set ports;    /* udp-port-drop:PORTS */
};

static const char xdp_prog_valid[] =
	"a built-in (drop, pass, tx, redirect:PORT, read, touch, "
	"udp-port-drop:PORTS, abort) or bpf:FILE.o / FILE.o; PORT is a DPDK port id, "
	"PORTS a list of UDP ports and ranges (53,8000-8100)";

static int xdp_parse_prog(const char *text, void *out)
{
	struct xdp_prog_conf *p = out;
	size_t len = strlen(text);
	memset(p, 0, sizeof(*p));
	if (len >= sizeof(p->text))
		return -EINVAL;
	memcpy(p->text, text, len + 1);
	p->object = strncmp(text, "bpf:", 4) == 0 || (len > 2 && strcmp(text + len - 2, ".o") == 0);
	if (p->object) {
		p->path_at = strncmp(text, "bpf:", 4) == 0 ? 4 : 0;
		return text[p->path_at] ? 0 : -EINVAL;
	}
	char *arg = strchr(p->text, ':');
	if (arg)
		*arg++ = '\0';
	p->builtin = lrx_xdp_builtin_find(p->text);
	bool redirect = strcmp(p->text, "redirect") == 0;
	bool port_drop = strcmp(p->text, "udp-port-drop") == 0;
	uint64_t port = 0;
	int rc = !p->builtin || (redirect || port_drop) != (arg != NULL) ? -EINVAL
		 : redirect ? lrx_value_uint(arg, 0, RTE_MAX_ETHPORTS - 1, &port)
		 : port_drop ? lrx_value_ports(arg, &p->ports) : 0;
	/* udp-port-drop names its ports: not any, not none */
	if (port_drop && rc == 0 && (p->ports.any || strcmp(arg, "none") == 0))
		rc = -EINVAL;
	p->redirect_port = (uint16_t)port;
	memcpy(p->text, text, len + 1);
	return rc;
}

/* map_init (lib/ebpf/ebpf_map_init.h) is parsed when the config is read;
 * the maps exist once the program is loaded, where the names and sizes
 * are checked (apply_map_init). */

struct xdp_conf {
	struct xdp_prog_conf prog;
	char section[64];
	unsigned exec, mode;  /* xdp_execs[], xdp_modes[] */
	uint32_t window;
	struct lrx_bpf_map_init map_init;
};

/* The map_init entries into the loaded program's maps. */
static int apply_map_init(struct xdp_ctx *xc, const struct lrx_stage_init *init,
			  const struct lrx_bpf_map_init *mi)
{
	for (unsigned i = 0; i < mi->n; i++) {
		struct lrx_xdp_map *map = lrx_xdp_prog_map(xc->prog, mi->e[i].map);
		if (map == NULL)
			return lrx_key_error(init, "map_init", mi->e[i].map,
					     "the program has no map of that name");
		if (lrx_bpf_map_init_store(map, mi, i) != 0)
			return lrx_key_error(init, "map_init", mi->e[i].map,
					     lrx_bpf_map_init_valid);
	}
	return 0;
}

/* What the metadata kfuncs read: the timestamp dynfield is registered
 * here (as build-meta does) so that it has a place once a PMD stamps. */
static void xdp_hint_src_init(struct lrx_xdp_hint_src *src, uint32_t hints,
			      bool generic)
{
	src->hints = hints;
	src->generic = generic;
	src->ts_offset = -1;
	if ((hints & LRX_XDP_HINT_TIMESTAMP) &&
	    rte_mbuf_dyn_rx_timestamp_register(&src->ts_offset, &src->ts_flag) < 0)
		src->ts_offset = -1;
	/* a 64-bit fraction when the TSC runs above 1 GHz (the multiplier
	 * fits), else 32 bits */
	src->ts_shift = rte_get_tsc_hz() > UINT64_C(1000000000) ? 64 : 32;
	src->ts_mult = (uint64_t)(((unsigned __int128)UINT64_C(1000000000)
				   << src->ts_shift) / rte_get_tsc_hz());
}

static int xdp_init_object(struct xdp_ctx *xc, const struct xdp_conf *conf,
			   const struct lrx_stage_init *init)
{
	const char *path = conf->prog.text + conf->prog.path_at;
	int rc = lrx_xdp_prog_load(path, conf->section, xc->window, init->socket_id,
				   &xc->prog, init->err, init->err_len);
	if (rc < 0)
		return rc;
	xc->bpf = lrx_xdp_prog_bpf(xc->prog);
	xc->jit = lrx_xdp_prog_jit(xc->prog);
	xc->exec = conf->exec == 0 ? XDP_EXEC_JIT : XDP_EXEC_INTERP;
	if (xc->exec == XDP_EXEC_JIT && xc->jit == NULL) {
		snprintf(init->err, init->err_len,
			 "%s: rte_bpf produced no JIT code for %s on "
			 "this machine; use exec=interp",
			 init->instance, path);
		rc = -ENOTSUP;
	} else {
		rc = apply_map_init(xc, init, &conf->map_init);
		lrx_xdp_prog_set_qsbr(xc->prog, init->qsbr);
	}
	xc->burst_interp = xc->exec == XDP_EXEC_INTERP &&
			   !lrx_xdp_prog_uses_redirect(xc->prog);
	if (rc == 0)
		xdp_hint_src_init(&xc->hint_src, lrx_xdp_prog_hints(xc->prog),
				  xc->generic);
	if (rc < 0) { /* a failed init is not followed by fini */
		lrx_xdp_prog_free(xc->prog);
		xc->prog = NULL;
	}
	return rc;
}

static int xdp_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct xdp_conf *conf = init->conf;
	struct xdp_ctx *xc = ctx;
	int rc;

	xc->prefetch = init->prefetch;
	xc->generic = conf->mode == 1;
	xc->window = conf->window;
	if (xc->generic && (rc = lrx_meta_register()) < 0)
		return rc;
	if (conf->prog.object)
		return xdp_init_object(xc, conf, init);
	if (conf->map_init.n != 0)
		return lrx_key_error(init, "map_init", conf->map_init.e[0].map,
				     "maps exist only for eBPF programs");
	xc->exec = XDP_EXEC_BUILTIN;
	xc->builtin = conf->prog.builtin;
	xc->bconf.udp_ports = xc->udp_ports;
	xc->bconf.redirect_port = conf->prog.redirect_port;
	memcpy(xc->udp_ports, conf->prog.ports.bits, sizeof(xc->udp_ports));
	return 0;
}

static void xdp_fini(void *ctx)
{
	struct xdp_ctx *xc = ctx;

	lrx_xdp_prog_free(xc->prog);
	xc->prog = NULL;
}

static const char *const xdp_execs[] = {"jit", "interp", NULL};
static const char *const xdp_modes[] = {"native", "generic", NULL};
#define XK(kind, field, ...) LRX_KEY_##kind(struct xdp_conf, field, __VA_ARGS__)
static const struct lrx_value_key xdp_keys[] = {
	XK(CUSTOM, prog, "prog", "pass", xdp_parse_prog, xdp_prog_valid,
	   "built-in program (drop, pass, tx, redirect:PORT, read, "
	   "touch, udp-port-drop:P1,P2,..., abort) or an eBPF object "
	   "bpf:FILE.o (or FILE.o)"),
	XK(STRING, section, "section", "xdp", "ELF section of the eBPF program"),
	XK(CHOICE, exec, "exec", "jit", xdp_execs,
	   "rte_bpf x86 JIT or interpreter (eBPF only)"),
	XK(CHOICE, mode, "mode", "native", xdp_modes,
	   "native (first stage, raw frame; ingress port from the "
	   "mbuf) | generic (after build-meta; ingress from metadata)"),
	XK(UINT, window, "window", "1600", 64, 65535 - LRX_XDP_MD_SIZE,
	   "bytes past data an eBPF program may address (checked by "
	   "rte_bpf; frames in mbufs with less room are aborted)"),
	XK(CUSTOM, map_init, "map_init", "", lrx_bpf_map_init_parse, lrx_bpf_map_init_valid,
	   "NAME:KEY=VALUE,...;NAME2:... initial map entries (decimal)"),
	{.name = NULL},
};
#undef XK

static const struct lrx_stage_counter xdp_counters[] = {
	{ .name = "aborted", .offset = offsetof(struct xdp_ctx, n_aborted) },
	{ .name = "drop", .offset = offsetof(struct xdp_ctx, n_drop) },
	{ .name = "pass", .offset = offsetof(struct xdp_ctx, n_pass) },
	{ .name = "tx", .offset = offsetof(struct xdp_ctx, n_tx) },
	{ .name = "redirect", .offset = offsetof(struct xdp_ctx, n_redirect) },
	{ .name = "invalid_action",
	  .offset = offsetof(struct xdp_ctx, n_invalid_action) },
	{ .name = "window_error",
	  .offset = offsetof(struct xdp_ctx, n_window_error) },
	{ .name = NULL },
};

/* [xdp] and --xdp-*: where the kernel attaches a program. native = first,
 * on the raw frame (the driver hook); generic = after build-meta and GRO,
 * as xdpgeneric runs once the skb is built (netif_receive_generic_xdp). */
static const struct lrx_stage_alias xdp_aliases[] = {
	{ .key = "prog", .stage_key = "prog", .option = "--xdp-prog", .arg = "P",
	  .help = "XDP program; adds the xdp stage where --xdp-mode says" },
	{ .key = "section", .stage_key = "section", .option = "--xdp-section", .arg = "S",
	  .help = "ELF section of the program (default xdp)" },
	{ .key = "mode", .stage_key = "mode", .option = "--xdp-mode", .arg = "M",
	  .help = "native (first stage, raw frame) | generic (after build-meta and gro)" },
	{ .key = "jit", .stage_key = "exec", .option = "--xdp-jit", .arg = "1|0",
	  .help = "rte_bpf x86 JIT or interpreter", .if_yes = "jit", .if_no = "interp" },
	{ .key = NULL },
};

static const struct lrx_stage_place xdp_places[] = {
	{ .value = "native", .position = LRX_POSITION_FIRST },
	{ .value = "generic", .position = LRX_POSITION_AFTER_SKB,
	  .why = "generic XDP runs after build-meta (as xdpgeneric after the "
		 "skb is built)" },
	{ .value = NULL },
};

static const struct lrx_stage_shortcut xdp_shortcut = {
	.section = "xdp",
	.keys = xdp_aliases,
	.add_key = "prog",
	.add_empty = "empty; name a built-in program (see docs/xdp.md) or an "
		     "ELF object FILE.o",
	.place_key = "mode",
	.places = xdp_places,
};

/* The program's maps for the report (bpftool map dump); a built-in
 * program has none. */
static bool xdp_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out)
{
	struct lrx_xdp_prog *prog = ((const struct xdp_ctx *)ctx)->prog;
	const struct lrx_xdp_map *m = prog ? lrx_xdp_prog_map_at(prog, i) : NULL;
	if (!m)
		return false;
	*out = (struct lrx_stage_map){.name = m->name, .type = lrx_xdp_map_type_name(m),
				      .key_size = m->key_size, .value_size = m->value_size,
				      .max_entries = m->max_entries, .layout = m->layout};
	return true;
}

static bool xdp_map_next(const void *ctx, unsigned i, uint32_t *cursor, void *key,
			 void *value)
{
	struct lrx_xdp_prog *prog = ((const struct xdp_ctx *)ctx)->prog;
	const struct lrx_xdp_map *m = prog ? lrx_xdp_prog_map_at(prog, i) : NULL;
	return m && lrx_xdp_map_next(m, cursor, key, value);
}

/* telemetry's map_update/map_delete: a built-in program has no maps */
static void xdp_map_write(void *ctx, struct lrx_stage_map_write *w)
{
	lrx_bpf_prog_map_write(((struct xdp_ctx *)ctx)->prog, w);
}

LRX_STAGE_DEFINE(lrx_stage_xdp, struct xdp_ctx, struct xdp_conf, xdp_keys, xdp_counters,
	.name = "xdp",
	.shortcut = &xdp_shortcut,
	.summary = "XDP verdict: built-in or eBPF program (rte_bpf JIT or "
		   "interpreter), DROP/PASS/TX/REDIRECT/ABORTED",
	.init = xdp_init,
	.fini = xdp_fini,
	.process_one = lrx_xdp_process_one,
	.process_burst = lrx_xdp_process_burst,
	.map_at = xdp_map_at,
	.map_next = xdp_map_next,
	.map_write = xdp_map_write,
)
