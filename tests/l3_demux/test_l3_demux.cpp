// SPDX-License-Identifier: BSD-3-Clause
// l3-demux: the malformed-packet verdict table (each kernel check, IPv4 and
// IPv6: the exact drop reason and SNMP counters), valid frames to the
// right handler, checksum hints, padding trim, sublists and route hints,
// per-packet vs burst equivalence (indirect and direct dispatch), and
// configuration errors.
#include <catch2/catch.hpp>

#include <array>
#include <functional>
#include <string>
#include <vector>
#include <random>

#include "frames.h"
#include "stage_harness.h"
#include "test_eal.h"

extern "C" {
#include "build_meta/build_meta.h"
#include "l3_demux/l3_demux.h"
#include "meta.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	return mbuf_pool("l3_pool", 8191, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
}

const StageInstance::Keys bm_keys = {{"host_mac", "02:00:00:00:00:02"}};
// the receive checks alone: the replies the kernel would send are
// switched off here and tested in test_reply.cpp
const StageInstance::Keys l3_keys = {
	{"local_ipv4", "10.0.0.2"},     {"local_ipv6", "2001:db8::2"},
	{"udp_ports", "2000,5000-5010"}, {"tcp_ports", "2000"},
	{"arp_ip", "10.0.0.2"},         {"arp_mac", "02:00:00:00:00:02"},
	{"icmp_echo", "deliver"},       {"icmp_timestamp", "deliver"},
	{"icmp_unreach", "none"},       {"icmp_param_prob", "none"},
	{"tcp_rst", "none"},            {"tcp_synack", "none"},
};

bool is_snmp(const std::string &name)
{
	return !name.empty() && std::isupper((unsigned char)name[0]);
}

struct Row {
	const char *name;
	std::function<Frame()> frame;
	lrx_next_t expect;
	std::map<std::string, uint64_t> snmp; // every nonzero SNMP counter
	uint64_t ol_flags = 0;
	StageInstance::Keys keys = {};        // on top of l3_keys
};

lrx_next_t drop(lrx_drop_reason r) { return lrx_next_drop(r); }

