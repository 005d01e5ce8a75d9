// SPDX-License-Identifier: BSD-3-Clause
#include "pcap_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lrx_test {

namespace {
struct PcapHeader {
	uint32_t magic;
	uint16_t major, minor;
	int32_t zone;
	uint32_t sigfigs, snaplen, linktype;
};
struct RecordHeader {
	uint32_t sec, usec, caplen, len;
};
uint32_t swap32(uint32_t v) { return __builtin_bswap32(v); }
} // namespace

bool pcap_write(const std::string &path, const std::vector<Frame> &frames)
{
	FILE *f = std::fopen(path.c_str(), "wb");
	if (!f)
		return false;
	PcapHeader h{0xa1b2c3d4, 2, 4, 0, 0, 65535, 1};
	std::fwrite(&h, sizeof(h), 1, f);
	uint32_t i = 0;
	for (const Frame &fr : frames) {
		RecordHeader r{1700000000u + i / 1000, (i % 1000) * 1000, (uint32_t)fr.size(),
			       (uint32_t)fr.size()};
		std::fwrite(&r, sizeof(r), 1, f);
		std::fwrite(fr.data(), 1, fr.size(), f);
		i++;
	}
	return std::fclose(f) == 0;
}

bool pcap_read(const std::string &path, std::vector<Frame> &frames)
{
	FILE *f = std::fopen(path.c_str(), "rb");
	if (!f)
		return false;
	PcapHeader h;
	bool ok = std::fread(&h, sizeof(h), 1, f) == 1;
	bool swapped = h.magic == 0xd4c3b2a1 || h.magic == 0x4d3cb2a1;
	ok = ok && (swapped || h.magic == 0xa1b2c3d4 || h.magic == 0xa1b23c4d);
	RecordHeader r;
	while (ok && std::fread(&r, sizeof(r), 1, f) == 1) {
		uint32_t caplen = swapped ? swap32(r.caplen) : r.caplen;
		if (caplen > 262144) {
			ok = false;
			break;
		}
		Frame fr(caplen);
		if (std::fread(fr.data(), 1, caplen, f) != caplen) {
			ok = false;
			break;
		}
		frames.push_back(std::move(fr));
	}
	std::fclose(f);
	return ok;
}

static uint16_t csum16(const uint8_t *p, size_t len, uint32_t sum = 0)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

std::vector<Frame> sample_frames(unsigned count, uint32_t seed)
{
	std::vector<Frame> frames;
	uint32_t x = seed ? seed : 1;
	for (unsigned i = 0; i < count; i++) {
		x = x * 1103515245u + 12345u;
		size_t len = 60 + (x >> 8) % 1455;
		Frame fr(len, 0);
		const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 2}, src[6] = {0x02, 0, 0, 0, 0, 1};
		std::memcpy(&fr[0], dst, 6);
		std::memcpy(&fr[6], src, 6);
		fr[12] = 0x08;
		fr[13] = 0x00;
		uint8_t *ip = &fr[14];
		size_t ip_len = len - 14;
		ip[0] = 0x45;
		ip[2] = (uint8_t)(ip_len >> 8);
		ip[3] = (uint8_t)ip_len;
		ip[4] = (uint8_t)(i >> 8);
		ip[5] = (uint8_t)i;
		ip[8] = 64;
		ip[9] = 17;
		const uint8_t saddr[4] = {10, 0, 0, 1}, daddr[4] = {10, 0, 0, 2};
		std::memcpy(ip + 12, saddr, 4);
		std::memcpy(ip + 16, daddr, 4);
		uint16_t c = csum16(ip, 20);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
		uint8_t *udp = ip + 20;
		size_t udp_len = ip_len - 20;
		udp[0] = 0x30;
		udp[1] = 0x39;
		udp[2] = 0x23;
		udp[3] = 0x28;
		udp[4] = (uint8_t)(udp_len >> 8);
		udp[5] = (uint8_t)udp_len;
		for (size_t k = 8; k < udp_len; k++)
			udp[k] = (uint8_t)(x >> (k % 24) ^ k ^ i);
		// UDP checksum 0 = none (IPv4 allows it)
		frames.push_back(std::move(fr));
	}
	return frames;
}

