// SPDX-License-Identifier: BSD-3-Clause
// u32 harness: the input's text (up to a NUL byte) is u32 filter lines,
// each put after "filter add dev port0 ingress protocol ip|ipv6 " (the
// first byte of the rest chooses), e.g. "pref 2 handle 1: u32 divisor 4"
// or "pref 1 u32 match ip dport 53 ffff offset at 0 mask 0f00 shift 6 eat
// link 1: hashkey mask 3 at 20 action drop" (every field of match ip and
// ip6, the flags nofrag..mf and ip6 priority included, and action lists
// with mirred mirror, whose copies are taken through emit). The parser must
// give filters whose keys are packed as pack_key packs them (a multiple
// of 4, value inside its mask, offmask 0, 1 or -1, at most
// LRX_TC_U32_KEYS_MAX) or -EINVAL naming
// the input; a set that loads into the stage runs the bytes after the NUL
// as frames (a length byte, then that many bytes after an Ethernet
// header) through build-meta and tc-ingress: no crash, no read outside
// the frame (ASan), every mbuf back in the pool.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <rte_malloc.h>

#include "fuzz_common.h"
#include "stage_conf.h"

extern "C" {
#include "meta.h"
#include "stage.h"
#include "tc_ingress/tc_ingress.h"
}

namespace {

rte_mempool *mp;
const lrx_stage *bm_desc, *tc_desc;
void *bm_ctx;
lrx_fuzz::MemFile *file;

LRX_FUZZ_BOOKKEEPING void check_filters(const lrx_tc_filter *f, int n)
{
	for (int i = 0; i < n; i++) {
		const lrx_tc_u32 &s = f[i].u32;
		if (f[i].kind == LRX_TC_KIND_U32_HT &&
		    (s.divisor == 0 || s.divisor > 256 || (s.divisor & (s.divisor - 1))))
			lrx_fuzz::fail("filter %d: divisor %u", i, s.divisor);
		if (s.nkeys > LRX_TC_U32_KEYS_MAX)
			lrx_fuzz::fail("filter %d: %u keys", i, s.nkeys);
		for (unsigned k = 0; k < s.nkeys; k++)
			if (s.keys[k].off % 4 != 0 || (s.keys[k].val & ~s.keys[k].mask) ||
			    s.keys[k].offmask < -1 || s.keys[k].offmask > 1)
				lrx_fuzz::fail("filter %d key %u: off %d val %08x mask %08x",
					       i, k, s.keys[k].off, s.keys[k].val,
					       s.keys[k].mask);
	}
}

void *stage_init(const lrx_stage *st, const lrx_test::KeyValues &keys,
		 bool must)
{
	void *ctx = rte_zmalloc("fuzz_tc_u32", st->ctx_size, RTE_CACHE_LINE_SIZE);
	char err[512] = "";
	lrx_test::StageConf conf(st, keys);
	if (conf.rc)
		lrx_fuzz::fail("%s keys: %s", st->name, conf.error.c_str());
	lrx_stage_init init = {};
	init.instance = st->name;
	init.socket_id = (int)rte_socket_id();
	init.burst = 32;
	init.conf = conf.conf;
	init.err = err;
	init.err_len = sizeof(err);
	if (st->init(ctx, &init) == 0)
		return ctx;
	if (must || std::strncmp(err, "tc-ingress: ", 12) != 0)
		lrx_fuzz::fail("%s init: '%s'", st->name, err);
	rte_free(ctx);
	return nullptr;
}

void run_frames(void *tc, lrx_fuzz::Reader &in, bool v6)
{
	while (!in.empty()) {
		const uint8_t *raw;
		size_t len = in.take(in.u8(), &raw);
		rte_mbuf *m = rte_pktmbuf_alloc(mp);
		if (m == nullptr)
			lrx_fuzz::fail("pool empty");
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(14 + len));
		const uint8_t eth[14] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1,
					 (uint8_t)(v6 ? 0x86 : 0x08), (uint8_t)(v6 ? 0xdd : 0)};
		std::memcpy(d, eth, 14);
		std::memcpy(d + 14, raw, len);
		m->port = 0;
		if (bm_desc->process_one(bm_ctx, m) == LRX_NEXT_CONTINUE_V)
			tc_desc->process_one(tc, m);
		rte_pktmbuf_free(m);
		// what a mirror copied leaves at the poll's end (emit); a
		// copy the pool had no room for is counted, not lost
		rte_mbuf *copies[8];
		lrx_next_t nexts[8];
		uint16_t got;
		while ((got = tc_desc->emit(tc, copies, nexts, 8)) != 0)
			for (uint16_t k = 0; k < got; k++) {
				if (lrx_next_kind(nexts[k]) != LRX_NEXT_REDIRECT)
					lrx_fuzz::fail("a copy's next %u", nexts[k]);
				rte_pktmbuf_free(copies[k]);
			}
	}
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_tc_u32");
	mp = lrx_fuzz::pool("fuzz_tc_u32", 63, 2048 + RTE_PKTMBUF_HEADROOM);
	if (lrx_meta_register() < 0)
		lrx_fuzz::fail("meta dynfield missing");
	bm_desc = lrx_stage_find("build-meta");
	tc_desc = lrx_stage_find("tc-ingress");
	if (!bm_desc || !tc_desc)
		lrx_fuzz::fail("stages missing");
	bm_ctx = stage_init(bm_desc, {{"host_mac", "02:00:00:00:00:02"}}, true);
	file = new lrx_fuzz::MemFile("fuzz_tc_u32");
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = (const uint8_t *)std::memchr(data, 0, size);
	const size_t text_len = nul ? (size_t)(nul - data) : size;
	lrx_fuzz::Reader rest(data + text_len + (nul ? 1 : 0),
			      nul ? size - text_len - 1 : 0);
	const bool v6 = rest.u8() & 1;
	const std::string prefix = std::string("filter add dev port0 ingress protocol ") +
				   (v6 ? "ipv6 " : "ip ");
	std::string text;
	const std::string in((const char *)data, text_len);
	for (size_t at = 0; at <= in.size();) {
		size_t nl = in.find('\n', at);
		nl = nl == std::string::npos ? in.size() : nl;
		text += prefix + in.substr(at, nl - at) + "\n";
		at = nl + 1;
	}
	static lrx_tc_filter filters[LRX_TC_FILTERS_MAX];
	char err[512] = "";
	int n = lrx_tc_parse(text.c_str(), "fuzz", nullptr, filters,
			     LRX_TC_FILTERS_MAX, err, sizeof(err));
	if (n < 0) {
		if (n != -EINVAL || std::strncmp(err, "fuzz:", 5) != 0)
			lrx_fuzz::fail("parse: %d '%s'", n, err);
		return 0;
	}
	check_filters(filters, n);
	file->write((const uint8_t *)text.data(), text.size());
	void *tc = stage_init(tc_desc, {{"filters", file->path}}, false);
	if (tc == nullptr)
		return 0;
	run_frames(tc, rest, v6);
	tc_desc->fini(tc);
	rte_free(tc);
	lrx_fuzz::require_pools_full("fuzz_tc_u32");
	return 0;
}
