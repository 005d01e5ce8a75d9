/* SPDX-License-Identifier: BSD-3-Clause
 * Builds without the generated x86-64 ballast: no footprint available
 * (pipelines asking for footprint_kb > 0 are refused at creation). */
#include "ballast.h"

const uint32_t lrx_ballast_slots = 0;
const uint32_t lrx_ballast_slot_lines = 0;

uint64_t lrx_ballast_run(uint32_t slot, uint32_t lines, uint64_t count,
			 uint64_t acc)
{
	(void)slot;
	(void)lines;
	(void)count;
	return acc;
}
