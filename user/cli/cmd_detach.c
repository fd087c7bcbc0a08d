// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit detach: unpin the link (which detaches) and every map, and
 * remove what an interrupted attach left: an IFACE directory without a
 * link, or staging directories of attaches that died.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/cookie_host.h"
#include "lib/attach_txn.h"
#include "lib/iface.h"
#include "lib/pin.h"
#include "lib/reload_txn.h"
#include "lib/values.h"
#include "lib/xdp_multi.h"

struct detach_args {
	const char *iface;
};

static int detach_operands(struct rl_parser *p, void *cfg, int argc,
			   char **argv)
{
	struct detach_args *a = cfg;

	(void)p;
	if (argc != 1)
		return rl_usage_err("detach: name one interface: xdp-ratelimit detach IFACE");
	a->iface = argv[0];
	return rl_iface_arg("detach", a->iface);
}

/* Under the lock. */
static int detach_run(void *cfg)
{
	const char *iface = ((struct detach_args *)cfg)->iface;
	char err[RL_ERR_LEN], name[IF_NAMESIZE];
	int ret, stale, linked, released;

	/* what attaches of iface left when they died (the program of each
	 * went with its process, or, from an older version, goes now with
	 * the link pin) */
	stale = rl_attach_repair(iface);
	/* a reload that died with the link pinned in its staging directory:
	 * completed or removed before the link pin of iface goes */
	ret = rl_reload_repair(iface);
	if (ret < 0)
		return rl_fail("detach: cannot complete or remove what an interrupted reload left for %s (%s): remove it by hand with rm -r '%s/%s reloading '*",
			       iface, strerror(-ret), rl_pin_root(), iface);
	if (stale < 0)
		return rl_fail("detach: cannot remove what an interrupted attach left for %s (%s): remove it by hand with rm -r '%s/%s attaching '*",
			       iface, strerror(-stale), rl_pin_root(), iface);
	ret = rl_pins_carry_flat(iface, err, sizeof(err));
	if (ret < 0)
		return rl_fail("detach: %s; nothing changed", err);
	if (ret > 0)
		rl_print_pins_moved(iface);
	ret = rl_iface_resolve(iface, name, err, sizeof(err));
	if (ret) {
		if (stale) {
			printf("removed the pins an interrupted attach left for %s\n"
			       "  (it was not attached)\n",
			       iface);
			return RL_EXIT_OK;
		}
		if (ret != -ENOENT)
			return rl_fail("detach: %s", err);
		rl_err("detach: %s is not attached: nothing to detach (exit status %d; see 'xdp-ratelimit status')",
		       iface, RL_EXIT_NOTHING);
		return RL_EXIT_NOTHING;
	}
	linked = rl_link_ifindex(name, NULL);
	/* under libxdp's dispatcher: ours out, the others keep running */
	released = rl_xdp_multi_release(name);
	if (released < 0)
		return rl_fail("detach: cannot remove the program of %s from libxdp's dispatcher: %s (xdp-loader status %s shows it)",
			       name, strerror(-released), name);
	ret = rl_attach_unhook(name);
	if (ret)
		return rl_fail("detach: cannot remove the egress hook of %s (%s): see 'tc filter show dev IFACE egress' for priority %u",
			       name, strerror(-ret), RL_TC_PRIORITY);
	ret = rl_cookie_host_del(name, err, sizeof(err));
	if (ret < 0)
		return rl_fail("detach: cannot remove the SYN cookies' table of %s (%s): 'nft list tables' shows it",
			       name, err);
	if (ret == 0)
		printf("%s: removed the SYN cookies' nft table\n", name);
	ret = rl_pin_dir_remove(name);
	if (ret)
		return rl_fail("detach: cannot remove every pin of %s (%s): remove them by hand with 'rm -r %s/%s'",
			       name, strerror(-ret), rl_pin_root(), name);
	/* the namespace's directory goes, if now empty, as the lock is
	 * released (rl_unlock) */
	if (linked == -ENOENT && !released)
		printf("removed the pins of %s (its program was not attached: no link pin)\n",
		       name);
	else
		printf("detached from %s\n", name);
	return RL_EXIT_OK;
}

const struct rl_cmd rl_cmd_detach = {
	.name = "detach",
	.summary = "remove it from an interface, with every pin",
	.args = "IFACE",
	.doc =
		"Remove the limiter from IFACE and every pin it made under\n"
		RL_PIN_TOP "/NETNS/IFACE/ (its counters go with them).\n"
		"Also cleans up what an interrupted attach or a deleted interface left\n"
		"behind, and the clsact qdisc attach created when no filter is left on it.\n"
		"An interface that is not attached: nothing to detach, exit status 3.\n",
	.notes =
		"Example:\n"
		"  xdp-ratelimit detach eth0\n",
	.flags = RL_CMD_LOCK,
	.cfg_size = sizeof(struct detach_args),
	.operands = detach_operands,
	.run = detach_run,
};
