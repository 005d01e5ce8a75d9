// SPDX-License-Identifier: BSD-3-Clause
// lrx-ktime: times the receive stack of one veth's NAPI kthread(s) with
// BTF tracepoint programs (lrx_ktime.bpf.c): GRO windows, list episodes
// outside them, polls, and an empty calibration window that measures what
// a window holds besides the kernel's work (docs/kernel.md, "The primary
// method").
//
//   lrx-ktime --pid PID[,PID...] [--obj O]
//       attaches the clock (polls, the kthreads' on-CPU time), prints
//       {"ready": ...}, then answers one command per line on stdin:
//       "s" prints the counters (one JSON line, summed over the CPUs),
//       "a" attaches the GRO windows, "e" the list episodes, "E" detaches
//       those, "c" attaches the calibration pair, "C" detaches it, "d"
//       detaches all but the clock, "q" or the end of input exits.
//
// The links are file descriptors of this process: whatever way it ends
// (exit, a signal, SIGKILL, its parent's death: PR_SET_PDEATHSIG), the
// kernel detaches the programs.
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/prctl.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lrx_ktime.h"

/* Attach order is dispatch order on a tracepoint: pad_enter must run
 * before gro_enter, pad_exit after gro_exit (see lrx_ktime.bpf.c). */
static const char *const kt_clock_progs[] = {"poll_end", "run_switch"};
static const char *const kt_main_progs[] = {"pad_enter", "gro_enter", "gro_exit",
					    "pad_exit"};
static const char *const kt_episode_progs[] = {"list_skb", "end_kfree", "end_consume"};
static const char *const kt_cal_progs[] = {"cal_enter", "cal_exit"};

#define KT_MAX_LINKS 16

struct kt_opts {
	const char *obj;
	uint32_t pids[LRX_KT_MAX_PIDS];
	unsigned npids;
};

struct kt_set {
	const char *const *names;
	unsigned n;
	struct bpf_link *links[KT_MAX_LINKS];
};

struct kt_ctx {
	struct bpf_object *obj;
	struct kt_set clock, main, episodes, cal;
	int counters_fd;
	int ncpus;
};

static volatile sig_atomic_t kt_stop;
static char kt_libbpf_last[1024];

static void kt_on_signal(int sig)
{
	(void)sig;
	kt_stop = 1;
}

/* libbpf's messages: keep the last warning for our own error line (the
 * verifier log is long; it goes to stderr only with LRX_KTIME_VERBOSE) */
