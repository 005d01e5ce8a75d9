/* SPDX-License-Identifier: BSD-3-Clause
 * A run's output files (outputs.h): the JSON summary's path checked
 * before the run, the outputs kept apart, the pcapng captures.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "outputs.h"

/* --json -: the JSON summary goes to stdout, the human summary to stderr */
bool json_to_stdout(const struct lrx_config *conf)
{
	return strcmp(conf->json_path, "-") == 0;
}

/* the JSON summary or a capture on stdout: the human output on stderr */
bool stdout_taken(const struct lrx_config *conf)
{
	return json_to_stdout(conf) || !strcmp(conf->capture_drops.path, "-") ||
	       !strcmp(conf->capture_delivered.path, "-");
}

/* --json / [run] json is written at the end of the run: a path that
 * cannot take it is found now, before the run, not after it. A file
 * created only to check is removed again. */
int json_check_writable(const struct lrx_config *conf, const struct lrx_options *o,
			char *err, size_t err_len)
{
	const char *path = conf->json_path;
	if (!path[0] || json_to_stdout(conf))
		return 0;
	const char *origin = lrx_options_origin(o, "run", "json");
	/* "--json PATH" or "FILE: [run] json = PATH", as config errors */
	char where[1100];
	if (origin)
		snprintf(where, sizeof(where), "%.64s %.1024s", origin, path);
	else
		snprintf(where, sizeof(where), "%.512s: [run] json = %.512s", conf->path, path);
	bool existed = access(path, F_OK) == 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, err_len, "%.1100s: cannot write the JSON summary there: %s (use - for stdout)",
			 where, strerror(errno));
		return -EINVAL;
	}
	struct stat st;
	bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	close(fd);
	if (!existed)
		unlink(path);
	if (!regular) {
		snprintf(err, err_len, "%.1100s: not a regular file; the JSON summary goes to a file, or to stdout with --json -",
			 where);
		return -EINVAL;
	}
	return 0;
}

/* --capture-drops / --capture-delivered: checked before EAL, the files
 * created (or truncated) once the set-up succeeded (captures_start), so
 * that a refused run leaves every file as it was. */
struct lrx_capture *capture_drops, *capture_delivered;
static const char *capture_origin[2];

/* Whether two paths name one file: the same inode when both exist, else
 * the same directory (resolved) and name. "-" is stdout. */
static bool same_file(const char *a, const char *b)
{
	if (!strcmp(a, "-") || !strcmp(b, "-"))
		return !strcmp(a, b);
	struct stat sa, sb;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	char ra[PATH_MAX], rb[PATH_MAX];
	const char *path[2] = {a, b};
	char *out[2] = {ra, rb};
	for (int i = 0; i < 2; i++) {
		const char *slash = strrchr(path[i], '/');
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path[i]) : 1,
			 slash ? (slash == path[i] ? "/" : path[i]) : ".");
		char real[PATH_MAX];
		if (!realpath(dir, real))
			return !strcmp(a, b);
		snprintf(out[i], PATH_MAX, "%.2000s/%.2000s", real, slash ? slash + 1 : path[i]);
	}
	return !strcmp(ra, rb);
}

/* The outputs of a run must be distinct files (two writers make a
 * corrupt file), and none may be the config it reads; stdout ("-")
 * takes one of them. */
int outputs_check(const struct lrx_config *conf, const struct lrx_options *o, char *err,
		  size_t err_len)
{
	struct {
		const char *path, *key, *origin;
	} outs[3] = {
		{conf->json_path, "json", NULL},
		{conf->capture_drops.path, "capture_drops", NULL},
		{conf->capture_delivered.path, "capture_delivered", NULL},
	};
	char origins[3][64];
	for (unsigned i = 0; i < 3; i++) {
		const char *origin = lrx_options_origin(o, "run", outs[i].key);
		snprintf(origins[i], sizeof(origins[i]), "%s", origin ? origin : "");
		if (!origin)
			snprintf(origins[i], sizeof(origins[i]), "[run] %s =", outs[i].key);
		outs[i].origin = origins[i];
	}
	for (unsigned i = 0; i < 3; i++) {
		if (!outs[i].path[0])
			continue;
		if (conf->path[0] && same_file(outs[i].path, conf->path)) {
			snprintf(err, err_len, "%s %.1024s: is the config file this run reads",
				 outs[i].origin, outs[i].path);
			return -EINVAL;
		}
		for (unsigned k = i + 1; k < 3; k++)
			if (outs[k].path[0] && same_file(outs[i].path, outs[k].path)) {
				snprintf(err, err_len,
					 "%s %.900s and %s %.900s: %s: each output needs its own",
					 outs[i].origin, outs[i].path, outs[k].origin, outs[k].path,
					 strcmp(outs[i].path, "-") ? "the same file" : "both to stdout");
				return -EINVAL;
			}
	}
	if (o->reps && (!strcmp(conf->capture_drops.path, "-") ||
			!strcmp(conf->capture_delivered.path, "-"))) {
		snprintf(err, err_len, "--reps %u: a capture to stdout (-) is not kept: each rep's stdout is discarded; give a file",
			 o->reps);
		return -EINVAL;
	}
	return 0;
}

