/* SPDX-License-Identifier: BSD-3-Clause
 * A run's output files, checked before EAL starts (outputs.c): the JSON
 * summary's path, the outputs distinct from each other and from the
 * config, and the captures (--capture-drops / --capture-delivered),
 * created once the set-up succeeded, so that a refused run leaves every
 * file as it was.
 */
#ifndef LRX_APP_OUTPUTS_H
#define LRX_APP_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

#include "app.h"
#include "capture.h"
#include "options.h"

#define EXIT_RUNTIME 1

/* the captures the workers' sinks write (NULL: none) */
extern struct lrx_capture *capture_drops, *capture_delivered;

bool json_to_stdout(const struct lrx_config *conf);
bool stdout_taken(const struct lrx_config *conf);
int json_check_writable(const struct lrx_config *conf, const struct lrx_options *o,
			char *err, size_t err_len);
int outputs_check(const struct lrx_config *conf, const struct lrx_options *o, char *err,
		  size_t err_len);
int captures_prepare(const struct lrx_config *conf, const struct lrx_options *o, char *err,
		     size_t err_len);
/* 0, or EXIT_RUNTIME when a file cannot be started */
int captures_start(const struct lrx_app *app);
/* closes the captures, says what they hold (on human_out, or stderr);
 * status, or EXIT_RUNTIME when a write failed */
int captures_close(int status, FILE *human_out);

#endif
