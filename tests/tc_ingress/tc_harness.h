// SPDX-License-Identifier: BSD-3-Clause
// tc-ingress tests: the eBPF objects meson built, filter files in
// temporary files.
#pragma once

#include <string>

#include "stage_harness.h"
#include "temp_file.h"

namespace lrx_tc_test {

inline std::string test_prog(const std::string &name)
{
	return std::string(LRX_TC_TEST_PROGS_DIR) + "/" + name + ".bpf.o";
}

using lrx_test::TempFile;

} // namespace lrx_tc_test
