/* SPDX-License-Identifier: BSD-3-Clause
 * --trace: the recorded paths (engine_trace.c records them), as text at
 * exit, in telemetry and in the JSON summary. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "trace.h"

/* the metadata fields, in the bit order of engine_trace.c's meta_changed */
static const char *const meta_field_names[] = {
	"protocol", "mac_len", "network_offset", "transport_offset", "pkt_type",
	"ip_summed", "l4_proto", "hints", "vlan_tci", "vlan_count", "l3_csum_state",
	"ingress_port", "ingress_queue", "gso_size", "gso_segs", "hash", "len",
	"rx_timestamp", "ptype", "mark",
};

/* enum lrx_pkt_type, enum lrx_csum_state (meta.h), as the kernel names them */
static const char *const pkt_types[] = {"host", "broadcast", "multicast", "otherhost"};
static const char *const csum_states[] = {"none", "unnecessary", "complete", "bad"};

/* One field's value as text. rx_timestamp is a clock reading, different
 * in every run: only said to be set. */
static void meta_field_text(char *buf, size_t len, const struct lrx_meta *m, unsigned bit)
{
	switch (bit) {
	case 0: snprintf(buf, len, "0x%04x", m->protocol); break;
	case 1: snprintf(buf, len, "%u", m->mac_len); break;
	case 2: snprintf(buf, len, "%u", m->network_offset); break;
	case 3: snprintf(buf, len, "%u", m->transport_offset); break;
	case 4: snprintf(buf, len, "%s", m->pkt_type < RTE_DIM(pkt_types) ? pkt_types[m->pkt_type] : "?"); break;
	case 5: snprintf(buf, len, "%s", m->ip_summed < RTE_DIM(csum_states) ? csum_states[m->ip_summed] : "?"); break;
	case 6: snprintf(buf, len, "%u", m->l4_proto); break;
	case 7: snprintf(buf, len, "0x%x", m->hints); break;
	case 8: snprintf(buf, len, "%u/%u", m->vlan_tci[0], m->vlan_tci[1]); break;
	case 9: snprintf(buf, len, "%u", m->vlan_count); break;
	case 10: snprintf(buf, len, "%s", m->l3_csum_state < RTE_DIM(csum_states) ? csum_states[m->l3_csum_state] : "?"); break;
	case 11: snprintf(buf, len, "%u", m->ingress_port); break;
	case 12: snprintf(buf, len, "%u", m->ingress_queue); break;
	case 13: snprintf(buf, len, "%u", m->gso_size); break;
	case 14: snprintf(buf, len, "%u", m->gso_segs); break;
	case 15: snprintf(buf, len, "0x%08x", m->hash); break;
	case 16: snprintf(buf, len, "%u", m->len); break;
	case 17: snprintf(buf, len, "set"); break;
	case 18: snprintf(buf, len, "0x%08x", m->ptype); break;
	default: snprintf(buf, len, "%u", m->mark); break;
	}
}

/* A consumed packet is held when the same stage releases it later, else
 * merged into another (GRO's MERGED vs HELD, net/core/gro.c). */
static bool released_later(const struct lrx_trace_packet *tp, unsigned from, unsigned stage)
{
	for (unsigned i = from + 1; i < tp->n_events; i++)
		if (tp->ev[i].kind == LRX_TRACE_RELEASED && tp->ev[i].stage == stage)
			return true;
	return false;
}

static void verdict_text(char *buf, size_t len, const struct lrx_trace_packet *tp, unsigned i)
{
	const struct lrx_trace_event *ev = &tp->ev[i];
	uint32_t arg = lrx_next_arg(ev->next);
	if (ev->kind == LRX_TRACE_RELEASED) {
		snprintf(buf, len, "released (flushed)");
		return;
	}
	switch (lrx_next_kind(ev->next)) {
	case LRX_NEXT_CONTINUE: snprintf(buf, len, "continue"); break;
	case LRX_NEXT_DROP:
		snprintf(buf, len, "drop %s",
			 lrx_drop_reason_name(arg < LRX_DROP_MAX ? arg : LRX_DROP_NOT_SPECIFIED));
		break;
	case LRX_NEXT_TX: snprintf(buf, len, "tx port %u", arg); break;
	case LRX_NEXT_REDIRECT: snprintf(buf, len, "redirect port %u", arg); break;
	case LRX_NEXT_CONSUMED:
		snprintf(buf, len, "consumed (%s)",
			 released_later(tp, i, ev->stage) ? "held" : "merged");
		break;
	case LRX_NEXT_DELIVER: snprintf(buf, len, "delivered"); break;
	default: snprintf(buf, len, "next 0x%x", ev->next); break;
	}
}

