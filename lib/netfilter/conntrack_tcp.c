/* SPDX-License-Identifier: BSD-3-Clause
 * conntrack's TCP tracker, as net/netfilter/nf_conntrack_proto_tcp.c
 * (Linux 6.x): tcp_error, tcp_new, the state table tcp_conntracks, and
 * nf_conntrack_tcp_packet with tcp_in_window (the sequence and window
 * bounds of each direction, window scaling from the SYNs' options, SACK
 * blocks), the RST checks of the CLOSE transition, nf_tcp_handle_invalid
 * and the retransmission and unacknowledged-data timeouts.
 */
#include <string.h>

#include <rte_common.h>

#include "conntrack_proto.h"

/* tcp_timeouts */
static const uint64_t lrx_tcp_timeouts[LRX_TCP_CT_MAX] = {
	[LRX_TCP_CT_SYN_SENT] = 2 * LRX_CT_MIN, [LRX_TCP_CT_SYN_RECV] = 60 * LRX_CT_S,
	[LRX_TCP_CT_ESTABLISHED] = 5 * 24 * 60 * LRX_CT_MIN,
	[LRX_TCP_CT_FIN_WAIT] = 2 * LRX_CT_MIN, [LRX_TCP_CT_CLOSE_WAIT] = 60 * LRX_CT_S,
	[LRX_TCP_CT_LAST_ACK] = 30 * LRX_CT_S, [LRX_TCP_CT_TIME_WAIT] = 2 * LRX_CT_MIN,
	[LRX_TCP_CT_CLOSE] = 10 * LRX_CT_S, [LRX_TCP_CT_SYN_SENT2] = 2 * LRX_CT_MIN,
};
#define LRX_TCP_TIMEOUT_RETRANS (5 * LRX_CT_MIN)
#define LRX_TCP_TIMEOUT_UNACK (5 * LRX_CT_MIN)
#define LRX_TCP_MAX_RETRANS 3  /* nf_conntrack_tcp_max_retrans */
#define LRX_TCP_MAX_WSCALE 14  /* TCP_MAX_WSCALE */
#define LRX_TCP_MAXACKWINCONST 66000u

/* ---- the state table ------------------------------------------------------ */

#define sNO LRX_TCP_CT_NONE
#define sSS LRX_TCP_CT_SYN_SENT
#define sSR LRX_TCP_CT_SYN_RECV
#define sES LRX_TCP_CT_ESTABLISHED
#define sFW LRX_TCP_CT_FIN_WAIT
#define sCW LRX_TCP_CT_CLOSE_WAIT
#define sLA LRX_TCP_CT_LAST_ACK
#define sTW LRX_TCP_CT_TIME_WAIT
#define sCL LRX_TCP_CT_CLOSE
#define sS2 LRX_TCP_CT_SYN_SENT2
#define sIV LRX_TCP_CT_MAX
#define sIG LRX_TCP_CT_IGNORE