static int kt_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (getenv("LRX_KTIME_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_WARN)
		vsnprintf(kt_libbpf_last, sizeof(kt_libbpf_last), fmt, ap);
	return 0;
}

static void kt_usage(FILE *to)
{
	fprintf(to,
		"usage: lrx-ktime --pid PID[,PID...] [--obj O]\n"
		"  --pid  NAPI kthreads (napi/DEV-ID) whose polls are timed, up to %d\n"
		"  --obj  the probes' object (lrx_ktime.bpf.o next to this program)\n"
		"Commands on stdin: s = print the counters; a = attach the GRO windows;\n"
		"e / E = attach / detach the list episodes (lists handed up outside GRO\n"
		"windows: netif_receive_skb to the skbs' kfree_skb/consume_skb); c / C =\n"
		"attach / detach the calibration pair; d = detach all but the clock (polls,\n"
		"on-CPU time, attached from the start); q = quit.\n",
		LRX_KT_MAX_PIDS);
}

static int kt_parse(int argc, char **argv, struct kt_opts *o)
{
	static const struct option longs[] = {
		{"obj", 1, 0, 'o'}, {"pid", 1, 0, 'p'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	int c;

	*o = (struct kt_opts){0};
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		char *list, *tok, *save = NULL;

		switch (c) {
		case 'o': o->obj = optarg; break;
		case 'p':
			list = strdup(optarg);
			if (!list)
				return -ENOMEM;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				char *end = NULL;
				errno = 0;
				long v = strtol(tok, &end, 10);
				if (errno || *end || end == tok || v <= 0 || v > INT_MAX ||
				    o->npids == LRX_KT_MAX_PIDS) {
					fprintf(stderr, "lrx-ktime: --pid %s: want up to %d "
						"positive process ids, comma-separated\n",
						optarg, LRX_KT_MAX_PIDS);
					free(list);
					return -EINVAL;
				}
				o->pids[o->npids++] = (uint32_t)v;
			}
			free(list);
			break;
		case 'h': kt_usage(stdout); exit(0);
		default: kt_usage(stderr); return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lrx-ktime: unexpected argument %s\n", argv[optind]);
		return -EINVAL;
	}
	if (o->npids == 0) {
		fprintf(stderr, "lrx-ktime: --pid is required\n");
		kt_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* lrx_ktime.bpf.o next to /proc/self/exe, unless --obj says otherwise */
static const char *kt_default_obj(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);

	if (n <= 0)
		return "lrx_ktime.bpf.o";
	path[n] = 0;
	char *slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "lrx_ktime.bpf.o");
	return path;
}

/* Sets a `const volatile` variable of the object before it is loaded
 * (a copy of .rodata's initial value, changed, set back). */
static int kt_set_rodata_u32(struct bpf_object *obj, const char *name, const uint32_t *v,
			     size_t n)
{
	struct bpf_map *rodata = bpf_object__find_map_by_name(obj, ".rodata");
	size_t size = 0;
	const void *init = rodata ? bpf_map__initial_value(rodata, &size) : NULL;
	const struct btf *btf = bpf_object__btf(obj);

	if (!init || !btf)
		return -ENOENT;
	int sec = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (sec < 0)
		return sec;
	const struct btf_type *t = btf__type_by_id(btf, sec);
	const struct btf_var_secinfo *vs = btf_var_secinfos(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		if (strcmp(btf__name_by_offset(btf, var->name_off), name) != 0)
			continue;
		if (vs->offset + n * sizeof(uint32_t) > size)
			return -E2BIG;
		char *copy = malloc(size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, init, size);
		memcpy(copy + vs->offset, v, n * sizeof(uint32_t));
		int rc = bpf_map__set_initial_value(rodata, copy, size);
		free(copy);
		return rc;
	}
	return -ENOENT;
}

static int kt_load(struct kt_ctx *k, const struct kt_opts *o)
{
	int rc;

	*k = (struct kt_ctx){.clock = {.names = kt_clock_progs, .n = 2},
			     .main = {.names = kt_main_progs, .n = 4},
			     .episodes = {.names = kt_episode_progs, .n = 3},
			     .cal = {.names = kt_cal_progs, .n = 2},
			     .counters_fd = -1};
	k->obj = bpf_object__open_file(o->obj, NULL);
	if (!k->obj) {
		rc = -errno;
		fprintf(stderr, "lrx-ktime: %s: %s %s\n", o->obj, strerror(-rc), kt_libbpf_last);
		return rc;
	}
	uint32_t np = o->npids;
	if ((rc = kt_set_rodata_u32(k->obj, "npids", &np, 1)) ||
	    (rc = kt_set_rodata_u32(k->obj, "pids", o->pids, o->npids))) {
		fprintf(stderr, "lrx-ktime: %s: no read-only variables as expected: %s\n",
			o->obj, strerror(-rc));
		return rc;
	}
	rc = bpf_object__load(k->obj);
	if (rc) {
		fprintf(stderr, "lrx-ktime: loading the probes failed: %s (%s) (they need BTF: "
			"/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)\n", strerror(-rc),
			kt_libbpf_last);
		return rc;
	}
	k->counters_fd = bpf_map__fd(bpf_object__find_map_by_name(k->obj, "counters"));
	k->ncpus = libbpf_num_possible_cpus();
	return k->ncpus > 0 ? 0 : k->ncpus;
}

static int kt_attach(struct kt_ctx *k, struct kt_set *set)
{
	for (unsigned i = 0; i < set->n; i++) {
		if (set->links[i])
			continue;
		struct bpf_program *p = bpf_object__find_program_by_name(k->obj, set->names[i]);
		set->links[i] = p ? bpf_program__attach(p) : NULL;
		if (!set->links[i]) {
			int rc = p ? -errno : -ENOENT;
			set->links[i] = NULL;
			fprintf(stderr, "lrx-ktime: attaching %s: %s %s\n", set->names[i],
				strerror(-rc), kt_libbpf_last);
			return rc;
		}
	}
	return 0;
}

static void kt_detach(struct kt_set *set)
{
	for (unsigned i = 0; i < set->n; i++) {
		bpf_link__destroy(set->links[i]);
		set->links[i] = NULL;
	}
}

/* all but the clock */
static void kt_detach_timing(struct kt_ctx *k)
{
	kt_detach(&k->cal);
	kt_detach(&k->episodes);
	kt_detach(&k->main);
}

static void kt_close(struct kt_ctx *k)
{
	kt_detach_timing(k);
	kt_detach(&k->clock);
	bpf_object__close(k->obj);
	k->obj = NULL;
}

static uint64_t kt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int kt_snapshot(const struct kt_ctx *k)
{
	struct lrx_kt_counters per[k->ncpus], sum = {0};
	uint32_t key = 0;

	if (bpf_map_lookup_elem(k->counters_fd, &key, per) != 0)
		return -errno;
	for (int c = 0; c < k->ncpus; c++) {
#define KT_ADD(name) sum.name += per[c].name;
		LRX_KT_COUNTERS(KT_ADD)
#undef KT_ADD
	}
	printf("{\"t_ns\": %llu, \"windows\": %s, \"episodes\": %s, \"calibrating\": %s",
	       (unsigned long long)kt_mono_ns(), k->main.links[0] ? "true" : "false",
	       k->episodes.links[0] ? "true" : "false", k->cal.links[0] ? "true" : "false");
#define KT_PRINT(name) printf(", \"" #name "\": %llu", (unsigned long long)sum.name);
	LRX_KT_COUNTERS(KT_PRINT)
#undef KT_PRINT
	printf("}\n");
	fflush(stdout);
	return 0;
}

static int kt_serve(const struct kt_opts *o)
{
	struct kt_ctx k;
	int rc = kt_load(&k, o);

	if (rc == 0)
		rc = kt_attach(&k, &k.clock);
	if (rc) {
		if (k.obj)
			kt_close(&k);
		return 1;
	}
	printf("{\"ready\": true, \"pids\": [");
	for (unsigned i = 0; i < o->npids; i++)
		printf("%s%u", i ? ", " : "", o->pids[i]);
	printf("]}\n");
	fflush(stdout);
	char line[64];
	while (!kt_stop && fgets(line, sizeof(line), stdin)) {
		switch (line[0]) {
		case 's': rc = kt_snapshot(&k); break;
		case 'a': rc = kt_attach(&k, &k.main); break;
		case 'e': rc = kt_attach(&k, &k.episodes); break;
		case 'E': kt_detach(&k.episodes); rc = 0; break;
		/* after gro_enter on its tracepoint: attach the windows first */
		case 'c': rc = k.main.links[0] ? kt_attach(&k, &k.cal) : -ENOTCONN; break;
		case 'C': kt_detach(&k.cal); rc = 0; break;
		case 'd': kt_detach_timing(&k); rc = 0; break;
		case 'q': kt_stop = 1; break;
		default:
			fprintf(stderr, "lrx-ktime: command %.1s: want s, a, e, E, c, C, d or q\n",
				line);
			rc = 0;
		}
		if (rc) {
			fprintf(stderr, "lrx-ktime: command %.1s: %s\n", line, strerror(-rc));
			break;
		}
	}
	kt_close(&k);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct kt_opts o;

	if (kt_parse(argc, argv, &o) != 0)
		return 2;
	if (!o.obj)
		o.obj = kt_default_obj();
	if (access(o.obj, R_OK) != 0) {
		fprintf(stderr, "lrx-ktime: %s: %s (--obj: the built lrx_ktime.bpf.o)\n", o.obj,
			strerror(errno));
		return 2;
	}
	libbpf_set_print(kt_libbpf_print);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	struct sigaction sa = {.sa_handler = kt_on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return kt_serve(&o);
}
