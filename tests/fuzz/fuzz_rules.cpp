// SPDX-License-Identifier: BSD-3-Clause
// Rule-file harness: the same text goes to the netfilter parser
// (iptables-save syntax) and to tc-ingress's (tc -batch lines). Neither
// may crash or leak; a failure is -EINVAL (or -ENOMEM) with a message
// naming the input; a rule set that loads runs packets through both hooks
// (every verdict ACCEPT or DROP, the tables' counters consistent) and is
// listed and dumped as the report does.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "netfilter/netfilter.h"
#include "tc_ingress/tc_ingress.h"
}

namespace {

// A 20-byte IPv4 header and 20 bytes of L4, fields from seed bytes.
std::vector<uint8_t> packet(uint32_t seed, uint8_t proto, uint16_t frag)
{
	std::vector<uint8_t> p(40, 0);
	p[0] = 0x45;
	p[6] = (uint8_t)(frag >> 8);
	p[7] = (uint8_t)frag;
	p[9] = proto;
	for (int i = 0; i < 8; i++)
		p[12 + i] = (uint8_t)(seed >> (i * 4));
	p[20] = (uint8_t)(seed >> 8);
	p[21] = (uint8_t)seed;
	p[22] = (uint8_t)(seed >> 16);
	p[23] = (uint8_t)(seed >> 24);
	p[33] = (uint8_t)seed;
	return p;
}

void must(bool ok)
{
	if (!ok)
		__builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	text = text.substr(0, text.find('\0'));
	char err[512] = "";

	lrx_nf *nf = nullptr;
	int rc = lrx_nf_parse(text.c_str(), "fuzz", &nf, err, sizeof(err));
	if (rc < 0) {
		must(rc == -EINVAL || rc == -ENOMEM);
		must(nf == nullptr);
		must(std::strncmp(err, "fuzz", 4) == 0);
	} else {
		std::vector<lrx_nf_counter> ctr(nf->n_entries);
		uint32_t seed = 2166136261u;
		for (size_t i = 0; i < size; i++)
			seed = (seed ^ data[i]) * 16777619u;
		const struct { uint8_t proto; uint16_t frag; uint32_t len; } cases[] = {
			{17, 0, 40}, {6, 0, 40}, {17, 0, 24}, {6, 1, 40},
			{17, 0x2000, 40}, {1, 0, 28}, {6, 0, 30},
		};
		uint64_t runs = 0;
		for (auto &c : cases)
			for (uint16_t port = 0; port < 3; port++) {
				auto p = packet(seed + port, c.proto, c.frag);
				lrx_nf_pkt pk{};
				pk.iph = p.data();
				pk.len = c.len;
				pk.seg_len = (uint32_t)p.size();
				pk.thoff = 20;
				pk.fragoff = c.frag & 0x1fff;
				pk.in_port = port;
				pk.in_vid = port == 2 ? 5 : 0;
				// the state conntrack would give it (the state matches)
				static const uint8_t states[] = {
					0, LRX_NF_CT_INVALID, LRX_NF_CT_ESTABLISHED,
					LRX_NF_CT_RELATED, LRX_NF_CT_NEW, LRX_NF_CT_UNTRACKED};
				pk.ctstate = states[(seed + port) % sizeof(states)];
				for (unsigned h = 0; h < LRX_NF_HOOKS; h++) {
					unsigned v = lrx_nf_hook_slow(nf, ctr.data(), h, &pk);
					must(v == LRX_NF_ACCEPT || v == LRX_NF_DROP);
					runs++;
				}
			}
		uint64_t counted = 0;
		for (auto &c : ctr)
			counted += c.pkts;
		// a packet is counted at least by... nothing, when a match
		// hotdrops it; never more than once per entry per run
		must(counted <= runs * nf->n_entries);
		lrx_stage_map info;
		for (unsigned m = 0; lrx_nf_map_at(nf, m, &info); m++) {
			uint32_t cursor = 0, key;
			uint64_t value[2];
			unsigned n = 0;
			while (lrx_nf_map_next(nf, ctr.data(), m, &cursor, &key, value))
				n++;
			must(n == info.max_entries);
		}
		char list[4096];
		lrx_nf_list(nf, ctr.data(), list, sizeof(list));
		lrx_nf_free(nf);
	}

	static lrx_tc_filter filters[LRX_TC_FILTERS_MAX];
	int n = lrx_tc_parse(text.c_str(), "fuzz", "/dir", filters,
			     LRX_TC_FILTERS_MAX, err, sizeof(err));
	must(n <= LRX_TC_FILTERS_MAX);
	if (n < 0)
		must(n == -EINVAL && std::strncmp(err, "fuzz", 4) == 0);
	return 0;
}
