// SPDX-License-Identifier: BSD-3-Clause
// The value layer (lib/value.h): one grammar for every value listrx reads.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <string>

extern "C" {
#include "value.h"
}

namespace {

std::string valid_of(const lrx_value_type &t)
{
	char buf[256];
	lrx_value_valid(&t, buf, sizeof(buf));
	return buf;
}

} // namespace

TEST_CASE("integers: decimal only, no sign, blank or leading zero", "[value]")
{
	uint64_t v = 7;
	for (const char *bad : {"", "010", "00", "+5", "-1", " 5", "5 ", "\t5", "0x10", "1e3",
				"5a", "18446744073709551616"}) {
		INFO("'" << bad << "'");
		CHECK(lrx_value_uint(bad, 0, UINT64_MAX, &v) == -EINVAL);
	}
	CHECK(v == 7);
	CHECK(lrx_value_uint("0", 0, 10, &v) == 0);
	CHECK(v == 0);
	CHECK(lrx_value_uint("18446744073709551615", 0, UINT64_MAX, &v) == 0);
	CHECK(v == UINT64_MAX);
	CHECK(lrx_value_uint("11", 0, 10, &v) == -EINVAL);
	CHECK(lrx_value_uint("4", 5, 10, &v) == -EINVAL);
}

TEST_CASE("numbers, yes/no, choices and flags", "[value]")
{
	double d = 0;
	for (const char *bad : {"", "0x10", "0x0.1p0", "nan", "inf", "-1", " 1", "+1", "1.5x"})
		CHECK(lrx_value_double(bad, -10, 10, &d) == -EINVAL);
	CHECK(lrx_value_double("2e0", 0, 10, &d) == 0);
	CHECK(d == 2.0);
	CHECK(lrx_value_double(".5", 0, 1, &d) == 0);
	bool b = false;
	for (const char *yes : {"yes", "YES", "on", "true", "1"}) {
		b = false;
		CHECK(lrx_value_bool(yes, &b) == 0);
		CHECK(b);
	}
	for (const char *no : {"no", "off", "False", "0"}) {
		b = true;
		CHECK(lrx_value_bool(no, &b) == 0);
		CHECK_FALSE(b);
	}
	CHECK(lrx_value_bool("maybe", &b) == -EINVAL);
	CHECK(lrx_value_bool(" yes", &b) == -EINVAL);
	static const char *const choices[] = {"tsc", "polls", nullptr};
	unsigned c = 9;
	CHECK(lrx_value_choice("polls", choices, &c) == 0);
	CHECK(c == 1);
	CHECK(lrx_value_choice("Polls", choices, &c) == -EINVAL);
	static const lrx_value_flag flags[] = {{"a", 1}, {"b", 2}, {"all", 3}, {"none", 0},
					       {nullptr, 0}};
	uint32_t bits = 0;
	CHECK(lrx_value_flags("a,b", flags, &bits) == 0);
	CHECK(bits == 3);
	CHECK(lrx_value_flags("a+b", flags, &bits) == 0); // a devarg's list
	CHECK(lrx_value_flags("[b,a]", flags, &bits) == 0); // rte_kvargs' list
	CHECK(bits == 3);
	CHECK(lrx_value_flags("none", flags, &bits) == 0);
	CHECK(bits == 0);
	for (const char *bad : {"", "a,", ",a", "a,,b", "c", "a,c"})
		CHECK(lrx_value_flags(bad, flags, &bits) == -EINVAL);
}

TEST_CASE("port sets: one list grammar everywhere", "[value]")
{
	static lrx_port_set s;
	CHECK(lrx_value_ports("53, 8000-8002,65535", &s) == 0);
	CHECK_FALSE(s.any);
	CHECK(lrx_port_set_has(&s, 53));
	CHECK(lrx_port_set_has(&s, 8001));
	CHECK(lrx_port_set_has(&s, 65535));
	CHECK_FALSE(lrx_port_set_has(&s, 54));
	CHECK_FALSE(lrx_port_set_has(&s, 8003));
	CHECK(lrx_value_ports("any", &s) == 0);
	CHECK(s.any);
	CHECK(lrx_value_ports("none", &s) == 0);
	CHECK_FALSE(s.any);
	CHECK_FALSE(lrx_port_set_has(&s, 53));
	for (const char *bad : {"", "53,", ",53", "53,,54", "70000", "9-3", "1-", "-1", "+53",
				"053", "0x35", "53 54"}) {
		INFO("'" << bad << "'");
		CHECK(lrx_value_ports(bad, &s) == -EINVAL);
	}
}

