// SPDX-License-Identifier: BSD-3-Clause
// Minimal classic pcap writer/reader for the integration tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lrx_test {

using Frame = std::vector<uint8_t>;

bool pcap_write(const std::string &path, const std::vector<Frame> &frames);
// Frames of a classic pcap (either byte order, usec or nsec); false on error.
bool pcap_read(const std::string &path, std::vector<Frame> &frames);
struct PcapngPacket {
	uint32_t captured = 0, original = 0, interface = 0;
	std::string comment; // opt_comment, "" when none
	Frame data;          // the captured bytes
};
// The packets of a pcapng file in file order, read as the spec requires of
// a file (host byte order, as the section header's magic says): block
// lengths repeated at the end, an Ethernet interface before the first
// packet, options 4-byte aligned. interfaces gets the interface blocks'
// if_name options; why says what is wrong ("" when nothing is).
std::vector<PcapngPacket> pcapng_read(const std::string &path, std::vector<std::string> &interfaces,
				      std::string &why);
// count frames of valid UDP/IPv4 with distinct payloads, sizes 60..1514
std::vector<Frame> sample_frames(unsigned count, uint32_t seed);

} // namespace lrx_test
