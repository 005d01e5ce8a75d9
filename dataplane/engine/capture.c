/* SPDX-License-Identifier: BSD-3-Clause
 * pcapng writer (draft-ietf-opsawg-pcapng): a Section Header Block, an
 * Interface Description Block per port (Ethernet, nanosecond timestamps,
 * if_name), then an Enhanced Packet Block per packet with opt_comment on
 * the interface of its RX port. Blocks are written in host byte order, as
 * the byte-order magic of the section header says. DPDK 22.11's
 * rte_pcapng has no per-packet comment (rte_pcapng_copy gained one in
 * 23.11), hence this small writer.
 *
 * Blocks are gathered in a buffer and written with write(2), so that a
 * write that fails (a full disk) is known to the byte: the packets whose
 * block reached the file are the ones counted, and the file is cut after
 * the last whole block, a valid pcapng.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_version.h>

#include "capture.h"
#include "value.h"

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define PCAPNG_OPT_END 0
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_SHB_USERAPPL 4
#define PCAPNG_IF_NAME 2
#define PCAPNG_IF_TSRESOL 9
#define PCAPNG_EPB_FLAGS 2
#define LINKTYPE_ETHERNET 1
#define COMMENT_MAX 1024

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

/* write(2) until done; returns the bytes written and sets *err on failure */
static size_t write_all(int fd, const uint8_t *p, size_t len, int *err)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*err = w < 0 ? errno : ENOSPC;
			break;
		}
		done += (size_t)w;
	}
	return done;
}

/* Writes the buffered blocks. On a failure, the packets of the blocks
 * that reached the file whole are counted written, the rest not, and a
 * regular file is cut after the last whole block. */
static void flush_blocks(struct lrx_capture *c)
{
	if (c->used == 0)
		return;
	int err = 0;
	size_t done = write_all(c->fd, c->buf, c->used, &err);
	uint32_t whole = 0;
	while (whole < c->n_blocks && c->block_end[whole] <= done)
		whole++;
	c->written += whole;
	c->not_written += c->n_blocks - whole;
	if (err) {
		uint64_t keep = c->file_bytes + (whole ? c->block_end[whole - 1] : 0);
		c->error = err;
		if (!c->to_stdout && ftruncate(c->fd, (off_t)keep) == 0)
			c->file_bytes = keep;
	} else {
		c->file_bytes += done;
	}
	c->used = c->n_blocks = 0;
}

/* Room for a block of len bytes in the buffer (flushing first if needed);
 * NULL after a write error. */
static uint8_t *block_room(struct lrx_capture *c, uint32_t len)
{
	if (c->error)
		return NULL;
	if (c->used + len > sizeof(c->buf) || c->n_blocks == LRX_CAPTURE_BLOCKS)
		flush_blocks(c);
	if (c->error || len > sizeof(c->buf))
		return NULL;
	return c->buf + c->used;
}

/* The block frame around a body already at p + 8: type, total length,
 * body, total length; the block joins the buffer. */
static void block_close(struct lrx_capture *c, uint8_t *p, uint32_t type, uint32_t body_len)
{
	uint32_t total = 12 + body_len;
	memcpy(p, &type, 4);
	memcpy(p + 4, &total, 4);
	memcpy(p + 8 + body_len, &total, 4);
	c->used += total;
	c->block_end[c->n_blocks++] = c->used;
}

static int write_headers(struct lrx_capture *c, const struct lrx_capture_if *ifs, unsigned n_ifs)
{
	uint8_t *p = block_room(c, 512);
	if (!p)
		return -EIO;
	uint8_t *body = p + 8;
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
	block_close(c, p, PCAPNG_SHB, (uint32_t)n);

	for (unsigned i = 0; i < n_ifs; i++) {
		if (!(p = block_room(c, 512)))
			return -EIO;
		body = p + 8;
		n = 0;
		uint16_t linktype = LINKTYPE_ETHERNET, reserved = 0;
		uint32_t snaplen = 0; /* no limit */
		uint8_t tsresol = 9;  /* 10^-9 s */
		memcpy(body + n, &linktype, 2); n += 2;
		memcpy(body + n, &reserved, 2); n += 2;
		memcpy(body + n, &snaplen, 4); n += 4;
		uint16_t name_len = (uint16_t)strnlen(ifs[i].name, 256);
		n += put_option(body + n, PCAPNG_IF_NAME, ifs[i].name, name_len);
		n += put_option(body + n, PCAPNG_IF_TSRESOL, &tsresol, 1);
		n += put_option(body + n, PCAPNG_OPT_END, NULL, 0);
		block_close(c, p, PCAPNG_IDB, (uint32_t)n);
		if (ifs[i].port_id < RTE_MAX_ETHPORTS)
			c->if_of_port[ifs[i].port_id] = (uint16_t)i;
	}
	flush_blocks(c);
	c->written = c->not_written = 0; /* the headers are not packets */
	return c->error ? -c->error : 0;
}

int lrx_capture_parse(const char *text, void *out)
{
	struct lrx_capture_spec *spec = out;
	const char *comma = strrchr(text, ',');
	size_t len = comma ? (size_t)(comma - text) : strlen(text);
	spec->limit = 0;
	if (comma && lrx_value_uint(comma + 1, 1, UINT64_MAX, &spec->limit) < 0)
		return -EINVAL;
	if (len == 0 || len >= sizeof(spec->path))
		return -EINVAL;
	memcpy(spec->path, text, len);
	spec->path[len] = '\0';
	return 0;
}

