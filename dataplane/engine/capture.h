/* SPDX-License-Identifier: BSD-3-Clause
 * --capture-drops / --capture-delivered: the packets that leave through
 * the sink, written as pcapng (one Enhanced Packet Block each) with the
 * verdict and drop reason in the block's opt_comment, so that tcpdump -r
 * and Wireshark read them (the comment shows as pkt_comment / frame
 * comment). Written by the workers under a lock: capture is a debugging
 * aid, its cost is paid only while it is on.
 */
#ifndef LISTRX_CAPTURE_H
#define LISTRX_CAPTURE_H

#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_spinlock.h>

struct lrx_capture {
	FILE *file;
	uint64_t limit;            /* packets to write; 0 = no limit */
	uint64_t written;
	uint64_t io_errors;        /* blocks a full or failing disk refused */
	rte_spinlock_t lock;
	char path[4096];
	uint8_t frame[UINT16_MAX + 1]; /* a chained mbuf made linear */
};

/* Creates the file and writes the section and interface headers, so that
 * a path that cannot take the capture is found before the run. Returns 0
 * or a negative errno; err says why, naming origin and path. */
int lrx_capture_open(struct lrx_capture **out, const char *path, uint64_t limit,
		     const char *origin, char *err, size_t err_len);

/* Writes one packet with its comment, unless the limit is reached. */
void lrx_capture_packet(struct lrx_capture *c, const struct rte_mbuf *m, const char *comment);

/* Flushes and closes; returns 0 or a negative errno (a write failed). */
int lrx_capture_close(struct lrx_capture *c);

/* "FILE" or "FILE,N": the path and the limit (0 = none). */
int lrx_capture_parse(const char *spec, char *path, size_t path_len, uint64_t *limit);

#endif
