// SPDX-License-Identifier: BSD-3-Clause
// Config parser harness: arbitrary INI text, optionally followed by a NUL
// and command-line overrides, one per line as "section.key=value" (what
// --set builds). The parser must never crash, and every failure must be
// -EINVAL or -ENOENT with a message (the user-facing contract of
// dataplane/app/config.h); a success must leave a usable config.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "fuzz_common.h"

extern "C" {
#include "config.h"
#include "stats.h"
}

static lrx_config conf; // large: static, reset each iteration

static unsigned parse_overrides(const char *p, const char *end,
				lrx_override *out, unsigned max)
{
	unsigned n = 0;
	while (p < end && n < max) {
		const char *nl = static_cast<const char *>(
			std::memchr(p, '\n', (size_t)(end - p)));
		std::string line(p, nl ? nl : end);
		p = nl ? nl + 1 : end;
		size_t dot = line.find('.'), eq = line.find('=');
		if (dot == std::string::npos || eq == std::string::npos || eq < dot)
			continue;
		lrx_override &o = out[n++];
		std::snprintf(o.section, sizeof(o.section), "%s",
			      line.substr(0, dot).c_str());
		std::snprintf(o.key, sizeof(o.key), "%s",
			      line.substr(dot + 1, eq - dot - 1).c_str());
		std::snprintf(o.value, sizeof(o.value), "%s",
			      line.substr(eq + 1).c_str());
		std::snprintf(o.origin, sizeof(o.origin), "--set");
	}
	return n;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_config");
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string input(reinterpret_cast<const char *>(data), size);
	size_t nul = input.find('\0');
	std::string text = input.substr(0, nul);
	lrx_override overrides[8];
	unsigned n_overrides = 0;
	if (nul != std::string::npos)
		n_overrides = parse_overrides(input.data() + nul + 1,
					      input.data() + input.size(),
					      overrides, 8);
	char err[512];
	err[0] = '\0';
	std::memset(&conf, 0, sizeof(conf));
	int rc = lrx_config_load_string(&conf, text.c_str(), overrides,
					n_overrides, err, sizeof(err));
	if (rc != 0 && rc != -EINVAL && rc != -ENOENT)
		lrx_fuzz::fail("lrx_config_load_string returned %d (%s)", rc,
			       err);
	if (rc != 0 && err[0] == '\0')
		lrx_fuzz::fail("lrx_config_load_string failed (%d) without a message",
			       rc);
	if (rc == 0) {
		// a valid config is within the documented bounds
		if (conf.pipeline.burst < 1 || conf.pipeline.burst > LRX_BURST_MAX)
			lrx_fuzz::fail("accepted burst %u", conf.pipeline.burst);
		if (conf.pipeline.n_stages > LRX_PIPELINE_MAX_STAGES ||
		    conf.n_ports > LRX_MAX_PORTS || conf.n_lcores > LRX_MAX_LCORE_CONFS)
			lrx_fuzz::fail("accepted out-of-range counts");
		for (unsigned i = 0; i < conf.pipeline.n_stages; i++)
			if (conf.pipeline.stages[i].stage == nullptr)
				lrx_fuzz::fail("accepted stage %u without a descriptor", i);
		// walking the effective config must be safe
		size_t keys = 0;
		lrx_cfgfile_foreach(conf.cfg, [](void *arg, const char *s, const char *k,
					     const char *v) {
			(*static_cast<size_t *>(arg)) += std::strlen(s) +
							  std::strlen(k) + std::strlen(v);
		}, &keys);
	}
	lrx_config_free(&conf);
	return 0;
}
