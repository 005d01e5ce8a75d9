/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_synth devargs: every key, its type, range and default in one table,
 * parsed with rte_kvargs. A bad key or value fails the probe with -EINVAL
 * and a message that names the device, the key, the value and what would
 * be valid.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_debug.h>
#include <rte_kvargs.h>
#include <rte_log.h>

#include "synth.h"
#include "value.h"

static const char *const profile_names[] = {
	[SYNTH_PROFILE_UDP64] = "udp64",
	[SYNTH_PROFILE_UDP_FLOWS] = "udp-flows",
	[SYNTH_PROFILE_TCP_STREAM] = "tcp-stream",
	[SYNTH_PROFILE_IMIX] = "imix",
	[SYNTH_PROFILE_PCAP] = "pcap",
	[SYNTH_PROFILE_MIXED] = "mixed",
	NULL,
};

static const struct lrx_value_flag hint_flags[] = {
	{"hash", SYNTH_HINT_HASH}, {"csum", SYNTH_HINT_CSUM},
	{"vlan", SYNTH_HINT_VLAN}, {"timestamp", SYNTH_HINT_TIMESTAMP},
	{"ptype", SYNTH_HINT_PTYPE}, {"all", SYNTH_HINT_ALL},
	{"none", 0}, {NULL, 0},
};
static const char *const recycles[] = {"single", "bulk", NULL};

/* every devarg: type, range and default (NULL: set after, per profile) */
#define SK(kind, field, ...) LRX_KEY_##kind(struct synth_options, field, __VA_ARGS__)
#define RATE(key, field, help) SK(DOUBLE, field, key, "0", 0, 1, help)
static const struct lrx_value_key synth_args[] = {
	SK(CHOICE, profile, "profile", "udp64", profile_names, "what is generated"),
	SK(UINT, flows, "flows", NULL, 1, 65536, "flows (5-tuples)"),
	SK(UINT, size, "size", NULL, 64, SYNTH_MAX_FRAME + 4,
	   "on-wire frame size incl. FCS"),
	SK(UINT, seed, "seed", "1", 0, UINT64_MAX, "seed of the generator"),
	SK(UINT, max_rxq, "rxq", "8", 1, 64, "max RX queues"),
	SK(UINT, max_txq, "txq", "8", 1, 64, "max TX queues"),
	SK(UINT, rate, "rate", "0", 0, UINT64_MAX, "pps cap, 0 = unlimited"),
	SK(FLAGS, hints, "hints", "hash+csum+ptype", hint_flags,
	   "NIC hints, joined by '+' or in [a,b]"),
	SK(BOOL, cold, "cold", "0", "buffers the CPU has not touched"),
	SK(UINT, cold_mb, "cold_mb", "0", 0, 65536, "MiB of cold buffers; 0 = 4 x LLC"),
	SK(BOOL, copy, "copy", "0", "copy each frame into the mbuf"),
	SK(CHOICE, recycle_bulk, "recycle", "bulk", recycles, "how mbufs are taken back"),
	SK(UINT, mss, "mss", "1448", 64, 9000, "TCP payload bytes"),
	RATE("psh_rate", psh_rate, "fraction of segments with PSH"),
	RATE("reorder_rate", reorder_rate, "fraction reordered"),
	RATE("retrans_rate", retrans_rate, "fraction retransmitted"),
	RATE("opt_change_rate", opt_change_rate, "fraction with changed TCP options"),
	RATE("tos_change_rate", tos_change_rate, "fraction with changed ToS"),
	RATE("ttl_change_rate", ttl_change_rate, "fraction with changed TTL"),
	RATE("ipv6_share", ipv6_share, "mixed: share of IPv6 frames"),
	RATE("arp_share", arp_share, "mixed: share of ARP frames"),
	RATE("vlan_share", vlan_share, "mixed: share of VLAN frames"),
	RATE("malformed_share", malformed_share, "mixed: share of malformed frames"),
	SK(STRING, pcap, "pcap", "", "path of a pcap or pcapng file (Ethernet)"),
	SK(STRING, tx_pcap, "tx_pcap", "", "path of a pcap to write"),
	SK(UINT, link_down_ms, "link_down_ms", "0", 0, 86400000,
	   "ms after start when the link goes down (RX delivers nothing), 0 = never"),
	SK(UINT, link_down_for_ms, "link_down_for_ms", "0", 0, 86400000,
	   "ms the link stays down, 0 = until the port stops"),
	SK(UINT, stall_ms, "stall_ms", "0", 0, 86400000,
	   "ms each RX queue's first poll spins before it returns (a driver stuck in "
	   "rx_burst, deaf to the stop flag and signals), 0 = never"),
	{.name = NULL},
};
#undef RATE
#undef SK

const char synth_param_string[] = SYNTH_PARAM_STRING;


/* One devarg into opt; a bad value names device, key, value and what is
 * valid. A pcap path must be a regular file: a FIFO would block the probe
 * in fopen, a directory or a device is not a capture. */
