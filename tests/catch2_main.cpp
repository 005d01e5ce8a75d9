// SPDX-License-Identifier: BSD-3-Clause
// The Catch2 main of every test binary. A test that cannot run here (not
// root, no network namespace, a tool missing) says WARN("SKIPPED: why") and
// returns; when every test case a binary ran did that, the binary exits 77,
// so that `meson test` shows SKIP, not OK: a skipped test is never reported
// as a pass. When only some skipped, the others decide, and the count of
// skipped cases is printed. A test case that ends with no assertion and no
// SKIPPED checked nothing: it fails the binary (a test that cannot fail is
// a defect).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int cases_run = 0, cases_skipped = 0;
bool this_case_skipped = false;
std::vector<std::string> cases_empty; // no assertion, no SKIPPED

struct SkipCounter : Catch::TestEventListenerBase {
	using TestEventListenerBase::TestEventListenerBase;

	void testCaseStarting(Catch::TestCaseInfo const &info) override
	{
		TestEventListenerBase::testCaseStarting(info);
		this_case_skipped = false;
	}

	bool assertionEnded(Catch::AssertionStats const &stats) override
	{
		const Catch::AssertionResult &r = stats.assertionResult;
		if (r.getResultType() == Catch::ResultWas::Warning &&
		    r.getMessage().rfind("SKIPPED:", 0) == 0)
			this_case_skipped = true;
		return true;
	}

	void testCaseEnded(Catch::TestCaseStats const &stats) override
	{
		TestEventListenerBase::testCaseEnded(stats);
		cases_run++;
		cases_skipped += this_case_skipped;
		if (!this_case_skipped && stats.totals.assertions.total() == 0)
			cases_empty.push_back(stats.testInfo.name);
	}
};

} // namespace

CATCH_REGISTER_LISTENER(SkipCounter)

int main(int argc, char **argv)
{
	int rc = Catch::Session().run(argc, argv);

	if (cases_skipped > 0)
		std::fprintf(stderr, "%d of %d test case(s) skipped (reasons above)\n",
			     cases_skipped, cases_run);
	for (const std::string &name : cases_empty)
		std::fprintf(stderr, "FAILED: test case \"%s\" ended with no assertion and no SKIPPED\n",
			     name.c_str());
	if (!cases_empty.empty())
		return 1;
	if (rc == 0 && cases_run > 0 && cases_skipped == cases_run)
		return 77; // meson's "skipped"
	return rc;
}
