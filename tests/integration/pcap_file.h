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
// count frames of valid UDP/IPv4 with distinct payloads, sizes 60..1514
std::vector<Frame> sample_frames(unsigned count, uint32_t seed);

} // namespace lrx_test