TEST_CASE("MAC and addresses", "[value]")
{
	uint8_t mac[6];
	CHECK(lrx_value_mac("02:00:0a:FF:0:1", mac) == 0);
	CHECK(mac[2] == 0x0a);
	CHECK(mac[3] == 0xff);
	CHECK(mac[4] == 0);
	for (const char *bad : {"", "02:00", "02:00:00:00:00:00:00", "002:00:00:00:00:00",
				"0g:00:00:00:00:00", "02-00-00-00-00-00", "02:00:00:00:00:00 "})
		CHECK(lrx_value_mac(bad, mac) == -EINVAL);
	uint8_t a[16];
	unsigned plen = 0;
	CHECK(lrx_value_addr("10.0.0.2/24", AF_INET, a, &plen) == 0);
	CHECK(plen == 24);
	CHECK(a[3] == 2);
	CHECK(lrx_value_addr("10.0.0.2", AF_INET, a, &plen) == 0);
	CHECK(plen == 32);
	CHECK(lrx_value_addr("ff02::1", AF_INET6, a, nullptr) == 0);
	for (const char *bad : {"10.0.0.2/33", "10.0.0.2/", "10.0.0.2/024", "10.0.0.300", "ten"})
		CHECK(lrx_value_addr(bad, AF_INET, a, &plen) == -EINVAL);
	CHECK(lrx_value_addr("10.0.0.2/24", AF_INET, a, nullptr) == -EINVAL); // no prefix wanted
}

TEST_CASE("one message format: what is valid, said the same way", "[value]")
{
	lrx_value_type u{};
	u.kind = LRX_VALUE_UINT;
	u.min = 1;
	u.max = 512;
	CHECK(valid_of(u) == "an integer in 1..512");
	lrx_value_type d{};
	d.kind = LRX_VALUE_DOUBLE;
	d.fmax = 1;
	CHECK(valid_of(d) == "a number in 0..1");
	lrx_value_type b{};
	b.kind = LRX_VALUE_BOOL;
	CHECK(valid_of(b) == "yes/no, true/false, on/off or 1/0");
	static const char *const choices[] = {"off", "counters", "cycles", nullptr};
	lrx_value_type c{};
	c.kind = LRX_VALUE_CHOICE;
	c.choices = choices;
	CHECK(valid_of(c) == "one of off, counters, cycles");
}

namespace {
struct Conf {
	uint16_t burst;
	bool on;
	char name[8];
};
const lrx_value_key conf_keys[] = {
	{"burst", "64", "packets per poll", {LRX_VALUE_UINT, sizeof(uint16_t), 1, 512},
	 offsetof(Conf, burst)},
	{"on", "no", "switch", {LRX_VALUE_BOOL, sizeof(bool)}, offsetof(Conf, on)},
	{"name", "x", "name", {LRX_VALUE_STRING, sizeof(Conf::name)}, offsetof(Conf, name)},
	{nullptr, nullptr, nullptr, {}, 0},
};
} // namespace

TEST_CASE("a key table fills a typed struct, defaults first", "[value]")
{
	Conf conf{};
	const char *bad = nullptr;
	REQUIRE(lrx_value_keys_default(conf_keys, &conf, &bad) == 0);
	CHECK(conf.burst == 64);
	CHECK_FALSE(conf.on);
	CHECK(std::string(conf.name) == "x");
	char valid[128];
	const lrx_value_key *k = lrx_value_key_find(conf_keys, "burst");
	REQUIRE(k);
	CHECK(lrx_value_key_set(k, &conf, "32", valid, sizeof(valid)) == 0);
	CHECK(conf.burst == 32);
	CHECK(lrx_value_key_set(k, &conf, "513", valid, sizeof(valid)) == -EINVAL);
	CHECK(std::string(valid) == "an integer in 1..512");
	CHECK(conf.burst == 32); // a refused value leaves the field
	k = lrx_value_key_find(conf_keys, "name");
	CHECK(lrx_value_key_set(k, &conf, "12345678", valid, sizeof(valid)) == -EINVAL);
	CHECK(std::string(valid) == "at most 7 characters");
	CHECK(lrx_value_key_find(conf_keys, "nosuch") == nullptr);
	lrx_value_key_names(conf_keys, valid, sizeof(valid));
	CHECK(std::string(valid) == "burst, on, name");
}
