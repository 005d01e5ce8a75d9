// SPDX-License-Identifier: BSD-3-Clause
// The XDP program's maps in the summary (JSON maps[], the text summary's
// short form) and telemetry /listrx/xdp/maps, as bpftool map dump. The
// kernel comparison of the same dump is in tests/xdp/test_xdp_kernel.cpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "run_binary.h"
#include "telemetry_client.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

std::string prog(const char *name)
{
	return std::string(LRX_XDP_PROGS_DIR) + "/" + name + ".bpf.o";
}

// "blocked_ports:1=0,2=0,...,n=0"
std::string many_ports(unsigned n)
{
	std::string s = "blocked_ports:";
	for (unsigned p = 1; p <= n; p++)
		s += (p > 1 ? "," : "") + std::to_string(p) + "=0";
	return s;
}

} // namespace

TEST_CASE("XDP maps in the summary: every entry in the JSON, counts of the frames sent",
	  "[binary][xdp][maps]")
{
	std::string js = lrx_test::scratch_path("maps.json");
	// two ports: UDP (mixed, IPv4 and IPv6) and TCP frames
	auto r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			      "--file-prefix", lrx_test::file_prefix("maps"), "--vdev",
			      "net_synth0,profile=mixed,ipv6_share=0.2", "--vdev",
			      "net_synth1,profile=tcp-stream", "--", "--packets", "20000",
			      "--stats-period", "0", "--xdp-prog", prog("xdp_proto_count"), "--json", js});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = json::parse(lrx_test::read_file(js));
	REQUIRE(s["maps"].size() == 1);
	const json &m = s["maps"][0];
	CHECK(m["name"] == "proto_count");
	CHECK(m["type"] == "array");
	CHECK(m["key_size"] == 4);
	CHECK(m["value_size"] == 8);
	REQUIRE(m["entries"].size() == 256); // an array: every index, as bpftool
	uint64_t sum = 0, udp = 0, tcp = 0;
	for (size_t i = 0; i < m["entries"].size(); i++) {
		const json &e = m["entries"][i];
		CHECK(e["key_int"] == i);
		sum += e["value_int"].get<uint64_t>();
		if (i == 17)
			udp = e["value_int"];
		if (i == 6)
			tcp = e["value_int"];
	}
	CHECK(m["entries"][17]["key"] == "11 00 00 00");
	// decoded by the object's BTF (__u32 key, __u64 value), as bpftool -j
	CHECK(m["entries"][17]["formatted"] == json{{"key", 17}, {"value", udp}});
	// every frame counted once, by its protocol: port 0 sends UDP, port 1 TCP
	CHECK(sum == s["rx_packets"].get<uint64_t>());
	CHECK(udp == s["ports"][0]["queues"][0]["rx_packets"].get<uint64_t>());
	CHECK(tcp == s["ports"][1]["queues"][0]["rx_packets"].get<uint64_t>());
	// the text: non-zero entries only
	CHECK(r.out.find("xdp proto_count (lcore ") != std::string::npos);
	CHECK(r.out.find("(254 zero, not shown)") != std::string::npos);
	// in columns: the key and the value as numbers (BTF), exact
	CHECK(r.out.find("(254 zero, not shown)\n        key     value\n") != std::string::npos);
	CHECK(r.out.find("\n         17 " + std::string(9 - std::to_string(udp).size(), ' ') +
			 std::to_string(udp) + "\n") != std::string::npos);
}

TEST_CASE("XDP maps: the text summary shows at most 16 entries of a map, the JSON all",
	  "[binary][xdp][maps]")
{
	std::string js = lrx_test::scratch_path("maps-many.json");
	auto r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			      "--file-prefix", lrx_test::file_prefix("maps-many"), "--vdev",
			      "net_synth0,profile=udp64", "--", "--packets", "1000", "--stats-period",
			      "0", "--xdp-prog", prog("xdp_port_filter"), "--set",
			      "stage.xdp.map_init=" + many_ports(20), "--json", js});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = json::parse(lrx_test::read_file(js));
	REQUIRE(s["maps"].size() == 2);
	const json *blocked = nullptr;
	for (const auto &m : s["maps"])
		if (m["name"] == "blocked_ports")
			blocked = &m;
	REQUIRE(blocked != nullptr);
	CHECK((*blocked)["type"] == "hash");
	CHECK((*blocked)["entries"].size() == 20);
	CHECK(r.out.find("xdp blocked_ports (lcore ") != std::string::npos);
	CHECK(r.out.find("  ... 4 more\n") != std::string::npos);
}

