/* SPDX-License-Identifier: BSD-3-Clause
 * Interleaved windows ([run] interleave): one lcore polls its queues with
 * several engines in turn, each for a window of W polls, in the order
 * A B B A B A A B (blocks of one window per engine, every other block
 * reversed, the start rotated every two blocks: lrx_window_engine), so
 * that a drift over time weighs on every engine alike.
 * Each window records its TSC cycles and packets, and what the operating
 * system did to the polling thread meanwhile: involuntary context
 * switches (getrusage RUSAGE_THREAD), time waiting on a run queue
 * (/proc/thread-self/schedstat, the kernel's sched_info run_delay) and
 * on-CPU time (CLOCK_THREAD_CPUTIME_ID, from which a paravirtualised
 * kernel leaves out the time the hypervisor gave to others: steal).
 * listrx-bench reads the log and leaves the windows the OS disturbed
 * out of the engines' ratio (docs/measuring.md).
 */
#ifndef LISTRX_WINDOWS_H
#define LISTRX_WINDOWS_H

#include <stdbool.h>
#include <stdint.h>

/* The engine of window k of n engines: blocks of n windows, one window
 * of each engine; block 2r in the order r, r+1, ... (mod n), block 2r+1
 * the same reversed (n = 2: A B B A B A A B ...). Over 2n blocks every
 * engine holds every position twice and follows every engine alike: the
 * schedule is the same seen from any engine, so none is favoured by its
 * place (reversing alone would keep the first and last engines at the
 * blocks' edges, each run twice in a row, for n > 2). */
static inline unsigned lrx_window_engine(uint64_t k, unsigned n)
{
	const uint64_t block = k / n;
	unsigned pos = (unsigned)(k % n);
	if (block % 2)
		pos = n - 1 - pos;
	return (unsigned)((pos + block / 2) % n);
}

/* What the OS says of the calling thread at one moment; a source that
 * cannot be read leaves its field at 0 and says why in the probe. */
struct lrx_thread_sample {
	uint64_t tsc;          /* read right after cpu_ns */
	uint64_t cpu_ns;       /* CLOCK_THREAD_CPUTIME_ID */
	uint64_t run_delay_ns; /* schedstat: time runnable but not running */
	uint64_t nivcsw;       /* involuntary context switches */
	uint64_t nvcsw;        /* voluntary ones (a poll loop makes none) */
};

struct lrx_thread_probe {
	int schedstat_fd;      /* /proc/thread-self/schedstat, or -1 */
	bool schedstat_ok, rusage_ok, cpu_clock_ok;
	char why[256];         /* what cannot be read, "" when all can */
};

/* Opens the probe for the calling thread (call it from the thread that
 * polls: thread-self is resolved when the file is opened). */
void lrx_thread_probe_open(struct lrx_thread_probe *p);
void lrx_thread_probe_read(const struct lrx_thread_probe *p, struct lrx_thread_sample *s);
void lrx_thread_probe_close(struct lrx_thread_probe *p);

/* One window. The signals cover the span from the sample before the
 * window to the one after it (the window and one round of bookkeeping). */
struct lrx_window {
	uint64_t cycles;        /* TSC from before the first poll to after the last */
	uint64_t busy_cycles;   /* TSC in the polls that received packets (a
				 * stretch of full polls timed as one) */
	uint64_t span_cycles;   /* TSC between the two samples */
	uint64_t cpu_ns;        /* thread CPU time over the span */
	uint64_t run_delay_ns;  /* run-queue wait over the span */
	uint32_t packets;       /* received in the window */
	uint32_t polls;         /* W, or fewer for the last window of a run */
	uint32_t empty_polls;   /* polls that received nothing */
	uint32_t gap_cycles;    /* TSC from the previous window's end to this
				 * one's start: the bookkeeping (saturated) */
	uint16_t nivcsw, nvcsw; /* context switches over the span (saturated) */
	uint8_t engine;         /* index into the interleave's engines */
};

struct lrx_window_log {
	unsigned n_engines;
	unsigned window_polls;  /* polls per window (after the calibration) */
	/* windows of a length in time ([run] window_us): the first two
	 * blocks run window_polls polls, then lrx_window_log_calibrate sets
	 * the polls that the slowest engine ran in target_cycles, and again
	 * after 16 and 128 blocks (a pipeline's first thousands of packets
	 * can run 10x slower: first touches of its memory and code); 0 = off */
	uint64_t target_cycles;
	uint64_t calibration_windows; /* the last calibration's window: 128 x n_engines, or 0 */
	uint64_t capacity;      /* windows[] entries */
	uint64_t n;             /* recorded */
	uint64_t unrecorded;    /* run after the log was full */
	struct lrx_window *windows;
	struct lrx_thread_probe probe;
};

/* 0, or -ENOMEM. */
int lrx_window_log_init(struct lrx_window_log *log, unsigned n_engines, unsigned window_polls,
			uint64_t capacity, int socket);
void lrx_window_log_free(struct lrx_window_log *log);

/* With target_cycles: window_polls = target_cycles over the cycles per
 * poll of the slowest engine in windows [from, to) (each engine's fastest
 * window there: the others ran cold or disturbed), at least 1, so that no
 * engine's window runs much longer than the target (a long window is more
 * often disturbed). Called at a block boundary: a block's windows all
 * have the same polls. */
void lrx_window_log_calibrate(struct lrx_window_log *log, uint64_t from, uint64_t to);

/* Records window w (its signals: after - before); false when the log is
 * full (counted as unrecorded). */
static inline bool lrx_window_log_add(struct lrx_window_log *log, struct lrx_window *w,
				      const struct lrx_thread_sample *before,
				      const struct lrx_thread_sample *after)
{
	if (log->n == log->capacity) {
		log->unrecorded++;
		return false;
	}
	const uint64_t niv = after->nivcsw - before->nivcsw, nv = after->nvcsw - before->nvcsw;
	w->span_cycles = after->tsc - before->tsc;
	w->cpu_ns = after->cpu_ns - before->cpu_ns;
	w->run_delay_ns = after->run_delay_ns - before->run_delay_ns;
	w->nivcsw = niv > UINT16_MAX ? UINT16_MAX : (uint16_t)niv;
	w->nvcsw = nv > UINT16_MAX ? UINT16_MAX : (uint16_t)nv;
	log->windows[log->n++] = *w;
	return true;
}

#endif
