/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "tcp_ehash.h"

int lrx_tcp_ehash_init(struct lrx_tcp_ehash *t, uint32_t buckets,
		       int socket_id)
{
	memset(t, 0, sizeof(*t));
	if (buckets == 0 || buckets > LRX_TCP_EHASH_MAX ||
	    (buckets & (buckets - 1)) != 0)
		return -EINVAL;
	t->mask = buckets - 1;
	t->max = buckets;
	/* a fixed secret: every engine's run hashes alike (the kernel draws
	 * inet_ehash_secret once, net_get_random_once) */
	t->secret = 0x5eed1e5u;
	t->bucket = rte_malloc_socket("tcp_ehash", buckets * sizeof(*t->bucket),
				      0, socket_id);
	t->ent = rte_zmalloc_socket("tcp_ehash_ent", buckets * sizeof(*t->ent),
				    0, socket_id);
	if (t->bucket == NULL || t->ent == NULL) {
		lrx_tcp_ehash_fini(t);
		return -ENOMEM;
	}
	memset(t->bucket, 0xff, buckets * sizeof(*t->bucket));
	return 0;
}

void lrx_tcp_ehash_fini(struct lrx_tcp_ehash *t)
{
	rte_free(t->bucket);
	rte_free(t->ent);
	t->bucket = NULL;
	t->ent = NULL;
	t->n = 0;
}
