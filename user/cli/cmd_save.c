// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit save [--iface IFACE] [--to-unit]: the rules file that
 * recreates the attached interfaces (rules_file.h), for restore. Reads
 * pins only; --to-unit writes the file the systemd unit applies, whole or
 * not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "lib/iface.h"
#include "lib/pin.h"
#include "cli/rules_file.h"
#include "lib/rule_txn.h"
#include "lib/xdp_multi.h"

struct save_args {
	const char *iface;
	bool to_unit;
};

/* `doc` as RL_CONF_DIR/IFACE.rules: written beside it, then renamed over
 * it, so that the unit never reads half a file (a shell's '>' would
 * empty it first). */
static int write_unit_file(const char *iface, const char *doc, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s.rules", RL_CONF_DIR, iface);
	snprintf(tmp, sizeof(tmp), "%s/.%s.rules.XXXXXX", RL_CONF_DIR, iface);
	if (mkdir(RL_CONF_DIR, 0755) && errno != EEXIST)
		return rl_fail("save: cannot create %s: %s", RL_CONF_DIR, strerror(errno));
	fd = mkstemp(tmp);
	if (fd < 0)
		return rl_fail("save: cannot write in %s: %s", RL_CONF_DIR, strerror(errno));
	if (fchmod(fd, 0644) || write(fd, doc, len) != (ssize_t)len || fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return rl_fail("save: cannot write %s: %s; it is as it was", path,
			       strerror(-ret));
	}
	printf("saved %s to %s:\n"
	       "  'systemctl reload xdp-ratelimit@%s' applies it\n",
	       iface, path, iface);
	return RL_EXIT_OK;
}

static int save_iface(FILE *f, const char *name, struct rl_rule *rules)
{
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	int n;

	if (rl_iface_open(name, &ifc, err, sizeof(err)))
		return rl_fail("save: %s", err);
	n = rl_rules_read(&ifc, rules, RL_MAX_RULES);
	if (n >= 0)
		n = rl_rules_file_write(f, name, &ifc.cfg.set,
					rl_xdp_multi_prio(name), rules, n);
	rl_iface_close(&ifc);
	if (n < 0)
		return rl_fail("save: cannot read the rules of %s: %s", name,
			       strerror(-n));
	return RL_EXIT_OK;
}

/* Printed only once every interface was read: a partial file would make
 * restore delete the rules left out. */
static int save_run(void *cfg)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	const struct save_args *a = cfg;
	struct rl_rule *rules = calloc(RL_MAX_RULES, sizeof(*rules));
	char *doc = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int n, ret = RL_EXIT_OK;

	if (a->iface || a->to_unit) {	/* the unit's file is of one interface */
		n = rl_iface_resolve(a->iface, names[0], err, sizeof(err)) ? -1 : 1;
		if (n < 0)
			ret = rl_fail("save: %s", err);
	} else {
		n = rl_ifaces_list(names, RL_MAX_IFACES);
		if (n < 0)
			ret = rl_fail("save: cannot read %s: %s", rl_pin_root(),
				      strerror(-n));
	}
	if (!ret)
		f = open_memstream(&doc, &len);
	if (!ret && (!f || !rules))
		ret = rl_fail("save: out of memory");
	if (!ret)
		fprintf(f, "# xdp-ratelimit %s save: apply with 'xdp-ratelimit restore FILE'\n",
			RL_VERSION);
	for (int i = 0; i < n && !ret; i++)
		ret = save_iface(f, names[i], rules);
	if (f && fclose(f) && !ret)
		ret = rl_fail("save: out of memory");
	if (!ret && a->to_unit)
		ret = write_unit_file(names[0], doc, len);
	else if (!ret && (fputs(doc, stdout) == EOF || fflush(stdout)))
		ret = rl_fail("save: cannot write the output");
	free(doc);
	free(rules);
	return ret;
}

const struct rl_cmd rl_cmd_save = {
	.name = "save",
	.summary = "print a rules file that recreates the attachments",
	.doc =
		"Print, for each attached interface (or IFACE), the commands that recreate\n"
		"it: 'attach IFACE' with every attach setting, then 'quota set ... --iface\n"
		"IFACE' per rule, one a line, as typed after 'xdp-ratelimit'. 'restore'\n"
		"applies such a file. Reads only; prints nothing unless every interface\n"
		"could be read.\n",
	.opts = (const struct rl_opt[]){
		RL_OPT_IFACE(struct save_args, iface, "only IFACE (default: every attached interface)"),
		{ .name = "to-unit", .kind = RL_OPT_SWITCH,
		  RL_OPT_FIELD(struct save_args, to_unit), .help =
		  "write " RL_CONF_DIR "/IFACE.rules, the file the systemd unit\n"
		  "xdp-ratelimit@IFACE applies, instead of printing (whole or not\n"
		  "at all; IFACE: --iface, or the only attached interface)" },
		{ 0 }
	},
	.notes =
		"Examples:\n"
		"  xdp-ratelimit save --iface eth0 --to-unit\n"
		"  xdp-ratelimit save | ssh other-host xdp-ratelimit restore -\n",
	.flags = RL_CMD_ROOT,
	.cfg_size = sizeof(struct save_args),
	.run = save_run,
};
