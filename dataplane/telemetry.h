/* SPDX-License-Identifier: BSD-3-Clause
 * rte_telemetry commands under /listrx/, readable with dpdk-telemetry.py
 * while the binary runs. */
#ifndef LISTRX_TELEMETRY_H
#define LISTRX_TELEMETRY_H

#include "app.h"

/* Registers /listrx/stats, /listrx/config, /listrx/stages, /listrx/lcores,
 * /listrx/latency.
 * The app must outlive the process's telemetry thread (it is static). */
int lrx_telemetry_register(const struct lrx_app *app);

#endif
