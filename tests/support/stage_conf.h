// SPDX-License-Identifier: BSD-3-Clause
// A stage's typed config from key = value text, built as the config
// loader builds it (stage_keys.h): for tests that drive a stage or a
// lrx_pipeline_conf without a config file.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "stage_keys.h"
}

namespace lrx_test {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The config of one stage: defaults, then keys in order. rc is 0, -ENOENT
// (a key the stage does not have) or -EINVAL (a bad value), with the
// message "<stage>: key 'K' = 'V': must be ..." in error.
struct StageConf {
	void *conf = nullptr;
	int rc = 0;
	std::string error;

	StageConf(const lrx_stage *stage, const KeyValues &keys)
	{
		conf = lrx_stage_conf_new(stage);
		if (!conf)
			throw std::runtime_error("no memory for a stage config");
		for (auto &kv : keys) {
			char valid[1024];
			rc = lrx_stage_conf_set(stage, conf, kv.first.c_str(), kv.second.c_str(),
						valid, sizeof(valid));
			if (rc == 0)
				continue;
			error = std::string(stage->name) + ": key '" + kv.first + "' = '" + kv.second +
				"': " + (rc == -ENOENT ? "unknown key; valid keys: " : "must be ") + valid;
			return;
		}
	}
	~StageConf() { free(conf); }
	StageConf(const StageConf &) = delete;
	StageConf &operator=(const StageConf &) = delete;
};

// Whether key of conf holds what value parses to (compared as the bytes of
// the field: any kind of value).
inline bool conf_holds(const lrx_stage *stage, const void *conf, const char *key,
		       const char *value)
{
	const lrx_value_key *k = lrx_value_key_find(stage->keys, key);
	StageConf expect(stage, {{key, value}});
	return k && expect.rc == 0 &&
	       std::memcmp((const char *)conf + k->offset, (const char *)expect.conf + k->offset,
			   k->type.size) == 0;
}

// Owns the stage configs of a lrx_pipeline_conf a test builds.
class StageConfs {
public:
	// sc.stage = stage, sc.conf = its config with keys; a key or value the
	// stage refuses throws (the test fails with the loader's words). SC:
	// struct lrx_stage_conf (pipeline.h).
	template <class SC>
	void set(SC &sc, const lrx_stage *stage, const KeyValues &keys)
	{
		if (!stage)
			throw std::runtime_error("no such stage");
		confs_.push_back(std::make_unique<StageConf>(stage, keys));
		if (confs_.back()->rc)
			throw std::runtime_error(confs_.back()->error);
		sc.stage = stage;
		sc.conf = confs_.back()->conf;
	}

private:
	std::vector<std::unique_ptr<StageConf>> confs_;
};

} // namespace lrx_test
