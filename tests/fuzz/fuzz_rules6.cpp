// SPDX-License-Identifier: BSD-3-Clause
// ip6tables rule-file harness: the text goes to the netfilter parser as
// an ip6tables-save file (family AF_INET6). It may not crash or leak; a
// failure is -EINVAL (or -ENOMEM) with a message naming the input; a rule
// set that loads runs IPv6 packets through both hooks (each through
// lrx_nf6_find_hdr first, as l3-demux's hook does: plain, behind
// extension headers, fragments, truncated chains; every verdict ACCEPT or
// DROP) and is listed and dumped as the report does.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "netfilter/netfilter.h"
}

namespace {

// A 40-byte IPv6 header, one optional extension header (next header
// ext, 8 bytes; a fragment header's offset from frag) and 20 bytes of L4;
// addresses and ports from seed bytes.
std::vector<uint8_t> packet(uint32_t seed, uint8_t proto, uint8_t ext, uint16_t frag)
{
	std::vector<uint8_t> p(68, 0);
	p[0] = 0x60;
	p[6] = ext ? ext : proto;
	for (int i = 0; i < 16; i++) {
		p[8 + i] = (uint8_t)(seed >> (i % 4 * 8));
		p[24 + i] = (uint8_t)(seed >> ((i + 1) % 4 * 8));
	}
	p[8] = 0x20;
	size_t l4 = 40;
	if (ext) {
		p[40] = proto;
		p[42] = (uint8_t)(frag >> 8);
		p[43] = (uint8_t)frag;
		l4 = 48;
	}
	p[l4] = (uint8_t)(seed >> 8);
	p[l4 + 1] = (uint8_t)seed;
	p[l4 + 2] = (uint8_t)(seed >> 16);
	p[l4 + 3] = (uint8_t)(seed >> 24);
	p[l4 + 13] = (uint8_t)seed;
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
	int rc = lrx_nf_parse_family(text.c_str(), "fuzz", AF_INET6, &nf, err, sizeof(err));
	if (rc < 0) {
		must(rc == -EINVAL || rc == -ENOMEM);
		must(nf == nullptr);
		must(std::strncmp(err, "fuzz", 4) == 0);
		return 0;
	}
	must(nf->family == AF_INET6);
	std::vector<lrx_nf_counter> ctr(nf->n_entries);
	uint32_t seed = 2166136261u;
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 16777619u;
	// {proto, extension header, fragment field, skb->len, first segment}
	const struct { uint8_t proto, ext; uint16_t frag; uint32_t len, seg; } cases[] = {
		{17, 0, 0, 68, 68}, {6, 0, 0, 68, 68}, {58, 0, 0, 48, 48},
		{17, 60, 0, 68, 68}, {17, 44, 0x0001, 68, 68}, {6, 44, 0x0010, 68, 68},
		{17, 60, 0, 41, 41}, {17, 0, 0, 44, 44}, {6, 0, 0, 50, 50},
		{17, 0, 0, 68, 42}, {17, 43, 0, 68, 68}, {60, 44, 0x0008, 68, 68},
	};
	uint64_t runs = 0;
	for (auto &c : cases)
		for (uint16_t port = 0; port < 3; port++) {
			auto p = packet(seed + port, c.proto, c.ext, c.frag);
			lrx_nf_pkt pk{};
			pk.iph = p.data();
			pk.len = c.len;
			pk.seg_len = c.seg;
			pk.in_port = port;
			pk.in_vid = port == 2 ? 5 : 0;
			pk.nexthdr = (int16_t)lrx_nf6_find_hdr(pk.iph, pk.len, pk.seg_len,
							       &pk.thoff, &pk.fragoff);
			must(pk.nexthdr < 256);
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
	must(counted <= runs * nf->n_entries);
	lrx_stage_map info;
	for (unsigned m = 0; lrx_nf_map_at(nf, m, &info); m++) {
		must(std::strncmp(info.name, "ip6/", 4) == 0);
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
	return 0;
}
