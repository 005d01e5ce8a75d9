// SPDX-License-Identifier: BSD-3-Clause
#include "test_eal.h"
#include "runtime_dir.h"

#include "cpus.h"

#include <cstdio>
#include <cstdlib>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

namespace lrx_test {

void eal_init(const std::vector<std::string> &extra_args, unsigned n_lcores)
{
	static bool done = false;
	if (done)
		return;
	std::vector<std::string> args = {"listrx-test", "--no-huge", "--no-pci",
					 "--no-shconf", "-m", "512",
					 "--log-level", "lib.*:warning",
					 "--file-prefix", "lrxtest" + std::to_string(getpid())};
	for (const std::string &a : lcores_args(n_lcores))
		args.push_back(a);
	args.insert(args.end(), extra_args.begin(), extra_args.end());
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(const_cast<char *>(a.c_str()));
	if (rte_eal_init((int)argv.size(), argv.data()) < 0) {
		std::fprintf(stderr, "test: rte_eal_init failed: %s\n",
			     rte_strerror(rte_errno));
		std::exit(1);
	}
	lrx_test_remove_runtime_dir_at_exit();
	done = true;
}

rte_mempool *mbuf_pool(const char *name, unsigned n, uint16_t data_room,
		       uint16_t priv_size)
{
	eal_init();
	rte_mempool *mp = rte_mempool_lookup(name);
	if (mp)
		return mp;
	mp = rte_pktmbuf_pool_create(name, n, 0, priv_size, data_room,
				     (int)rte_socket_id());
	if (!mp) {
		std::fprintf(stderr, "test: mempool %s: %s\n", name,
			     rte_strerror(rte_errno));
		std::exit(1);
	}
	return mp;
}

unsigned in_use(const rte_mempool *mp)
{
	return rte_mempool_in_use_count(mp);
}

} // namespace lrx_test
