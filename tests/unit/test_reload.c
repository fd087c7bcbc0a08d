// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* reload takes every attach setting, and the layouts it carries. */
#include <stddef.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/iface.h"
#include "../harness.h"

static const struct rl_opt *opt_named(const struct rl_opt *opts, const char *name)
{
	for (const struct rl_opt *o = opts; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* `reload IFACE [any attach setting]` (xdp-ratelimit(8)): an option of attach that
 * reload lacks could be set at attach and never changed without a
 * detach. Same id (parsed by rl_attach_opt) and same argument. */
TEST(reload_takes_every_attach_option)
{
	int n = 0;

	for (const struct rl_opt *o = rl_cmd_attach.opts; o->name; o++) {
		const struct rl_opt *r = opt_named(rl_cmd_reload.opts, o->name);

		n++;
		if (!CHECK(r, "attach --%s is not an option of reload", o->name))
			continue;
		CHECK_EQ(r->id, o->id, o->name);
		CHECK((!r->arg && !o->arg) || (r->arg && o->arg && !strcmp(r->arg, o->arg)),
		      "reload --%s takes '%s', attach '%s'", o->name,
		      r->arg ? r->arg : "nothing", o->arg ? o->arg : "nothing");
	}
	CHECK_GE(n, 12, "attach options compared");
}

/* Layout 9 only added SYN cookies' counters at the end of the counters,
 * and gave config's padding to the cookie options: a layout-8 value
 * zero-extended is a valid layout-9 one (no cookies sent, the options'
 * defaults until the reload writes them). Layout 7's config, shorter,
 * still tells where its layout field is. */
TEST(reload_layout8_shapes)
{
	CHECK_EQ(RL_LAYOUT_OLDEST_CARRIED, 8, "oldest layout carried");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_counters),
		 (int)offsetof(struct rl_counters, cookies_sent), "layout-8 counters size");
	CHECK_EQ(sizeof(struct rl_counters), offsetof(struct rl_counters, cookies_sent) + 40,
		 "counters grew by the five cookie fields");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_config), (int)sizeof(struct rl_config),
		 "config the same size");
	CHECK_EQ(offsetof(struct rl_config, cookie_mss), offsetof(struct rl_config, scopes_used) + 4,
		 "cookie options where layout 8's padding was");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_rules), (int)sizeof(struct rl_rule),
		 "rules the same size (--syn-cookies is a flag)");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_config),
		 (int)offsetof(struct rl_config, scopes_used), "layout-7 config size");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (i != RL_MAP_IDX_counters)
			CHECK_EQ(rl_layout_value_size(8, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
	for (int i = 0; i < RL_NR_MAPS; i++)
		CHECK_EQ(rl_layout_value_size(RL_LAYOUT_VERSION, i),
			 (int)rl_map_defs[i].value_size, rl_map_defs[i].name);
}
