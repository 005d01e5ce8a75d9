/* SPDX-License-Identifier: BSD-3-Clause
 * Telemetry's map_update/map_delete into the running pipelines: every
 * lcore's stage instance has its own copy of an eBPF program's maps (the
 * kernel has one map; a write here goes to every copy, as bpftool's update
 * of a per-CPU map writes each CPU's value), each safe against its lcore's
 * lookups (lib/ebpf/ebpf.h). Writers from several telemetry clients are
 * serialised by one lock, so that every copy takes their writes in one
 * order; telemetry stops calling before the pipelines go
 * (lrx_telemetry_close). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "app.h"

static pthread_mutex_t map_write_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned lrx_app_map_write(const char *stage, struct lrx_stage_map_write *w, const void *arg)
{
	const struct lrx_app *app = arg;
	unsigned instances = 0;

	pthread_mutex_lock(&map_write_lock);
	for (unsigned i = 0; i < app->n_workers; i++) {
		struct lrx_pipeline *p = app->workers[i]->pipeline;
		for (unsigned s = 0; p && s < lrx_pipeline_stage_count(p); s++) {
			const int rc_before = w->rc;
			const unsigned found_before = w->found;
			if (!lrx_pipeline_stage_map_write(p, s, stage, w))
				continue;
			instances++;
			/* a map's error: say whose copy (a parameter's is everyone's) */
			if (rc_before == 0 && w->rc != 0 && w->found > found_before) {
				char why[sizeof(w->err)];
				snprintf(why, sizeof(why), "%s", w->err);
				snprintf(w->err, sizeof(w->err), "lcore %u: %.*s",
					 app->workers[i]->lcore_id,
					 (int)sizeof(why) - 16, why);
			}
		}
	}
	pthread_mutex_unlock(&map_write_lock);
	return instances;
}

int lrx_worker_qsbr_create(struct lrx_worker *w, int socket, char *err, size_t err_len)
{
	const size_t size = rte_rcu_qsbr_get_memsize(1);

	w->qsbr = rte_zmalloc_socket("listrx_qsbr", size, RTE_CACHE_LINE_SIZE, socket);
	if (!w->qsbr || rte_rcu_qsbr_init(w->qsbr, 1) != 0 ||
	    rte_rcu_qsbr_thread_register(w->qsbr, 0) != 0) {
		rte_free(w->qsbr);
		w->qsbr = NULL;
		snprintf(err, err_len, "lcore %u: no memory for its quiescent-state counter",
			 w->lcore_id);
		return -ENOMEM;
	}
	/* online from the start: the worker reports after every poll */
	rte_rcu_qsbr_thread_online(w->qsbr, 0);
	return 0;
}

void lrx_worker_qsbr_offline(struct lrx_worker *w)
{
	if (w->qsbr)
		rte_rcu_qsbr_thread_offline(w->qsbr, 0);
}
