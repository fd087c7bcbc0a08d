// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Error reporting and checks shared by every command (xdp-ratelimit(8)). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "pin.h"
#include "values.h"

static char err_where[PATH_MAX + 32];

void rl_err_where(const char *where)
{
	snprintf(err_where, sizeof(err_where), "%s", where ? where : "");
}

static void verr(const char *fmt, va_list ap)
{
	fputs("xdp-ratelimit: ", stderr);
	if (*err_where)
		fprintf(stderr, "%s: ", err_where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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

int rl_require_root(void)
{
	if (geteuid() == 0)
		return 0;
	return rl_fail("this command needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo");
}
