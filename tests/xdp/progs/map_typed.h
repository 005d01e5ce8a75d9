// SPDX-License-Identifier: BSD-3-Clause
// The types of map_typed.bpf.c's map, shared with the tests that check
// how the report decodes them (offsets from the C compiler, not by hand).
#ifndef MAP_TYPED_H
#define MAP_TYPED_H

struct typed_key {
	unsigned char proto;  // IPPROTO_*
	unsigned char spare;
	unsigned short dport; // host order
	char tag[4];          // "udp" / "tcp" / "oth"
};

struct typed_value {
	unsigned long long pkts;
	unsigned long long bytes;
	int delta;                 // signed: bytes of this frame - the first's
	unsigned short sizes[2];   // [first, last] frame length
	struct {
		unsigned char ttl;
		unsigned char flags : 3, version : 4, last : 1;
	} ip;
	unsigned char pad[2];
};

#endif
