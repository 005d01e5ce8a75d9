// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>

extern "C" {
#include "json.h"
}

static std::string render(bool pretty, void (*fn)(lrx_json *))
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	lrx_json j;
	lrx_json_init(&j, f, pretty);
	fn(&j);
	std::fclose(f);
	std::string s(buf, len);
	std::free(buf);
	return s;
}

TEST_CASE("json writer: nesting, commas, escaping, non-finite as null", "[json]")
{
	std::string s = render(false, [](lrx_json *j) {
		lrx_json_object_begin(j, nullptr);
		lrx_json_string(j, "name", "a\"b\\c\n\x01");
		lrx_json_u64(j, "n", 18446744073709551615ull);
		lrx_json_i64(j, "neg", -5);
		lrx_json_double(j, "half", 0.5);
		lrx_json_double(j, "nan", NAN);
		lrx_json_bool(j, "t", true);
		lrx_json_null(j, "none");
		lrx_json_array_begin(j, "list");
		lrx_json_u64(j, nullptr, 1);
		lrx_json_object_begin(j, nullptr);
		lrx_json_object_end(j);
		lrx_json_array_end(j);
		lrx_json_array_begin(j, "empty");
		lrx_json_array_end(j);
		lrx_json_object_end(j);
	});
	CHECK(s == "{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"n\":18446744073709551615,"
		   "\"neg\":-5,\"half\":0.5,\"nan\":null,\"t\":true,\"none\":null,"
		   "\"list\":[1,{}],\"empty\":[]}");
}

TEST_CASE("json writer: pretty output is the same document", "[json]")
{
	std::string s = render(true, [](lrx_json *j) {
		lrx_json_object_begin(j, nullptr);
		lrx_json_u64(j, "a", 1);
		lrx_json_array_begin(j, "b");
		lrx_json_u64(j, nullptr, 2);
		lrx_json_array_end(j);
		lrx_json_object_end(j);
	});
	CHECK(s == "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n");
}
