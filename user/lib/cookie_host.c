// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The host's side of SYN cookies: SYNPROXY in an nft table (cookie_host.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/wait.h>
#include "ratelimit.h"
#include "lib/cookie_host.h"

void rl_cookie_host_table(const char *iface, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "xdp_ratelimit_%s", iface);
	for (n = strlen("xdp_ratelimit_"); buf[n]; n++)
		if (!(buf[n] >= 'a' && buf[n] <= 'z') && !(buf[n] >= 'A' && buf[n] <= 'Z') &&
		    !(buf[n] >= '0' && buf[n] <= '9'))
			buf[n] = '_';
}

/*
 * Run nft with `script` on its standard input (NULL: none) and `args`:
 * its exit status, or -errno; what it said on stderr in err (the first
 * line). Nothing of it reaches our own output: the library never prints.
 */
static int run_nft(const char *const args[], const char *script, char *err,
		   size_t errlen)
{
	int in[2], errp[2], status;
	char buf[512];
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(in))
		return -errno;
	if (pipe(errp)) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(in[0]); close(in[1]); close(errp[0]); close(errp[1]);
		return e;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(in[0], 0);
		dup2(errp[1], 2);
		if (null >= 0)
			dup2(null, 1);
		close(in[1]);
		close(errp[0]);
		execvp("nft", (char *const *)args);
		execv("/usr/sbin/nft", (char *const *)args);
		dprintf(2, "nft is not installed (Debian: apt-get install nftables)");
		_exit(127);
	}
	close(in[0]);
	close(errp[1]);
	if (script && write(in[1], script, strlen(script)) < 0)
		got = 0;	/* nft then says what it missed */
	close(in[1]);
	while ((n = read(errp[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(errp[0]);
	buf[got] = '\0';
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (err && errlen) {
		size_t line = strcspn(buf, "\n");

		if (line >= errlen)
			line = errlen - 1;
		memcpy(err, buf, line);
		err[line] = '\0';
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool rl_cookie_host_present(const char *iface)
{
	char table[IF_NAMESIZE + 32];
	const char *args[] = { "nft", "list", "table", "inet", table, NULL };

	rl_cookie_host_table(iface, table, sizeof(table));
	return run_nft(args, NULL, NULL, 0) == 0;
}

int rl_cookie_host_add(const char *iface, __u16 mss, __u8 wscale, char *err,
		       size_t errlen)
{
	const char *args[] = { "nft", "-f", "-", NULL };
	char table[IF_NAMESIZE + 32], script[2048], why[256] = "";
	int ret;

	if (rl_cookie_host_present(iface))
		return 1;
	rl_cookie_host_table(iface, table, sizeof(table));
	/* the ACKs the program passed for a valid cookie carry its mark
	 * (include/ratelimit.h RL_COOKIE_MARK_*): SYNPROXY checks the cookie
	 * again, opens the connection to the listener and keeps shifting
	 * sequence numbers for it; no other packet matches. Before the
	 * filter hook's tables, so that their rules see the connection as
	 * SYNPROXY's. */
	snprintf(script, sizeof(script),
		 "table inet %s {\n"
		 "  comment \"xdp-ratelimit: SYN cookies of %s (detach removes it)\"\n"
		 "  chain cookies {\n"
		 "    type filter hook input priority filter - 1; policy accept;\n"
		 "    meta nfproto ipv4 ip frag-off & 0x%x == 0x%x tcp flags & (fin|syn|rst|ack) == ack synproxy mss %u wscale %u timestamp sack-perm\n"
		 "    meta nfproto ipv6 ip6 flowlabel 0x%x tcp flags & (fin|syn|rst|ack) == ack synproxy mss %u wscale %u timestamp sack-perm\n"
		 "  }\n"
		 "}\n",
		 table, iface, RL_COOKIE_MARK_V4, RL_COOKIE_MARK_V4, mss, wscale,
		 RL_COOKIE_MARK_V6, mss - 20, wscale);
	ret = run_nft(args, script, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, errlen, "cannot run nft: %s", strerror(-ret));
		return ret;
	}
	if (ret) {
		snprintf(err, errlen,
			 "nft could not add table inet %s for SYN cookies: %s (the kernel needs nft_synproxy and connection tracking)",
			 table, why[0] ? why : "no reason given");
		return -EINVAL;
	}
	return 0;
}

int rl_cookie_host_del(const char *iface, char *err, size_t errlen)
{
	char table[IF_NAMESIZE + 32], why[256] = "";
	const char *args[] = { "nft", "delete", "table", "inet", table, NULL };
	int ret;

	if (!rl_cookie_host_present(iface))
		return 1;
	rl_cookie_host_table(iface, table, sizeof(table));
	ret = run_nft(args, NULL, why, sizeof(why));
	if (ret < 0 || ret) {
		snprintf(err, errlen, "nft could not delete table inet %s: %s", table,
			 ret < 0 ? strerror(-ret) : why);
		return ret < 0 ? ret : -EINVAL;
	}
	return 0;
}

/* The number `field` (from 0) of a file, or -errno (-ENOENT: no such
 * number). */
static long read_long(const char *path, int field)
{
	FILE *f = fopen(path, "r");
	long v = -ENOENT;

	if (!f)
		return -errno;
	for (int i = 0; i <= field; i++)
		if (fscanf(f, "%ld", &v) != 1) {
			v = -ENOENT;
			break;
		}
	fclose(f);
	return v;
}

void rl_cookie_opts(int ifindex, __u16 *mss, __u8 *wscale)
{
	char name[IF_NAMESIZE], path[PATH_MAX];
	long mtu = -1, space, rmem, ws = 0;

	if (if_indextoname((unsigned int)ifindex, name)) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
		mtu = read_long(path, 0);
	}
	/* IPv4 and TCP headers without options: SYNPROXY's and the
	 * kernel's own cookies take the MSS so */
	*mss = mtu >= 576 && mtu <= 65535 ? (__u16)(mtu - 40) : 1460;
	/* tcp_select_initial_window: the larger of tcp_rmem's maximum and
	 * rmem_max, as a shift of 64k, at most 14 */
	space = read_long("/proc/sys/net/ipv4/tcp_rmem", 2);
	rmem = read_long("/proc/sys/net/core/rmem_max", 0);
	if (rmem > space)
		space = rmem;
	if (space <= 0) {
		*wscale = RL_COOKIE_DEFAULT_WSCALE;
		return;
	}
	while (space > 65535 && ws < 14) {
		space >>= 1;
		ws++;
	}
	*wscale = (__u8)ws;
}
