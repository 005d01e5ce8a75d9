/* SPDX-License-Identifier: BSD-3-Clause
 * --reps N: the run N times, each in a fresh process as `perf stat -r N`
 * runs its command again (EAL initialises once per process), then the
 * median and spread of each figure. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <jansson.h>

#include "json.h"
#include "reps.h"

static volatile sig_atomic_t stop_requested;
static volatile pid_t running_child;

static void on_stop_signal(int sig)
{
	stop_requested = 1;
	/* a terminal's Ctrl-C reaches the child too (same process group);
	 * a kill(1) of this process alone is passed on */
	if (running_child > 0)
		kill(running_child, sig);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
		if (len + 1 == cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct spread {
	double median, min, max;
};

/* over the reps that have the figure (not NAN); all NAN when none has */
static struct spread spread_of(const double *v, unsigned n_reps)
{
	double sorted[LRX_REPS_MAX];
	unsigned n = 0;
	for (unsigned r = 0; r < n_reps; r++)
		if (!isnan(v[r]))
			sorted[n++] = v[r];
	if (n == 0)
		return (struct spread){NAN, NAN, NAN};
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	return (struct spread){med, sorted[0], sorted[n - 1]};
}

/* One child: this binary with argv, stdout discarded, its JSON summary
 * into json_path. Returns its exit status (128 + signal when killed). */
static int run_child(char *const *argv)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		FILE *devnull = freopen("/dev/null", "w", stdout);
		(void)devnull;
		execv("/proc/self/exe", argv);
		fprintf(stderr, "listrx: --reps: cannot run %s again: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	running_child = pid;
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	running_child = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

enum { F_MPPS, F_NS, F_RX, F_DELIVERED, F_DROPPED, F_DURATION, N_FIGURES };
static const struct {
	const char *key, *label;
	bool count;
} figures[N_FIGURES] = {
	[F_MPPS] = {"mpps", "Mpps", false},
	[F_NS] = {"ns_per_packet", "ns/packet (wall)", false},
	[F_RX] = {"rx_packets", "rx packets", true},
	[F_DELIVERED] = {"delivered", "delivered", true},
	[F_DROPPED] = {"dropped", "dropped", true},
	[F_DURATION] = {"duration_s", "duration s", false},
};

static void print_value(FILE *out, double v, bool count)
{
	if (isnan(v))
		fputs("-", out);
	else if (count)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.3f", v);
}

static void print_summary(FILE *out, unsigned done, unsigned reps, double v[][LRX_REPS_MAX])
{
	fprintf(out, "\n==== listrx --reps %u: %u run(s) measured, each a fresh process; "
		     "median [min-max], spread = (max-min)/median ====\n",
		reps, done);
	for (unsigned f = 0; f < N_FIGURES; f++) {
		struct spread s = spread_of(v[f], done);
		fprintf(out, "%-18s ", figures[f].label);
		if (isnan(s.median)) {
			fputs("- (no rep received anything)\n", out);
			continue;
		}
		print_value(out, s.median, figures[f].count);
		fputs(" [", out);
		print_value(out, s.min, figures[f].count);
		fputs("-", out);
		print_value(out, s.max, figures[f].count);
		fputs("]", out);
		if ((f == F_MPPS || f == F_NS) && s.median > 0)
			fprintf(out, "  spread %.1f %%", (s.max - s.min) / s.median * 100);
		fputc('\n', out);
	}
}

static int write_json(const char *path, unsigned reps, unsigned done, double v[][LRX_REPS_MAX],
		      char *const *texts)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f)
		return -errno;
	struct lrx_json j;
	lrx_json_init(&j, f, true);
	lrx_json_object_begin(&j, NULL);
	lrx_json_u64(&j, "reps", reps);
	lrx_json_u64(&j, "measured", done);
	lrx_json_string(&j, "method", "each rep a fresh listrx process with the same options; "
				      "median, min and max over the measured reps");
	for (unsigned fi = 0; fi < N_FIGURES; fi++) {
		struct spread s = spread_of(v[fi], done);
		lrx_json_object_begin(&j, figures[fi].key);
		lrx_json_double(&j, "median", s.median);
		lrx_json_double(&j, "min", s.min);
		lrx_json_double(&j, "max", s.max);
		lrx_json_array_begin(&j, "values");
		for (unsigned r = 0; r < done; r++)
			lrx_json_double(&j, NULL, v[fi][r]);
		lrx_json_array_end(&j);
		lrx_json_object_end(&j);
	}
	lrx_json_array_begin(&j, "runs");
	for (unsigned r = 0; r < done; r++)
		lrx_json_raw(&j, NULL, texts[r]);
	lrx_json_array_end(&j);
	lrx_json_object_end(&j);
	int rc = ferror(f) ? -EIO : 0;
	if (f != stdout && fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* the child's arguments: the same ones, without --reps, with the JSON
 * summary into json_tmp and no progress lines; NULL when out of memory */
static char **reps_child_argv(const struct lrx_reps_args *a, char *json_tmp)
{
	char **argv = calloc((size_t)a->argc + 8, sizeof(*argv));
	if (!argv)
		return NULL;
	int n = 0;
	for (int i = 0; i < a->argc; i++)
		if (!a->skip[i])
			argv[n++] = a->argv[i];
	argv[n++] = (char *)"--json";
	argv[n++] = json_tmp;
	argv[n++] = (char *)"--stats-period";
	argv[n++] = (char *)"0";
	argv[n] = NULL;
	return argv;
}

/* the reps measured so far, and where the human lines go */
struct reps_state {
	FILE *human;
	double (*v)[LRX_REPS_MAX];
	char *texts[LRX_REPS_MAX];
	unsigned done;
	int status;
};

/* The figures of the child's JSON summary (null, a rate of a run that
 * received nothing, is NAN: the rep ran, its figure is not defined) and
 * whether a signal stopped it; -EINVAL when a figure is missing. Integers
 * are read as doubles (a counter may pass 2^63). */
static int reps_figures(const char *text, double *got, bool *stopped)
{
	json_t *root = json_loads(text, JSON_DECODE_INT_AS_REAL, NULL);
	int rc = json_is_object(root) ? 0 : -EINVAL;
	for (unsigned f = 0; f < N_FIGURES && rc == 0; f++) {
		const json_t *v = json_object_get(root, figures[f].key);
		got[f] = json_is_number(v) ? json_number_value(v) : NAN;
		rc = json_is_number(v) || json_is_null(v) ? 0 : -EINVAL;
	}
	*stopped = json_is_true(json_object_get(root, "stopped_by_signal"));
	json_decref(root);
	return rc;
}

/* one rep's line: Mpps, ns/packet, rx, delivered, dropped */
static void reps_print_rep(FILE *human, unsigned r, unsigned reps, const double *got)
{
	fprintf(human, "rep %u/%u: %.3f Mpps, ", r + 1, reps, got[F_MPPS]);
	if (isnan(got[F_NS]))
		fputs("- ns/packet (nothing received)", human);
	else
		fprintf(human, "%.2f ns/packet", got[F_NS]);
	fprintf(human, ", rx %.0f, delivered %.0f (%.1f %%), dropped %.0f\n",
		got[F_RX], got[F_DELIVERED],
		got[F_RX] > 0 ? 100 * got[F_DELIVERED] / got[F_RX] : 0.0, got[F_DROPPED]);
}

/* runs rep r in a child and keeps its figures; false: stop the reps */
static bool reps_one(const struct lrx_reps_args *a, char **argv, const char *json_tmp,
		     unsigned r, struct reps_state *st)
{
	int rc = run_child(argv);
	/* a signal passed on before the child installed its handler
	 * (app.c: from its start a signal only asks the run to stop) */
	if (stop_requested && (rc == 128 + SIGINT || rc == 128 + SIGTERM)) {
		fprintf(st->human, "rep %u/%u: stopped by a signal: not measured\n", r + 1,
			a->reps);
		return false;
	}
	char *text = rc == 0 ? read_all(json_tmp) : NULL;
	if (rc != 0 || !text) {
		fprintf(stderr, "listrx: --reps: rep %u/%u failed (exit %d)%s\n", r + 1,
			a->reps, rc, rc == 0 ? ": no JSON summary" : "");
		free(text);
		st->status = rc ? rc : 1;
		return false;
	}
	double got[N_FIGURES];
	bool stopped;
	const int figures_rc = reps_figures(text, got, &stopped);
	if (stop_requested || stopped) {
		fprintf(st->human, "rep %u/%u: stopped by a signal: not measured\n", r + 1, a->reps);
		free(text);
		return false;
	}
	if (figures_rc < 0) {
		fprintf(stderr, "listrx: --reps: rep %u/%u: the JSON summary lacks a figure\n",
			r + 1, a->reps);
		free(text);
		st->status = 1;
		return false;
	}
	for (unsigned f = 0; f < N_FIGURES; f++)
		st->v[f][st->done] = got[f];
	st->texts[st->done++] = text;
	reps_print_rep(st->human, r, a->reps, got);
	/* stdout closed (listrx --reps ... | head; SIGPIPE ignored): the
	 * current rep is the last, the rest goes to stderr, as on SIGINT */
	if (fflush(st->human) != 0 && errno == EPIPE && st->human == stdout) {
		fprintf(stderr, "listrx: --reps: stdout: %s: stopping after rep %u/%u; the rest goes to stderr\n",
			strerror(errno), r + 1, a->reps);
		st->human = stderr;
		return false;
	}
	return true;
}

/* the summary over the reps done, and --json's file */
static void reps_finish(const struct lrx_reps_args *a, struct reps_state *st)
{
	if (st->done) {
		print_summary(st->human, st->done, a->reps, st->v);
		if (a->json_path && a->json_path[0]) {
			int rc = write_json(a->json_path, a->reps, st->done, st->v, st->texts);
			if (rc < 0) {
				fprintf(stderr, "listrx: --json %s: %s\n", a->json_path, strerror(-rc));
				st->status = st->status ? st->status : 1;
			}
		}
	}
	for (unsigned r = 0; r < st->done; r++)
		free(st->texts[r]);
}

int lrx_reps_run(const struct lrx_reps_args *a)
{
	char json_tmp[] = "/tmp/listrx-rep-XXXXXX";
	int fd = mkstemp(json_tmp);
	if (fd < 0) {
		fprintf(stderr, "listrx: --reps: no scratch file in /tmp: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	char **argv = reps_child_argv(a, json_tmp);
	if (!argv) {
		unlink(json_tmp);
		return 1;
	}

	struct sigaction sa = {.sa_handler = on_stop_signal}, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	static double v[N_FIGURES][LRX_REPS_MAX];
	struct reps_state st = {.human = a->human, .v = v};
	fprintf(st.human, "listrx --reps %u: each rep a fresh process; its output is summarised "
			  "per rep (Ctrl-C stops after the current one)\n",
		a->reps);
	fflush(st.human);
	for (unsigned r = 0; r < a->reps && !stop_requested; r++)
		if (!reps_one(a, argv, json_tmp, r, &st))
			break;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	unlink(json_tmp);
	reps_finish(a, &st);
	free(argv);
	return st.status;
}
