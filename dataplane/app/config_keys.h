/* SPDX-License-Identifier: BSD-3-Clause
 * The key tables of the config's core sections (config_keys.c), each
 * NULL-name terminated: [eal], [run], [pipeline], [mempool], [telemetry],
 * [pmu] over struct lrx_config, [port.N] over struct lrx_port_conf.
 */
#ifndef LRX_APP_CONFIG_KEYS_H
#define LRX_APP_CONFIG_KEYS_H

#include "value.h"

extern const struct lrx_value_key config_eal_keys[], config_run_keys[],
	config_pipeline_keys[], config_mempool_keys[], config_telemetry_keys[],
	config_pmu_keys[], config_port_keys[];

#endif
