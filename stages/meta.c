/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include "meta.h"

int lrx_meta_dynfield_offset = -1;

int lrx_meta_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "listrx_meta_ptr",
		.size = sizeof(struct lrx_meta *),
		.align = __alignof__(struct lrx_meta *),
	};
	if (lrx_meta_dynfield_offset >= 0)
		return 0;
	int offset = rte_mbuf_dynfield_register(&desc);
	if (offset < 0)
		return -rte_errno;
	lrx_meta_dynfield_offset = offset;
	return 0;
}
