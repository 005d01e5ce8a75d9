// SPDX-License-Identifier: BSD-3-Clause
// One stage instance outside a pipeline, for unit tests and the cost
// bench: keys from the descriptor's defaults overridden by the test,
// counters read by name, and a two-stage runner (build-meta + another)
// that mirrors what the packet and burst engines do.
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "stage_conf.h"

namespace lrx_test {

// How a test wants the instance built and read: the burst size passed to
// init (the engine's burst) and what reading an undeclared counter does
// (throw, return UINT64_MAX, or abort the test).
struct StageOptions {
	enum class MissingCounter { throw_error, max, abort };
	uint16_t burst = 64;
	MissingCounter on_missing_counter = MissingCounter::throw_error;
};

class StageInstance {
public:
	using Keys = std::map<std::string, std::string>;

	StageInstance(const char *stage_name, const Keys &keys = {},
		      const StageOptions &opts = {})
		: opts_(opts)
	{
		desc_ = lrx_stage_find(stage_name);
		if (!desc_)
			throw std::runtime_error(std::string("no stage ") +
						 stage_name);
		rc_ = create(keys);
	}
	~StageInstance() { destroy(); }
	StageInstance(const StageInstance &) = delete;
	StageInstance &operator=(const StageInstance &) = delete;

	int rc() const { return rc_; }
	const char *error() const { return err_; }
	bool ok() const { return rc_ == 0; }
	const lrx_stage *desc() const { return desc_; }
	void *ctx() const { return ctx_; }

	lrx_next_t one(rte_mbuf *m) { return desc_->process_one(ctx_, m); }
	void burst(rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts)
	{
		desc_->process_burst(ctx_, pkts, n, nexts);
	}

	uint64_t counter(const std::string &name) const
	{
		for (const lrx_stage_counter *c = desc_->counters; c && c->name;
		     c++)
			if (name == c->name)
				return *(const uint64_t *)((const char *)ctx_ +
							   c->offset);
		if (opts_.on_missing_counter == StageOptions::MissingCounter::max)
			return UINT64_MAX;
		if (opts_.on_missing_counter ==
		    StageOptions::MissingCounter::abort)
			abort();
		throw std::runtime_error("no counter " + name);
	}
	std::map<std::string, uint64_t> counters() const
	{
		std::map<std::string, uint64_t> out;
		for (const lrx_stage_counter *c = desc_->counters; c && c->name;
		     c++)
			out[c->name] = *(const uint64_t *)((const char *)ctx_ +
							    c->offset);
		return out;
	}

private:
	// A key the stage does not have throws (a typo in the test); a bad
	// value is rc -EINVAL with the config loader's message in error().
	int create(const Keys &keys)
	{
		KeyValues kv(keys.begin(), keys.end());
		conf_ = std::make_unique<StageConf>(desc_, kv);
		if (conf_->rc == -ENOENT)
			throw std::runtime_error(conf_->error);
		if (conf_->rc) {
			snprintf(err_, sizeof(err_), "%s", conf_->error.c_str());
			return conf_->rc;
		}
		ctx_ = rte_zmalloc("test_stage_ctx", desc_->ctx_size,
				   RTE_CACHE_LINE_SIZE);
		if (!ctx_)
			throw std::runtime_error("no memory for a stage ctx");
		lrx_stage_init init{};
		init.instance = desc_->name;
		init.socket_id = (int)rte_socket_id();
		init.burst = opts_.burst;
		init.conf = conf_->conf;
		init.err = err_;
		init.err_len = sizeof(err_);
		int rc = desc_->init(ctx_, &init);
		if (rc != 0) {
			rte_free(ctx_);
			ctx_ = nullptr;
		}
		return rc;
	}
	void destroy()
	{
		if (ctx_ && desc_->fini)
			desc_->fini(ctx_);
		rte_free(ctx_);
		ctx_ = nullptr;
	}

	StageOptions opts_;
	const lrx_stage *desc_ = nullptr;
	void *ctx_ = nullptr;
	int rc_ = 0;
	char err_[1024] = "";
	std::unique_ptr<StageConf> conf_;
};

// Runs packets through a list of stages as the engines do: per packet
// (every stage on one packet, then the next packet) or per burst (every
// stage on the burst of survivors). nexts[i] is the final fate of pkts[i]
// (CONTINUE after the last stage). The mbufs are not freed.
inline void run_packet(const std::vector<StageInstance *> &stages,
		       rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts)
{
	for (uint16_t i = 0; i < n; i++) {
		lrx_next_t next = LRX_NEXT_CONTINUE_V;
		for (StageInstance *s : stages) {
			next = s->one(pkts[i]);
			if (next != LRX_NEXT_CONTINUE_V)
				break;
		}
		nexts[i] = next;
	}
}

inline void run_burst(const std::vector<StageInstance *> &stages,
		      rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts)
{
	std::vector<uint16_t> live(n);
	for (uint16_t i = 0; i < n; i++) {
		live[i] = i;
		nexts[i] = LRX_NEXT_CONTINUE_V;
	}
	for (StageInstance *s : stages) {
		std::vector<rte_mbuf *> in;
		for (uint16_t i : live)
			in.push_back(pkts[i]);
		std::vector<lrx_next_t> out(in.size());
		if (!in.empty())
			s->burst(in.data(), (uint16_t)in.size(), out.data());
		std::vector<uint16_t> still;
		for (size_t k = 0; k < live.size(); k++) {
			nexts[live[k]] = out[k];
			if (out[k] == LRX_NEXT_CONTINUE_V)
				still.push_back(live[k]);
		}
		live.swap(still);
	}
}

inline std::string next_name(lrx_next_t next)
{
	switch (lrx_next_kind(next)) {
	case LRX_NEXT_CONTINUE: return "CONTINUE";
	case LRX_NEXT_DROP:
		return std::string("DROP(") +
		       lrx_drop_reason_name((lrx_drop_reason)lrx_next_arg(next)) +
		       ")";
	case LRX_NEXT_TX: return "TX(" + std::to_string(lrx_next_arg(next)) + ")";
	case LRX_NEXT_REDIRECT: return "REDIRECT";
	case LRX_NEXT_CONSUMED: return "CONSUMED";
	case LRX_NEXT_DELIVER: return "DELIVER";
	case LRX_NEXT_KIND_MAX: break;
	}
	return "?";
}

} // namespace lrx_test