TEST_CASE("XDP maps: telemetry /listrx/xdp/maps while running", "[binary][xdp][maps]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	std::string prefix = lrx_test::file_prefix("maps-tel");
	int pid = lrx_test::spawn_program({listrx_bin(), "--no-huge", "--no-pci", "-m", "256",
					   "--file-prefix", prefix, "--vdev",
					   "net_synth0,profile=udp64", "--", "--duration", "6",
					   "--stats-period", "0", "--xdp-prog", prog("xdp_proto_count")},
					  "/dev/null");
	REQUIRE(pid > 0);
	std::string out;
	for (int attempt = 0; attempt < 40 && out.find("proto_count") == std::string::npos;
	     attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(150));
		out = lrx_test::telemetry_query(prefix, {"/listrx/xdp/maps"});
	}
	kill(pid, SIGINT);
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	INFO(out);
	CHECK(out.find("\"/listrx/xdp/maps\"") != std::string::npos);
	CHECK(out.find("_xdp_proto_count\": [\"array key 4 value 8 max_entries 256 entries 256\"") !=
	      std::string::npos);
	// KEY: VALUE, decoded by the object's BTF
	CHECK(out.find("\"17: ") != std::string::npos);
}

namespace {

// The value of key in map's /listrx/xdp/maps list ("KEY: VALUE" lines of
// the first lcore's copy); -1 when the key is not listed.
long long tel_map_value(const json &maps, const std::string &map, const std::string &key)
{
	for (auto it = maps.begin(); maps.is_object() && it != maps.end(); ++it) {
		const std::string name = it.key();
		if (name.size() < map.size() || name.compare(name.size() - map.size(), map.size(), map))
			continue;
		for (const auto &line : it.value()) {
			const std::string l = line.get<std::string>();
			if (l.rfind(key + ": ", 0) == 0)
				return std::stoll(l.substr(key.size() + 2));
		}
		return -1;
	}
	return -1;
}

json tel_one(const std::string &prefix, const std::string &command)
{
	std::string cmd = command.substr(0, command.find(','));
	return lrx_test::telemetry_reply(lrx_test::telemetry_query(prefix, {command}), cmd);
}

} // namespace

