// SPDX-License-Identifier: BSD-3-Clause
// The CPUs a test may pin EAL lcores to: this process's affinity, which a
// container or taskset may start above CPU 0 or limit to one CPU. EAL's
// -l N pins lcore N to CPU N; --lcores N@CPU keeps the lcore ids a test
// checks (lcore 1 polls) on whatever CPUs the host allows.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

namespace lrx_test {

inline std::vector<unsigned> allowed_cpus()
{
	std::vector<unsigned> cpus;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus.push_back(c);
	if (cpus.empty())
		cpus.push_back(0);
	return cpus;
}

// The CPU lcore i runs on under lcores_args(): the i-th allowed CPU, or
// the last one when there are fewer (lcores then share it).
inline unsigned lcore_cpu(unsigned i)
{
	std::vector<unsigned> cpus = allowed_cpus();
	return cpus[i < cpus.size() ? i : cpus.size() - 1];
}

// EAL arguments for lcores 0..n-1 on allowed CPUs: {"--lcores", "0@2,1@3"}.
inline std::vector<std::string> lcores_args(unsigned n)
{
	std::string map;
	for (unsigned i = 0; i < n; i++)
		map += (i ? "," : "") + std::to_string(i) + "@" + std::to_string(lcore_cpu(i));
	return {"--lcores", map};
}

} // namespace lrx_test
