/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_synth internals: the emulated NIC's options, its pre-built frame
 * schedules, queues and counters. Shared by synth_devargs.c (options),
 * synth_gen.c (frames) and synth_ethdev.c (the driver).
 */
#ifndef SYNTH_H
#define SYNTH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#define SYNTH_DRIVER_NAME "net_synth"
#define SYNTH_RETA_SIZE 128
#define SYNTH_RSS_KEY_LEN 40
#define SYNTH_MAX_FRAME 9018
#define SYNTH_HEAD_MAX 128   /* bytes rewritten per hand-out (copy=0) */
#define SYNTH_MIXED_SCHEDULE 10000
#define SYNTH_REAP_MAX 256   /* TX completions freed per RX poll */

enum synth_profile {
	SYNTH_PROFILE_UDP64,
	SYNTH_PROFILE_UDP_FLOWS,
	SYNTH_PROFILE_TCP_STREAM,
	SYNTH_PROFILE_IMIX,
	SYNTH_PROFILE_PCAP,
	SYNTH_PROFILE_MIXED,
};

enum synth_hint {
	SYNTH_HINT_HASH = 1u << 0,
	SYNTH_HINT_CSUM = 1u << 1,
	SYNTH_HINT_VLAN = 1u << 2,
	SYNTH_HINT_TIMESTAMP = 1u << 3,
	SYNTH_HINT_PTYPE = 1u << 4,
	SYNTH_HINT_ALL = (1u << 5) - 1,
};

/* what a generated frame is; one counter per kind per queue */
#define SYNTH_KINDS(X)                                                         \
	X(normal)                                                              \
	X(ipv6)                                                                \
	X(arp)                                                                 \
	X(vlan)                                                                \
	X(malformed_bad_csum)                                                  \
	X(malformed_truncated)                                                 \
	X(malformed_bad_ihl)                                                   \
	X(malformed_bad_version)                                               \
	X(malformed_bad_total_len)

enum synth_kind {
#define SYNTH_KIND_ENUM(name) SYNTH_KIND_##name,
	SYNTH_KINDS(SYNTH_KIND_ENUM)
#undef SYNTH_KIND_ENUM
	SYNTH_KIND_MAX
};
#define SYNTH_KIND_FIRST_MALFORMED SYNTH_KIND_malformed_bad_csum
#define SYNTH_MALFORMED_KINDS (SYNTH_KIND_MAX - SYNTH_KIND_FIRST_MALFORMED)

/* per RX queue counters (xstats rx_q<N>_<name>) after the kind counters */
#define SYNTH_RXQ_COUNTERS(X)                                                  \
	X(packets)                                                             \
	X(bytes)                                                               \
	X(nombuf)                                                              \
	X(rate_limited_polls)                                                  \
	X(tcp_psh)                                                             \
	X(tcp_reorder)                                                         \
	X(tcp_retrans)                                                         \
	X(tcp_opt_change)                                                      \
	X(tcp_tos_change)                                                      \
	X(tcp_ttl_change)                                                      \
	X(tx_completions_reaped)                                               \
	X(tx_recycle_calls)

enum synth_rxq_counter {
#define SYNTH_RXC_ENUM(name) SYNTH_RXC_##name,
	SYNTH_RXQ_COUNTERS(SYNTH_RXC_ENUM)
#undef SYNTH_RXC_ENUM
	SYNTH_RXC_MAX
};

#define SYNTH_TXQ_COUNTERS(X)                                                  \
	X(packets)                                                             \
	X(bytes)                                                               \
	X(completion_queued)                                                   \
	X(completion_freed)                                                    \
	X(recycle_calls)                                                       \
	X(clean_on_xmit)                                                       \
	X(done_cleanup_freed)                                                  \
	X(pcap_frames)

