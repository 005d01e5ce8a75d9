/* SPDX-License-Identifier: BSD-3-Clause
 * The `static` engine: the packet engine's order (for each packet, each
 * stage) with no indirect call for stage dispatch. Each call site compares
 * the stage's entry with the entries known at build time
 * (engine_static_one in engine_packet_loop.h) and calls it directly: the
 * bound of what removing indirect calls (and retpoline thunks) can save.
 * The proof is in docs/engines.md (objdump of this object, cachegrind's
 * indirect-branch count).
 */
#include "engine_packet_loop.h"

void engine_static_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink)
{
	engine_packet_run_as(p, first, pkts, n, sink, ENGINE_DIRECT);
}

bool engine_static_direct(const struct lrx_stage *stage)
{
	bool direct = false, release_direct = stage->release == NULL;

#define ENGINE_STATIC_MATCH(entry) direct |= stage->process_one == entry;
	LRX_STATIC_ENTRIES(ENGINE_STATIC_MATCH)
#undef ENGINE_STATIC_MATCH
#define ENGINE_STATIC_MATCH(entry) release_direct |= stage->release == entry;
	LRX_STATIC_RELEASES(ENGINE_STATIC_MATCH)
#undef ENGINE_STATIC_MATCH
	return direct && release_direct;
}
