/* SPDX-License-Identifier: BSD-3-Clause
 * For the C test programs that start EAL on one lcore: "0@CPU", EAL's
 * --lcores value that puts lcore 0 on the first CPU this process may use
 * (a container or taskset may leave out CPU 0, which -l 0 needs).
 */
#ifndef LRX_TEST_FIRST_CPU_H
#define LRX_TEST_FIRST_CPU_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>

static inline const char *lrx_test_lcore0(char *buf, size_t len)
{
	cpu_set_t set;
	int cpu = 0;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
			cpu++;
	snprintf(buf, len, "0@%d", cpu);
	return buf;
}

#endif