enum synth_txq_counter {
#define SYNTH_TXC_ENUM(name) SYNTH_TXC_##name,
	SYNTH_TXQ_COUNTERS(SYNTH_TXC_ENUM)
#undef SYNTH_TXC_ENUM
	SYNTH_TXC_MAX
};

struct synth_options {
	enum synth_profile profile;
	uint32_t flows;
	uint32_t size;        /* on-wire bytes incl. the 4-byte FCS */
	uint64_t seed;
	uint16_t max_rxq, max_txq;
	uint64_t rate;        /* pps for the whole device, 0 = unlimited */
	uint32_t hints;       /* enum synth_hint */
	bool cold;
	uint32_t cold_mb;     /* 0 = 4 x LLC */
	bool copy;
	bool recycle_bulk;
	uint16_t mss;
	double psh_rate, reorder_rate, retrans_rate;
	double opt_change_rate, tos_change_rate, ttl_change_rate;
	double ipv6_share, arp_share, vlan_share, malformed_share;
	char pcap[PATH_MAX];
	char tx_pcap[PATH_MAX];
	uint64_t link_down_ms;     /* after start the link goes down; 0 = never */
	uint64_t link_down_for_ms; /* and stays down this long; 0 = until stop */
	uint64_t stall_ms;         /* each queue's first poll spins; 0 = never */
};

/* one pre-built frame of a queue's schedule */
struct synth_frame {
	/* written as one 16-byte block over mbuf->rx_descriptor_fields1 */
	uint32_t packet_type;
	uint32_t pkt_len;
	uint16_t data_len;
	uint16_t vlan_tci;
	uint32_t rss;
	uint64_t ol_flags;
	uint32_t head_off;  /* offset of the frame's head in queue->heads */
	uint16_t head_len;  /* bytes rewritten per hand-out */
	uint8_t kind;
	uint8_t queue;
};

/* a frame of the pcap file */
struct synth_pcap_frame {
	uint32_t len;
	uint8_t *data;
};

struct synth_tcp_flow {
	uint8_t head[SYNTH_HEAD_MAX]; /* Ether + IPv4 + TCP(TS) + payload start */
	uint32_t seq;
	uint32_t tsval;
	uint16_t ip_id;
	uint32_t rss;
	bool hole_pending;          /* a reordered segment is owed */
	uint32_t hole_seq;
};

struct synth_device;

struct synth_rx_queue {
	/* hot: read every burst */
	struct rte_mempool *pool;      /* where mbufs come from (copy=0: prebuilt) */
	const struct synth_frame *frames;
	const uint8_t *heads;
	const uint8_t *pattern;        /* payload bytes by frame offset */
	uint32_t nb_frames;
	uint32_t next;
	uint64_t mbuf_initializer;     /* rearm_data: data_off, refcnt, segs, port */
	bool copy;
	bool cold;
	bool timestamp;
	uint64_t ts_flag;
	int ts_offset;
	struct synth_tx_queue *paired_tx;
	uint64_t rate_pps;             /* 0 = unlimited */
	uint64_t rate_credit, rate_last, rate_depth;
	/* link_down_ms: TSC window in which the link is down (RX empty);
	 * from 0 = never */
	uint64_t link_down_from, link_down_until;
	bool faults;                   /* link_down_ms or a stall pending */
	uint64_t stall_cycles;         /* stall_ms, until the first poll */
	uint64_t counters[SYNTH_KIND_MAX + SYNTH_RXC_MAX];
	/* tcp-stream */
	struct synth_tcp_flow *tcp_flows;
	uint32_t nb_tcp_flows;
	uint32_t tcp_next;
	uint32_t tcp_payload_sum;
	uint64_t prng;
	/* slow */
	struct synth_device *dev;
	struct rte_mempool *app_pool;
	struct rte_mempool *prebuilt;  /* own pool (copy=0), freed at release */
	uint16_t queue_id;
	uint16_t nb_desc;
	void *frames_mem;
	void *heads_mem;
} __rte_cache_aligned;

