// SPDX-License-Identifier: BSD-3-Clause
// tc-ingress tests: filter files written to temporary files, the eBPF
// objects meson built, and build-meta + tc-ingress run per packet and per
// burst.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stage_harness.h"

namespace lrx_tc_test {

inline std::string test_prog(const std::string &name)
{
	return std::string(LRX_TC_TEST_PROGS_DIR) + "/" + name + ".bpf.o";
}

// A text in a temporary file, removed with the object.
struct TempFile {
	std::string path;
	explicit TempFile(const std::string &text, const char *stem = "lrx_tc")
	{
		char tmpl[128];
		std::snprintf(tmpl, sizeof(tmpl), "/tmp/%s_XXXXXX", stem);
		int fd = mkstemp(tmpl);
		if (fd < 0)
			std::abort();
		path = tmpl;
		if (write(fd, text.data(), text.size()) != (ssize_t)text.size())
			std::abort();
		close(fd);
	}
	~TempFile() { unlink(path.c_str()); }
	TempFile(const TempFile &) = delete;
	TempFile &operator=(const TempFile &) = delete;
};

} // namespace lrx_tc_test
