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

#include <rte_kvargs.h>
#include <rte_log.h>

#include "synth.h"

enum synth_arg_type { ARG_UINT, ARG_DOUBLE, ARG_BOOL, ARG_PATH, ARG_SPECIAL };

struct synth_arg {
	const char *key;
	enum synth_arg_type type;
	size_t offset;
	size_t width;          /* bytes of the integer field */
	uint64_t min, max;     /* ARG_UINT */
	const char *help;
};

#define OPT(field) offsetof(struct synth_options, field)
#define WIDTH(field) sizeof(((struct synth_options *)0)->field)
#define UINT_ARG(k, f, lo, hi, h) {k, ARG_UINT, OPT(f), WIDTH(f), lo, hi, h}
#define RATE_ARG(k, f, h) {k, ARG_DOUBLE, OPT(f), 0, 0, 0, h}

static const struct synth_arg synth_args[] = {
	{"profile", ARG_SPECIAL, 0, 0, 0, 0,
	 "udp64|udp-flows|tcp-stream|imix|pcap|mixed"},
	UINT_ARG("flows", flows, 1, 65536, "flows, 1..65536"),
	UINT_ARG("size", size, 64, SYNTH_MAX_FRAME + 4,
		 "on-wire frame size incl. FCS, 64..9022"),
	UINT_ARG("seed", seed, 0, UINT64_MAX, "any unsigned 64-bit integer"),
	UINT_ARG("rxq", max_rxq, 1, 64, "max RX queues, 1..64"),
	UINT_ARG("txq", max_txq, 1, 64, "max TX queues, 1..64"),
	UINT_ARG("rate", rate, 0, UINT64_MAX, "pps cap, 0 = unlimited"),
	{"hints", ARG_SPECIAL, 0, 0, 0, 0,
	 "list of hash,csum,vlan,timestamp,ptype joined by '+' or in "
	 "[a,b], or all, or none"},
	{"cold", ARG_BOOL, OPT(cold), 0, 0, 1, "0|1"},
	UINT_ARG("cold_mb", cold_mb, 1, 65536, "MiB of buffers, 1..65536"),
	{"copy", ARG_BOOL, OPT(copy), 0, 0, 1, "0|1"},
	{"recycle", ARG_SPECIAL, 0, 0, 0, 0, "bulk|single"},
	UINT_ARG("mss", mss, 64, 9000, "TCP payload bytes, 64..9000"),
	RATE_ARG("psh_rate", psh_rate, "fraction 0..1"),
	RATE_ARG("reorder_rate", reorder_rate, "fraction 0..1"),
	RATE_ARG("retrans_rate", retrans_rate, "fraction 0..1"),
	RATE_ARG("opt_change_rate", opt_change_rate, "fraction 0..1"),
	RATE_ARG("tos_change_rate", tos_change_rate, "fraction 0..1"),
	RATE_ARG("ttl_change_rate", ttl_change_rate, "fraction 0..1"),
	RATE_ARG("ipv6_share", ipv6_share, "fraction 0..1"),
	RATE_ARG("arp_share", arp_share, "fraction 0..1"),
	RATE_ARG("vlan_share", vlan_share, "fraction 0..1"),
	RATE_ARG("malformed_share", malformed_share, "fraction 0..1"),
	{"pcap", ARG_PATH, OPT(pcap), 0, 0, 0, "path of a pcap or pcapng file (Ethernet)"},
	{"tx_pcap", ARG_PATH, OPT(tx_pcap), 0, 0, 0, "path of a pcap to write"},
	UINT_ARG("link_down_ms", link_down_ms, 0, 86400000,
		 "ms after start when the link goes down (RX delivers nothing), "
		 "0 = never"),
	UINT_ARG("link_down_for_ms", link_down_for_ms, 0, 86400000,
		 "ms the link stays down, 0 = until the port stops"),
};

const char synth_param_string[] =
	"profile=udp64|udp-flows|tcp-stream|imix|pcap|mixed flows=<int> "
	"size=<int> seed=<int> rxq=<int> txq=<int> rate=<pps> "
	"hints=<hash+csum+vlan+timestamp+ptype|all|none> cold=0|1 "
	"cold_mb=<int> copy=0|1 recycle=bulk|single mss=<int> "
	"psh_rate=<f> reorder_rate=<f> retrans_rate=<f> opt_change_rate=<f> "
	"tos_change_rate=<f> ttl_change_rate=<f> ipv6_share=<f> "
	"arp_share=<f> vlan_share=<f> malformed_share=<f> pcap=<path> "
	"tx_pcap=<path> link_down_ms=<ms> link_down_for_ms=<ms>";

static const char *const profile_names[] = {
	[SYNTH_PROFILE_UDP64] = "udp64",
	[SYNTH_PROFILE_UDP_FLOWS] = "udp-flows",
	[SYNTH_PROFILE_TCP_STREAM] = "tcp-stream",
	[SYNTH_PROFILE_IMIX] = "imix",
	[SYNTH_PROFILE_PCAP] = "pcap",
	[SYNTH_PROFILE_MIXED] = "mixed",
};

static const struct {
	const char *name;
	uint32_t bits;
} hint_names[] = {
	{"hash", SYNTH_HINT_HASH}, {"csum", SYNTH_HINT_CSUM},
	{"vlan", SYNTH_HINT_VLAN}, {"timestamp", SYNTH_HINT_TIMESTAMP},
	{"ptype", SYNTH_HINT_PTYPE}, {"all", SYNTH_HINT_ALL},
	{"none", 0},
};

