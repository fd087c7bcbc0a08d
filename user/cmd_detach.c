// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit detach: unpin the link (which detaches) and every map, and
 * remove what an interrupted attach left: an IFACE directory without a
 * link, or staging directories of attaches that died.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "attach_txn.h"
#include "iface.h"
#include "pin.h"
#include "values.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit detach IFACE\n"
		"\n"
		"Remove the limiter from IFACE and every pin it made under\n"
		RL_PIN_ROOT "/IFACE/ (its counters go with them). Also cleans up\n"
		"what an interrupted attach or a deleted interface left behind.\n"
		"\n"
		"Example:\n"
		"  xdp-ratelimit detach eth0\n");
}

int cmd_detach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char err[RL_ERR_LEN], name[IF_NAMESIZE];
	const char *iface;
	int c, lock, ret, stale, linked;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c != 'h')
			return rl_bad_option("detach", c, argv);
		usage(stdout);
		return RL_EXIT_OK;
	}
	if (optind != argc - 1)
		return rl_usage_err("detach: name one interface: xdp-ratelimit detach IFACE");
	iface = argv[optind];
	ret = rl_iface_arg("detach", iface);
	if (ret)
		return ret;
	lock = rl_change_begin();
	if (lock < 0)
		return RL_EXIT_FAIL;
	/* what attaches of iface left when they died (the program of each
	 * went with its process, or, from an older version, goes now with
	 * the link pin) */
	stale = rl_attach_repair(iface);
	if (stale < 0) {
		rl_unlock(lock);
		return rl_fail("detach: cannot remove what an interrupted attach left for %s (%s): remove it by hand with rm -r '%s/%s attaching '*",
			       iface, strerror(-stale), RL_PIN_ROOT, iface);
	}
	ret = rl_iface_resolve(iface, name, err, sizeof(err));
	if (ret) {
		rl_unlock(lock);
		if (stale) {
			printf("removed the pins an interrupted attach left for %s (it was not attached)\n",
			       iface);
			return RL_EXIT_OK;
		}
		return rl_fail("detach: %s", err);
	}
	linked = rl_link_ifindex(name, NULL);
	ret = rl_pin_dir_remove(name);
	rl_unlock(lock);
	if (ret)
		return rl_fail("detach: cannot remove every pin of %s (%s): remove them by hand with 'rm -r %s/%s'",
			       name, strerror(-ret), RL_PIN_ROOT, name);
	if (linked == -ENOENT)
		printf("removed the pins of %s (its program was not attached: no link pin)\n",
		       name);
	else
		printf("detached from %s\n", name);
	return RL_EXIT_OK;
}
