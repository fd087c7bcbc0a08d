// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The real object (not the test-clock build) loads on this kernel's
 * verifier and attaches in native mode to a veth in a namespace. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "ratelimit.skel.h"
#include "lib/iface.h"
#include "lib/loader.h"
#include "lib/settings.h"
#include "../harness.h"

static int sh(const char *fmt, const char *ns)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, ns, ns, ns, ns);
	return system(cmd);
}

TEST(loads_and_attaches_native_on_veth)
{
	struct ratelimit *skel = NULL;
	struct rl_attach_req req;
	struct rl_settings s;
	struct rl_maps m;
	char ns[32], path[64], err[256];
	int host_ns = -1, test_ns = -1, link_fd = -1, ifindex;
	bool in_ns = false;

	if (!harness_require_root())
		return;
	snprintf(ns, sizeof(ns), "rlprog%d", getpid());
	if (!CHECK_EQ(sh("ip netns add %s && ip -n %s link add rla type veth peer name rlb"
			 " && ip -n %s link set rla up && ip -n %s link set rlb up", ns),
		      0, "create namespace and veth pair"))
		goto out;
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	host_ns = open("/proc/self/ns/net", O_RDONLY);
	test_ns = open(path, O_RDONLY);
	if (!CHECK(host_ns >= 0 && test_ns >= 0, "open namespaces: %s", strerror(errno)))
		goto out;
	if (!CHECK(setns(test_ns, CLONE_NEWNET) == 0, "enter %s: %s", ns, strerror(errno)))
		goto out;
	in_ns = true;
	ifindex = if_nametoindex("rlb");
	if (!CHECK(ifindex > 0, "rlb in %s", ns))
		goto out;

	rl_attach_req_defaults(&req);
	if (!CHECK(rl_settings_build(&s, &req, rl_cpu_ids(), err, sizeof(err)) == 0, "%s", err))
		goto out;
	s.mode = RL_MODE_NATIVE;
	s.ifindex = ifindex;
	skel = ratelimit__open();
	if (!CHECK(skel, "open: %s", strerror(errno)))
		goto out;
	if (!CHECK_EQ(rl_loader_prepare(skel->obj, &skel->rodata->settings, &s), 0, "prepare"))
		goto out;
	if (!CHECK_EQ(ratelimit__load(skel), 0, "the verifier accepts the program"))
		goto out;
	if (!CHECK_EQ(rl_maps_from_obj(skel->obj, &m), 0, "maps") ||
	    !CHECK(rl_loader_init(&m, &s, 1000, RL_UNLIMITED, err, sizeof(err)) == 0, "%s", err))
		goto out;

	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = XDP_FLAGS_DRV_MODE);
	link_fd = bpf_link_create(bpf_program__fd(skel->progs.xdp_ratelimit), ifindex,
				  BPF_XDP, &lopts);
	if (!CHECK(link_fd >= 0, "native attach: %s", strerror(errno)))
		goto out;

	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (CHECK_EQ(bpf_xdp_query(ifindex, 0, &q), 0, "query XDP"))
		CHECK_EQ(q.attach_mode, XDP_ATTACHED_DRV, "attached in driver mode");
	/* a slot of `sources` per way of the index (include/source_index.h) */
	CHECK_EQ(bpf_map__max_entries(skel->maps.source_index),
		 rl_index_buckets(s.max_sources), "source_index sized");
	CHECK_EQ(bpf_map__max_entries(skel->maps.sources),
		 rl_pool_slots(rl_index_buckets(s.max_sources)), "sources map sized");
	CHECK_EQ(bpf_map__max_entries(skel->maps.source_keys),
		 rl_pool_slots(rl_index_buckets(s.max_sources)), "source_keys sized");
	/* every map it uses, RL_MAPS bound as the loader binds them, fits
	 * what opening the interface reads (user/lib/iface.c) */
	if (CHECK_EQ(rl_maps_bind(bpf_program__fd(skel->progs.xdp_ratelimit), &m), 0,
		     "RL_MAPS bound")) {
		__u32 ids[RL_LINKED_MAPS_MAX + 1], len = sizeof(struct bpf_prog_info);
		struct bpf_prog_info info = { .nr_map_ids = RL_LINKED_MAPS_MAX + 1,
					      .map_ids = (__u64)(unsigned long)ids };

		if (CHECK_EQ(bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.xdp_ratelimit),
						    &info, &len), 0, "the program's maps"))
			CHECK(info.nr_map_ids <= RL_LINKED_MAPS_MAX,
			      "its %u maps fit the %d ids read", info.nr_map_ids,
			      RL_LINKED_MAPS_MAX);
	}
out:
	if (link_fd >= 0)
		close(link_fd);
	ratelimit__destroy(skel);
	if (in_ns)
		CHECK(setns(host_ns, CLONE_NEWNET) == 0, "back to host namespace");
	if (host_ns >= 0)
		close(host_ns);
	if (test_ns >= 0)
		close(test_ns);
	sh("ip netns del %s 2>/dev/null", ns);
}
