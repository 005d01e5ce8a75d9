/* SPDX-License-Identifier: BSD-3-Clause
 * The built-in XDP programs' entries and names (xdp_builtin.h).
 */
#include <string.h>

#include "xdp_builtin.h"

#define LRX_XDP_BUILTIN_ENTRY(fn, name) \
	uint32_t lrx_xdp_builtin_##fn(const struct lrx_xdp_builtin_conf *conf, \
				      struct lrx_xdp_buff *buff) \
	{ \
		return lrx_xdp_builtin_##fn##_body(conf, buff); \
	}
LRX_XDP_BUILTINS(LRX_XDP_BUILTIN_ENTRY)
#undef LRX_XDP_BUILTIN_ENTRY

static const struct {
	const char *name;
	lrx_xdp_builtin_fn fn;
} builtins[] = {
#define LRX_XDP_BUILTIN_NAME(fn, name) { name, lrx_xdp_builtin_##fn },
	LRX_XDP_BUILTINS(LRX_XDP_BUILTIN_NAME)
#undef LRX_XDP_BUILTIN_NAME
};

lrx_xdp_builtin_fn lrx_xdp_builtin_find(const char *name)
{
	for (size_t i = 0; i < RTE_DIM(builtins); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return builtins[i].fn;
	return NULL;
}