#define BAD(name, key, value, valid)                                           \
	(RTE_LOG(ERR, PMD,                                                     \
		 "%s: bad devarg %s=%s: valid values: %s\n", name, key, value,  \
		 valid),                                                       \
	 -EINVAL)

static int parse_hints(const char *value, uint32_t *out)
{
	char buf[128];
	size_t len = strlen(value);
	if (len >= sizeof(buf))
		return -EINVAL;
	/* accept [a,b,c] (kvargs list syntax) and a+b+c */
	if (value[0] == '[' && len >= 2 && value[len - 1] == ']') {
		memcpy(buf, value + 1, len - 2);
		buf[len - 2] = '\0';
	} else {
		memcpy(buf, value, len + 1);
	}
	uint32_t bits = 0;
	char *save = NULL;
	int tokens = 0;
	for (char *tok = strtok_r(buf, ",+", &save); tok;
	     tok = strtok_r(NULL, ",+", &save)) {
		size_t i;
		for (i = 0; i < RTE_DIM(hint_names); i++)
			if (strcmp(tok, hint_names[i].name) == 0)
				break;
		if (i == RTE_DIM(hint_names))
			return -EINVAL;
		bits |= hint_names[i].bits;
		tokens++;
	}
	if (tokens == 0)
		return -EINVAL;
	*out = bits;
	return 0;
}

static int parse_one(const char *name, const struct synth_arg *a,
		     const char *value, struct synth_options *opt)
{
	char *end = NULL;
	uint8_t *field = (uint8_t *)opt + a->offset;

	switch (a->type) {
	case ARG_UINT: {
		if (value[0] == '-' || value[0] == '\0')
			return BAD(name, a->key, value, a->help);
		/* decimal only, as listrx's own options: base 0 read 010 as 8 */
		if (value[0] < '0' || value[0] > '9' ||
		    (value[0] == '0' && value[1]))
			return BAD(name, a->key, value, a->help);
		errno = 0;
		unsigned long long v = strtoull(value, &end, 10);
		if (errno || *end || v < a->min || v > a->max)
			return BAD(name, a->key, value, a->help);
		switch (a->width) {
		case 2: *(uint16_t *)field = (uint16_t)v; break;
		case 4: *(uint32_t *)field = (uint32_t)v; break;
		default: *(uint64_t *)field = (uint64_t)v; break;
		}
		return 0;
	}
	case ARG_DOUBLE: {
		/* decimal notation only: strtod also takes hex floats */
		if (!((value[0] >= '0' && value[0] <= '9') || value[0] == '.') ||
		    strpbrk(value, "xX"))
			return BAD(name, a->key, value, a->help);
		double v = strtod(value, &end);
		if (end == value || *end || !(v >= 0.0 && v <= 1.0))
			return BAD(name, a->key, value, a->help);
		*(double *)field = v;
		return 0;
	}
	case ARG_BOOL:
		if (strcmp(value, "0") && strcmp(value, "1"))
			return BAD(name, a->key, value, a->help);
		*(bool *)field = value[0] == '1';
		return 0;
	case ARG_PATH:
		if (value[0] == '\0' || strlen(value) >= PATH_MAX)
			return BAD(name, a->key, value, a->help);
		/* a FIFO would block the probe in fopen, a directory or a
		 * device is not a capture: only a regular file is read */
		struct stat st;
		if (strcmp(a->key, "pcap") == 0 && stat(value, &st) == 0 &&
		    !S_ISREG(st.st_mode)) {
			RTE_LOG(ERR, PMD, "%s: pcap=%s: %s; valid: %s\n", name, value,
				S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file",
				a->help);
			return -EINVAL;
		}
		strcpy((char *)field, value);
		return 0;
	case ARG_SPECIAL:
		break;
	}
	if (strcmp(a->key, "profile") == 0) {
		for (size_t i = 0; i < RTE_DIM(profile_names); i++)
			if (strcmp(value, profile_names[i]) == 0) {
				opt->profile = (enum synth_profile)i;
				return 0;
			}
		return BAD(name, a->key, value, a->help);
	}
	if (strcmp(a->key, "hints") == 0)
		return parse_hints(value, &opt->hints) ?
			       BAD(name, a->key, value, a->help) : 0;
	if (strcmp(a->key, "recycle") == 0) {
		if (strcmp(value, "bulk") && strcmp(value, "single"))
			return BAD(name, a->key, value, a->help);
		opt->recycle_bulk = strcmp(value, "bulk") == 0;
		return 0;
	}
	return -EINVAL;
}

static void set_defaults(struct synth_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->profile = SYNTH_PROFILE_UDP64;
	opt->flows = 0;   /* per profile, below */
	opt->size = 0;
	opt->seed = 1;
	opt->max_rxq = 8;
	opt->max_txq = 8;
	opt->hints = SYNTH_HINT_HASH | SYNTH_HINT_CSUM | SYNTH_HINT_PTYPE;
	opt->copy = false;
	opt->recycle_bulk = true;
	opt->mss = 1448;
}

int synth_parse_devargs(const char *name, const char *args,
			struct synth_options *opt)
{
	set_defaults(opt);
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
		size_t k;
		for (k = 0; k < RTE_DIM(synth_args); k++)
			if (strcmp(key, synth_args[k].key) == 0)
				break;
		if (k == RTE_DIM(synth_args)) {
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
		rc = parse_one(name, &synth_args[k], value, opt);
	}
	rte_kvargs_free(kv);
	if (rc)
		return rc;

	if (!seen_flows)
		opt->flows = opt->profile == SYNTH_PROFILE_UDP64 ? 1 :
			     opt->profile == SYNTH_PROFILE_TCP_STREAM ? 4 : 64;
	if (!seen_size)
		opt->size = 64;
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
