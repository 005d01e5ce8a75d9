/* SPDX-License-Identifier: BSD-3-Clause
 * pcapng writer (draft-ietf-opsawg-pcapng): a Section Header Block, one
 * Interface Description Block (Ethernet, nanosecond timestamps), then an
 * Enhanced Packet Block per packet with opt_comment. Blocks are written in
 * host byte order, as the byte-order magic of the section header says.
 * DPDK 22.11's rte_pcapng has no per-packet comment (rte_pcapng_copy
 * gained one in 23.11), hence this small writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_version.h>

#include "capture.h"

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define PCAPNG_OPT_END 0
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_SHB_USERAPPL 4
#define PCAPNG_IF_TSRESOL 9
#define PCAPNG_EPB_FLAGS 2
#define LINKTYPE_ETHERNET 1

static inline uint32_t pad4(uint32_t n)
{
	return (n + 3u) & ~3u;
}

static size_t put_option(uint8_t *buf, uint16_t code, const void *value, uint16_t len)
{
	memcpy(buf, &code, 2);
	memcpy(buf + 2, &len, 2);
	if (len)
		memcpy(buf + 4, value, len);
	memset(buf + 4 + len, 0, pad4(len) - len);
	return 4 + pad4(len);
}

/* the block frame around a body: type, total length, body, total length */
static int write_block(FILE *f, uint32_t type, const uint8_t *body, uint32_t body_len)
{
	uint32_t total = 12 + body_len;
	if (fwrite(&type, 4, 1, f) != 1 || fwrite(&total, 4, 1, f) != 1 ||
	    (body_len && fwrite(body, body_len, 1, f) != 1) || fwrite(&total, 4, 1, f) != 1)
		return -EIO;
	return 0;
}

static int write_headers(FILE *f)
{
	uint8_t body[256];
	size_t n = 0;
	uint32_t magic = PCAPNG_BYTE_ORDER_MAGIC;
	uint16_t major = 1, minor = 0;
	int64_t section_len = -1; /* not known in advance */
	memcpy(body + n, &magic, 4); n += 4;
	memcpy(body + n, &major, 2); n += 2;
	memcpy(body + n, &minor, 2); n += 2;
	memcpy(body + n, &section_len, 8); n += 8;
	char appl[96];
	int len = snprintf(appl, sizeof(appl), "listrx (%s)", rte_version());
	n += put_option(body + n, PCAPNG_SHB_USERAPPL, appl, (uint16_t)len);
	n += put_option(body + n, PCAPNG_OPT_END, NULL, 0);
	int rc = write_block(f, PCAPNG_SHB, body, (uint32_t)n);
	if (rc < 0)
		return rc;

	n = 0;
	uint16_t linktype = LINKTYPE_ETHERNET, reserved = 0;
	uint32_t snaplen = 0; /* no limit */
	uint8_t tsresol = 9;  /* 10^-9 s */
	memcpy(body + n, &linktype, 2); n += 2;
	memcpy(body + n, &reserved, 2); n += 2;
	memcpy(body + n, &snaplen, 4); n += 4;
	n += put_option(body + n, PCAPNG_IF_TSRESOL, &tsresol, 1);
	n += put_option(body + n, PCAPNG_OPT_END, NULL, 0);
	return write_block(f, PCAPNG_IDB, body, (uint32_t)n);
}

int lrx_capture_parse(const char *spec, char *path, size_t path_len, uint64_t *limit)
{
	const char *comma = strrchr(spec, ',');
	size_t len = comma ? (size_t)(comma - spec) : strlen(spec);
	*limit = 0;
	if (comma) {
		char *end;
		errno = 0;
		if (comma[1] < '0' || comma[1] > '9')
			return -EINVAL;
		unsigned long long v = strtoull(comma + 1, &end, 10);
		if (errno || *end || v == 0)
			return -EINVAL;
		*limit = v;
	}
	if (len == 0 || len >= path_len)
		return -EINVAL;
	memcpy(path, spec, len);
	path[len] = '\0';
	return 0;
}

int lrx_capture_open(struct lrx_capture **out, const char *path, uint64_t limit,
		     const char *origin, char *err, size_t err_len)
{
	struct lrx_capture *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, err_len, "%s %s: no memory for the capture", origin, path);
		return -ENOMEM;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->limit = limit;
	rte_spinlock_init(&c->lock);
	c->file = fopen(path, "wbe");
	if (!c->file) {
		int e = errno;
		snprintf(err, err_len, "%s %s: cannot write the capture there: %s", origin, path,
			 strerror(e));
		free(c);
		return -EINVAL;
	}
	if (write_headers(c->file) < 0 || fflush(c->file) != 0) {
		int e = errno;
		snprintf(err, err_len, "%s %s: cannot write the capture there: %s", origin, path,
			 strerror(e));
		fclose(c->file);
		free(c);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

void lrx_capture_packet(struct lrx_capture *c, const struct rte_mbuf *m, const char *comment)
{
	rte_spinlock_lock(&c->lock);
	if (c->limit && c->written >= c->limit) {
		rte_spinlock_unlock(&c->lock);
		return;
	}
	uint32_t len = rte_pktmbuf_pkt_len(m);
	if (len > sizeof(c->frame))
		len = sizeof(c->frame);
	const uint8_t *data = rte_pktmbuf_read(m, 0, len, c->frame);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	uint16_t comment_len = (uint16_t)strnlen(comment, 1024);
	uint32_t head[5] = {0 /* interface */, (uint32_t)(ns >> 32), (uint32_t)ns, len,
			    rte_pktmbuf_pkt_len(m)};
	uint8_t opts[1024 + 32];
	size_t n_opts = put_option(opts, PCAPNG_OPT_COMMENT, comment, comment_len);
	uint32_t flags = 1; /* inbound (epb_flags bits 0-1) */
	n_opts += put_option(opts + n_opts, PCAPNG_EPB_FLAGS, &flags, 4);
	n_opts += put_option(opts + n_opts, PCAPNG_OPT_END, NULL, 0);
	uint32_t type = PCAPNG_EPB;
	uint32_t total = 12 + sizeof(head) + pad4(len) + (uint32_t)n_opts;
	static const uint8_t zeros[4];
	FILE *f = c->file;
	if (!data || fwrite(&type, 4, 1, f) != 1 || fwrite(&total, 4, 1, f) != 1 ||
	    fwrite(head, sizeof(head), 1, f) != 1 || (len && fwrite(data, len, 1, f) != 1) ||
	    (pad4(len) != len && fwrite(zeros, pad4(len) - len, 1, f) != 1) || fwrite(opts, n_opts, 1, f) != 1 ||
	    fwrite(&total, 4, 1, f) != 1)
		c->io_errors++;
	else
		c->written++;
	rte_spinlock_unlock(&c->lock);
}

int lrx_capture_close(struct lrx_capture *c)
{
	if (!c)
		return 0;
	int rc = c->io_errors ? -EIO : 0;
	if (fclose(c->file) != 0)
		rc = -errno;
	free(c);
	return rc;
}
