/* SPDX-License-Identifier: BSD-3-Clause
 * Drop reasons, named after the kernel's enum skb_drop_reason
 * (include/net/dropreason-core.h) where one exists, so that a drop counted
 * by listrx and one counted by `perf trace -e skb:kfree_skb` read the same.
 * One X-macro list yields the enum and the strings (as VPP's error lists).
 */
#ifndef LISTRX_DROP_REASON_H
#define LISTRX_DROP_REASON_H

#define LRX_DROP_REASONS(X)                                                   \
	X(NOT_SPECIFIED)    /* kernel: SKB_DROP_REASON_NOT_SPECIFIED */           \
	X(PKT_TOO_SMALL)    /* frame shorter than the header it claims */         \
	X(OTHERHOST)        /* PACKET_OTHERHOST, as ip_rcv_core */                \
	X(IP_CSUM)          /* IPv4 header checksum bad */                        \
	X(IP_INHDR)         /* bad version / IHL / total length */                \
	X(IP_INADDRERRORS)  /* martian source or destination */                   \
	X(IP_RPFILTER)      /* reverse path filter */                             \
	X(IP_NOPROTO)       /* no handler for the L4 protocol */                  \
	X(IPV6_BAD_EXTHDR)  /* malformed IPv6 extension header */                 \
	X(UNHANDLED_PROTO)  /* L3 protocol with no handler (ARP, ...) */          \
	X(FRAG_REASM_TIMEOUT)                                                     \
	X(DUP_FRAG)         /* a fragment inside what the queue holds (ip_frag_queue) */ \
	X(FRAG_OVERLAP)     /* overlapping fragment: its queue discarded, RFC 5722   \
	                     * (kernel: NOT_SPECIFIED after IpExtReasmOverlaps) */   \
	X(FRAG_INVALID)     /* fragment against ip_frag_queue's length rules      \
	                     * (kernel: NOT_SPECIFIED) */                        \
	X(FRAG_TOO_FAR)     /* queue restarted by ipfrag_max_dist (ip_frag_reinit) */ \
	X(TCP_CSUM)         /* TCP checksum bad */                                \
	X(UDP_CSUM)         /* UDP checksum bad */                                \
	X(XDP)              /* XDP_DROP verdict */                                \
	X(XDP_ABORTED)      /* XDP_ABORTED: kernel counts it as XDP too, with a trace */ \
	X(TC_EGRESS)        /* redirect/tx to a port that does not exist */       \
	X(DEV_READY)        /* TX ring full: kernel's qdisc drop analog */        \
	X(NOMEM)            /* no buffer (metadata pool empty, ...) */            \
	X(TEST_DROP)        /* drop-every-k test stage */                     \
	X(NO_SOCKET)        /* UDP/TCP: no socket bound to the port */        \
	X(ICMP_CSUM)        /* ICMP checksum bad (icmp_rcv) */                \
	X(INVALID_PROTO)    /* icmp_rcv: echo etc. to broadcast/multicast */  \
	X(IP_INVALID_SOURCE) /* martian source (ip_route_input_slow) */       \
	X(IP_LOCAL_SOURCE)  /* source is a local address (fib_validate_source) */ \
	X(IP_LOCALNET)      /* 127/8 source or destination (route_localnet off) */ \
	X(IP_INVALID_DEST)  /* martian destination */                        \
	X(TC_INGRESS)       /* TC_ACT_SHOT at the ingress hook (sch_handle_ingress) */ \
	X(TC_RECLASSIFY_LOOP) /* TC_ACT_RECLASSIFY past max_reclassify_loop     \
	                     * (__tcf_classify) */                               \
	X(NETFILTER_DROP)   /* NF_DROP from a hook (nf_hook_slow) */              \
	X(CPU_BACKLOG)      /* RPS: the target's backlog is full (enqueue_to_backlog) */ \
	X(SOCKET_RCVBUFF)   /* a UDP socket's receive buffer is full */         \
	X(UNICAST_IN_L2_MULTICAST) /* IPv6 unicast in an L2 broadcast/multicast \
	                     * (drop_unicast_in_l2_multicast) */               \
	X(TCP_OLD_DATA)     /* every byte received already (tcp_data_queue) */ \
	X(TCP_INVALID_SEQUENCE) /* past the receive window (tcp_sequence) */   \
	X(TCP_ZEROWINDOW)   /* in order, the window closed */                  \
	X(TCP_OVERWINDOW)   /* out of order, at or past the window's end */    \
	X(TCP_OFOMERGE)     /* out of order, its bytes all queued already */   \
	X(TCP_OFO_DROP)     /* out of order, passed whole by rcv_nxt */        \
	X(PROTO_MEM)        /* TCP: the receive buffer full (tcp_try_rmem_schedule) */

enum lrx_drop_reason {
#define LRX_DROP_ENUM(name) LRX_DROP_##name,
	LRX_DROP_REASONS(LRX_DROP_ENUM)
#undef LRX_DROP_ENUM
	LRX_DROP_MAX
};

/* "IP_CSUM" etc.: the kernel's SKB_DROP_REASON_ suffix. */
const char *lrx_drop_reason_name(enum lrx_drop_reason reason);

#endif
