// SPDX-License-Identifier: BSD-3-Clause
// The test main's listener (catch2_main.cpp): a test case that ends with
// no assertion and no SKIPPED fails its binary. This binary holds one such
// case; meson expects it to fail (should_fail).
#include <catch2/catch.hpp>

TEST_CASE("a test case that checks nothing", "[listener]")
{
	const int nothing_checked = 0;
	(void)nothing_checked;
}
