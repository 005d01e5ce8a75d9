// SPDX-License-Identifier: BSD-3-Clause
// The map definition records of the BPF harnesses (fuzz_bpf_elf,
// fuzz_bpf_verify) and their seed generator (gen_bpf_seeds): what libbpf's
// BTF parse would give the loader, as fuzz bytes. 24 bytes each:
//   name[16] (NUL-padded), type u8, unused u8, key_size u16 LE,
//   value_size u16 LE, max_entries u16 LE
// max_entries: bits 0..14 the count, bit 15 set = 2^20 + 1 (above the
// loader's bound), so that a record never asks for more than 32 K entries
// (hundreds of MB of zeroed map memory per input would measure memset).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lrx_fuzz {

constexpr size_t kMapRecord = 24;
constexpr unsigned kMapRecordsMax = 17; // one more than LRX_XDP_MAX_MAPS

struct MapRecord {
	char name[17];
	uint32_t type, key_size, value_size, max_entries;
};

inline MapRecord map_record_decode(const uint8_t *p)
{
	MapRecord r{};
	std::memcpy(r.name, p, 16);
	r.name[16] = '\0';
	r.type = p[16];
	r.key_size = (uint32_t)(p[18] | p[19] << 8);
	r.value_size = (uint32_t)(p[20] | p[21] << 8);
	uint32_t e = (uint32_t)(p[22] | p[23] << 8);
	r.max_entries = (e & 0x8000) ? (1u << 20) + 1 : e;
	return r;
}

inline void map_record_encode(uint8_t *p, const char *name, uint32_t type,
			      uint32_t key_size, uint32_t value_size,
			      uint32_t max_entries)
{
	std::memset(p, 0, kMapRecord);
	std::strncpy(reinterpret_cast<char *>(p), name, 16);
	p[16] = (uint8_t)type;
	p[18] = (uint8_t)key_size;
	p[19] = (uint8_t)(key_size >> 8);
	p[20] = (uint8_t)value_size;
	p[21] = (uint8_t)(value_size >> 8);
	uint32_t e = max_entries > 0x7fff ? 0x8000 : max_entries;
	p[22] = (uint8_t)e;
	p[23] = (uint8_t)(e >> 8);
}

} // namespace lrx_fuzz
