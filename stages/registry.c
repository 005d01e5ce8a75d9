/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage.h"

#define LRX_STAGE_REGISTRY_MAX 64

static const struct lrx_stage *registry[LRX_STAGE_REGISTRY_MAX];
static unsigned registry_count;

void lrx_stage_register(const struct lrx_stage *stage)
{
	if (registry_count == LRX_STAGE_REGISTRY_MAX) {
		/* a build defect, not a run-time condition */
		fprintf(stderr, "listrx: too many stages registered (%u)\n",
			registry_count);
		abort();
	}
	registry[registry_count++] = stage;
}

const struct lrx_stage *lrx_stage_find(const char *name)
{
	for (unsigned i = 0; i < registry_count; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

const struct lrx_stage *lrx_stage_at(unsigned index)
{
	return index < registry_count ? registry[index] : NULL;
}

static const char *const drop_reason_names[LRX_DROP_MAX] = {
#define LRX_DROP_STRING(name) #name,
	LRX_DROP_REASONS(LRX_DROP_STRING)
#undef LRX_DROP_STRING
};

const char *lrx_drop_reason_name(enum lrx_drop_reason reason)
{
	return (unsigned)reason < LRX_DROP_MAX ? drop_reason_names[reason]
					       : "INVALID";
}
