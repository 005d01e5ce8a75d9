/* SPDX-License-Identifier: BSD-3-Clause
 * --capture-drops / --capture-delivered: the packets that leave through
 * the sink, written as pcapng (one Enhanced Packet Block each, on the
 * interface block of its RX port) with the verdict and drop reason in the
 * block's opt_comment. tshark and Wireshark show the comment (tshark -r
 * FILE -T fields -e frame.comment); tcpdump reads the packets but does not
 * print comments. Written by the workers under a lock: capture is a
 * debugging aid, its cost is paid only while it is on.
 *
 * Two steps, so that a refused run leaves every file as it was: the path
 * is checked before the run (lrx_capture_check: nothing created remains,
 * nothing is truncated), the file is created or truncated once the set-up
 * succeeded (lrx_capture_start). It is opened without following a
 * symbolic link and must be a regular file; "-" is stdout.
 */
#ifndef LISTRX_CAPTURE_H
#define LISTRX_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_spinlock.h>

#define LRX_CAPTURE_BUF (256 * 1024)
#define LRX_CAPTURE_BLOCKS 4096 /* blocks in the buffer (>= 64 bytes each) */

struct lrx_capture {
	int fd;                    /* -1 until lrx_capture_start */
	bool to_stdout;            /* "-": written per packet, as tcpdump -U */
	uint64_t limit;            /* packets to write; 0 = no limit */
	uint64_t written;          /* packets whose block is whole in the file */
	uint64_t not_written;      /* packets lost to a write error */
	int error;                 /* errno of the first failed write; 0 = none */
	uint64_t file_bytes;       /* bytes written, whole blocks only */
	rte_spinlock_t lock;
	char path[4096];
	uint16_t if_of_port[RTE_MAX_ETHPORTS]; /* interface block of each port */
	uint32_t used, n_blocks;               /* what buf holds */
	uint32_t block_end[LRX_CAPTURE_BLOCKS];
	uint8_t buf[LRX_CAPTURE_BUF];
	uint8_t frame[UINT16_MAX + 1]; /* a chained mbuf made linear */
};

/* One interface block: a port's id and name (pcapng if_name). */
struct lrx_capture_if {
	uint16_t port_id;
	const char *name;
};

/* --capture-drops FILE[,N] */
struct lrx_capture_spec {
	char path[4096];           /* "" = off */
	uint64_t limit;            /* packets; 0 = all */
};
#define LRX_CAPTURE_VALID "FILE or FILE,N (a pcapng file, N >= 1 packets)"
/* "FILE" or "FILE,N" into a struct lrx_capture_spec: the value layer's
 * parse (value.h); 0 or -EINVAL. */
int lrx_capture_parse(const char *text, void *spec);

/* Whether path can take a capture, changing nothing: "-" (stdout), an
 * existing regular file that can be written, or a new file in a writable
 * directory (created to know, and removed). Returns 0 or -EINVAL; err
 * names origin and path and says why. */
int lrx_capture_check(const char *path, const char *origin, char *err, size_t err_len);

/* The capture's state, no file yet. Returns NULL without memory. */
struct lrx_capture *lrx_capture_alloc(const char *path, uint64_t limit);

/* Creates or truncates the file (no symbolic link followed; a regular
 * file only) and writes the section header and an interface block per
 * port. Returns 0 or a negative errno; err names origin and path. */
int lrx_capture_start(struct lrx_capture *c, const struct lrx_capture_if *ifs, unsigned n_ifs,
		      const char *origin, char *err, size_t err_len);

/* Writes one packet with its comment, unless the limit is reached. After
 * a write error nothing more is written (counted in not_written). */
void lrx_capture_packet(struct lrx_capture *c, const struct rte_mbuf *m, const char *comment);

/* Writes what is buffered and closes the file; returns 0 or the negative
 * errno of the first write that failed (then the file holds the `written`
 * packets, cut after the last whole block). */
int lrx_capture_close(struct lrx_capture *c);
void lrx_capture_free(struct lrx_capture *c);

#endif
