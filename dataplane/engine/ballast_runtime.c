/* SPDX-License-Identifier: BSD-3-Clause
 * The run-time side of the footprint ballast: maps a stage's footprint_kb
 * to a slice of generated code (stages/base/gen_ballast.py). Stage i of a
 * pipeline runs slot i, so consecutive stages execute different code and,
 * when their sum exceeds the L1i, evict each other as the kernel's layers
 * do.
 */
#include <errno.h>
#include <stdio.h>

#include "engine_internal.h"

int lrx_footprint_check(unsigned index, unsigned footprint_kb, char *why, size_t why_len)
{
	const unsigned max_kb = lrx_ballast_slot_lines / (1024 / LRX_BALLAST_LINE_BYTES);

	if (footprint_kb == 0)
		return 0;
	if (lrx_ballast_slots == 0) {
		snprintf(why, why_len, "this build has no ballast (x86-64 only)");
		return -ENOTSUP;
	}
	if (index >= lrx_ballast_slots) {
		snprintf(why, why_len, "ballast exists for the first %u stages only",
			 lrx_ballast_slots);
		return -EINVAL;
	}
	if (footprint_kb > max_kb) {
		snprintf(why, why_len, "at most %u KB per stage", max_kb);
		return -EINVAL;
	}
	return 0;
}

void engine_ballast_setup(struct engine_stage *st, unsigned index, unsigned footprint_kb)
{
	st->ballast_lines = footprint_kb * (1024 / LRX_BALLAST_LINE_BYTES);
	st->ballast_slot = index;
}
