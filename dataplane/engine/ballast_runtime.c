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

int engine_ballast_setup(struct engine_stage *st, unsigned index,
			 unsigned footprint_kb, char *err, size_t err_len)
{
	const unsigned lines_per_kb = 1024 / LRX_BALLAST_LINE_BYTES;
	const unsigned max_kb = lrx_ballast_slot_lines / lines_per_kb;

	st->ballast_lines = 0;
	st->ballast_slot = index;
	if (footprint_kb == 0)
		return 0;
	if (lrx_ballast_slots == 0) {
		snprintf(err, err_len,
			 "footprint_kb=%u: this build has no ballast (x86-64 only)",
			 footprint_kb);
		return -ENOTSUP;
	}
	if (index >= lrx_ballast_slots) {
		snprintf(err, err_len,
			 "footprint_kb=%u: ballast exists for the first %u stages only",
			 footprint_kb, lrx_ballast_slots);
		return -EINVAL;
	}
	if (footprint_kb > max_kb) {
		snprintf(err, err_len,
			 "footprint_kb=%u: at most %u KB per stage",
			 footprint_kb, max_kb);
		return -EINVAL;
	}
	st->ballast_lines = footprint_kb * lines_per_kb;
	return 0;
}