static const char *event_where(const struct lrx_trace *t, const struct lrx_trace_event *ev)
{
	if (ev->kind == LRX_TRACE_FATE)
		return "sink";
	return ev->stage < t->n_stages ? t->stage_names[ev->stage] : "?";
}

void lrx_trace_event_line(const struct lrx_trace *t, const struct lrx_trace_packet *tp,
			  unsigned i, char *buf, size_t len)
{
	const struct lrx_trace_event *ev = &tp->ev[i];
	char verdict[64];
	verdict_text(verdict, sizeof(verdict), tp, i);
	size_t at = (size_t)snprintf(buf, len, "%-12s %s", event_where(t, ev), verdict);
	for (unsigned bit = 0; ev->kind != LRX_TRACE_FATE && bit < RTE_DIM(meta_field_names) && at < len;
	     bit++) {
		if (!(ev->set & (1u << bit)))
			continue;
		char v[32];
		meta_field_text(v, sizeof(v), &ev->meta, bit);
		at += (size_t)snprintf(buf + at, len - at, " %s=%s", meta_field_names[bit], v);
	}
}

void lrx_trace_print(const struct lrx_trace *t, FILE *out)
{
	uint32_t n = lrx_trace_count(t);
	fprintf(out, "\ntrace (the first %u packet(s) of %u asked; verdict and the metadata each stage set):\n",
		n, t->limit);
	for (uint32_t p = 0; p < n; p++) {
		const struct lrx_trace_packet *tp = &t->pkt[p];
		fprintf(out, "packet %u: port %u, %u bytes\n", p, tp->port, tp->len);
		for (unsigned i = 0; i < tp->n_events; i++) {
			char line[1024];
			lrx_trace_event_line(t, tp, i, line, sizeof(line));
			fprintf(out, "  %s\n", line);
		}
		if (tp->lost_events)
			fprintf(out, "  ... %u more event(s) not kept\n", tp->lost_events);
	}
}

void lrx_trace_json(const struct lrx_trace *t, struct lrx_json *j)
{
	uint32_t n = lrx_trace_count(t);
	lrx_json_array_begin(j, "trace");
	for (uint32_t p = 0; p < n; p++) {
		const struct lrx_trace_packet *tp = &t->pkt[p];
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "packet", p);
		lrx_json_u64(j, "port", tp->port);
		lrx_json_u64(j, "bytes", tp->len);
		lrx_json_array_begin(j, "events");
		for (unsigned i = 0; i < tp->n_events; i++) {
			const struct lrx_trace_event *ev = &tp->ev[i];
			char verdict[64];
			verdict_text(verdict, sizeof(verdict), tp, i);
			lrx_json_object_begin(j, NULL);
			lrx_json_string(j, "at", event_where(t, ev));
			lrx_json_string(j, "verdict", verdict);
			if (ev->kind != LRX_TRACE_FATE && ev->has_meta) {
				lrx_json_object_begin(j, "set");
				for (unsigned bit = 0; bit < RTE_DIM(meta_field_names); bit++) {
					if (!(ev->set & (1u << bit)))
						continue;
					char v[32];
					meta_field_text(v, sizeof(v), &ev->meta, bit);
					lrx_json_string(j, meta_field_names[bit], v);
				}
				lrx_json_object_end(j);
			}
			lrx_json_object_end(j);
		}
		lrx_json_array_end(j);
		lrx_json_u64(j, "events_not_kept", tp->lost_events);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}
