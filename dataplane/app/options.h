/* SPDX-License-Identifier: BSD-3-Clause
 * listrx's command line (after "--"): one table of options (options.c)
 * that gives getopt's table, --help and the config key each option sets,
 * as testpmd and VPP declare each option once. The stages' own options
 * come from their shortcut sections (stage.h: struct lrx_stage_alias).
 */
#ifndef LISTRX_OPTIONS_H
#define LISTRX_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"

#define LRX_MAX_OVERRIDES 64

struct lrx_options {
	const char *config;                 /* --config FILE; NULL: the default */
	struct lrx_override overrides[LRX_MAX_OVERRIDES]; /* in order: the last wins */
	unsigned n_overrides;
	bool help, version, topology, list_stages;
	unsigned reps;                      /* --reps N; 0 = one run in this process */
	int reps_tokens[2];                 /* argv indexes of --reps and its value */
	unsigned n_reps_tokens;
};

/* Reads argv (listrx's own options, argv[0] the program). Returns 0, or
 * -EINVAL with a message on stderr. */
int lrx_options_parse(int argc, char **argv, struct lrx_options *o);
/* "listrx --config F -- ...": a listrx option among the EAL options
 * (argv[1..split-1]), which EAL would refuse with its whole usage text:
 * says so on stderr and returns true. EAL's own --help and --trace are
 * EAL's there. */
bool lrx_options_before_split(char **argv, int split);
/* --help, --version, --topology or --list-stages (with --json FILE: as
 * JSON): prints it and returns the exit status; -1 when none was asked. */
int lrx_options_info(const struct lrx_options *o);
/* The option that set [section] key last ("--json"), or NULL. */
const char *lrx_options_origin(const struct lrx_options *o, const char *section,
			       const char *key);
/* The --help text. */
void lrx_options_usage(FILE *out);
/* The name of option i ("burst", without "--"), the stages' options
 * included; NULL past the last (tests: every option is documented). */
const char *lrx_option_name(unsigned i);

#endif