namespace {
// a pcapng block at `at`: false (and why) when it breaks the layout
struct PcapngReader {
	const std::string &data;
	std::string &why;
	bool u32(size_t at, uint32_t &v)
	{
		if (at + 4 > data.size())
			return fail("truncated at byte " + std::to_string(at));
		std::memcpy(&v, data.data() + at, 4);
		return true;
	}
	bool u16(size_t at, uint16_t &v)
	{
		if (at + 2 > data.size())
			return fail("truncated at byte " + std::to_string(at));
		std::memcpy(&v, data.data() + at, 2);
		return true;
	}
	bool fail(const std::string &what)
	{
		if (why.empty())
			why = what;
		return false;
	}
	// the value of option `want` of the options from..end ("" when absent)
	bool option(size_t from, size_t end, uint16_t want, std::string &out)
	{
		for (size_t opt = from; opt + 4 <= end;) {
			uint16_t code, len;
			if (!u16(opt, code) || !u16(opt + 2, len))
				return false;
			if (code == 0)
				break;
			if (code == want)
				out = data.substr(opt + 4, len);
			opt += 4 + ((len + 3u) & ~3u);
		}
		return true;
	}
};
} // namespace

std::vector<PcapngPacket> pcapng_read(const std::string &path, std::vector<std::string> &interfaces,
				      std::string &why)
{
	std::ifstream in(path, std::ios::binary);
	std::stringstream buf;
	buf << in.rdbuf();
	const std::string data = buf.str();
	std::vector<PcapngPacket> out;
	interfaces.clear();
	why.clear();
	PcapngReader r{data, why};
	uint32_t magic = 0, bom = 0;
	if (data.size() < 28 || !r.u32(0, magic) || !r.u32(8, bom) || magic != 0x0A0D0D0Au ||
	    bom != 0x1A2B3C4Du) {
		r.fail(path + ": not a pcapng section header");
		return out;
	}
	for (size_t at = 0; at < data.size();) {
		uint32_t type, len, tail;
		if (!r.u32(at, type) || !r.u32(at + 4, len))
			return out;
		if (len < 12 || len % 4 || at + len > data.size() || !r.u32(at + len - 4, tail) ||
		    tail != len) {
			r.fail("block at byte " + std::to_string(at) + ": bad length");
			return out;
		}
		if (type == 1) {
			uint16_t link = 0;
			std::string name;
			if (!r.u16(at + 8, link) || !r.option(at + 16, at + len - 4, 2, name))
				return out;
			if (link != 1) // LINKTYPE_ETHERNET
				r.fail("interface " + std::to_string(interfaces.size()) + ": link type " +
				       std::to_string(link));
			interfaces.push_back(name);
		} else if (type == 6) {
			PcapngPacket p;
			if (!r.u32(at + 8, p.interface) || !r.u32(at + 20, p.captured) ||
			    !r.u32(at + 24, p.original))
				return out;
			if (p.interface >= interfaces.size()) {
				r.fail("packet " + std::to_string(out.size()) + " before its interface");
				return out;
			}
			if (at + 28 + p.captured > at + len - 4) {
				r.fail("packet " + std::to_string(out.size()) + ": longer than its block");
				return out;
			}
			p.data.assign(data.begin() + (long)at + 28,
				      data.begin() + (long)(at + 28 + p.captured));
			if (!r.option(at + 28 + ((p.captured + 3) & ~3u), at + len - 4, 1, p.comment))
				return out;
			out.push_back(std::move(p));
		}
		at += len;
	}
	return out;
}

} // namespace lrx_test
