// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Error reporting and checks shared by every command (xdp-ratelimit(8)). */
#define _GNU_SOURCE	/* vasprintf */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/json_writer.h"
#include "cli/text.h"
#include "lib/pin.h"
#include "lib/values.h"

static char err_where[PATH_MAX + 32];

void rl_err_where(const char *where)
{
	snprintf(err_where, sizeof(err_where), "%s", where ? where : "");
}

/* A message may quote a name or a server's text: shown escaped
 * (text.h), so that no byte of it reaches the terminal as a control. */
static void verr(const char *fmt, va_list ap)
{
	char *msg = NULL, *shown = NULL;
	int n = vasprintf(&msg, fmt, ap);

	if (n >= 0)
		shown = malloc((size_t)n * 4 + 1);
	fputs("xdp-ratelimit: ", stderr);
	if (*err_where)
		fprintf(stderr, "%s: ", err_where);
	if (shown)
		fputs(rl_text_shown(msg, shown, (size_t)n * 4 + 1), stderr);
	else if (n >= 0)
		fputs(msg, stderr);	/* out of memory: as it is */
	fputc('\n', stderr);
	free(shown);
	if (n >= 0)
		free(msg);
}

void rl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
}

int rl_usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
	return RL_EXIT_USAGE;
}

int rl_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
	return RL_EXIT_FAIL;
}

int rl_iface_arg(const char *cmd, const char *name)
{
	char err[RL_ERR_LEN];

	if (!rl_iface_name_check(name, err, sizeof(err)))
		return 0;
	return rl_usage_err("%s: %s", cmd, err);
}

void rl_print_pins_moved(const char *iface)
{
	printf("moved the pins of %s from %s\n  into %s\n", iface, RL_PIN_TOP,
	       rl_pin_root());
}

int rl_require_root(void)
{
	if (geteuid() == 0)
		return 0;
	return rl_fail("this command needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo");
}

/* The interfaces to list: `iface` alone, or every attached one; their
 * count, or -1 once the problem was reported. */
static int list_names(const struct rl_lister *l, const char *iface,
		      char names[][IF_NAMESIZE])
{
	char err[RL_ERR_LEN];
	int n;

	if (iface) {
		if (!rl_iface_resolve(iface, names[0], err, sizeof(err)))
			return 1;
		rl_err("%s: %s", l->cmd, err);
		return -1;
	}
	n = rl_ifaces_list(names, RL_MAX_IFACES);
	if (n < 0) {
		rl_err("%s: cannot read %s: %s", l->cmd, rl_pin_root(), strerror(-n));
		return -1;
	}
	return n;
}

int rl_list_ifaces(const struct rl_lister *l, void *ctx, const char *iface,
		   bool json)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE];
	int n = list_names(l, iface, names), ret = RL_EXIT_OK;
	struct rl_json j;
	char *doc = NULL;
	size_t len = 0;
	FILE *f = NULL;

	if (n < 0)
		return RL_EXIT_FAIL;
	if (json) {
		f = open_memstream(&doc, &len);
		if (!f)
			return rl_fail("%s: out of memory", l->cmd);
		rl_json_begin(&j, f);
		rl_json_object_start(&j);
		rl_json_name(&j, "interfaces");
		rl_json_array_start(&j);
	} else if (n == 0) {
		printf("no interface is attached\n");
	}
	for (int i = 0; i < n && ret == RL_EXIT_OK; i++) {
		ret = l->read(ctx, names[i]);
		if (ret)
			break;
		if (f) {
			l->json(&j, ctx);
		} else {
			if (i)
				putchar('\n');
			l->table(ctx);
		}
		if (l->release)
			l->release(ctx);
	}
	if (f) {
		rl_json_array_end(&j);
		rl_json_object_end(&j);
		if ((rl_json_end(&j) | fclose(f)) && !ret)
			ret = rl_fail("%s: out of memory", l->cmd);
		if (!ret)
			fputs(doc, stdout);
		free(doc);
	}
	return ret;
}