const std::map<std::string, uint64_t> v6_udp_ok = {
	{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Udp6InDatagrams", 1}};

// udp6() with extension headers between the fixed header and UDP.
Frame ext6(uint8_t first_type, const std::vector<uint8_t> &ext)
{
	return ip6_insert_ext(udp6(), first_type, ext);
}

const std::map<std::string, uint64_t> v4_udp_ok = {
	{"IpInReceives", 1}, {"IpInDelivers", 1}, {"UdpInDatagrams", 1}};

std::vector<Row> verdict_table()
{
	const auto D = LRX_NEXT_DELIVER_V;
	return {
		// ---- IPv4: ip_rcv_core
		{"v4 udp ok", [] { return udp4(); }, D, v4_udp_ok},
		{"v4 tcp ok", [] { return tcp4(); }, D,
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"TcpInSegs", 1}}},
		{"v4 icmp echo", [] { return with([](Spec &s) { s.l4 = L4::icmp; }); }, D,
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IcmpInMsgs", 1},
		  {"IcmpInEchos", 1}}},
		// VLAN tags with no VLAN device (__netif_receive_skb_core):
		// VID 0 is a priority tag, any other makes the packet
		// PACKET_OTHERHOST; a second tag after it is the protocol
		{"v4 priority tag udp ok", [] { return with([](Spec &s) { s.vlans = {0x6000}; }); },
		 D, v4_udp_ok},
		{"v4 two priority tags udp ok", [] { return with([](Spec &s) { s.vlans = {0, 0}; }); },
		 D, v4_udp_ok},
		{"v4 vlan without a device", [] { return with([](Spec &s) { s.vlans = {7}; }); },
		 drop(LRX_DROP_OTHERHOST), {}},
		{"v4 priority tag then a vlan without a device",
		 [] { return with([](Spec &s) { s.vlans = {0, 8}; }); }, drop(LRX_DROP_OTHERHOST), {}},
		{"v4 qinq without a device: no packet_type for the inner tag",
		 [] { return with([](Spec &s) { s.vlans = {7, 8}; }); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {}},
		{"v4 options ok", [] { return with([](Spec &s) {
			 s.ip4_options = {1, 1, 7, 7, 4, 0, 0, 0, 0}; }); }, D, v4_udp_ok},
		{"v4 full record route, timestamp, router alert ok", [] { return with([](Spec &s) {
			 s.ip4_options = {7, 7, 8, 0, 0, 0, 0, 68, 8, 9, 0x30, 0, 0, 0, 0,
					  148, 4, 0, 0}; }); }, D, v4_udp_ok},
		{"v4 record route pointer 3", [] { return with([](Spec &s) {
			 s.ip4_options = {7, 7, 3, 0, 0, 0, 0}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 two record routes", [] { return with([](Spec &s) {
			 s.ip4_options = {7, 3, 4, 7, 3, 4}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 timestamp overflow 15", [] { return with([](Spec &s) {
			 s.ip4_options = {68, 8, 9, 0xf0, 0, 0, 0, 0}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 router alert length 2", [] { return with([](Spec &s) {
			 s.ip4_options = {148, 2}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 CIPSO without a DOI", [] { return with([](Spec &s) {
			 s.ip4_options = {134, 8, 0, 0, 0, 1, 0, 0}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 loose source route, accept_source_route=no", [] { return with([](Spec &s) {
			 s.ip4_options = {131, 7, 4, 10, 0, 0, 9}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}}},
		{"v4 loose source route to this host, accept_source_route=yes",
		 [] { return with([](Spec &s) { s.ip4_options = {131, 7, 4, 10, 0, 0, 2}; }); },
		 D, v4_udp_ok, 0, {{"accept_source_route", "yes"}}},
		{"v4 strict source route onwards, accept_source_route=yes",
		 [] { return with([](Spec &s) { s.ip4_options = {137, 7, 4, 10, 0, 0, 9}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}}, 0,
		 {{"accept_source_route", "yes"}}},
		{"v4 bad option to another host: options before ip_error",
		 [] { return with([](Spec &s) { s.ip4_options = {148, 2};
					       s.ip4_dst = ip4(10, 0, 0, 99); }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"otherhost", [] { return with([](Spec &s) {
			 s.dst = {2, 0, 0, 0, 0, 9}; }); }, drop(LRX_DROP_OTHERHOST), {}},
		{"v4 shorter than a header", [] { return udp4().truncate(14 + 19); },
		 drop(LRX_DROP_IP_INHDR), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 version 5", [] { return udp4().ip4_version(5); },
		 drop(LRX_DROP_IP_INHDR), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 ihl 4", [] { return udp4().ip4_ihl(4); },
		 drop(LRX_DROP_IP_INHDR), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 ihl beyond frame", [] { return udp4().ip4_ihl(15); },
		 drop(LRX_DROP_IP_INHDR), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		{"v4 bad header checksum", [] { return udp4().ip4_corrupt_csum(); },
		 drop(LRX_DROP_IP_CSUM),
		 {{"IpInReceives", 1}, {"IpInHdrErrors", 1}, {"IpExtInCsumErrors", 1}}},
		{"v4 total length > frame", [] { return udp4().ip4_total_length(200); },
		 drop(LRX_DROP_PKT_TOO_SMALL),
		 {{"IpInReceives", 1}, {"IpExtInTruncatedPkts", 1}}},
		{"v4 total length < ihl", [] { return udp4().ip4_total_length(16); },
		 drop(LRX_DROP_IP_INHDR), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		// ---- ip_rcv_finish_core: route, options; ip_local_deliver
		{"martian source loopback (IP_LOCALNET since Linux 6.13)",
		 [] { return udp4().ip4_src(ip4(127, 0, 0, 1)); }, drop(LRX_DROP_IP_LOCALNET), {{"IpInReceives", 1}}},
		{"martian source multicast", [] { return udp4().ip4_src(ip4(224, 0, 0, 5)); },
		 drop(LRX_DROP_IP_INVALID_SOURCE), {{"IpInReceives", 1}}},
		{"martian source zeronet", [] { return udp4().ip4_src(ip4(0, 1, 2, 3)); },
		 drop(LRX_DROP_IP_INVALID_SOURCE), {{"IpInReceives", 1}}},
		{"martian destination zeronet", [] { return udp4().ip4_dst(ip4(0, 0, 0, 7)); },
		 drop(LRX_DROP_IP_INVALID_DEST), {{"IpInReceives", 1}}},
		{"martian destination loopback (IP_LOCALNET since Linux 6.13)",
		 [] { return udp4().ip4_dst(ip4(127, 0, 0, 1)); }, drop(LRX_DROP_IP_LOCALNET), {{"IpInReceives", 1}}},
		{"not a local address", [] { return udp4().ip4_dst(ip4(10, 0, 0, 99)); },
		 drop(LRX_DROP_IP_INADDRERRORS), {{"IpInReceives", 1}, {"IpInAddrErrors", 1}}},
		{"limited broadcast", [] { return with([](Spec &s) {
			 s.dst = mac_broadcast; s.ip4_dst = 0xffffffff; }); }, D,
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IpExtInBcastPkts", 1},
		  {"IpExtInBcastOctets", 46}, {"UdpInDatagrams", 1}}},
		{"bad option length", [] { return with([](Spec &s) {
			 s.ip4_options = {7, 40, 4, 0}; }); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}, {"IpInHdrErrors", 1}}},
		// held by ip_defrag until its queue completes or expires
		// (test_reasm.cpp)
		{"fragment", [] { return udp4().ip4_frag(0x2000); },
		 LRX_NEXT_CONSUMED_V, {{"IpInReceives", 1}, {"IpReasmReqds", 1}}},
		{"unknown protocol", [] { return udp4().ip4_proto(47); },
		 drop(LRX_DROP_IP_NOPROTO), {{"IpInReceives", 1}, {"IpInUnknownProtos", 1}}},
		// ---- L4 handlers
		{"udp bad checksum", [] { return udp4().l4_corrupt_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"UdpInCsumErrors", 1},
		  {"UdpInErrors", 1}}},
		{"udp length > packet", [] { return udp4().udp_length(100); },
		 drop(LRX_DROP_PKT_TOO_SMALL),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"UdpInErrors", 1}}},
		{"udp length < 8", [] { return udp4().udp_length(4); },
		 drop(LRX_DROP_PKT_TOO_SMALL),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"UdpInErrors", 1}}},
		{"udp no socket", [] { return udp4(1000, 3000); },
		 drop(LRX_DROP_NO_SOCKET),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"UdpNoPorts", 1}}},
		{"udp port in range", [] { return udp4(1000, 5005); }, D, v4_udp_ok},
		{"udp zero checksum (v4: none)", [] { return udp4().udp_zero_csum(); }, D,
		 v4_udp_ok},
		{"tcp doff 4", [] { return tcp4().tcp_doff(4); },
		 drop(LRX_DROP_PKT_TOO_SMALL),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"TcpInSegs", 1},
		  {"TcpInErrs", 1}}},
		{"tcp bad checksum", [] { return tcp4().l4_corrupt_csum(); },
		 drop(LRX_DROP_TCP_CSUM),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"TcpInSegs", 1},
		  {"TcpInErrs", 1}, {"TcpInCsumErrors", 1}}},
		{"tcp no socket", [] { return tcp4(TCP_SYN, 1000, 22); },
		 drop(LRX_DROP_NO_SOCKET),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"TcpInSegs", 1}}},
		{"icmp bad checksum", [] { return with([](Spec &s) { s.l4 = L4::icmp; })
						   .l4_corrupt_csum(); },
		 drop(LRX_DROP_ICMP_CSUM),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IcmpInMsgs", 1},
		  {"IcmpInErrors", 1}, {"IcmpInCsumErrors", 1}}},
		// ---- other ethertypes
		{"unknown ethertype", [] { return with([](Spec &s) {
			 s.l3 = L3::none; s.ethertype = 0x88b5; }); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {}},
		{"arp request for us", [] { return arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)); },
		 lrx_next_tx(0), {}},
		{"arp request for another", [] { return arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 3)); },
		 D, {}},
		{"arp truncated", [] { return arp_request(1, 2).truncate(14 + 20); },
		 drop(LRX_DROP_PKT_TOO_SMALL), {}},
		// ---- IPv6: ip6_rcv_core
		{"v6 udp ok", [] { return udp6(); }, D,
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Udp6InDatagrams", 1}}},
		{"v6 tcp ok", [] { return with([](Spec &s) { s.l3 = L3::ipv6; s.l4 = L4::tcp; }); }, D,
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"TcpInSegs", 1}}},
		{"v6 icmp echo", [] { return with([](Spec &s) { s.l3 = L3::ipv6; s.l4 = L4::icmp; }); }, D,
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Icmp6InMsgs", 1},
		  {"Icmp6InEchos", 1}}},
		{"v6 hop-by-hop ok", [] { return with([](Spec &s) {
			 s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; }); }, D,
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Udp6InDatagrams", 1}}},
		{"v6 shorter than a header", [] { return udp6().truncate(14 + 39); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 version 4", [] { return udp6().ip6_version(4); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 loopback source", [] { return udp6().ip6_src(ip6({0, 0, 0, 0, 0, 0, 0, 1})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 loopback destination", [] { return udp6().ip6_dst(ip6({0, 0, 0, 0, 0, 0, 0, 1})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 multicast source", [] { return udp6().ip6_src(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 interface-local multicast", [] { return udp6().ip6_dst(ip6({0xff01, 0, 0, 0, 0, 0, 0, 1})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 reserved-scope multicast", [] { return udp6().ip6_dst(ip6({0xff00, 0, 0, 0, 0, 0, 0, 1})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 link-local multicast delivered", [] { return udp6().ip6_dst(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1})); },
		 D, {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Ip6InMcastPkts", 1},
		     {"Ip6InMcastOctets", 66}, {"Udp6InDatagrams", 1}}},
		{"v6 payload length > frame", [] { return udp6().ip6_payload_length(300); },
		 drop(LRX_DROP_PKT_TOO_SMALL), {{"Ip6InReceives", 1}, {"Ip6InTruncatedPkts", 1}}},
		{"v6 bad hop-by-hop option", [] {
			 Frame f = with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; });
			 return f.set_u8(f.l2_len + 40 + 3, 9); }, // PadN longer than header
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 unknown discard option", [] {
			 Frame f = with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; });
			 return f.set_u8(f.l2_len + 40 + 2, 0x47); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		// ip6_parse_tlv's rules for hop-by-hop as for destination
		// options, and the hop-by-hop options the kernel knows
		{"v6 hop-by-hop 8 bytes of padding", [] {
			 return ip6_insert_ext(udp6(), 0,
					       ip6_ext(17, {1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 hop-by-hop PadN data not zero", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {1, 4, 0, 1, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 hop-by-hop 9 options", [] {
			 return ip6_insert_ext(udp6(), 0,
					       ip6_ext(17, {0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0,
							    0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0, 1, 2, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 hop-by-hop router alert length 3", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {5, 3, 0, 0, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 hop-by-hop IOAM not 4n-aligned", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {0x31, 4, 0, 0, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 hop-by-hop IOAM aligned (ioam6_enabled off: ignored)", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {0, 0, 0x31, 2, 0, 0})); },
		 D, v6_udp_ok},
		{"v6 hop-by-hop jumbo of a small packet", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {0xc2, 4, 0, 0, 0, 40}))
				 .ip6_payload_length(0); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 hop-by-hop CALIPSO (no DOI)", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {7, 4, 0, 0, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 payload length 0 with hop-by-hop and no jumbo: the frame's length", [] {
			 return ip6_insert_ext(udp6(), 0, ip6_ext(17, {1, 4, 0, 0, 0, 0}))
				 .ip6_payload_length(0); },
		 D, v6_udp_ok},
		{"v6 not a local address", [] { return udp6().ip6_dst(ip6_doc(99)); },
		 drop(LRX_DROP_IP_INADDRERRORS), {{"Ip6InReceives", 1}, {"Ip6InAddrErrors", 1}}},
		{"v6 fragment", [] { return udp6().ip6_next_header(44); },
		 LRX_NEXT_CONSUMED_V, {{"Ip6InReceives", 1}, {"Ip6ReasmReqds", 1}}},
		{"v6 unknown next header", [] { return udp6().ip6_next_header(253); },
		 drop(LRX_DROP_IP_NOPROTO), {{"Ip6InReceives", 1}, {"Ip6InUnknownProtos", 1}}},
		// ---- IPv6 extension headers (ip6_protocol_deliver_rcu, exthdrs.c)
		{"v6 no next header (dst_discard: delivered)",
		 [] { return udp6().ip6_next_header(59); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}}},
		{"v6 dstopts PadN", [] { return ext6(60, ip6_ext(17, {1, 4, 0, 0, 0, 0})); }, D,
		 v6_udp_ok},
		{"v6 dstopts 6 x Pad1", [] { return ext6(60, ip6_ext(17, {0, 0, 0, 0, 0, 0})); },
		 D, v6_udp_ok},
		{"v6 dstopts 8 bytes of padding", [] {
			 return ext6(60, ip6_ext(17, {1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts PadN data not zero", [] {
			 return ext6(60, ip6_ext(17, {1, 4, 0, 1, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts unknown option 00 (skip)", [] {
			 return ext6(60, ip6_ext(17, {0x1e, 2, 0, 0, 1, 0})); }, D, v6_udp_ok},
		{"v6 dstopts unknown option 01 (discard)", [] {
			 return ext6(60, ip6_ext(17, {0x5e, 2, 0, 0, 1, 0})); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts unknown option 10 (discard + ICMP)", [] {
			 return ext6(60, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0})); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts unknown option 11 (discard + ICMP unless mcast)", [] {
			 return ext6(60, ip6_ext(17, {0xde, 2, 0, 0, 1, 0})); },
		 drop(LRX_DROP_UNHANDLED_PROTO), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts option past the header", [] {
			 return ext6(60, ip6_ext(17, {0x1e, 9, 0, 0, 0, 0})); },
		 drop(LRX_DROP_IP_INHDR), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts truncated", [] {
			 Frame f = ext6(60, {17, 1, 1, 4, 0, 0, 0, 0});
			 return f.ip6_payload_length(8).truncate(f.l2_len + 48u); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 dstopts then no next header", [] {
			 return ext6(60, ip6_ext(59, {1, 4, 0, 0, 0, 0})); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}}},
		{"v6 hop-by-hop after dstopts", [] {
			 std::vector<uint8_t> e = ip6_ext(0, {1, 4, 0, 0, 0, 0});
			 std::vector<uint8_t> h = ip6_ext(17, {1, 4, 0, 0, 0, 0});
			 e.insert(e.end(), h.begin(), h.end());
			 return ext6(60, e); },
		 drop(LRX_DROP_IP_NOPROTO), {{"Ip6InReceives", 1}, {"Ip6InUnknownProtos", 1}}},
		{"v6 chain of 6 dstopts", [] {
			 std::vector<uint8_t> e;
			 for (int i = 0; i < 6; i++) {
				 std::vector<uint8_t> h = ip6_ext(i == 5 ? 17 : 60, {1, 4, 0, 0, 0, 0});
				 e.insert(e.end(), h.begin(), h.end());
			 }
			 return ext6(60, e); }, D, v6_udp_ok},
		{"v6 routing type 0, segments left 0 (skipped)", [] {
			 return ext6(43, ip6_ext(17, {0, 0, 0, 0, 0, 0})); }, D, v6_udp_ok},
		{"v6 routing type 0, segments left 1 (unknown_rh)", [] {
			 return ext6(43, ip6_ext(17, {0, 1, 0, 0, 0, 0})); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 routing type 2, segments left 0", [] {
			 return ext6(43, ip6_ext(17, {2, 0, 0, 0, 0, 0})); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}, {"Ip6InAddrErrors", 1}}},
		{"v6 routing type 4 (seg6_enabled off)", [] {
			 return ext6(43, ip6_ext(17, {4, 0, 0, 0, 0, 0})); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}}},
		{"v6 routing type 3 (rpl_seg_enabled off)", [] {
			 return ext6(43, ip6_ext(17, {3, 0, 0, 0, 0, 0})); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}}},
		{"v6 udp zero checksum", [] { return udp6().udp_zero_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Udp6InCsumErrors", 1},
		  {"Udp6InErrors", 1}}},
		{"v6 udp bad checksum", [] { return udp6().l4_corrupt_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Udp6InCsumErrors", 1},
		  {"Udp6InErrors", 1}}},
		{"v6 icmp bad checksum", [] { return with([](Spec &s) {
			 s.l3 = L3::ipv6; s.l4 = L4::icmp; }).l4_corrupt_csum(); },
		 drop(LRX_DROP_ICMP_CSUM),
		 {{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Icmp6InMsgs", 1},
		  {"Icmp6InErrors", 1}, {"Icmp6InCsumErrors", 1}}},
	};
}

// ---- multicast and broadcast (ip_route_input_rcu, ip_check_mc_rcu,
// ip6_mc_input, __udp4_lib_mcast_deliver): a host at 10.0.0.2/24 that
// joined 239.1.1.1 and ff05::1 everywhere, 239.2.2.2 on port 1 only and
// 239.3.3.3 on port 0 only; UDP port 2000 has a socket.
const StageInstance::Keys mc_keys = {
	{"local_ipv4", "10.0.0.2/24"},
	{"mcast_groups", "239.1.1.1,ff05::1,239.2.2.2%1,239.3.3.3%0"}};

// The multicast MAC of an IPv4 group (RFC 1112 6.4) or IPv6 one (RFC 2464 7).
Mac mc_mac4(uint32_t g)
{
	return {0x01, 0x00, 0x5e, (uint8_t)(g >> 16 & 0x7f), (uint8_t)(g >> 8),
		(uint8_t)g};
}
Mac mc_mac6(const Ip6 &g) { return {0x33, 0x33, g[12], g[13], g[14], g[15]}; }

Frame mc4(uint32_t group, uint16_t dport = 2000, size_t payload = 18,
	  uint32_t src = ip4(10, 0, 0, 1))
{
	return with([&](Spec &s) {
		s.dst = mc_mac4(group);
		s.ip4_dst = group;
		s.ip4_src = src;
		s.dport = dport;
		s.payload.assign(payload, 0x5a);
	});
}
Frame bc4(uint32_t dst, uint16_t dport = 2000, size_t payload = 18,
	  uint32_t src = ip4(10, 0, 0, 1))
{
	return with([&](Spec &s) {
		s.dst = mac_broadcast;
		s.ip4_dst = dst;
		s.ip4_src = src;
		s.dport = dport;
		s.payload.assign(payload, 0x5a);
	});
}
Frame mc6(const Ip6 &group, uint16_t dport = 2000)
{
	return with([&](Spec &s) {
		s.l3 = L3::ipv6;
		s.dst = mc_mac6(group);
		s.ip6_dst = group;
		s.dport = dport;
	});
}

std::map<std::string, uint64_t> plus(std::map<std::string, uint64_t> a,
				     const std::map<std::string, uint64_t> &b)
{
	for (auto &kv : b)
		a[kv.first] = kv.second;
	return a;
}

// A type 2 routing header (RFC 6275 6.4): hdrlen 2, home address
// 2001:db8::2.
std::vector<uint8_t> rh2(uint8_t segments_left)
{
	const Ip6 home = ip6_doc(2);
	std::vector<uint8_t> body(6 + home.size(), 0);
	body[0] = 2;
	body[1] = segments_left;
	for (size_t i = 0; i < home.size(); i++)
		body[6 + i] = home[i];
	return ip6_ext(17, body);
}

std::vector<Row> mcast_table()
{
	const auto D = LRX_NEXT_DELIVER_V;
	const auto K = mc_keys;
	// 18-byte payload: IPv4 total length 46, IPv6 packet 66
	const std::map<std::string, uint64_t> mc4_in = {
		{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IpExtInMcastPkts", 1},
		{"IpExtInMcastOctets", 46}};
	const std::map<std::string, uint64_t> bc4_in = {
		{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IpExtInBcastPkts", 1},
		{"IpExtInBcastOctets", 46}};
	const std::map<std::string, uint64_t> mc6_in = {
		{"Ip6InReceives", 1}, {"Ip6InDelivers", 1}, {"Ip6InMcastPkts", 1},
		{"Ip6InMcastOctets", 66}};
	const auto ignored4 = lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	const Ip6 ff05_1 = ip6({0xff05, 0, 0, 0, 0, 0, 0, 1});
	return {
		{"v4 joined group, socket", [] { return mc4(ip4(239, 1, 1, 1)); }, D,
		 plus(mc4_in, {{"UdpInDatagrams", 1}}), 0, K},
		{"v4 joined group, no socket: UdpIgnoredMulti",
		 [] { return mc4(ip4(239, 1, 1, 1), 3000); }, ignored4,
		 plus(mc4_in, {{"UdpIgnoredMulti", 1}}), 0, K},
		{"v4 all-hosts implied", [] { return mc4(ip4(224, 0, 0, 1), 3000); },
		 ignored4, plus(mc4_in, {{"UdpIgnoredMulti", 1}}), 0, K},
		{"v4 group not joined", [] { return mc4(ip4(239, 9, 9, 9)); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}}, 0, K},
		{"v4 all-routers not joined", [] { return mc4(ip4(224, 0, 0, 2)); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}}, 0, K},
		{"v4 group joined on port 1 only", [] { return mc4(ip4(239, 2, 2, 2)); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"IpInReceives", 1}}, 0, K},
		{"v4 group joined on port 0", [] { return mc4(ip4(239, 3, 3, 3)); }, D,
		 plus(mc4_in, {{"UdpInDatagrams", 1}}), 0, K},
		{"v4 mcast_groups=none: only all-hosts",
		 [] { return mc4(ip4(239, 1, 1, 1)); }, drop(LRX_DROP_NOT_SPECIFIED),
		 {{"IpInReceives", 1}}, 0, {{"mcast_groups", "none"}}},
		{"v4 source 0.0.0.0 to a link-local group",
		 [] { return mc4(ip4(224, 0, 0, 1), 2000, 18, 0); }, D,
		 plus(mc4_in, {{"UdpInDatagrams", 1}}), 0, K},
		{"v4 source 0.0.0.0 to a global group (ip_mc_validate_source)",
		 [] { return mc4(ip4(239, 1, 1, 1), 2000, 18, 0); },
		 drop(LRX_DROP_IP_INVALID_SOURCE), {{"IpInReceives", 1}}, 0, K},
		{"v4 loopback source to a group",
		 [] { return mc4(ip4(239, 1, 1, 1), 2000, 18, ip4(127, 0, 0, 1)); },
		 drop(LRX_DROP_IP_LOCALNET), {{"IpInReceives", 1}}, 0, K},
		{"v4 subnet-directed broadcast, no socket",
		 [] { return bc4(ip4(10, 0, 0, 255), 3000); }, ignored4,
		 plus(bc4_in, {{"UdpIgnoredMulti", 1}}), 0, K},
		{"v4 subnet-directed broadcast, socket",
		 [] { return bc4(ip4(10, 0, 0, 255)); }, D,
		 plus(bc4_in, {{"UdpInDatagrams", 1}}), 0, K},
		{"v4 directed broadcast of another subnet",
		 [] { return bc4(ip4(10, 0, 1, 255)); },
		 drop(LRX_DROP_IP_INADDRERRORS),
		 {{"IpInReceives", 1}, {"IpInAddrErrors", 1}}, 0, K},
		{"v4 limited broadcast, no socket",
		 [] { return bc4(0xffffffff, 3000); }, ignored4,
		 plus(bc4_in, {{"UdpIgnoredMulti", 1}}), 0, K},
		{"v4 0.0.0.0 from 0.0.0.0 is broadcast (brd_input)",
		 [] { return bc4(0, 3000, 18, 0); }, ignored4,
		 plus(bc4_in, {{"UdpIgnoredMulti", 1}}), 0, K},
		{"v4 broadcast, short, bad checksum: udp4_csum_init checks it",
		 [] { return bc4(0xffffffff, 3000).l4_corrupt_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 plus(bc4_in, {{"UdpInCsumErrors", 1}, {"UdpInErrors", 1}}), 0, K},
		{"v4 broadcast, long (> CHECKSUM_BREAK), bad checksum, no socket",
		 [] { return bc4(0xffffffff, 3000, 100).l4_corrupt_csum(); }, ignored4,
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IpExtInBcastPkts", 1},
		  {"IpExtInBcastOctets", 128}, {"UdpIgnoredMulti", 1}}, 0, K},
		{"v4 broadcast, long, bad checksum, socket",
		 [] { return bc4(0xffffffff, 2000, 100).l4_corrupt_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 {{"IpInReceives", 1}, {"IpInDelivers", 1}, {"IpExtInBcastPkts", 1},
		  {"IpExtInBcastOctets", 128}, {"UdpInCsumErrors", 1},
		  {"UdpInErrors", 1}}, 0, K},
		{"v4 group, bad checksum, no socket (short)",
		 [] { return mc4(ip4(239, 1, 1, 1), 3000).l4_corrupt_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 plus(mc4_in, {{"UdpInCsumErrors", 1}, {"UdpInErrors", 1}}), 0, K},
		{"v4 /31 prefix has no broadcast",
		 [] { return bc4(ip4(10, 0, 0, 3)); }, drop(LRX_DROP_IP_INADDRERRORS),
		 {{"IpInReceives", 1}, {"IpInAddrErrors", 1}}, 0,
		 {{"local_ipv4", "10.0.0.2/31"}}},
		{"v6 joined group, no socket: Udp6IgnoredMulti",
		 [ff05_1] { return mc6(ff05_1, 3000); }, ignored4,
		 plus(mc6_in, {{"Udp6IgnoredMulti", 1}}), 0, K},
		{"v6 joined group, socket", [ff05_1] { return mc6(ff05_1); }, D,
		 plus(mc6_in, {{"Udp6InDatagrams", 1}}), 0, K},
		{"v6 all-nodes implied", [] { return mc6(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1}), 3000); },
		 ignored4, plus(mc6_in, {{"Udp6IgnoredMulti", 1}}), 0, K},
		{"v6 solicited-node group of 2001:db8::2 implied",
		 [] { return mc6(ip6({0xff02, 0, 0, 0, 0, 1, 0xff00, 2}), 3000); },
		 ignored4, plus(mc6_in, {{"Udp6IgnoredMulti", 1}}), 0, K},
		{"v6 group not joined: counted InMcast, then freed",
		 [] { return mc6(ip6({0xff05, 0, 0, 0, 0, 0, 0, 2})); },
		 drop(LRX_DROP_NOT_SPECIFIED),
		 {{"Ip6InReceives", 1}, {"Ip6InMcastPkts", 1}, {"Ip6InMcastOctets", 66}},
		 0, K},
		{"v6 group, zero checksum, socket: skipped (no_check6_rx)",
		 [ff05_1] { return mc6(ff05_1).udp_zero_csum(); }, ignored4,
		 plus(mc6_in, {{"Udp6IgnoredMulti", 1}}), 0, K},
		{"v6 group, bad checksum, no socket (short)",
		 [ff05_1] { return mc6(ff05_1, 3000).l4_corrupt_csum(); },
		 drop(LRX_DROP_UDP_CSUM),
		 plus(mc6_in, {{"Udp6InCsumErrors", 1}, {"Udp6InErrors", 1}}), 0, K},
		// ---- type 2 routing headers with and without CONFIG_IPV6_MIP6
		{"v6 routing type 2 well formed (mip6: no xfrm state)",
		 [] { return ext6(43, rh2(1)); }, drop(LRX_DROP_NOT_SPECIFIED),
		 {{"Ip6InReceives", 1}, {"Ip6InAddrErrors", 1}}},
		{"v6 routing type 2, segments left 1, hdrlen 0 (mip6: malformed)",
		 [] { return ext6(43, ip6_ext(17, {2, 1, 0, 0, 0, 0})); },
		 drop(LRX_DROP_NOT_SPECIFIED), {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}},
		{"v6 routing type 2, segments left 0, ipv6_mip6=no (skipped)",
		 [] { return ext6(43, rh2(0)); }, D, v6_udp_ok, 0,
		 {{"ipv6_mip6", "no"}}},
		{"v6 routing type 2 well formed, ipv6_mip6=no (unknown_rh)",
		 [] { return ext6(43, rh2(1)); }, drop(LRX_DROP_NOT_SPECIFIED),
		 {{"Ip6InReceives", 1}, {"Ip6InHdrErrors", 1}}, 0,
		 {{"ipv6_mip6", "no"}}},
	};
}

// build-meta + l3-demux on one frame, per packet or as a burst of one.
struct Outcome {
	lrx_next_t next;
	std::map<std::string, uint64_t> counters;
	std::vector<uint8_t> bytes;
	uint32_t pkt_len;
};

Outcome run_frame(const Frame &f, bool burst, uint64_t ol_flags = 0,
		  const StageInstance::Keys &extra = {})
{
	StageInstance::Keys keys = l3_keys;
	for (auto &kv : extra)
		keys[kv.first] = kv.second;
	StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
	REQUIRE(bm.ok());
	INFO(l3.error());
	REQUIRE(l3.ok());
	rte_mbuf *m = f.to_mbuf(pool());
	REQUIRE(m);
	m->ol_flags = ol_flags;
	lrx_next_t next;
	if (burst)
		run_burst({&bm, &l3}, &m, 1, &next);
	else
		run_packet({&bm, &l3}, &m, 1, &next);
	Outcome o{next, l3.counters(), mbuf_bytes(m), m->pkt_len};
	if (lrx_next_kind(next) != LRX_NEXT_CONSUMED) // else the stage's
		rte_pktmbuf_free(m);
	return o;
}

} // namespace

TEST_CASE("l3-demux verdict table: each kernel check, drop reason and SNMP "
	  "counters", "[l3_demux]")
{
	eal_init();
	std::vector<Row> rows = verdict_table();
	for (Row &row : mcast_table())
		rows.push_back(row);
	for (const Row &row : rows) {
		for (bool burst : {false, true}) {
			INFO(row.name << (burst ? " (burst)" : " (per packet)"));
			Outcome o = run_frame(row.frame(), burst, row.ol_flags,
					      row.keys);
			CHECK(next_name(o.next) == next_name(row.expect));
			for (auto &kv : o.counters) {
				if (!is_snmp(kv.first))
					continue;
				auto it = row.snmp.find(kv.first);
				uint64_t want = it == row.snmp.end() ? 0 : it->second;
				INFO("counter " << kv.first);
				CHECK(kv.second == want);
			}
			for (auto &kv : row.snmp)
				CHECK(o.counters.count(kv.first) == 1);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux sets offsets and protocol for delivered packets",
	  "[l3_demux]")
{
	eal_init();
	struct Case {
		Frame f;
		uint16_t toff;
		uint8_t proto;
		uint16_t vlan_vid; // the VLAN device it came on
	};
	std::vector<Case> cases = {
		{udp4(), 14 + 20, 17, 0},
		{with([](Spec &s) { s.vlans = {0, 0}; s.l4 = L4::tcp;
				    s.ip4_options = {1, 1, 1, 1}; }), 22 + 24, 6, 0},
		{with([](Spec &s) { s.l3 = L3::ipv6; s.vlans = {3}; }), 18 + 40, 17, 3},
		{with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true;
				    s.l4 = L4::tcp; }), 14 + 48, 6, 0},
	};
	for (auto &c : cases) {
		StageInstance::Keys keys = bm_keys;
		keys["vlans"] = "3";
		StageInstance bm(BUILD_META_STAGE_NAME, keys);
		StageInstance l3(L3_DEMUX_STAGE_NAME, l3_keys);
		rte_mbuf *m = c.f.to_mbuf(pool());
		lrx_next_t next;
		run_packet({&bm, &l3}, &m, 1, &next);
		CHECK(next == LRX_NEXT_DELIVER_V);
		CHECK(lrx_meta(m)->transport_offset == c.toff);
		CHECK(lrx_meta(m)->l4_proto == c.proto);
		CHECK(lrx_meta(m)->len == c.f.l3_len);
		CHECK(lrx_meta(m)->vlan_vid == c.vlan_vid);
		rte_pktmbuf_free(m);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux trims link-layer padding as pskb_trim_rcsum",
	  "[l3_demux]")
{
	eal_init();
	for (bool burst : {false, true}) {
		Frame f = udp4();           // 14 + 46: already 60 with padding
		Frame padded = udp4().append(40, 0xaa);
		const size_t true_len = 14 + f.l3_len;
		Outcome o = run_frame(padded, burst);
		CHECK(o.next == LRX_NEXT_DELIVER_V);
		CHECK(o.pkt_len == true_len);
		CHECK(o.bytes.size() == true_len);
		CHECK(o.counters["l3_trimmed"] == 1);

		Frame p6 = udp6().append(33);
		Outcome o6 = run_frame(p6, burst);
		CHECK(o6.next == LRX_NEXT_DELIVER_V);
		CHECK(o6.pkt_len == 14u + udp6().l3_len);
		// UDP length shorter than the IP payload: udp trims too
		// 10 bytes of UDP payload, IP length covering 8 more bytes
		Frame short_udp = with([](Spec &s) {
			s.payload = std::vector<uint8_t>(10, 1); });
		Outcome ou = run_frame(short_udp.ip4_total_length(20 + 18 + 8), burst);
		CHECK(ou.next == LRX_NEXT_DELIVER_V);
		CHECK(ou.pkt_len == 14u + 20 + 8 + 10);
		CHECK(ou.counters["udp_trimmed"] == 1);
	}
	// padding over more than the last segment of a chain: the chain is
	// cut and the segments past the end go back to the pool
	for (bool burst : {false, true}) {
		StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
		StageInstance l3(L3_DEMUX_STAGE_NAME, l3_keys);
		Frame padded = udp4().append(100);
		rte_mbuf *m = padded.to_mbuf_chain(pool(), 64);
		REQUIRE(m->nb_segs == 3);
		lrx_next_t next;
		if (burst)
			run_burst({&bm, &l3}, &m, 1, &next);
		else
			run_packet({&bm, &l3}, &m, 1, &next);
		CHECK(next == LRX_NEXT_DELIVER_V);
		CHECK(m->pkt_len == 14u + padded.l3_len);
		CHECK(m->nb_segs == 1);
		CHECK(m->data_len == 14u + padded.l3_len);
		CHECK(mbuf_bytes(m).size() == 14u + padded.l3_len);
		rte_pktmbuf_free(m);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux skips checksums the NIC verified (counters prove it)",
	  "[l3_demux]")
{
	eal_init();
	const uint64_t good = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	SECTION("IPv4 header: trusted hint skips ip_fast_csum")
	{
		Frame bad = udp4().ip4_corrupt_csum();
		Outcome o = run_frame(bad, false, good);
		CHECK(o.next == LRX_NEXT_DELIVER_V);
		CHECK(o.counters["ip_csum_hint_skipped"] == 1);
		CHECK(o.counters["ip_csum_verified"] == 0);
		Outcome strict = run_frame(bad, false, good,
					   {{"trust_ip_csum_hint", "no"}});
		CHECK(strict.next == lrx_next_drop(LRX_DROP_IP_CSUM));
		CHECK(strict.counters["ip_csum_verified"] == 1);
	}
	SECTION("L4: CHECKSUM_UNNECESSARY skips the UDP/TCP/ICMP checksum")
	{
		for (Frame f : {udp4().l4_corrupt_csum(), tcp4().l4_corrupt_csum(),
				udp6().l4_corrupt_csum()}) {
			Outcome o = run_frame(f, true, good);
			CHECK(o.next == LRX_NEXT_DELIVER_V);
			CHECK(o.counters["l4_csum_hint_skipped"] == 1);
			CHECK(o.counters["l4_csum_verified"] == 0);
			Outcome none = run_frame(f, true, 0);
			CHECK(lrx_next_kind(none.next) == LRX_NEXT_DROP);
			CHECK(none.counters["l4_csum_verified"] == 1);
		}
	}
	SECTION("NIC says bad: the stack verifies and drops")
	{
		Outcome o = run_frame(udp4().l4_corrupt_csum(), false,
				      RTE_MBUF_F_RX_L4_CKSUM_BAD);
		CHECK(o.next == lrx_next_drop(LRX_DROP_UDP_CSUM));
		Outcome ok = run_frame(udp4(), false, RTE_MBUF_F_RX_L4_CKSUM_BAD);
		CHECK(ok.next == LRX_NEXT_DELIVER_V); // NIC wrong, data right
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies to ICMP echo and ARP when configured",
	  "[l3_demux]")
{
	eal_init();
	Frame echo = with([](Spec &s) { s.l4 = L4::icmp; });
	Outcome o = run_frame(echo, false, 0, {{"icmp_echo", "reply"}});
	CHECK(o.next == lrx_next_tx(0));
	CHECK(o.counters["IcmpOutEchoReps"] == 1);
	// the reply: addresses swapped, type 0, checksums valid
	Frame reply;
	reply.data = o.bytes;
	reply.l2_len = 14;
	reply.l3 = L3::ipv4;
	reply.l4 = L4::icmp;
	reply.l4_off = 34;
	reply.l3_len = echo.l3_len;
	reply.ip_proto = 1;
	CHECK(reply.u8(34) == 0);
	CHECK(reply.be32(14 + 12) == ip4(10, 0, 0, 2));
	CHECK(reply.be32(14 + 16) == ip4(10, 0, 0, 1));
	CHECK(reply.ip4_csum_ok());
	CHECK(reply.l4_csum_ok());
	CHECK(std::equal(mac_peer.begin(), mac_peer.end(), o.bytes.begin()));

	Outcome arp = run_frame(arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
				true);
	REQUIRE(arp.next == lrx_next_tx(0));
	CHECK(arp.counters["arp_replies"] == 1);
	Frame r;
	r.data = arp.bytes;
	CHECK(r.be16(14 + 6) == 2);                 // reply
	CHECK(r.be32(14 + 14) == ip4(10, 0, 0, 2)); // sender: us
	CHECK(r.be32(14 + 24) == ip4(10, 0, 0, 1)); // target: the asker
	CHECK(std::equal(mac_host.begin(), mac_host.end(), r.data.begin() + 6));
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux burst path: sublists per handler and route hints",
	  "[l3_demux]")
{
	eal_init();
	const std::string split = GENERATE("gather", "runs", "none");
	INFO("list_split=" << split);
	StageInstance::Keys keys = l3_keys;
	keys["list_split"] = split;
	StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
	REQUIRE(l3.ok());
	std::vector<Frame> frames = {udp4(), udp4(), tcp4(), udp4(),
				     arp_request(1, ip4(10, 0, 0, 3)),
				     udp6(), udp6(), udp4()};
	std::vector<rte_mbuf *> pkts;
	for (auto &f : frames)
		pkts.push_back(f.to_mbuf(pool()));
	std::vector<lrx_next_t> nexts(pkts.size());
	run_burst({&bm, &l3}, pkts.data(), (uint16_t)pkts.size(), nexts.data());
	for (auto n : nexts)
		CHECK(n == LRX_NEXT_DELIVER_V);
	if (split == "gather") {
		// one sublist per ethertype handler: IPv4 x5, ARP, IPv6 x2
		CHECK(l3.counter("l3_sublists") == 3);
		// one per L4 handler: udp x4 | tcp, and udp6 x2
		CHECK(l3.counter("l4_sublists") == 3);
		// one IPv4 lookup reused four times; IPv6 looks up every packet
		CHECK(l3.counter("route_hint_hits") == 4);
		CHECK(l3.counter("route_lookups") == 1 + 2);
	} else if (split == "runs") {
		// runs of the same ethertype handler: IPv4 x4, ARP, IPv6 x2,
		// IPv4
		CHECK(l3.counter("l3_sublists") == 4);
		// runs of the same L4 handler: udp udp | tcp | udp, udp6 udp6,
		// udp
		CHECK(l3.counter("l4_sublists") == 5);
		// one IPv4 lookup reused three times, one for the last run;
		// IPv6 looks up every packet
		CHECK(l3.counter("route_hint_hits") == 3);
		CHECK(l3.counter("route_lookups") == 2 + 2);
	} else {
		// no sublists: one loop, every packet through the per-packet
		// path (a route lookup each, as ip_rcv)
		CHECK(l3.counter("l3_sublists") == 0);
		CHECK(l3.counter("l4_sublists") == 0);
		CHECK(l3.counter("route_hint_hits") == 0);
		CHECK(l3.counter("route_lookups") == 5 + 2);
	}
	for (auto m : pkts)
		rte_pktmbuf_free(m);

	// the hint never hides a martian source (ip_route_use_hint validates
	// the source of every packet)
	StageInstance bm2(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l32(L3_DEMUX_STAGE_NAME, keys);
	rte_mbuf *two[2] = {udp4().to_mbuf(pool()),
			    udp4().ip4_src(ip4(127, 0, 0, 1)).to_mbuf(pool())};
	lrx_next_t n2[2];
	run_burst({&bm2, &l32}, two, 2, n2);
	CHECK(n2[0] == LRX_NEXT_DELIVER_V);
	CHECK(n2[1] == lrx_next_drop(LRX_DROP_IP_LOCALNET));
	rte_pktmbuf_free(two[0]);
	rte_pktmbuf_free(two[1]);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux process_one and process_burst agree on random mixed "
	  "bursts", "[l3_demux]")
{
	eal_init();
	const char *dispatch = GENERATE("indirect", "direct");
	const char *hint = GENERATE("yes", "no");
	const char *split = GENERATE("gather", "runs", "none", "auto");
	INFO("dispatch=" << dispatch << " route_hint=" << hint
			 << " list_split=" << split);
	std::vector<Row> table = verdict_table();
	std::mt19937 rng(11);
	StageInstance::Keys keys = l3_keys;
	keys["dispatch"] = dispatch;
	keys["route_hint"] = hint;
	keys["list_split"] = split;
	// every reply on, rate limited by a clock that both see the same
	for (const char *k : {"icmp_unreach", "icmp_param_prob", "tcp_rst",
			      "tcp_synack"})
		keys[k] = "send";
	keys["icmp_echo"] = keys["icmp_timestamp"] = "reply";
	keys["icmp_clock"] = "polls";
	StageInstance bm_a(BUILD_META_STAGE_NAME, bm_keys),
		bm_b(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l3_a(L3_DEMUX_STAGE_NAME, keys),
		l3_b(L3_DEMUX_STAGE_NAME, keys);
	REQUIRE(l3_a.ok());
	std::vector<Frame> frames;
	for (auto &row : table)
		frames.push_back(row.frame());
	frames.push_back(udp4().append(30)); // padding
	size_t total = 0;
	for (int iter = 0; iter < 60; iter++) {
		uint16_t n = (uint16_t)(1 + rng() % 128);
		std::vector<rte_mbuf *> a(n), b(n);
		std::vector<lrx_next_t> na(n), nb(n);
		for (uint16_t i = 0; i < n; i++) {
			// runs of equal frames make sublists and hints matter
			const Frame &f = frames[(rng() % 3 == 0 && i)
							? 0
							: rng() % frames.size()];
			a[i] = f.to_mbuf(pool());
			b[i] = f.to_mbuf(pool());
			uint64_t flags = (rng() % 4 == 0)
				? RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD
				: 0;
			a[i]->ol_flags = b[i]->ol_flags = flags;
		}
		run_packet({&bm_a, &l3_a}, a.data(), n, na.data());
		run_burst({&bm_b, &l3_b}, b.data(), n, nb.data());
		for (uint16_t i = 0; i < n; i++) {
			INFO("iteration " << iter << " packet " << i);
			REQUIRE(next_name(na[i]) == next_name(nb[i]));
			REQUIRE(mbuf_bytes(a[i]) == mbuf_bytes(b[i]));
			rte_pktmbuf_free(a[i]);
			rte_pktmbuf_free(b[i]);
		}
		total += n;
	}
	auto ca = l3_a.counters(), cb = l3_b.counters();
	for (auto &kv : ca) {
		// how the work was done differs by design; what was done may not
		if (kv.first == "l3_sublists" || kv.first == "l4_sublists" ||
		    kv.first == "route_hint_hits" || kv.first == "route_lookups")
			continue;
		INFO("counter " << kv.first);
		CHECK(kv.second == cb[kv.first]);
	}
	CHECK(ca["IpInReceives"] > 0);
	CHECK(ca["Ip6InReceives"] > 0);
	CHECK(bm_a.counters() == bm_b.counters());
	if (std::string(split) == "none") {
		// the per-packet path in one loop: no sublists, no hint
		CHECK(cb["l3_sublists"] == 0);
		CHECK(cb["route_hint_hits"] == 0);
		CHECK(cb["route_lookups"] == ca["route_lookups"]);
	} else if (std::string(split) != "auto") {
		CHECK(cb["l3_sublists"] > 0);
		CHECK(cb["l3_sublists"] < total);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux rejects bad keys with a message", "[l3_demux]")
{
	eal_init();
	struct Bad {
		const char *key, *value, *expect;
	};
	const Bad bad = GENERATE(
		Bad{"dispatch", "fast", "one of indirect, direct"},
		Bad{"list_split", "sorted", "gather, runs"},
		Bad{"martians", "maybe", "one of drop, accept"},
		Bad{"trust_ip_csum_hint", "perhaps", "yes/no"},
		Bad{"route_hint", "2", "yes/no"},
		Bad{"local_ipv4", "10.0.0.300", "IPv4 addresses"},
		Bad{"local_ipv6", "2001:db8::g", "IPv6 addresses"},
		Bad{"udp_ports", "70000", "0..65535"},
		Bad{"tcp_ports", "9-3", "ranges"},
		Bad{"icmp_echo", "echo", "one of reply, deliver"},
		Bad{"icmp_timestamp", "yes", "one of reply, deliver"},
		Bad{"icmp_unreach", "off", "one of send, none"},
		Bad{"icmp_param_prob", "1", "one of send, none"},
		Bad{"tcp_rst", "no", "one of send, none"},
		Bad{"tcp_synack", "", "one of send, none"},
		Bad{"icmp_ratelimit", "-1", "0..3600000"},
		Bad{"icmp_ratemask", "0x1818", "an integer"},
		Bad{"icmp_msgs_burst", "many", "an integer"},
		Bad{"icmpv6_ratelimit", "3600001", "0..3600000"},
		Bad{"icmpv6_ratemask", "0-256", "0..255"},
		Bad{"icmpv6_ratemask", "5-3", "ranges"},
		Bad{"icmp_clock", "jiffies", "one of tsc, polls"},
		Bad{"accept_source_route", "2", "yes/no"},
		Bad{"local_ipv6", "2001:db8::2/129", "prefix length"},
		Bad{"arp_ip", "ten", "IPv4 address"},
		Bad{"arp_mac", "zz", "aa:bb:cc:dd:ee:ff"},
		Bad{"local_ipv4", "10.0.0.2/33", "prefix length"},
		Bad{"local_ipv4", "10.0.0.2/", "prefix length"},
		Bad{"mcast_groups", "10.0.0.1", "groups"},
		Bad{"mcast_groups", "2001:db8::1", "groups"},
		Bad{"mcast_groups", "239.1.1.1%x", "%port"},
		Bad{"mcast_groups", "239.1.1.1%99999", "%port"},
		Bad{"mcast_groups", "239.1.1.1,,ff05::1", "groups"},
		Bad{"ipv6_mip6", "maybe", "yes/no"},
		Bad{"tcp_ehash", "3", "power of two"},
		Bad{"tcp_ehash", "2097152", "power of two"},
		Bad{"tcp_ehash", "-1", "power of two"});
	StageInstance bm(BUILD_META_STAGE_NAME); // registers the metadata
	StageInstance l3(L3_DEMUX_STAGE_NAME, {{bad.key, bad.value}});
	CHECK(l3.rc() == -EINVAL);
	std::string msg = l3.error();
	INFO(msg);
	CHECK(msg.find(bad.key) != std::string::npos);
	CHECK(msg.find(bad.value) != std::string::npos);
	CHECK(msg.find(bad.expect) != std::string::npos);
}

TEST_CASE("l3-demux tcp_ehash: established lookup first, a listener's new "
	  "connections inserted, a full table counted", "[l3_demux][sockets]")
{
	eal_init();
	struct Step {
		const char *what;
		Frame frame;
		const char *verdict;
		// tcp_ehash_hits, tcp_ehash_inserted, tcp_ehash_full,
		// TcpExtTCPReqQFullDoCookies, TcpExtListenOverflows after it
		std::array<uint64_t, 5> after;
	};
	auto tcp6 = [](uint8_t flags, uint16_t sport) {
		return with([&](Spec &s) {
			s.l3 = L3::ipv6;
			s.l4 = L4::tcp;
			s.tcp_flags = flags;
			s.sport = sport;
		});
	};
	const std::vector<Step> steps = {
		{"an ACK opens (a cookie's child)", tcp4(TCP_ACK, 1001), "DELIVER", {0, 1, 0, 0, 0}},
		{"and finds it after", tcp4(TCP_ACK, 1001), "DELIVER", {1, 1, 0, 0, 0}},
		{"a SYN: a request socket and the SYN-ACK", tcp4(TCP_SYN, 1002), "TX(0)", {1, 2, 0, 0, 0}},
		{"the SYN again: found, the SYN-ACK again", tcp4(TCP_SYN, 1002), "TX(0)", {2, 2, 0, 0, 0}},
		{"the handshake's ACK: found", tcp4(TCP_ACK, 1002), "DELIVER", {3, 2, 0, 0, 0}},
		{"no listener: looked up, a RST, nothing opened", tcp4(TCP_ACK, 1003, 22), "TX(0)", {3, 2, 0, 0, 0}},
		{"a bad checksum is not looked up", tcp4(TCP_ACK, 1001).l4_corrupt_csum(),
		 "DROP(TCP_CSUM)", {3, 2, 0, 0, 0}},
		{"a broadcast route opens nothing",
		 with([](Spec &s) { s.l4 = L4::tcp; s.ip4_dst = ip4(10, 0, 0, 255); }),
		 "DELIVER", {3, 2, 0, 0, 0}},
		{"third", tcp4(TCP_ACK | TCP_PSH, 1004), "DELIVER", {3, 3, 0, 0, 0}},
		{"fourth: the IPv4 table is full", tcp4(TCP_ACK, 1005), "DELIVER", {3, 4, 0, 0, 0}},
		{"a SYN finds it full: a syncookie SYN-ACK", tcp4(TCP_SYN, 1006), "TX(0)", {3, 4, 1, 1, 0}},
		{"an ACK finds it full: ListenOverflows", tcp4(TCP_ACK, 1006), "DROP(NO_SOCKET)", {3, 4, 2, 1, 1}},
		{"the connections in it still found", tcp4(TCP_FIN | TCP_ACK, 1005), "DELIVER", {4, 4, 2, 1, 1}},
		{"IPv6 has its own table", tcp6(TCP_ACK, 1001), "DELIVER", {4, 5, 2, 1, 1}},
		{"IPv6 found", tcp6(TCP_ACK, 1001), "DELIVER", {5, 5, 2, 1, 1}},
		{"IPv6 SYN", tcp6(TCP_SYN, 1002), "TX(0)", {5, 6, 2, 1, 1}},
		{"IPv6 SYN again", tcp6(TCP_SYN, 1002), "TX(0)", {6, 6, 2, 1, 1}},
	};
	const char *const names[] = {"tcp_ehash_hits", "tcp_ehash_inserted",
				     "tcp_ehash_full", "TcpExtTCPReqQFullDoCookies",
				     "TcpExtListenOverflows"};
	StageInstance::Keys keys = l3_keys;
	keys["local_ipv4"] = "10.0.0.2/24";
	keys["tcp_rst"] = keys["tcp_synack"] = "send";
	keys["tcp_ehash"] = "4";
	for (const char *split : {"none", "gather", "runs"}) {
		keys["list_split"] = split;
		// one at a time (per packet, and bursts of one), then the whole
		// sequence as one burst: the same verdicts in order
		for (int how = 0; how < 3; how++) {
			INFO("list_split " << split << " how " << how);
			StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
			StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
			INFO(l3.error());
			REQUIRE(l3.ok());
			std::vector<rte_mbuf *> ms;
			for (auto &st : steps)
				ms.push_back(st.frame.to_mbuf(pool()));
			std::vector<lrx_next_t> nexts(ms.size());
			if (how == 2)
				run_burst({&bm, &l3}, ms.data(), (uint16_t)ms.size(), nexts.data());
			for (size_t i = 0; i < steps.size(); i++) {
				INFO("step " << i << ": " << steps[i].what);
				if (how == 0)
					run_packet({&bm, &l3}, &ms[i], 1, &nexts[i]);
				else if (how == 1)
					run_burst({&bm, &l3}, &ms[i], 1, &nexts[i]);
				CHECK(next_name(nexts[i]) == steps[i].verdict);
				if (how < 2)
					for (size_t k = 0; k < 5; k++) {
						INFO(names[k]);
						CHECK(l3.counter(names[k]) == steps[i].after[k]);
					}
			}
			for (size_t k = 0; k < 5; k++)
				CHECK(l3.counter(names[k]) == steps.back().after[k]);
			CHECK(l3.counter("tcp_no_socket") == 1);
			for (rte_mbuf *m : ms)
				rte_pktmbuf_free(m);
		}
	}
	// without the key: no lookup, the same verdicts as before it existed
	keys.erase("tcp_ehash");
	keys["list_split"] = "none";
	StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
	REQUIRE(l3.ok());
	for (auto &st : steps) {
		INFO(st.what);
		rte_mbuf *m = st.frame.to_mbuf(pool());
		lrx_next_t next;
		run_packet({&bm, &l3}, &m, 1, &next);
		CHECK(next_name(next) ==
		      (std::string(st.verdict) == "DROP(NO_SOCKET)" ? "DELIVER" : st.verdict));
		rte_pktmbuf_free(m);
	}
	for (const char *n : names)
		CHECK(l3.counter(n) == 0);
	LRX_REQUIRE_POOL_FULL(pool());
}
