// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The sync command's values (sync_conf.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/sync_conf.h"
#include "lib/sync_value.h"
#include "lib/values.h"

#define URL_FORMS "use redis://HOST:PORT[/DB] or unix:///PATH[?db=N]"

static int bad(char *err, size_t errlen, const char *s, const char *what)
{
	snprintf(err, errlen, "bad Redis URL '%s' (%s): " URL_FORMS, s, what);
	return -EINVAL;
}

/* A decimal in [min, max] that ends the string. */
static int parse_num(const char *s, long min, long max, int *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int rl_redis_url_parse(const char *s, struct rl_redis_url *u, char *err,
		       size_t errlen)
{
	struct rl_redis_url r = { 0 };
	const char *p, *q;
	char num[16];

	if (!strncmp(s, "unix://", 7)) {
		p = s + 7;
		if (*p != '/')
			return bad(err, errlen, s, "the socket path must be absolute");
		q = strchr(p, '?');
		if ((size_t)(q ? q - p : (long)strlen(p)) >= sizeof(r.path))
			return bad(err, errlen, s, "socket path too long");
		snprintf(r.path, sizeof(r.path), "%.*s", (int)(q ? q - p : (long)strlen(p)), p);
		if (q && (strncmp(q, "?db=", 4) ||
			  parse_num(q + 4, 0, RL_SYNC_MAX_DB, &r.db)))
			return bad(err, errlen, s, "the only query is ?db=N");
		r.unix_socket = true;
		*u = r;
		return 0;
	}
	if (strncmp(s, "redis://", 8))
		return bad(err, errlen, s, "unknown scheme");
	p = s + 8;
	if (strchr(p, '@'))
		return bad(err, errlen, s,
			   "no password in the URL: it would show in ps; use REDISCLI_AUTH or --password-file");
	if (*p == '[') {	/* [IPv6]:PORT */
		q = strchr(p, ']');
		if (!q || q[1] != ':')
			return bad(err, errlen, s, "an IPv6 address is [ADDR]:PORT");
		if ((size_t)(q - p - 1) >= sizeof(r.host) || q == p + 1)
			return bad(err, errlen, s, "bad host");
		snprintf(r.host, sizeof(r.host), "%.*s", (int)(q - p - 1), p + 1);
		q++;
	} else {
		q = strchr(p, ':');
		if (!q || q == p)
			return bad(err, errlen, s, "give HOST:PORT");
		if ((size_t)(q - p) >= sizeof(r.host))
			return bad(err, errlen, s, "host name too long");
		snprintf(r.host, sizeof(r.host), "%.*s", (int)(q - p), p);
		if (strpbrk(r.host, "/?#[] "))
			return bad(err, errlen, s, "bad host");
	}
	p = q + 1;	/* PORT[/DB] */
	q = strchr(p, '/');
	if ((size_t)(q ? q - p : (long)strlen(p)) >= sizeof(num))
		return bad(err, errlen, s, "bad port");
	snprintf(num, sizeof(num), "%.*s", (int)(q ? q - p : (long)strlen(p)), p);
	if (parse_num(num, 1, 65535, &r.port))
		return bad(err, errlen, s, "the port is 1 to 65535");
	if (q && parse_num(q + 1, 0, RL_SYNC_MAX_DB, &r.db))
		return bad(err, errlen, s, "the database is a number, /0 by default");
	*u = r;
	return 0;
}

int rl_sync_fleet_check(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);

	if (n == 0 || n > RL_SYNC_FLEET_MAX ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n) {
		snprintf(err, errlen,
			 "bad fleet name '%s': use 1 to %d of A-Z a-z 0-9 _ . -",
			 name, RL_SYNC_FLEET_MAX);
		return -EINVAL;
	}
	return 0;
}

void rl_sync_window_key(const char *fleet, const char *source,
			const char *rule, __u64 width_ns, char *buf, size_t len)
{
	snprintf(buf, len, "xrl:{%s|%s}%s%s:%llu", fleet, source, rule ? "|" : "",
		 rule ? rule : "", (unsigned long long)width_ns);
}

