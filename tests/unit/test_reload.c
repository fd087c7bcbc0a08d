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

/* Layout 8 only added fields at the end of rules and config: a layout-7
 * value zero-extended is a valid layout-8 one (unscoped, no burst, no
 * scopes in use), and layout 7 has no scope maps. */
TEST(reload_layout7_shapes)
{
	CHECK_EQ(RL_LAYOUT_OLDEST_CARRIED, 7, "oldest layout carried");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_rules), 128, "layout-7 rule size");
	CHECK_EQ(offsetof(struct rl_rule, burst), 128, "burst after the layout-7 rule");
	CHECK_EQ(offsetof(struct rl_rule, scope), 136, "scope after burst");
	CHECK_EQ(sizeof(struct rl_rule), 144, "layout-8 rule size");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_config),
		 (int)offsetof(struct rl_config, scopes_used), "layout-7 config size");
	CHECK_EQ(sizeof(struct rl_config), offsetof(struct rl_config, scopes_used) + 8,
		 "config grew by scopes_used and pad");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_scopes), -1, "no scopes in layout 7");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_scoped_v4), -1, "no scoped_v4");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_scoped_v6), -1, "no scoped_v6");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_sources), (int)sizeof(struct rl_source),
		 "sources unchanged");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_events), 0, "the ring buffer: size 0");
	for (int i = 0; i < RL_NR_MAPS; i++)
		CHECK_EQ(rl_layout_value_size(RL_LAYOUT_VERSION, i),
			 (int)rl_map_defs[i].value_size, rl_map_defs[i].name);
}

/* Layout 9 only added the rejected fields at the end of the sync state:
 * the sync state of layouts 7 and 8 zero-extended is a layout-9 one
 * (nothing rejected yet); layout 8's other maps are layout 9's. */
TEST(reload_layout8_shapes)
{
	CHECK_EQ(RL_LAYOUT_VERSION, 9, "layout");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_sync), 240, "layout-8 sync state size");
	CHECK_EQ(rl_layout_value_size(7, RL_MAP_IDX_sync), 240, "layout-7 sync state size");
	CHECK_EQ(sizeof(struct rl_sync_state), 240 + 8 * (RL_SYNC_REJECTS + 1),
		 "layout-9 sync state: rejected and key_errors at the end");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (i != RL_MAP_IDX_sync)
			CHECK_EQ(rl_layout_value_size(8, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
}