// bpftool map update / delete while the run goes: xdp_port_filter drops
// the UDP ports that are keys of blocked_ports; the synth stream goes to
// port 9. Nothing is blocked at the start; after map_update 9 the frames
// are dropped, after map_delete 9 they pass again.
TEST_CASE("XDP maps: telemetry map_update and map_delete change the verdicts while running",
	  "[binary][xdp][maps][map_write]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	const std::string prefix = lrx_test::file_prefix("maps-write");
	const std::string js = lrx_test::scratch_path("maps-write.json");
	int pid = lrx_test::spawn_program({listrx_bin(), "--no-huge", "--no-pci", "-m", "256",
					   "--file-prefix", prefix, "--vdev",
					   "net_synth0,profile=udp64", "--", "--duration", "60",
					   "--stats-period", "0", "--xdp-prog", prog("xdp_port_filter"),
					   "--json", js},
					  "/dev/null");
	REQUIRE(pid > 0);
	json maps;
	for (int attempt = 0; attempt < 60 && tel_map_value(maps, "_xdp_filter_stats", "0") <= 0;
	     attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(150));
		maps = tel_one(prefix, "/listrx/xdp/maps");
	}
	INFO(maps.dump());
	CHECK(tel_map_value(maps, "_xdp_filter_stats", "0") > 0); // passed
	CHECK(tel_map_value(maps, "_xdp_filter_stats", "1") == -1); // none dropped (zero: not listed)
	CHECK(tel_map_value(maps, "_xdp_blocked_ports", "9") == -1);

	json up = tel_one(prefix, "/listrx/xdp/map_update,blocked_ports:9=0,noexist");
	INFO(up.dump());
	CHECK(up["result"] == "ok");
	CHECK(up["written"] == 1);
	json again = tel_one(prefix, "/listrx/xdp/map_update,blocked_ports:9=0,noexist");
	CHECK(again["result"] == "error");
	CHECK(again["error"] == "EEXIST");
	json bad = tel_one(prefix, "/listrx/xdp/map_update,blocked_ports:65536=0");
	CHECK(bad["error"] == "EINVAL");
	CHECK(bad["message"].get<std::string>().find("2-byte key") != std::string::npos);
	json missing = tel_one(prefix, "/listrx/xdp/map_delete,no_such_map:1");
	CHECK(missing["error"] == "ENOENT");

	for (int attempt = 0; attempt < 60 && tel_map_value(maps, "_xdp_filter_stats", "1") <= 0;
	     attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		maps = tel_one(prefix, "/listrx/xdp/maps");
	}
	INFO(maps.dump());
	const long long dropped = tel_map_value(maps, "_xdp_filter_stats", "1");
	CHECK(dropped > 0);
	// the program counts its hits in the entry it found: the new value
	CHECK(tel_map_value(maps, "_xdp_blocked_ports", "9") > 0);

	json del = tel_one(prefix, "/listrx/xdp/map_delete,blocked_ports:9");
	INFO(del.dump());
	CHECK(del["result"] == "ok");
	CHECK(tel_one(prefix, "/listrx/xdp/map_delete,blocked_ports:9")["error"] == "ENOENT");
	// the poll in progress at the delete may still drop; later ones pass
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	json a = tel_one(prefix, "/listrx/xdp/maps");
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	json b = tel_one(prefix, "/listrx/xdp/maps");
	INFO(a.dump() << "\n" << b.dump());
	CHECK(tel_map_value(a, "_xdp_blocked_ports", "9") == -1);
	CHECK(tel_map_value(a, "_xdp_filter_stats", "1") ==
	      tel_map_value(b, "_xdp_filter_stats", "1"));
	CHECK(tel_map_value(b, "_xdp_filter_stats", "0") > tel_map_value(a, "_xdp_filter_stats", "0"));
	kill(pid, SIGINT);
	REQUIRE(lrx_test::wait_program(pid, 30) == 0);

	// the summary: the stage's verdicts are the program's counts
	json s = json::parse(lrx_test::read_file(js));
	uint64_t stage_drop = 0, stage_pass = 0, prog_drop = 0, prog_pass = 0;
	for (const auto &st : s["stages"])
		if (st["name"] == "xdp") {
			stage_drop = st["counters"]["drop"].get<uint64_t>();
			stage_pass = st["counters"]["pass"].get<uint64_t>();
		}
	for (const auto &m : s["maps"]) {
		if (m["name"] == "blocked_ports")
			CHECK(m["entries"].empty());
		if (m["name"] != "filter_stats")
			continue;
		for (const auto &e : m["entries"])
			(e["key_int"] == 0 ? prog_pass : prog_drop) = e["value_int"].get<uint64_t>();
	}
	CHECK(stage_drop >= (uint64_t)dropped);
	CHECK(stage_drop == prog_drop);
	CHECK(stage_pass == prog_pass);
}