int rl_sync_interval_check(__u64 interval_ns, __u64 window_ns, char *err,
			   size_t errlen)
{
	char w[32];

	if (interval_ns >= RL_SYNC_MIN_INTERVAL_NS && interval_ns <= window_ns)
		return 0;
	rl_format_duration(window_ns, w, sizeof(w));
	snprintf(err, errlen,
		 "--interval must be at least 1ms and at most the window (%s): a longer one would publish passes after they left the window",
		 w);
	return -ERANGE;
}

/*
 * FILE's bytes (at most max; *len), when only root may read or change
 * it: a secret readable by others is no secret. 0, or -errno with err naming
 * the fix. `what` names the option. Opened once, checked on what was
 * opened (no race with a rename).
 */
static int read_private(const char *file, const char *what, char *buf, size_t max,
			size_t *len, char *err, size_t errlen)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	ssize_t n = 0;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;

		snprintf(err, errlen, "cannot read %s %s: %s", what, file, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IRWXG | S_IRWXO))) {
		snprintf(err, errlen,
			 "%s %s %s: only root may read it (chown root:root %s && chmod 600 %s)",
			 what, file, !S_ISREG(st.st_mode) ? "is not a regular file" :
			 st.st_uid ? "is not owned by root" : "is open to group or others",
			 file, file);
		close(fd);
		return -EPERM;
	}
	/* one byte more than max: to tell a file that does not fit */
	while (got <= max && (n = read(fd, buf + got, max + 1 - got)) > 0)
		got += (size_t)n;
	if (n < 0 && got <= max) {
		int e = errno;

		close(fd);
		snprintf(err, errlen, "cannot read %s %s: %s", what, file, strerror(e));
		return -e;
	}
	close(fd);
	*len = got;
	return 0;
}

int rl_sync_password(const char *file, char *out, size_t outlen, char *err,
		     size_t errlen)
{
	const char *env = getenv("REDISCLI_AUTH");
	char buf[RL_SYNC_PASSWORD_MAX + 3];	/* the line, its end, one more, NUL */
	size_t n, line;
	int ret;

	out[0] = '\0';
	if (!file) {
		if (env && strlen(env) >= outlen) {
			snprintf(err, errlen, "REDISCLI_AUTH is too long (at most %zu characters)",
				 outlen - 1);
			return -EINVAL;
		}
		snprintf(out, outlen, "%s", env ? env : "");
		return 0;
	}
	ret = read_private(file, "--password-file", buf, sizeof(buf) - 2, &n, err, errlen);
	if (ret)
		return ret;
	buf[n] = '\0';
	line = strcspn(buf, "\r\n");
	if (line >= outlen || line > RL_SYNC_PASSWORD_MAX) {
		snprintf(err, errlen, "the password in --password-file %s is longer than %zu bytes: use a shorter one",
			 file, (outlen - 1 < RL_SYNC_PASSWORD_MAX ? outlen - 1 : RL_SYNC_PASSWORD_MAX));
		return -EINVAL;
	}
	if (!line) {
		snprintf(err, errlen, "--password-file %s is empty: its first line is the password",
			 file);
		return -EINVAL;
	}
	memcpy(out, buf, line);
	out[line] = '\0';
	return 0;
}

int rl_sync_fleet_key(const char *file, unsigned char *out, size_t outlen, size_t *len,
		      char *err, size_t errlen)
{
	char buf[RL_FLEET_KEY_MAX + 2];	/* a key, its newline, one more */
	size_t n, max = outlen < RL_FLEET_KEY_MAX ? outlen : RL_FLEET_KEY_MAX;

	int ret = read_private(file, "--fleet-key-file", buf, sizeof(buf) - 1, &n,
			       err, errlen);

	if (ret)
		return ret;
	if (n && buf[n - 1] == '\n')	/* as `echo` or an editor ends it */
		n--;
	if (n > max) {
		snprintf(err, errlen, "--fleet-key-file %s is longer than %zu bytes: use a key of %d to %zu bytes",
			 file, max, RL_FLEET_KEY_MIN, max);
		return -EINVAL;
	}
	if (n < RL_FLEET_KEY_MIN) {
		snprintf(err, errlen,
			 "--fleet-key-file %s holds %zu bytes: a fleet key is at least %d (head -c 32 /dev/urandom > %s)",
			 file, n, RL_FLEET_KEY_MIN, file);
		return -EINVAL;
	}
	memcpy(out, buf, n);
	*len = n;
	return 0;
}