static int parse_one(const char *name, const struct lrx_value_key *k, const char *value,
		     struct synth_options *opt)
{
	char valid[256];
	struct stat st;
	if (lrx_value_key_set(k, opt, value, valid, sizeof(valid)) < 0) {
		RTE_LOG(ERR, PMD, "%s: bad devarg %s=%s: must be %s\n", name, k->name, value,
			valid);
		return -EINVAL;
	}
	if (strcmp(k->name, "pcap") == 0 && stat(value, &st) == 0 && !S_ISREG(st.st_mode)) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: %s; must be %s\n", name, value,
			S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file", k->help);
		return -EINVAL;
	}
	return 0;
}

/* What the devargs say together: -EINVAL with a message naming them. */
static int synth_check_options(const char *name, const struct synth_options *opt)
{
	if (opt->profile == SYNTH_PROFILE_UDP64 && (opt->flows != 1 ||
						    opt->size != 64)) {
		RTE_LOG(ERR, PMD,
			"%s: profile=udp64 is one flow of 64-byte frames; use "
			"profile=udp-flows for flows=/size=\n", name);
		return -EINVAL;
	}
	if (opt->profile == SYNTH_PROFILE_PCAP && opt->pcap[0] == '\0') {
		RTE_LOG(ERR, PMD, "%s: profile=pcap needs pcap=<file>\n", name);
		return -EINVAL;
	}
	if (opt->profile != SYNTH_PROFILE_PCAP && opt->pcap[0]) {
		RTE_LOG(ERR, PMD,
			"%s: pcap=%s is only valid with profile=pcap\n", name,
			opt->pcap);
		return -EINVAL;
	}
	if (opt->profile == SYNTH_PROFILE_MIXED) {
		double sum = opt->ipv6_share + opt->arp_share +
			     opt->vlan_share + opt->malformed_share;
		if (sum > 1.0 + 1e-9) {
			RTE_LOG(ERR, PMD,
				"%s: ipv6_share+arp_share+vlan_share+"
				"malformed_share = %.3f; valid: at most 1\n",
				name, sum);
			return -EINVAL;
		}
		if (opt->flows > SYNTH_MIXED_SCHEDULE) {
			RTE_LOG(ERR, PMD,
				"%s: bad devarg flows=%u: profile=mixed allows "
				"1..%u\n", name, opt->flows,
				SYNTH_MIXED_SCHEDULE);
			return -EINVAL;
		}
	}
	if (opt->profile == SYNTH_PROFILE_IMIX && opt->flows > 16384) {
		RTE_LOG(ERR, PMD,
			"%s: bad devarg flows=%u: profile=imix allows 1..16384\n",
			name, opt->flows);
		return -EINVAL;
	}
	if (opt->link_down_for_ms && !opt->link_down_ms) {
		RTE_LOG(ERR, PMD,
			"%s: link_down_for_ms=%u needs link_down_ms (when the "
			"link goes down)\n", name, (unsigned)opt->link_down_for_ms);
		return -EINVAL;
	}
	if (opt->cold && opt->copy) {
		RTE_LOG(ERR, PMD,
			"%s: cold=1 emulates DMA into buffers the CPU has not "
			"touched and needs copy=0\n", name);
		return -EINVAL;
	}
	return 0;
}

int synth_parse_devargs(const char *name, const char *args,
			struct synth_options *opt)
{
	const char *bad = NULL;
	memset(opt, 0, sizeof(*opt));
	RTE_VERIFY(lrx_value_keys_default(synth_args, opt, &bad) == 0);
	struct rte_kvargs *kv = NULL;
	if (args && args[0]) {
		kv = rte_kvargs_parse(args, NULL);
		if (!kv) {
			RTE_LOG(ERR, PMD,
				"%s: cannot parse devargs \"%s\": expected "
				"key=value pairs separated by ','\n",
				name, args);
			return -EINVAL;
		}
	}
	bool seen_flows = false, seen_size = false;
	int rc = 0;
	for (unsigned i = 0; kv && i < kv->count && rc == 0; i++) {
		const char *key = kv->pairs[i].key;
		const char *value = kv->pairs[i].value ? kv->pairs[i].value : "";
		const struct lrx_value_key *k = lrx_value_key_find(synth_args, key);
		if (!k) {
			RTE_LOG(ERR, PMD,
				"%s: unknown devarg \"%s\"; valid keys: %s\n",
				name, key, synth_param_string);
			rc = -EINVAL;
			break;
		}
		/* rte_kvargs keeps both: a key given twice is a mistake,
		 * not "the last wins" */
		for (unsigned j = 0; j < i && rc == 0; j++)
			if (strcmp(kv->pairs[j].key, key) == 0) {
				RTE_LOG(ERR, PMD, "%s: devarg %s given twice (%s=%s, then %s=%s)\n",
					name, key, key, kv->pairs[j].value ? kv->pairs[j].value : "",
					key, value);
				rc = -EINVAL;
			}
		if (rc)
			break;
		seen_flows |= strcmp(key, "flows") == 0;
		seen_size |= strcmp(key, "size") == 0;
		rc = parse_one(name, k, value, opt);
	}
	rte_kvargs_free(kv);
	if (rc)
		return rc;

	if (!seen_flows)
		opt->flows = opt->profile == SYNTH_PROFILE_UDP64 ? 1 :
			     opt->profile == SYNTH_PROFILE_TCP_STREAM ? 4 : 64;
	if (!seen_size)
		opt->size = 64;
	return synth_check_options(name, opt);
}