int captures_prepare(const struct lrx_config *conf, const struct lrx_options *o, char *err,
		     size_t err_len)
{
	const char *paths[2] = {conf->capture_drops.path, conf->capture_delivered.path};
	const uint64_t limits[2] = {conf->capture_drops.limit, conf->capture_delivered.limit};
	const char *keys[2] = {"capture_drops", "capture_delivered"};
	const char *in_config[2] = {"[run] capture_drops =", "[run] capture_delivered ="};
	struct lrx_capture **caps[2] = {&capture_drops, &capture_delivered};
	for (unsigned i = 0; i < 2; i++) {
		if (!paths[i][0])
			continue;
		const char *origin = lrx_options_origin(o, "run", keys[i]);
		capture_origin[i] = origin ? origin : in_config[i];
		int rc = lrx_capture_check(paths[i], capture_origin[i], err, err_len);
		if (rc < 0)
			return rc;
		if (!(*caps[i] = lrx_capture_alloc(paths[i], limits[i]))) {
			snprintf(err, err_len, "%s %.1024s: no memory for the capture", capture_origin[i],
				 paths[i]);
			return -ENOMEM;
		}
	}
	return 0;
}

/* After the set-up: the files, with an interface block per port. */
int captures_start(const struct lrx_app *app)
{
	struct lrx_capture_if ifs[LRX_MAX_PORTS];
	for (unsigned i = 0; i < app->ports.n; i++)
		ifs[i] = (struct lrx_capture_if){app->ports.ports[i].port_id,
						 app->ports.ports[i].name};
	struct lrx_capture *caps[2] = {capture_drops, capture_delivered};
	for (unsigned i = 0; i < 2; i++) {
		char err[2048];
		if (caps[i] && lrx_capture_start(caps[i], ifs, app->ports.n, capture_origin[i], err,
						 sizeof(err)) < 0) {
			fprintf(stderr, "listrx: %s\n", err);
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

/* Closes the captures and says what they hold; a write that failed makes
 * the run a failure (the file is not what the user asked for). A capture
 * that never started (a refused run) says nothing. */
int captures_close(int status, FILE *human_out)
{
	struct lrx_capture *caps[2] = {capture_drops, capture_delivered};
	const char *what[2] = {"dropped", "delivered"};
	for (unsigned i = 0; i < 2; i++) {
		if (!caps[i])
			continue;
		bool started = caps[i]->fd >= 0;
		char path[sizeof(caps[i]->path)];
		snprintf(path, sizeof(path), "%s", caps[i]->path);
		int rc = lrx_capture_close(caps[i]); /* writes what is buffered */
		uint64_t written = caps[i]->written, not_written = caps[i]->not_written;
		lrx_capture_free(caps[i]);
		if (!started)
			continue;
		FILE *out = human_out ? human_out : stderr;
		if (!strcmp(path, "-"))
			out = stderr;
		fprintf(out, "capture: %" PRIu64 " %s packet(s) written to %s\n",
			written, what[i], strcmp(path, "-") ? path : "stdout");
		if (rc < 0) {
			fprintf(stderr, "listrx: capture %s: %s: %" PRIu64 " %s packet(s) not written%s\n",
				path, strerror(-rc), not_written, what[i],
				strcmp(path, "-") ? " (the file ends after the last whole packet)" : "");
			status = status ? status : EXIT_RUNTIME;
		}
	}
	capture_drops = capture_delivered = NULL;
	return status;
}