/* Why an existing path cannot take a capture (NULL when it can). */
static const char *not_a_capture_file(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "is a symbolic link: captures are not written through links (name "
		       "the target, or - for stdout)";
	if (S_ISDIR(st->st_mode))
		return "is a directory";
	if (!S_ISREG(st->st_mode))
		return "not a regular file: a capture goes to a file, or to stdout with -";
	return NULL;
}

int lrx_capture_check(const char *path, const char *origin, char *err, size_t err_len)
{
	if (strcmp(path, "-") == 0)
		return 0;
	struct stat st;
	const char *why = NULL;
	int e = 0;
	if (lstat(path, &st) == 0) {
		why = not_a_capture_file(&st);
		if (!why && access(path, W_OK) != 0)
			e = errno;
	} else if (errno == ENOENT) {
		/* a new file: can it be created? (removed again) */
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0) {
			e = errno;
		} else {
			close(fd);
			unlink(path);
		}
	} else {
		e = errno;
	}
	if (why)
		snprintf(err, err_len, "%s %s: %s", origin, path, why);
	else if (e)
		snprintf(err, err_len, "%s %s: cannot write the capture there: %s", origin, path,
			 strerror(e));
	return why || e ? -EINVAL : 0;
}

struct lrx_capture *lrx_capture_alloc(const char *path, uint64_t limit)
{
	struct lrx_capture *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->to_stdout = strcmp(path, "-") == 0;
	c->limit = limit;
	rte_spinlock_init(&c->lock);
	return c;
}

int lrx_capture_start(struct lrx_capture *c, const struct lrx_capture_if *ifs, unsigned n_ifs,
		      const char *origin, char *err, size_t err_len)
{
	int fd;
	if (c->to_stdout) {
		fd = dup(STDOUT_FILENO);
	} else {
		/* no O_TRUNC before the checks: a FIFO does not block (and
		 * is refused), a link is not followed */
		fd = open(c->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	}
	struct stat st;
	const char *why = NULL;
	int e = fd < 0 ? errno : 0;
	if (fd >= 0 && !c->to_stdout) {
		if (fstat(fd, &st) != 0)
			e = errno;
		else if ((why = not_a_capture_file(&st)) == NULL &&
			 (ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, 0) != 0))
			e = errno;
	}
	if (e == ELOOP)
		why = "is a symbolic link: captures are not written through links (name the "
		      "target, or - for stdout)";
	if (why || e) {
		if (why)
			snprintf(err, err_len, "%s %s: %s", origin, c->path, why);
		else
			snprintf(err, err_len, "%s %s: cannot write the capture there: %s", origin,
				 c->path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	c->fd = fd;
	int rc = write_headers(c, ifs, n_ifs);
	if (rc < 0) {
		snprintf(err, err_len, "%s %s: cannot write the capture there: %s", origin,
			 c->path, strerror(-rc));
		return rc;
	}
	return 0;
}

void lrx_capture_packet(struct lrx_capture *c, const struct rte_mbuf *m, const char *comment)
{
	rte_spinlock_lock(&c->lock);
	if (c->fd < 0 || (c->limit && c->written + c->not_written + c->n_blocks >= c->limit)) {
		rte_spinlock_unlock(&c->lock);
		return;
	}
	uint32_t len = rte_pktmbuf_pkt_len(m);
	if (len > sizeof(c->frame))
		len = sizeof(c->frame);
	const uint8_t *data = rte_pktmbuf_read(m, 0, len, c->frame);
	uint16_t comment_len = (uint16_t)strnlen(comment, COMMENT_MAX);
	/* head (20) + frame + comment, flags and end options */
	uint32_t body_len = 20 + pad4(len) + 4 + pad4(comment_len) + 8 + 4;
	uint8_t *p = data ? block_room(c, 12 + body_len) : NULL;
	if (!p) {
		c->not_written++;
		rte_spinlock_unlock(&c->lock);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	uint32_t head[5] = {m->port < RTE_MAX_ETHPORTS ? c->if_of_port[m->port] : 0,
			    (uint32_t)(ns >> 32), (uint32_t)ns, len, rte_pktmbuf_pkt_len(m)};
	uint8_t *body = p + 8;
	size_t n = 0;
	memcpy(body, head, sizeof(head));
	n += sizeof(head);
	memcpy(body + n, data, len);
	memset(body + n + len, 0, pad4(len) - len);
	n += pad4(len);
	n += put_option(body + n, PCAPNG_OPT_COMMENT, comment, comment_len);
	uint32_t flags = 1; /* inbound (epb_flags bits 0-1) */
	n += put_option(body + n, PCAPNG_EPB_FLAGS, &flags, 4);
	n += put_option(body + n, PCAPNG_OPT_END, NULL, 0);
	block_close(c, p, PCAPNG_EPB, (uint32_t)n);
	if (c->to_stdout) /* a reader downstream sees each packet at once */
		flush_blocks(c);
	rte_spinlock_unlock(&c->lock);
}

int lrx_capture_close(struct lrx_capture *c)
{
	if (!c)
		return 0;
	int rc = 0;
	if (c->fd >= 0) {
		flush_blocks(c);
		rc = c->error ? -c->error : 0;
		if (close(c->fd) != 0 && rc == 0)
			rc = -errno;
		c->fd = -1;
	}
	return rc;
}

void lrx_capture_free(struct lrx_capture *c)
{
	free(c);
}
