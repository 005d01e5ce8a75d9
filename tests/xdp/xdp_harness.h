// SPDX-License-Identifier: BSD-3-Clause
// One `xdp` stage instance built from config keys (defaults from the
// stage's key table), as the pipeline builds it, for the unit tests, the
// kernel parity test and the bench driver.
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "stage_harness.h"

extern "C" {
#include "ebpf/ebpf.h"
#include "xdp/xdp_stage.h"
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

// The xdp stage as lrx_test::StageInstance (keys handed through, a missing
// counter aborts), plus its eBPF maps.
struct Stage : lrx_test::StageInstance {
	void *ctx = nullptr;
	int rc = 0;
	const char *err = nullptr;

	static lrx_test::StageOptions options()
	{
		lrx_test::StageOptions o;
		o.on_missing_counter =
			lrx_test::StageOptions::MissingCounter::abort;
		return o;
	}

	explicit Stage(const std::map<std::string, std::string> &keys)
		: StageInstance("xdp", keys, options()),
		  ctx(StageInstance::ctx()), rc(StageInstance::rc()),
		  err(error())
	{
	}

	lrx_xdp_map *map(const char *name)
	{
		lrx_xdp_prog *p = lrx_xdp_stage_prog(ctx);
		return p ? lrx_xdp_prog_map(p, name) : nullptr;
	}
};

// A map's entries as lrx_xdp_map_next gives them, key and value bytes
// (a dump: equal contents, whatever the layout).
inline std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>>
map_dump(const lrx_xdp_map *m)
{
	std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> out;
	std::vector<uint8_t> key(m->key_size), value(m->value_size);
	uint32_t cursor = 0;
	while (lrx_xdp_map_next(m, &cursor, key.data(), value.data()))
		out.emplace_back(key, value);
	return out;
}

} // namespace lrx_xdp_test
