// SPDX-License-Identifier: BSD-3-Clause
// One `xdp` stage instance built from config keys (defaults from the
// stage's key table), as the pipeline builds it, for the unit tests, the
// kernel parity test and the bench driver.
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include <rte_malloc.h>

extern "C" {
#include "xdp/xdp.h"
}

namespace lrx_xdp_test {

// Where meson put the shipped and the test objects.
inline std::string prog_path(const std::string &name)
{
	return std::string(LRX_XDP_PROGS_DIR) + "/" + name + ".bpf.o";
}
inline std::string test_prog_path(const std::string &name)
{
	return std::string(LRX_XDP_TEST_PROGS_DIR) + "/" + name + ".bpf.o";
}

struct Stage {
	std::map<std::string, std::string> values;
	void *ctx = nullptr;
	int rc = 0;
	char err[1024] = "";

	static const char *get(const lrx_stage_init *init, const char *key)
	{
		auto *self = (const Stage *)init->values;
		auto it = self->values.find(key);
		return it == self->values.end() ? nullptr : it->second.c_str();
	}

	explicit Stage(const std::map<std::string, std::string> &keys)
	{
		for (const lrx_stage_key *k = lrx_stage_xdp.keys; k->name; k++)
			values[k->name] = k->def;
		for (auto &kv : keys)
			values[kv.first] = kv.second;
		ctx = rte_zmalloc("xdp_test_ctx", lrx_stage_xdp.ctx_size,
				  RTE_CACHE_LINE_SIZE);
		lrx_stage_init init{};
		init.instance = "xdp";
		init.socket_id = 0;
		init.burst = 64;
		init.get = get;
		init.values = this;
		init.err = err;
		init.err_len = sizeof(err);
		rc = lrx_stage_xdp.init(ctx, &init);
	}
	~Stage()
	{
		if (rc == 0)
			lrx_stage_xdp.fini(ctx);
		rte_free(ctx);
	}
	Stage(const Stage &) = delete;
	Stage &operator=(const Stage &) = delete;

	lrx_next_t one(rte_mbuf *m) { return lrx_stage_xdp.process_one(ctx, m); }
	void burst(rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts)
	{
		lrx_stage_xdp.process_burst(ctx, pkts, n, nexts);
	}
	uint64_t counter(const char *name) const
	{
		for (const lrx_stage_counter *c = lrx_stage_xdp.counters; c->name;
		     c++)
			if (strcmp(c->name, name) == 0)
				return *(const uint64_t *)((const char *)ctx +
							   c->offset);
		abort();
	}
	std::map<std::string, uint64_t> counters() const
	{
		std::map<std::string, uint64_t> out;
		for (const lrx_stage_counter *c = lrx_stage_xdp.counters; c->name;
		     c++)
			out[c->name] = counter(c->name);
		return out;
	}
	lrx_xdp_map *map(const char *name)
	{
		lrx_xdp_prog *p = lrx_xdp_stage_prog(ctx);
		return p ? lrx_xdp_prog_map(p, name) : nullptr;
	}
};

} // namespace lrx_xdp_test
