// SPDX-License-Identifier: BSD-3-Clause
// The command line: one option table gives getopt's table, --help and the
// config key each option sets (app/options.c).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "options.h"
}

namespace {

std::string help_text()
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	lrx_options_usage(f);
	fclose(f);
	std::string s(buf, len);
	free(buf);
	return s;
}

// parses "listrx" + args; 0 or the parser's error
int parse(std::vector<std::string> args, lrx_options *o)
{
	args.insert(args.begin(), "listrx");
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(&a[0]);
	*o = lrx_options{};
	return lrx_options_parse((int)argv.size(), argv.data(), o);
}

} // namespace

TEST_CASE("every option is in --help and in docs/usage.md", "[options]")
{
	const char *src = std::getenv("LISTRX_SOURCE_ROOT");
	REQUIRE(src);
	std::ifstream f(std::string(src) + "/docs/usage.md");
	REQUIRE(f.good());
	std::stringstream doc;
	doc << f.rdbuf();
	const std::string help = help_text();
	unsigned n = 0;
	for (; lrx_option_name(n); n++) {
		std::string opt = std::string("--") + lrx_option_name(n);
		INFO(opt);
		CHECK(help.find("  " + opt) != std::string::npos);
		CHECK(doc.str().find(opt) != std::string::npos);
	}
	CHECK(n > 20); // the table and the stages' options (--xdp-*)
}

TEST_CASE("every option sets a config key the config reads", "[options]")
{
	for (unsigned i = 0; lrx_option_name(i); i++) {
		std::string opt = std::string("--") + lrx_option_name(i);
		INFO(opt);
		lrx_options o;
		// a flag alone, else with a value (--set's is SECTION.KEY=VALUE)
		if (parse({opt}, &o) != 0 && parse({opt, "1"}, &o) != 0)
			REQUIRE(parse({opt, "run.packets=1"}, &o) == 0);
		for (unsigned k = 0; k < o.n_overrides; k++) {
			CHECK(o.overrides[k].origin == opt);
			lrx_config conf;
			char err[2048] = "";
			lrx_config_load_string(&conf, "", o.overrides, o.n_overrides, err,
					       sizeof(err));
			lrx_config_free(&conf);
			INFO(err);
			CHECK(std::string(err).find("unknown key") == std::string::npos);
			CHECK(std::string(err).find("unknown section") == std::string::npos);
		}
	}
	lrx_options o;
	REQUIRE(parse({"--burst", "32", "--xdp-jit", "0", "--pmu"}, &o) == 0);
	REQUIRE(o.n_overrides == 3);
	CHECK(std::string(o.overrides[0].section) + "." + o.overrides[0].key + "=" +
		      o.overrides[0].value == "pipeline.burst=32");
	CHECK(std::string(o.overrides[1].section) + "." + o.overrides[1].key == "xdp.jit");
	CHECK(std::string(o.overrides[2].value) == "default"); // --pmu without EVENTS
	CHECK(std::string(lrx_options_origin(&o, "pipeline", "burst")) == "--burst");
}
