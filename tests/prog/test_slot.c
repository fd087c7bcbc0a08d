// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The stub libxdp's dispatcher runs (bpf/xdp_slot.bpf.c): it judges as
 * the program in its slot does, a swap of the slot's entry takes effect
 * at the next frame on the same maps (reload), and an empty slot drops,
 * whatever the settings (the stub uses no map but the slot).
 */
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"
#include "xdp_slot.skel.h"

#define SRC	"198.18.0.7"

TEST(slot_stub_tail_calls_the_program)
{
	struct xdp_slot *stub = NULL;
	struct fixture f;
	struct rl_config cfg;
	struct frame fr;
	__u32 zero = 0;
	int prog_fd, slot = -1;

	if (!fixture_open(&f, NULL))
		return;
	prog_fd = f.prog_fd;
	if (!fixture_pps(&f, "default", 5))
		goto out;
	slot = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "slot", 4, 4, 1, NULL);
	if (!CHECK(slot >= 0, "prog array") ||
	    !CHECK_EQ(bpf_map_update_elem(slot, &zero, &prog_fd, BPF_ANY), 0,
		      "the program is a tail call target"))
		goto out;
	stub = xdp_slot__open();
	if (!CHECK(stub, "open the stub") ||
	    !CHECK_EQ(bpf_map__reuse_fd(stub->maps.slot, slot), 0, "slot") ||
	    !CHECK_EQ(xdp_slot__load(stub), 0, "load the stub"))
		goto out;
	f.prog_fd = bpf_program__fd(stub->progs.xdp_ratelimit);
	frame_udp(&fr, SRC, 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0), 5, "first 5 frames pass the stub");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP, "the 6th drops");
	CHECK_EQ(fixture_totals(&f).passed_pkts, 5, "the program counted them");
	/* the same program again: a reload in place keeps the window */
	CHECK_EQ(bpf_map_update_elem(slot, &zero, &prog_fd, BPF_ANY), 0, "swap");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP,
		 "after the swap, still over quota");
	/* an empty slot */
	CHECK_EQ(bpf_map_delete_elem(slot, &zero), 0, "empty the slot");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0 + 20 * RL_NSEC_PER_SEC),
		 XDP_DROP, "empty slot: dropped");
	if (CHECK_EQ(rl_config_read(&f.m, &cfg), 0, "config")) {
		cfg.set.flags |= RL_F_PASS_MALFORMED;
		CHECK_EQ(rl_config_write(&f.m, &cfg), 0, "config");
		CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0 + 20 * RL_NSEC_PER_SEC),
			 XDP_DROP, "empty slot, --pass-malformed: dropped all the same");
	}
	CHECK_EQ(fixture_totals(&f).passed_pkts, 5, "nothing judged while empty");
out:
	f.prog_fd = prog_fd;
	xdp_slot__destroy(stub);
	if (slot >= 0)
		close(slot);
	fixture_close(&f);
}