namespace {

// What one client saw of the run's end: replies with the data asked,
// refusals because the run was shutting down, and anything else.
struct StopTally {
	unsigned answered = 0, refused = 0, bad = 0;
	std::string first_bad;
};

// One reply to command: the data asked (a map write done, the maps
// dump, the totals) or the refusal of a run shutting down.
void tally_reply(const std::string &command, const std::string &out, StopTally &t)
{
	const std::string cmd = command.substr(0, command.find(','));
	json j = json::parse(out, nullptr, false);
	json r = !j.is_discarded() && j.is_object() && j.contains(cmd) ? j[cmd] : json();
	bool refused = r.is_object() && r.value("error", "") == "ESHUTDOWN" &&
		       r.value("message", "").find("shutting down") != std::string::npos;
	bool answered = r.is_object() &&
			(cmd.find("/map_") != std::string::npos ? r.value("result", "") == "ok"
			 : cmd == "/listrx/stats"		 ? r.contains("rx_packets")
								 : r.contains("0_xdp_blocked_ports") ||
								   r.contains("1_xdp_blocked_ports"));
	t.answered += answered;
	t.refused += refused;
	if (!answered && !refused && t.bad++ == 0)
		t.first_bad = command + " -> " + out;
}

} // namespace

// The run's end frees the ports, pipelines and maps that telemetry's
// commands read, while rte_telemetry's threads keep serving clients until
// the process exits: clients that read and write the maps in a loop
// while SIGINT stops the binary get data, or a refusal saying it is
// shutting down, never a read of freed memory (the sanitizer build runs
// this too: ASan/UBSan abort the binary on one).
TEST_CASE("XDP maps: telemetry map reads and writes while SIGINT stops the binary",
	  "[binary][xdp][maps][map_write]")
{
	const std::string prefix = lrx_test::file_prefix("maps-stop");
	const std::string out = lrx_test::scratch_path("maps-stop.out");
	const std::string js = lrx_test::scratch_path("maps-stop.json");
	int pid = lrx_test::spawn_program({listrx_bin(), "--no-huge", "--no-pci", "-m", "256",
					   "--file-prefix", prefix, "--vdev",
					   "net_synth0,profile=udp64", "--", "--duration", "60",
					   "--stats-period", "0", "--xdp-prog", prog("xdp_port_filter"),
					   "--json", js},
					  out);
	REQUIRE(pid > 0);
	bool up = false;
	for (int attempt = 0; attempt < 100 && !up; attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		lrx_test::TelemetrySocket s(prefix);
		up = s.ask("/listrx/xdp/maps").find("_xdp_blocked_ports") != std::string::npos;
	}
	REQUIRE(up);
	constexpr unsigned clients = 4;
	std::vector<StopTally> tally(clients);
	std::vector<std::thread> threads;
	for (unsigned c = 0; c < clients; c++)
		threads.emplace_back([&, c] {
			lrx_test::TelemetrySocket s(prefix);
			const std::string key = "blocked_ports:" + std::to_string(1000 + c);
			const std::string commands[] = {"/listrx/xdp/map_update," + key + "=7",
							"/listrx/xdp/maps",
							"/listrx/xdp/map_delete," + key, "/listrx/stats"};
			for (unsigned i = 0; s.connected(); i++) {
				const std::string &command = commands[i % 4];
				std::string reply = s.ask(command);
				if (!reply.empty())
					tally_reply(command, reply, tally[c]);
			}
		});
	std::this_thread::sleep_for(std::chrono::milliseconds(500));
	kill(pid, SIGINT);
	const int status = lrx_test::wait_program(pid, 60);
	for (auto &t : threads)
		t.join();
	const std::string text = lrx_test::read_file(out);
	INFO(text);
	StopTally all;
	for (const auto &t : tally) {
		all.answered += t.answered;
		all.refused += t.refused;
		all.bad += t.bad;
		if (all.first_bad.empty())
			all.first_bad = t.first_bad;
	}
	INFO("answered " << all.answered << ", refused " << all.refused << ", other "
			 << all.bad << ": " << all.first_bad);
	CHECK(status == 0);
	CHECK(text.find("mbufs in use at exit: 0\n") != std::string::npos);
	CHECK(all.answered > 0);
	CHECK(all.bad == 0);
	// the clients were asking when the run shut its commands: some asked
	// after (the binary takes milliseconds to free and exit)
	CHECK(all.refused > 0);
	unlink(out.c_str());
	unlink(js.c_str());
}
