/* SPDX-License-Identifier: BSD-3-Clause */
#include "measure.h"

#include "listrx_build.h"

#if LISTRX_HAVE_CALLGRIND
#include <valgrind/callgrind.h>

bool lrx_measure_available(void)
{
	return true;
}

void lrx_measure_instrument(void)
{
	CALLGRIND_START_INSTRUMENTATION;
}

void lrx_measure_toggle_collect(void)
{
	CALLGRIND_TOGGLE_COLLECT;
}
#else
bool lrx_measure_available(void)
{
	return false;
}

void lrx_measure_instrument(void)
{
}

void lrx_measure_toggle_collect(void)
{
}
#endif
