// SPDX-License-Identifier: BSD-3-Clause
// A text in a temporary file (rule and filter files of the tests), removed
// with the object.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace lrx_test {

struct TempFile {
	std::string path;
	explicit TempFile(const std::string &text, const char *stem = "lrx_test")
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

} // namespace lrx_test
