// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* --syn-cookies on an interface: the host's SYNPROXY table, added once and
 * said (lib/cookie_host.h); detach removes it. */
#include <net/if.h>
#include <stdio.h>
#include "cli/cli.h"
#include "ratelimit.h"
#include "lib/cookie_host.h"
#include "lib/values.h"

int rl_cookies_ensure(const char *name)
{
	char err[RL_ERR_LEN], table[IF_NAMESIZE + 32];
	__u16 mss;
	__u8 wscale;
	int ret;

	rl_cookie_opts((int)if_nametoindex(name), &mss, &wscale);
	ret = rl_cookie_host_add(name, mss, wscale, err, sizeof(err));
	if (ret < 0)
		return rl_fail("%s: --syn-cookies on needs SYNPROXY on the host to complete the connections, and %s; nothing changed",
			       name, err);
	if (ret == 0) {
		rl_cookie_host_table(name, table, sizeof(table));
		printf("%s: SYN cookies: added nft table inet %s\n"
		       "  (its SYNPROXY completes the connections of valid cookies; detach removes it)\n",
		       name, table);
	}
	return RL_EXIT_OK;
}

bool rl_rules_want_cookies(const struct rl_rule *rules, int n)
{
	for (int i = 0; i < n; i++)
		if ((rules[i].flags & RL_RULE_F_USED) && (rules[i].flags & RL_RULE_F_COOKIES))
			return true;
	return false;
}
