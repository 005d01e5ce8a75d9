/* SPDX-License-Identifier: BSD-3-Clause
 * The window log of an interleaved run and the thread probe it reads at
 * each window boundary (windows.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "windows.h"

static void why_append(struct lrx_thread_probe *p, const char *what, int err)
{
	size_t used = strlen(p->why);
	snprintf(p->why + used, sizeof(p->why) - used, "%s%s: %s", used ? "; " : "", what,
		 strerror(err));
}

void lrx_thread_probe_open(struct lrx_thread_probe *p)
{
	memset(p, 0, sizeof(*p));
	/* sched_info (CONFIG_SCHED_INFO): "on-CPU ns, run-queue wait ns,
	 * timeslices", kernel/sched/stats.c proc_sched_show_task's schedstat */
	p->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	p->schedstat_ok = p->schedstat_fd >= 0;
	if (!p->schedstat_ok)
		why_append(p, "/proc/thread-self/schedstat", errno);
	struct rusage ru;
	p->rusage_ok = getrusage(RUSAGE_THREAD, &ru) == 0;
	if (!p->rusage_ok)
		why_append(p, "getrusage(RUSAGE_THREAD)", errno);
	struct timespec ts;
	p->cpu_clock_ok = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0;
	if (!p->cpu_clock_ok)
		why_append(p, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)", errno);
}

void lrx_thread_probe_close(struct lrx_thread_probe *p)
{
	if (p->schedstat_fd >= 0)
		close(p->schedstat_fd);
	p->schedstat_fd = -1;
}

/* the second number of schedstat: run_delay */
static uint64_t read_run_delay(int fd)
{
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	strtoull(buf, &end, 10);
	return strtoull(end, NULL, 10);
}

void lrx_thread_probe_read(const struct lrx_thread_probe *p, struct lrx_thread_sample *s)
{
	if (p->rusage_ok) {
		struct rusage ru;
		getrusage(RUSAGE_THREAD, &ru);
		s->nivcsw = (uint64_t)ru.ru_nivcsw;
		s->nvcsw = (uint64_t)ru.ru_nvcsw;
	}
	if (p->schedstat_fd >= 0)
		s->run_delay_ns = read_run_delay(p->schedstat_fd);
	if (p->cpu_clock_ok) {
		struct timespec ts;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		s->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	s->tsc = rte_rdtsc();
}

int lrx_window_log_init(struct lrx_window_log *log, unsigned n_engines, unsigned window_polls,
			uint64_t capacity, int socket)
{
	memset(log, 0, sizeof(*log));
	log->probe.schedstat_fd = -1;
	log->n_engines = n_engines;
	log->window_polls = window_polls;
	log->windows = rte_zmalloc_socket("listrx_windows", capacity * sizeof(*log->windows),
					  0, socket);
	if (!log->windows)
		return -ENOMEM;
	log->capacity = capacity;
	return 0;
}

void lrx_window_log_calibrate(struct lrx_window_log *log, uint64_t from, uint64_t to)
{
	/* each engine's fastest window: the others ran cold (first touches
	 * of a pipeline's memory and ballast code cost up to 15x a warm
	 * window) or were disturbed, and both only ever slow a window */
	double fastest[256] = {0}, slowest = 0;
	for (uint64_t k = from; k < log->n && k < to; k++) {
		const struct lrx_window *w = &log->windows[k];
		double per_poll = w->polls ? (double)w->cycles / (double)w->polls : 0;
		if (per_poll > 0 && (fastest[w->engine] == 0 || per_poll < fastest[w->engine]))
			fastest[w->engine] = per_poll;
	}
	for (unsigned e = 0; e < log->n_engines; e++)
		slowest = fastest[e] > slowest ? fastest[e] : slowest;
	if (slowest > 0) {
		double w = (double)log->target_cycles / slowest + 0.5;
		log->window_polls = w < 1 ? 1 : w > (1u << 20) ? 1u << 20 : (unsigned)w;
	}
}

void lrx_window_log_free(struct lrx_window_log *log)
{
	lrx_thread_probe_close(&log->probe);
	rte_free(log->windows);
	log->windows = NULL;
	log->capacity = log->n = 0;
}