/* tcp_conntracks as Linux 6.x has it: [dir][index][old state] */
static const uint8_t lrx_tcp_conntracks[2][6][LRX_TCP_CT_MAX] = {
	{
/* ORIGINAL	     sNO, sSS, sSR, sES, sFW, sCW, sLA, sTW, sCL, sS2 */
/* syn */	   { sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2 },
/* synack */	   { sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR },
/* fin */	   { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
/* ack */	   { sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV },
/* rst */	   { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
/* none */	   { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
	{
/* REPLY	     sNO, sSS, sSR, sES, sFW, sCW, sLA, sTW, sCL, sS2 */
/* syn */	   { sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2 },
/* synack */	   { sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR },
/* fin */	   { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
/* ack */	   { sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG },
/* rst */	   { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
/* none */	   { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
};

enum lrx_tcp_ct lrx_tcp_ct_next(unsigned dir, enum lrx_tcp_bit index,
				enum lrx_tcp_ct state)
{
	return (enum lrx_tcp_ct)lrx_tcp_conntracks[dir & 1][index][state];
}

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20
#define TH_ECE 0x40
#define TH_CWR 0x80

enum lrx_tcp_bit lrx_tcp_ct_index(uint8_t f)
{
	if (f & TH_RST)
		return LRX_TCP_RST_SET;
	if (f & TH_SYN)
		return (f & TH_ACK) ? LRX_TCP_SYNACK_SET : LRX_TCP_SYN_SET;
	if (f & TH_FIN)
		return LRX_TCP_FIN_SET;
	return (f & TH_ACK) ? LRX_TCP_ACK_SET : LRX_TCP_NONE_SET;
}

const char *lrx_tcp_ct_name(enum lrx_tcp_ct s)
{
	static const char *const names[] = {
		"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
		"CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2",
		"INVALID", "IGNORE",
	};
	return (unsigned)s < RTE_DIM(names) ? names[s] : "?";
}

/* tcp_valid_flags: PSH, ECE and CWR are always valid */
static bool lrx_tcp_valid_flags(uint8_t f)
{
	switch (f & ~(TH_ECE | TH_CWR | TH_PSH)) {
	case TH_SYN: case TH_SYN | TH_URG: case TH_SYN | TH_ACK:
	case TH_RST: case TH_RST | TH_ACK:
	case TH_FIN | TH_ACK: case TH_FIN | TH_ACK | TH_URG:
	case TH_ACK: case TH_ACK | TH_URG:
		return true;
	default:
		return false;
	}
}

/* ---- the segment ---------------------------------------------------------- */

/* what tcp_in_window reads of a segment */
struct lrx_tcp_seg {
	const uint8_t *th;
	uint32_t doff, seq, ack, end;
	uint32_t opts_end;  /* doff, or less where the first segment ends */
	uint16_t win;
	uint8_t flags;
};

/* before() / after() of include/net/tcp.h */
static inline bool lrx_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool lrx_after(uint32_t a, uint32_t b)
{
	return lrx_before(b, a);
}

/* the options (th + 20 up to doff), each as (kind, pointer to its data,
 * its data's length): the walk of tcp_options and tcp_sack, which stop
 * at EOL, a "silly" size or a partial option */
typedef bool (*lrx_tcp_opt_fn)(uint8_t kind, const uint8_t *data, unsigned len,
			       void *arg);

static void lrx_tcp_options_walk(const struct lrx_tcp_seg *s, lrx_tcp_opt_fn fn,
				 void *arg)
{
	const uint8_t *ptr = s->th + 20;
	int length = (int)s->opts_end - 20;
	while (length > 0) {
		const uint8_t kind = *ptr++;
		if (kind == 0) /* TCPOPT_EOL */
			return;
		if (kind == 1) { /* TCPOPT_NOP */
			length--;
			continue;
		}
		if (length < 2)
			return;
		const int size = *ptr++;
		if (size < 2 || size > length)
			return;
		if (fn(kind, ptr, (unsigned)size - 2, arg))
			return;
		ptr += size - 2;
		length -= size;
	}
}

static bool lrx_tcp_option_seen(uint8_t kind, const uint8_t *data, unsigned len,
				void *arg)
{
	struct lrx_ct_tcp_seen *seen = arg;
	if (kind == 4 && len == 0) { /* TCPOPT_SACK_PERM */
		seen->flags |= LRX_CT_TCP_SACK_PERM;
	} else if (kind == 3 && len == 1) { /* TCPOPT_WINDOW */
		seen->td_scale = RTE_MIN(data[0], LRX_TCP_MAX_WSCALE);
		seen->flags |= LRX_CT_TCP_WINDOW_SCALE;
	}
	return false;
}

/* tcp_options: SACK permitted and the window scale of a SYN */
static void lrx_tcp_options(const struct lrx_tcp_seg *s, struct lrx_ct_tcp_seen *seen)
{
	if (s->doff == 20)
		return;
	seen->td_scale = 0;
	seen->flags &= LRX_CT_TCP_BE_LIBERAL;
	lrx_tcp_options_walk(s, lrx_tcp_option_seen, seen);
}

static bool lrx_tcp_option_sack(uint8_t kind, const uint8_t *data, unsigned len,
				void *arg)
{
	uint32_t *sack = arg;
	if (kind != 5 || len < 8 || len % 8 != 0) /* TCPOPT_SACK */
		return false;
	for (unsigned i = 0; i < len; i += 8) {
		const uint32_t right = lrx_ct_rd32(data + i + 4);
		if (lrx_after(right, *sack))
			*sack = right;
	}
	return true;
}

/* tcp_sack: the highest right edge of the SACK blocks */
static void lrx_tcp_sack(const struct lrx_tcp_seg *s, uint32_t *sack)
{
	static const uint8_t ts_only[4] = {1, 1, 8, 10};
	if (s->opts_end <= 20 || (s->doff == 32 && s->opts_end == 32 &&
				   memcmp(s->th + 20, ts_only, 4) == 0))
		return;
	lrx_tcp_options_walk(s, lrx_tcp_option_sack, sack);
}

/* ---- tcp_in_window -------------------------------------------------------- */

enum lrx_tcp_action { LRX_TCP_ACT_ACCEPT, LRX_TCP_ACT_IGNORE, LRX_TCP_ACT_INVALID };

static inline uint32_t lrx_maxackwindow(const struct lrx_ct_tcp_seen *sender)
{
	return RTE_MAX(sender->td_maxwin, LRX_TCP_MAXACKWINCONST);
}

/* tcp_init_sender: a SYN-ACK answering a SYN, or a SYN from the reply
 * direction in a simultaneous open */
static void lrx_tcp_init_sender(struct lrx_ct_tcp_seen *sender,
				struct lrx_ct_tcp_seen *receiver,
				const struct lrx_tcp_seg *s, unsigned dir)
{
	sender->td_end = sender->td_maxend = s->end;
	sender->td_maxwin = s->win == 0 ? 1 : s->win;
	lrx_tcp_options(s, sender);
	/* RFC 7323: both sides must send the option to scale either */
	if (dir == 1 && !(sender->flags & receiver->flags & LRX_CT_TCP_WINDOW_SCALE)) {
		sender->td_scale = 0;
		receiver->td_scale = 0;
	}
}

/* nf_tcp_log_invalid: be_liberal (the sysctl or the sender's flag, a
 * picked-up connection's) takes what the window would refuse */
static inline enum lrx_tcp_action lrx_tcp_refuse(const struct lrx_ct *ct,
						 const struct lrx_ct_tcp_seen *sender,
						 enum lrx_tcp_action action)
{
	return (ct->tcp_be_liberal || (sender->flags & LRX_CT_TCP_BE_LIBERAL))
		       ? LRX_TCP_ACT_ACCEPT : action;
}

/* the first packet seen of a direction (td_maxwin 0); false when the
 * check stops there (a SYN of a simultaneous open) */
static bool lrx_tcp_window_first(struct lrx_ct_tcp_seen *sender,
				 struct lrx_ct_tcp_seen *receiver,
				 const struct lrx_tcp_seg *s, uint32_t sack, unsigned dir)
{
	if (s->flags & TH_SYN) {
		lrx_tcp_init_sender(sender, receiver, s, dir);
		return (s->flags & TH_ACK) != 0;
	}
	/* in the middle of a connection: take the packet's own numbers */
	sender->td_end = s->end;
	const uint32_t swin = (uint32_t)s->win << sender->td_scale;
	sender->td_maxwin = swin == 0 ? 1 : swin;
	sender->td_maxend = s->end + sender->td_maxwin;
	if (receiver->td_maxwin == 0)
		/* nothing seen the other way: pass III and IV until then */
		receiver->td_end = receiver->td_maxend = sack;
	else if (sack == receiver->td_end + 1)
		receiver->td_end++; /* likely the reply to a keepalive */
	return true;
}

/* the state after an accepted segment: the sender's window and end, the
 * receiver's maximum end, the retransmission count */
static void lrx_tcp_window_update(struct lrx_ct_tcp *st, struct lrx_ct_tcp_seen *sender,
				  struct lrx_ct_tcp_seen *receiver,
				  const struct lrx_tcp_seg *s, unsigned dir,
				  unsigned index, uint32_t seq, uint32_t end,
				  uint32_t ack, uint32_t sack)
{
	uint32_t win = s->win;
	if (!(s->flags & TH_SYN))
		win <<= sender->td_scale; /* RFC 7323 */
	const uint32_t swin = win + (sack - ack);
	if (sender->td_maxwin < swin)
		sender->td_maxwin = swin;
	if (lrx_after(end, sender->td_end)) {
		sender->td_end = end;
		sender->flags |= LRX_CT_TCP_DATA_UNACKNOWLEDGED;
	}
	if (s->flags & TH_ACK) {
		if (!(sender->flags & LRX_CT_TCP_MAXACK_SET)) {
			sender->td_maxack = ack;
			sender->flags |= LRX_CT_TCP_MAXACK_SET;
		} else if (lrx_after(ack, sender->td_maxack)) {
			sender->td_maxack = ack;
		}
	}
	if (receiver->td_maxwin != 0 && lrx_after(end, sender->td_maxend))
		receiver->td_maxwin += end - sender->td_maxend;
	if (lrx_after(sack + win, receiver->td_maxend - 1)) {
		receiver->td_maxend = sack + win;
		if (win == 0)
			receiver->td_maxend++;
	}
	if (ack == receiver->td_end)
		receiver->flags &= (uint8_t)~LRX_CT_TCP_DATA_UNACKNOWLEDGED;
	if (index != LRX_TCP_ACK_SET)
		return;
	if (st->last_dir == dir && st->last_seq == seq && st->last_ack == ack &&
	    st->last_end == end && st->last_win == s->win) {
		st->retrans++;
	} else {
		st->last_dir = (uint8_t)dir;
		st->last_seq = seq;
		st->last_ack = ack;
		st->last_end = end;
		st->last_win = s->win;
		st->retrans = 0;
	}
}

/* tcp_in_window. The bounds (van Rooij, as the kernel comments them):
 * I seq <= sender.td_maxend, II seq + len >= sender.td_end -
 * receiver.td_maxwin, III sack <= receiver.td_end, IV sack >=
 * receiver.td_end - MAXACKWINDOW. No NAT: no sequence offset. */
static enum lrx_tcp_action lrx_tcp_in_window(const struct lrx_ct *ct,
					     struct lrx_ct_tcp *st, unsigned dir,
					     unsigned index, const struct lrx_tcp_seg *s)
{
	struct lrx_ct_tcp_seen *sender = &st->seen[dir];
	struct lrx_ct_tcp_seen *receiver = &st->seen[!dir];
	uint32_t seq = s->seq, ack = s->ack, sack = s->ack, end = s->end;

	if (receiver->flags & LRX_CT_TCP_SACK_PERM)
		lrx_tcp_sack(s, &sack);
	if (sender->td_maxwin == 0) {
		if (!lrx_tcp_window_first(sender, receiver, s, sack, dir))
			return LRX_TCP_ACT_ACCEPT;
	} else if ((s->flags & TH_SYN) && lrx_after(end, sender->td_end) &&
		   (st->state == LRX_TCP_CT_SYN_SENT || st->state == LRX_TCP_CT_SYN_RECV)) {
		/* RFC 793: a reinitialized TCP uses higher numbers: start
		 * this direction again */
		lrx_tcp_init_sender(sender, receiver, s, dir);
		if (dir == 1 && !(s->flags & TH_ACK))
			return LRX_TCP_ACT_ACCEPT;
	}
	if (!(s->flags & TH_ACK) ||
	    ((s->flags & (TH_ACK | TH_RST)) == (TH_ACK | TH_RST) && ack == 0))
		/* no ACK (or a broken stack's RST with ack 0): as if in order */
		ack = sack = receiver->td_end;
	if ((s->flags & TH_RST) && seq == 0 && st->state == LRX_TCP_CT_SYN_SENT)
		seq = end = sender->td_end; /* the RST answering a SYN */

	if (!lrx_before(seq, sender->td_maxend + 1)) {
		/* I: beyond the receiver's window */
		const uint32_t overshot = end - sender->td_maxend + 1;
		const bool ack_ok = lrx_after(sack, receiver->td_end - lrx_maxackwindow(sender) - 1);
		const bool in_recv_win = receiver->td_maxwin &&
			lrx_after(end, sender->td_end - receiver->td_maxwin - 1);
		if (in_recv_win && ack_ok && overshot <= receiver->td_maxwin &&
		    lrx_before(sack, receiver->td_end + 1)) {
			/* a TCP sending more than the window allows: its
			 * end is taken so that the peer's ACK of it passes */
			sender->td_end = end;
			sender->flags |= LRX_CT_TCP_DATA_UNACKNOWLEDGED;
			return lrx_tcp_refuse(ct, sender, LRX_TCP_ACT_IGNORE);
		}
		return lrx_tcp_refuse(ct, sender, LRX_TCP_ACT_INVALID);
	}
	if (!lrx_before(sack, receiver->td_end + 1)) /* III: data not seen */
		return lrx_tcp_refuse(ct, sender, LRX_TCP_ACT_INVALID);
	if (receiver->td_maxwin &&
	    !lrx_after(end, sender->td_end - receiver->td_maxwin - 1))
		/* II: already acknowledged data again */
		return lrx_tcp_refuse(ct, sender, LRX_TCP_ACT_IGNORE);
	if (!lrx_after(sack, receiver->td_end - lrx_maxackwindow(sender) - 1))
		/* IV: an ACK delayed too long */
		return lrx_tcp_refuse(ct, sender, LRX_TCP_ACT_IGNORE);
	lrx_tcp_window_update(st, sender, receiver, s, dir, index, seq, end, ack, sack);
	return LRX_TCP_ACT_ACCEPT;
}

/* nf_tcp_handle_invalid: an assured connection whose FIN or RST answers
 * the other side's out of window has its timeout cut to the
 * unacknowledged one */
static void lrx_tcp_handle_invalid(struct lrx_ct_entry *e, unsigned dir, unsigned index,
				   uint64_t now)
{
	struct lrx_ct_tcp *st = &e->tcp;
	if (!(e->status & LRX_CT_ASSURED) ||
	    (index != LRX_TCP_RST_SET && index != LRX_TCP_FIN_SET))
		return;
	if (st->last_dir != dir &&
	    (st->last_index == LRX_TCP_FIN_SET || st->last_index == LRX_TCP_RST_SET)) {
		const uint64_t left = e->expires > now ? e->expires - now : 0;
		if (left >= 120 * LRX_CT_S && left > LRX_TCP_TIMEOUT_UNACK)
			lrx_ct_refresh(e, now, LRX_TCP_TIMEOUT_UNACK);
	} else {
		st->last_index = (uint8_t)index;
		st->last_dir = (uint8_t)dir;
	}
}

/* ---- nf_conntrack_tcp_packet ---------------------------------------------- */

/* tcp_new: the state a first packet opens; false when none (INVALID).
 * A picked-up connection is liberal both ways: its window is unknown */
static bool lrx_tcp_new(const struct lrx_ct *ct, struct lrx_ct_tcp *st,
			const struct lrx_tcp_seg *s, unsigned index)
{
	const enum lrx_tcp_ct state = lrx_tcp_ct_next(0, index, LRX_TCP_CT_NONE);
	if (state >= LRX_TCP_CT_MAX || (state != LRX_TCP_CT_SYN_SENT && !ct->tcp_loose))
		return false;
	memset(st, 0, sizeof(*st));
	struct lrx_ct_tcp_seen *seen = &st->seen[0];
	seen->td_end = s->end;
	seen->td_maxwin = s->win == 0 ? 1 : s->win;
	if (state == LRX_TCP_CT_SYN_SENT) {
		seen->td_maxend = seen->td_end;
		lrx_tcp_options(s, seen);
	} else {
		seen->td_maxend = seen->td_end + seen->td_maxwin;
		seen->flags = st->seen[1].flags =
			LRX_CT_TCP_SACK_PERM | LRX_CT_TCP_BE_LIBERAL;
	}
	st->last_index = LRX_TCP_NONE_SET;
	return true;
}

/* the ignored packet (sIG, or a SYN that may reopen): remembered, so that
 * the answer to it can put the entry back in sync. true: that answer is
 * this packet, the SYN-ACK of a SYN let through (case b), and the states
 * go on as SYN_SENT -> SYN_RECV */
static bool lrx_tcp_ignored(struct lrx_ct_tcp *st, const struct lrx_tcp_seg *s,
			    unsigned dir, unsigned index, enum lrx_tcp_ct old)
{
	if (index == LRX_TCP_SYNACK_SET && st->last_index == LRX_TCP_SYN_SET &&
	    st->last_dir != dir && s->ack == st->last_end) {
		struct lrx_ct_tcp_seen *was = &st->seen[st->last_dir];
		was->td_end = was->td_maxend = st->last_end;
		was->td_maxwin = st->last_win == 0 ? 1 : st->last_win;
		was->td_scale = st->last_wscale;
		st->last_flags &= (uint8_t)~LRX_CT_TCP_EXP_CHALLENGE_ACK;
		was->flags = st->last_flags;
		/* nf_ct_tcp_state_reset of this direction */
		struct lrx_ct_tcp_seen *mine = &st->seen[dir];
		const uint8_t liberal = mine->flags & LRX_CT_TCP_BE_LIBERAL;
		memset(mine, 0, sizeof(*mine));
		mine->flags = liberal;
		return true;
	}
	st->last_index = (uint8_t)index;
	st->last_dir = (uint8_t)dir;
	st->last_seq = s->seq;
	st->last_end = s->end;
	st->last_win = s->win;
	if (index == LRX_TCP_SYN_SET && dir == 0) {
		/* a) a SYN in ORIGINAL: its options kept for the SYN-ACK */
		struct lrx_ct_tcp_seen seen = {0};
		lrx_tcp_options(s, &seen);
		st->last_flags = seen.flags & (LRX_CT_TCP_WINDOW_SCALE | LRX_CT_TCP_SACK_PERM);
		st->last_wscale = (seen.flags & LRX_CT_TCP_WINDOW_SCALE) ? seen.td_scale : 0;
		/* RFC 5961: the answer may be a challenge ACK */
		if (old == LRX_TCP_CT_LAST_ACK)
			st->last_flags |= LRX_CT_TCP_EXP_CHALLENGE_ACK;
	}
	if (old == LRX_TCP_CT_SYN_SENT && index == LRX_TCP_ACK_SET && dir == 1)
		st->last_ack = s->ack; /* a challenge ACK to the SYN, maybe */
	return false;
}

static inline bool lrx_tcp_established(const struct lrx_ct_tcp *st)
{
	return st->state == LRX_TCP_CT_ESTABLISHED;
}

/* tcp_can_early_drop's states: closing */
static inline bool lrx_tcp_closing(const struct lrx_ct_tcp *st)
{
	return st->state == LRX_TCP_CT_FIN_WAIT || st->state == LRX_TCP_CT_LAST_ACK ||
	       st->state == LRX_TCP_CT_TIME_WAIT || st->state == LRX_TCP_CT_CLOSE ||
	       st->state == LRX_TCP_CT_CLOSE_WAIT;
}

enum lrx_tcp_rst { LRX_TCP_RST_CHECK, LRX_TCP_RST_IN_WINDOW, LRX_TCP_RST_INVALID };

/* the CLOSE transition's RST checks: one before the other side's highest
 * ACK is INVALID; one that is not exactly at it keeps an established
 * state (*new), allowing a challenge ACK; one answering a segment let
 * through skips the window check */
static enum lrx_tcp_rst lrx_tcp_rst_check(const struct lrx_ct_entry *e,
					  const struct lrx_tcp_seg *s, unsigned dir,
					  enum lrx_tcp_ct old, enum lrx_tcp_ct *new)
{
	const struct lrx_ct_tcp *st = &e->tcp;
	if (lrx_tcp_closing(st))
		return LRX_TCP_RST_IN_WINDOW;
	const struct lrx_ct_tcp_seen *other = &st->seen[!dir];
	if ((other->flags & LRX_CT_TCP_MAXACK_SET) && st->last_index != LRX_TCP_SYN_SET) {
		/* seq 0 before ESTABLISHED: the answer to a SYN let through */
		if (s->seq == 0 && !lrx_tcp_established(st))
			return LRX_TCP_RST_CHECK;
		if (lrx_before(s->seq, other->td_maxack))
			return LRX_TCP_RST_INVALID; /* tcp_ignore_invalid_rst 0 */
		if (!lrx_tcp_established(st) || s->seq == other->td_maxack)
			return LRX_TCP_RST_CHECK;
		/* the end of a train: data, then the RST at its end */
		if (st->last_index == LRX_TCP_ACK_SET && st->last_dir == dir &&
		    s->seq == st->last_end)
			return LRX_TCP_RST_CHECK;
		*new = old;
	}
	if ((((e->status & LRX_CT_SEEN_REPLY) && st->last_index == LRX_TCP_SYN_SET) ||
	     (!(e->status & LRX_CT_ASSURED) && st->last_index == LRX_TCP_ACK_SET)) &&
	    s->ack == st->last_end)
		return LRX_TCP_RST_IN_WINDOW; /* to a SYN or ACK let through */
	if (old == LRX_TCP_CT_SYN_SENT && st->last_index == LRX_TCP_ACK_SET &&
	    st->last_dir == 1 && s->seq == st->last_ack)
		return LRX_TCP_RST_IN_WINDOW; /* to a challenge ACK */
	return LRX_TCP_RST_CHECK;
}

/* the timeout of the new state (nf_conntrack_tcp_packet's choice) */
static uint64_t lrx_tcp_timeout(const struct lrx_ct_tcp *st, unsigned index,
				enum lrx_tcp_ct new)
{
	const uint64_t t = lrx_tcp_timeouts[new];
	if (st->retrans >= LRX_TCP_MAX_RETRANS && t > LRX_TCP_TIMEOUT_RETRANS)
		return LRX_TCP_TIMEOUT_RETRANS;
	if (index == LRX_TCP_RST_SET)
		return lrx_tcp_timeouts[LRX_TCP_CT_CLOSE];
	if (((st->seen[0].flags | st->seen[1].flags) & LRX_CT_TCP_DATA_UNACKNOWLEDGED) &&
	    t > LRX_TCP_TIMEOUT_UNACK)
		return LRX_TCP_TIMEOUT_UNACK;
	if (st->last_win == 0 && t > LRX_TCP_TIMEOUT_RETRANS)
		return LRX_TCP_TIMEOUT_RETRANS;
	return t;
}

/* after the checks: the new state, its timeout, ASSURED */
static enum lrx_ct_verdict lrx_tcp_in_window_done(struct lrx_ct_entry *e,
						  const struct lrx_tcp_seg *s,
						  unsigned dir, unsigned index,
						  enum lrx_tcp_ct old, enum lrx_tcp_ct new,
						  uint64_t now)
{
	struct lrx_ct_tcp *st = &e->tcp;
	st->last_index = (uint8_t)index;
	st->last_dir = (uint8_t)dir;
	st->state = (uint8_t)new;
	if (old != new && new == LRX_TCP_CT_FIN_WAIT)
		st->seen[dir].flags |= LRX_CT_TCP_CLOSE_INIT;
	uint64_t timeout = lrx_tcp_timeout(st, index, new);
	if (!(e->status & LRX_CT_SEEN_REPLY)) {
		/* an RST is the only answer: no connection (nf_ct_kill_acct) */
		if (s->flags & TH_RST)
			return LRX_CT_KILL;
		/* a retransmitted SYN does not renew the timeout */
		if (index == LRX_TCP_SYN_SET && old == LRX_TCP_CT_SYN_SENT)
			return LRX_CT_ACCEPT;
		if (new == LRX_TCP_CT_ESTABLISHED && timeout > LRX_TCP_TIMEOUT_UNACK)
			timeout = LRX_TCP_TIMEOUT_UNACK;
	} else if (!(e->status & LRX_CT_ASSURED) &&
		   (old == LRX_TCP_CT_SYN_RECV || old == LRX_TCP_CT_ESTABLISHED) &&
		   new == LRX_TCP_CT_ESTABLISHED) {
		e->status |= LRX_CT_ASSURED;
	}
	lrx_ct_refresh(e, now, timeout);
	return LRX_CT_ACCEPT;
}

/* tcp_error: truncated, then the flags (the checksum is not tested:
 * l3-demux's TCP handler tests it later); false: INVALID */
static bool lrx_tcp_seg_read(const struct lrx_nf_pkt *p, struct lrx_tcp_seg *s)
{
	const uint32_t tcplen = p->len - p->thoff;
	if (tcplen < 20 || p->thoff + 20 > p->seg_len)
		return false;
	s->th = p->iph + p->thoff;
	s->doff = (uint32_t)(s->th[12] >> 4) * 4;
	s->flags = s->th[13];
	if (s->doff < 20 || tcplen < s->doff || !lrx_tcp_valid_flags(s->flags))
		return false;
	/* the options are read in the first segment (a header split over
	 * two is not made by any listrx port) */
	s->opts_end = RTE_MIN(s->doff, p->seg_len - p->thoff);
	s->seq = lrx_ct_rd32(s->th + 4);
	s->ack = lrx_ct_rd32(s->th + 8);
	s->win = lrx_ct_rd16(s->th + 14);
	/* segment_seq_plus_len */
	s->end = s->seq + (tcplen - s->doff) + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
	return true;
}

enum lrx_ct_verdict lrx_ct_tcp_packet(const struct lrx_ct *ct, struct lrx_ct_entry *e,
				      const struct lrx_nf_pkt *p, unsigned dir,
				      bool is_new, uint64_t now)
{
	struct lrx_tcp_seg s;
	if (!lrx_tcp_seg_read(p, &s))
		return LRX_CT_INVALID;
	const unsigned index = lrx_tcp_ct_index(s.flags);
	struct lrx_ct_tcp *st = &e->tcp;
	if (is_new && !lrx_tcp_new(ct, st, &s, index))
		return LRX_CT_INVALID;
	enum lrx_tcp_ct old = (enum lrx_tcp_ct)st->state;
	enum lrx_tcp_ct new = lrx_tcp_ct_next(dir, index, old);

	switch (new) {
	case LRX_TCP_CT_SYN_SENT:
		if (old < LRX_TCP_CT_TIME_WAIT)
			break;
		/* reopening a closed or aborted connection: delete, look
		 * up again */
		if (((st->seen[0].flags | st->seen[1].flags) & LRX_CT_TCP_CLOSE_INIT) ||
		    (st->last_dir == dir && st->last_index == LRX_TCP_RST_SET))
			return LRX_CT_REPEAT;
		/* fallthrough */
	case LRX_TCP_CT_IGNORE:
		if (!lrx_tcp_ignored(st, &s, dir, index, old))
			return LRX_CT_ACCEPT;
		old = LRX_TCP_CT_SYN_SENT;
		new = LRX_TCP_CT_SYN_RECV;
		break;
	case LRX_TCP_CT_MAX:
		return LRX_CT_INVALID;
	case LRX_TCP_CT_TIME_WAIT:
		/* RFC 5961: the challenge ACK to a SYN does not ack the FIN */
		if (old == LRX_TCP_CT_LAST_ACK && index == LRX_TCP_ACK_SET &&
		    st->last_dir != dir && st->last_index == LRX_TCP_SYN_SET &&
		    (st->last_flags & LRX_CT_TCP_EXP_CHALLENGE_ACK)) {
			st->last_flags &= (uint8_t)~LRX_CT_TCP_EXP_CHALLENGE_ACK;
			return LRX_CT_ACCEPT;
		}
		break;
	case LRX_TCP_CT_SYN_SENT2:
		st->last_flags |= LRX_CT_TCP_SIMULTANEOUS_OPEN;
		break;
	case LRX_TCP_CT_SYN_RECV:
		if (dir == 1 && index == LRX_TCP_ACK_SET &&
		    (st->last_flags & LRX_CT_TCP_SIMULTANEOUS_OPEN))
			new = LRX_TCP_CT_ESTABLISHED;
		break;
	case LRX_TCP_CT_CLOSE:
		if (index != LRX_TCP_RST_SET)
			break;
		switch (lrx_tcp_rst_check(e, &s, dir, old, &new)) {
		case LRX_TCP_RST_INVALID:
			return LRX_CT_INVALID;
		case LRX_TCP_RST_IN_WINDOW:
			return lrx_tcp_in_window_done(e, &s, dir, index, old, new, now);
		default:
			break;
		}
		break;
	default:
		break;
	}
	switch (lrx_tcp_in_window(ct, st, dir, index, &s)) {
	case LRX_TCP_ACT_IGNORE:
		return LRX_CT_ACCEPT;
	case LRX_TCP_ACT_INVALID:
		lrx_tcp_handle_invalid(e, dir, index, now);
		return LRX_CT_INVALID;
	default:
		return lrx_tcp_in_window_done(e, &s, dir, index, old, new, now);
	}
}
