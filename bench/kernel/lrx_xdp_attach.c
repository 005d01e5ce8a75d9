// SPDX-License-Identifier: BSD-3-Clause
// lrx-xdp-attach: attaches an XDP object's first program to a device, as
// `ip link set DEV xdpdrv obj O` does, and optionally device-bound
// (BPF_F_XDP_DEV_BOUND_ONLY with the device's ifindex): the XDP metadata
// kfuncs (bpf_xdp_metadata_rx_hash...) answer only in a program bound to
// its device, which iproute2 cannot load (listrx-bench seeds, seed 004).
//
//   lrx-xdp-attach --dev DEV --obj O [--mode drv|skb] [--dev-bound]
//
// Run in the device's network namespace (ip netns exec NS ...). The
// attachment (netlink) outlives the process; `ip link set DEV xdp off`
// removes it. Prints {"prog_id": N, "maps": {"name": id, ...}}; exit 2
// with the reason when the kernel refuses.
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

static int usage(void)
{
	fprintf(stderr, "usage: lrx-xdp-attach --dev DEV --obj FILE.o "
		"[--mode drv|skb] [--dev-bound]\n");
	return 2;
}

static void print_ids(struct bpf_object *obj, int prog_fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct bpf_map *m;
	bool first = true;

	memset(&info, 0, sizeof(info));
	bpf_obj_get_info_by_fd(prog_fd, &info, &len);
	printf("{\"prog_id\": %u, \"maps\": {", info.id);
	bpf_object__for_each_map(m, obj) {
		struct bpf_map_info mi;
		__u32 ml = sizeof(mi);

		if (bpf_map__is_internal(m))
			continue;
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(bpf_map__fd(m), &mi, &ml) != 0)
			continue;
		printf("%s\"%s\": %u", first ? "" : ", ", bpf_map__name(m), mi.id);
		first = false;
	}
	printf("}}\n");
}

static int attach(struct bpf_object *obj, const char *path, const char *dev, int ifindex,
		  const char *mode, bool bound)
{
	struct bpf_program *prog = bpf_object__next_program(obj, NULL);
	if (prog == NULL) {
		fprintf(stderr, "lrx-xdp-attach: %s: no program\n", path);
		return 2;
	}
	bpf_program__set_type(prog, BPF_PROG_TYPE_XDP);
	if (bound) {
		bpf_program__set_ifindex(prog, (__u32)ifindex);
		bpf_program__set_flags(prog, BPF_F_XDP_DEV_BOUND_ONLY);
	}
	int rc = bpf_object__load(obj);
	if (rc != 0) {
		fprintf(stderr, "lrx-xdp-attach: the kernel refused %s%s: %s\n", path,
			bound ? " (device-bound, Linux 6.3+)" : "", strerror(-rc));
		return 2;
	}
	int fd = bpf_program__fd(prog);
	__u32 flags = strcmp(mode, "drv") == 0 ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
	rc = bpf_xdp_attach(ifindex, fd, flags, NULL);
	if (rc != 0) {
		fprintf(stderr, "lrx-xdp-attach: attaching %s to %s (%s): %s\n", path, dev,
			mode, strerror(-rc));
		return 2;
	}
	print_ids(obj, fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", required_argument, NULL, 'd'},
		{"obj", required_argument, NULL, 'o'},
		{"mode", required_argument, NULL, 'm'},
		{"dev-bound", no_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	const char *dev = NULL, *path = NULL, *mode = "drv";
	bool bound = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'o': path = optarg; break;
		case 'm': mode = optarg; break;
		case 'b': bound = true; break;
		default: return usage();
		}
	}
	if (!dev || !path || (strcmp(mode, "drv") && strcmp(mode, "skb")))
		return usage();
	int ifindex = (int)if_nametoindex(dev);
	if (ifindex == 0) {
		fprintf(stderr, "lrx-xdp-attach: no device %s here\n", dev);
		return 2;
	}
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	if (obj == NULL || libbpf_get_error(obj)) {
		fprintf(stderr, "lrx-xdp-attach: %s: libbpf cannot open it\n", path);
		return 2;
	}
	int rc = attach(obj, path, dev, ifindex, mode, bound);
	// the netlink attachment holds the program, and the program its maps
	bpf_object__close(obj);
	return rc;
}

