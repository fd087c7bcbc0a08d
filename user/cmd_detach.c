// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit detach: unpin the link (which detaches) and every map. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "pin.h"
#include "units.h"

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
	int c, lock, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c != 'h')
			return rl_bad_option("detach", c, argv);
		usage(stdout);
		return RL_EXIT_OK;
	}
	if (optind != argc - 1)
		return rl_usage_err("detach: name one interface: xdp-ratelimit detach IFACE");
	ret = rl_iface_arg("detach", argv[optind]);
	if (ret)
		return ret;
	lock = rl_change_begin();
	if (lock < 0)
		return RL_EXIT_FAIL;
	rl_pin_dirs_reap(argv[optind]);
	ret = rl_iface_resolve(argv[optind], name, err, sizeof(err));
	if (ret) {
		rl_unlock(lock);
		return rl_fail("detach: %s", err);
	}
	ret = rl_pin_dir_remove(name);
	rl_unlock(lock);
	if (ret)
		return rl_fail("detach: cannot remove every pin of %s (%s): remove them by hand with 'rm -r %s/%s'",
			       name, strerror(-ret), RL_PIN_ROOT, name);
	printf("detached from %s\n", name);
	return RL_EXIT_OK;
}