struct synth_tx_queue {
	struct rte_ring *completions;
	struct synth_device *dev;
	uint64_t counters[SYNTH_TXC_MAX];
	uint16_t queue_id;
	/* rte_eth_txconf.tx_free_thresh: transmit frees everything completed
	 * when fewer descriptors than this are free (0: only what a burst
	 * that does not fit needs) */
	uint16_t free_thresh;
	bool recycle_bulk;
} __rte_cache_aligned;

struct synth_device {
	char name[RTE_ETH_NAME_MAX_LEN];
	struct synth_options opt;
	struct rte_ether_addr mac;
	uint16_t port_id;
	uint16_t mtu;
	bool started;
	uint64_t link_down_from, link_down_until; /* as the RX queues' */
	struct synth_pcap_frame *pcap_frames;
	uint32_t nb_pcap_frames;
	uint8_t *pcap_data;
	FILE *tx_pcap;
	uint8_t pattern[SYNTH_MAX_FRAME];
	uint8_t rss_key[SYNTH_RSS_KEY_LEN] __rte_aligned(16); /* rte_softrss loads words */
	uint16_t reta[SYNTH_RETA_SIZE];
	uint16_t nb_rxq, nb_txq;
	/* the RX poll of queue i frees what TX queue i completed (the
	 * default; rte_pmd_synth_set_rx_clean) */
	bool rx_clean;
	struct synth_rx_queue *rxq[RTE_MAX_QUEUES_PER_PORT];
	struct synth_tx_queue *txq[RTE_MAX_QUEUES_PER_PORT];
};

/* synth_devargs.c */
int synth_parse_devargs(const char *name, const char *args,
			struct synth_options *opt);
/* The devargs, as RTE_PMD_REGISTER_PARAM_STRING exports them and the
 * unknown-key message lists them (a literal: the macro needs one) */
#define SYNTH_PARAM_STRING \
	"profile=udp64|udp-flows|tcp-stream|imix|pcap|mixed flows=<int> " \
	"size=<int> seed=<int> rxq=<int> txq=<int> rate=<pps> " \
	"hints=<hash+csum+vlan+timestamp+ptype|all|none> cold=0|1 " \
	"cold_mb=<int> copy=0|1 recycle=bulk|single mss=<int> " \
	"psh_rate=<f> reorder_rate=<f> retrans_rate=<f> opt_change_rate=<f> " \
	"tos_change_rate=<f> ttl_change_rate=<f> ipv6_share=<f> " \
	"arp_share=<f> vlan_share=<f> malformed_share=<f> pcap=<path> " \
	"tx_pcap=<path> link_down_ms=<ms> link_down_for_ms=<ms> stall_ms=<ms>"
extern const char synth_param_string[];

/* synth_gen.c */
int synth_pcap_load(struct synth_device *dev);
int synth_pcap_write_header(FILE *f);
/* tx_pcap=PATH: created or truncated, without blocking on a FIFO or
 * following a link; a regular file only. 0 or -EINVAL (logged). */
int synth_tx_pcap_open(struct synth_device *dev, const char *name, const char *path);
void synth_pcap_write_frame(FILE *f, const struct rte_mbuf *m);
void synth_init_pattern(struct synth_device *dev);
int synth_build_schedule(struct synth_device *dev, struct synth_rx_queue *q,
			 uint16_t data_room);
int synth_build_tcp_flows(struct synth_device *dev, struct synth_rx_queue *q,
			  uint16_t data_room);
uint16_t synth_tcp_fill(struct synth_rx_queue *q, struct rte_mbuf *m);
uint32_t synth_rss_queue(const struct synth_device *dev, uint32_t rss);
uint32_t synth_max_frame_len(const struct synth_device *dev);

static inline uint64_t synth_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline double synth_uniform(uint64_t *state)
{
	return (double)(synth_splitmix64(state) >> 11) * 0x1.0p-53;
}

#endif /* SYNTH_H */
