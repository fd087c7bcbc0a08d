// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* reload takes every attach setting, and the layouts it carries. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_args.h"
#include "lib/iface.h"
#include "lib/reload_carry.h"
#include "lib/settings.h"
#include "lib/values.h"
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
 * detach. The same kind and range into a field of the same size
 * (RL_ATTACH_OPT_*), and the same argument. */
TEST(reload_takes_every_attach_option)
{
	int n = 0;

	for (const struct rl_opt *o = rl_cmd_attach.opts; o->name; o++) {
		const struct rl_opt *r = opt_named(rl_cmd_reload.opts, o->name);

		n++;
		if (!CHECK(r, "attach --%s is not an option of reload", o->name))
			continue;
		CHECK_EQ(r->kind, o->kind, o->name);
		CHECK_EQ(r->size, o->size, o->name);
		CHECK(r->min == o->min && r->max == o->max && r->bits == o->bits &&
		      r->words == o->words && r->parse == o->parse,
		      "reload --%s is parsed as attach's", o->name);
		CHECK((!r->arg && !o->arg) || (r->arg && o->arg && !strcmp(r->arg, o->arg)),
		      "reload --%s takes '%s', attach '%s'", o->name,
		      r->arg ? r->arg : "nothing", o->arg ? o->arg : "nothing");
	}
	CHECK_GE(n, 12, "attach options compared");
}

/* What layout 14 changed for every older layout: `sources` became a
 * per-CPU array found through the new `source_index`, and the config
 * grew the index's fields at its end. */
static bool changed_in_14(int i)
{
	return i == RL_MAP_IDX_config || i == RL_MAP_IDX_source_index ||
	       i == RL_MAP_IDX_source_keys || i == RL_MAP_IDX_source_pool ||
	       i == RL_MAP_IDX_sources;
}

/* Layout 9 only added a map (rule_counters), layout 10 only grew the sync
 * state, layout 11 added `synacks`, the window of each answered connection
 * (not carried: an older one has none) and a counter at the end of the
 * counters (carried, zero-extended), layout 12 SYN cookies' counters at
 * their end. */
TEST(reload_layout8_shapes)
{
	CHECK_EQ(RL_LAYOUT_OLDEST_CARRIED, 8, "oldest layout carried");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_rule_counters), -ENOENT,
		 "no rule_counters in layout 8");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_answered), 8, "layout-8 answered");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_counters),
		 (int)offsetof(struct rl_counters, verified_inserts), "layout-8 counters");
	CHECK_EQ(offsetof(struct rl_counters, cookies_sent),
		 offsetof(struct rl_counters, verified_inserts) + 8,
		 "layout 11's counters grew by verified_inserts");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_synacks), -ENOENT, "no synacks in layout 8");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (i != RL_MAP_IDX_rule_counters && i != RL_MAP_IDX_sync &&
		    i != RL_MAP_IDX_answered && i != RL_MAP_IDX_counters &&
		    i != RL_MAP_IDX_synacks && i != RL_MAP_IDX_cpus &&
		    !changed_in_14(i))
			CHECK_EQ(rl_layout_value_size(8, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
	for (int i = 0; i < RL_NR_MAPS; i++)
		CHECK_EQ(rl_layout_value_size(RL_LAYOUT_VERSION, i),
			 (int)rl_map_defs[i].value_size, rl_map_defs[i].name);
}

/* Layout 14: `sources` was an LRU per-CPU hash keyed by the source (the
 * same values), no index; the config ended before the index's fields
 * (zero there: the carry places the sources under the new seed). */
TEST(reload_layout13_shapes)
{
	CHECK_EQ(RL_LAYOUT_VERSION, 15, "this layout");
	for (__u32 layout = 8; layout <= 13; layout++) {
		CHECK_EQ(rl_layout_value_size(layout, RL_MAP_IDX_source_index), -ENOENT,
			 "no source_index before layout 14");
		CHECK_EQ(rl_layout_value_size(layout, RL_MAP_IDX_source_keys), -ENOENT,
			 "no source_keys before layout 14");
		CHECK_EQ(rl_layout_value_size(layout, RL_MAP_IDX_source_pool), -ENOENT,
			 "no source_pool before layout 14");
		CHECK_EQ(rl_layout_value_size(layout, RL_MAP_IDX_config),
			 (int)offsetof(struct rl_config, index_buckets),
			 "the config before the index's fields");
		CHECK_EQ(rl_layout_map_type(layout, RL_MAP_IDX_sources),
			 BPF_MAP_TYPE_LRU_PERCPU_HASH, "sources a hash");
		CHECK_EQ(rl_layout_key_size(layout, RL_MAP_IDX_sources),
			 sizeof(struct rl_key), "keyed by the source");
		CHECK_EQ(rl_layout_value_size(layout, RL_MAP_IDX_sources),
			 (int)sizeof(struct rl_source), "the same values");
	}
	CHECK_EQ(rl_layout_map_type(14, RL_MAP_IDX_sources), BPF_MAP_TYPE_PERCPU_ARRAY,
		 "sources an array");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (!changed_in_14(i))
			CHECK_EQ(rl_layout_value_size(13, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
}

/* Layout 13 only added a map (cpus): layout 12's are all 13's, and a
 * carry from 12 or older has no CPUs to copy (it fills them). */
TEST(reload_layout12_shapes)
{
	for (__u32 layout = 8; layout <= 12; layout++)
		CHECK_EQ(rl_layout_value_size(layout, RL_MAP_IDX_cpus), -ENOENT,
			 "no cpus in layouts 8 to 12");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (i != RL_MAP_IDX_cpus && !changed_in_14(i))
			CHECK_EQ(rl_layout_value_size(12, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
}

/* Layout 10 only added the rejected fields at the end of the sync state:
 * the sync state of layouts 8 and 9 zero-extended is a layout-10 one
 * (nothing rejected yet); layout 9's other maps are layout 10's but for
 * what layout 11 changed. */
TEST(reload_layout9_shapes)
{
	CHECK_EQ(rl_layout_value_size(9, RL_MAP_IDX_sync), 240, "layout-9 sync state size");
	CHECK_EQ(rl_layout_value_size(8, RL_MAP_IDX_sync), 240, "layout-8 sync state size");
	CHECK_EQ(sizeof(struct rl_sync_state), 240 + 8 * (RL_SYNC_REJECTS + 1),
		 "layout-10 sync state: rejected and key_errors at the end");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (i != RL_MAP_IDX_sync && i != RL_MAP_IDX_answered &&
		    i != RL_MAP_IDX_counters && i != RL_MAP_IDX_synacks &&
		    i != RL_MAP_IDX_cpus && !changed_in_14(i))
			CHECK_EQ(rl_layout_value_size(9, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
	CHECK_EQ(rl_layout_value_size(10, RL_MAP_IDX_sync),
		 (int)sizeof(struct rl_sync_state), "layout-10 sync state");
	CHECK_EQ(rl_layout_value_size(10, RL_MAP_IDX_synacks), -ENOENT, "no synacks in layout 10");
}

/* Layout 12 only added SYN cookies' counters at the end of the counters,
 * and gave config's padding to the cookie options: the counters of
 * layout 11 zero-extended are layout 12's (no cookies sent), and its
 * config is (the options' defaults until the reload writes them). */
TEST(reload_layout11_shapes)
{
	CHECK_EQ(rl_layout_value_size(11, RL_MAP_IDX_counters),
		 (int)offsetof(struct rl_counters, cookies_sent), "layout-11 counters");
	for (__u32 l = 8; l <= 10; l++)
		CHECK_EQ(rl_layout_value_size(l, RL_MAP_IDX_counters),
			 (int)offsetof(struct rl_counters, verified_inserts),
			 "layouts 8 to 10: counters before verified_inserts");
	CHECK_EQ(sizeof(struct rl_counters), offsetof(struct rl_counters, cookies_sent) + 40,
		 "counters grew by the five cookie fields");
	CHECK_EQ(rl_layout_value_size(11, RL_MAP_IDX_config),
		 rl_layout_value_size(12, RL_MAP_IDX_config), "config the same size");
	CHECK_EQ(offsetof(struct rl_config, cookie_mss), offsetof(struct rl_config, scopes_used) + 4,
		 "cookie options where layout 11's padding was");
	CHECK_EQ(rl_layout_value_size(11, RL_MAP_IDX_rules), (int)sizeof(struct rl_rule),
		 "rules the same size (--syn-cookies is a flag)");
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (i != RL_MAP_IDX_counters && i != RL_MAP_IDX_cpus &&
		    !changed_in_14(i))
			CHECK_EQ(rl_layout_value_size(11, i), (int)rl_map_defs[i].value_size,
				 rl_map_defs[i].name);
}

static void settings_v6(struct rl_settings *s, __u32 v6_prefix, __u64 max_sources)
{
	struct rl_attach_req req;
	char err[RL_ERR_LEN];

	rl_attach_req_defaults(&req);
	req.v6_prefix = v6_prefix;
	req.max_sources = max_sources;
	CHECK_EQ(rl_settings_build(s, &req, 2, err, sizeof(err)), 0, err);
}

/* Bans and verified sources go to new keys (xdp-ratelimit(8), reload): an
 * IPv6 one is masked to a shorter --ipv6-prefix, cannot be to a longer
 * one; IPv4 keys and an unchanged prefix stay as they are. */
TEST(reload_carry_key)
{
	struct rl_settings p64, p48, p128;
	struct rl_key k = { .addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x52, 0, 1 } };
	struct rl_key v4 = { .addr = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 } };
	struct rl_key want = { .addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x52 } }, k2 = k, v4b = v4;

	settings_v6(&p64, 64, 1024);
	settings_v6(&p48, 48, 1024);
	settings_v6(&p128, 128, 1024);
	CHECK(rl_carry_key(&k2, &p64, &p48) && !memcmp(&k2, &want, sizeof(k2)),
	      "a /64 key masked to /48");
	k2 = k;
	CHECK(rl_carry_key(&k2, &p64, &p64) && !memcmp(&k2, &k, sizeof(k2)),
	      "the same prefix keeps the key");
	CHECK(!rl_carry_key(&k2, &p64, &p128), "a /64 key cannot be a /128 one");
	CHECK(rl_carry_key(&v4b, &p64, &p128) && !memcmp(&v4b, &v4, sizeof(v4)),
	      "an IPv4 key under any prefix");
}

/* What a reload onto new settings would lose refuses it, naming how many
 * and how to go on; a shorter prefix and a table that holds them all
 * lose nothing. */
TEST(reload_refuses_loss)
{
	struct rl_settings p64, p48, p128, small;
	char err[RL_ERR_LEN];
	struct rl_carry_loss none = { .verified = 5 },
			     bans = { .v6_bans = 2 },
			     both = { .v6_bans = 2, .v6_verified = 3, .verified = 1 },
			     many = { .verified = 1025 };

	settings_v6(&p64, 64, 2048);
	settings_v6(&p48, 48, 2048);
	settings_v6(&p128, 128, 2048);
	settings_v6(&small, 64, 1024);
	err[0] = 0;
	CHECK_EQ(rl_carry_loss_check(&none, &p64, &p48, "eth0", err, sizeof(err)), 0,
		 "a shorter prefix loses nothing");
	CHECK_EQ(rl_carry_loss_check(&none, &p64, &small, "eth0", err, sizeof(err)), 0,
		 "a smaller table that holds them");
	CHECK_EQ(rl_carry_loss_check(&bans, &p64, &p128, "eth0", err, sizeof(err)), -EINVAL,
		 "IPv6 bans to a longer prefix");
	CHECK(strstr(err, "/128, from /64") && strstr(err, "would lose 2 IPv6 bans and 0 verified") &&
	      strstr(err, "ban del") && strstr(err, "detach eth0"), "%s", err);
	CHECK_EQ(rl_carry_loss_check(&both, &p64, &p128, "eth0", err, sizeof(err)), -EINVAL,
		 "verified IPv6 sources to a longer prefix");
	CHECK(strstr(err, "2 IPv6 bans and 3 verified IPv6 sources") &&
	      strstr(err, "keep the prefix"), "%s", err);
	CHECK_EQ(rl_carry_loss_check(&many, &p64, &small, "eth0", err, sizeof(err)), -EINVAL,
		 "more verified than --max-sources");
	CHECK(strstr(err, "1025 sources are verified, more than --max-sources 1024") &&
	      strstr(err, "--max-sources 1025 or more"), "%s", err);
	CHECK_EQ(rl_carry_loss_check(&many, &p64, &p64, "eth0", err, sizeof(err)), 0,
		 "a table as large holds them");
}

/* What a reload onto new maps carried, as it says so (cli/cmd_reload.c). */
static const char *carried_text(const char *iface, const struct rl_carried *c)
{
	static char out[1024];
	FILE *f = fmemopen(out, sizeof(out), "w");

	if (!f)
		return "";
	rl_reload_print_carried(f, iface, c, RL_LAYOUT_VERSION);
	fclose(f);
	return out;
}

/* Within 80 columns with a name of 15 characters and the largest counts
 * (every slot a rule, a ban and a verified source per tracked source):
 * the verified sources go on under the rest then, and only then. */
TEST(reload_carried_fits_80_columns)
{
	struct rl_carried small = { .rules = 2 }, large = {
		.rules = RL_MAX_RULES, .bans = RL_MAX_MAX_SOURCES,
		.verified = RL_MAX_MAX_SOURCES, .windows = true };
	const char *got;

	got = carried_text("eth0", &small);
	CHECK(!strcmp(got, "eth0: new maps: carried 2 rules, 0 bans, 0 verified sources,\n"
		      "  not the sources' windows and counters (every source starts a fresh window)\n"),
	      "got:\n%s", got);
	got = carried_text("ifname-15-chars", &large);
	CHECK(!strcmp(got, "ifname-15-chars: new maps: carried 4096 rules, 16777216 bans,\n"
		      "  16777216 verified sources,\n"
		      "  the sources' windows and counters\n"), "got:\n%s", got);
}

/* Layout 15 gave config's pad byte a meaning (scope_skip, not carried
 * from 14: reload_carry.c): every shape of layout 14 is this layout's. */
TEST(reload_layout14_shapes)
{
	CHECK_EQ(RL_LAYOUT_VERSION, 15, "this layout");
	for (int i = 0; i < RL_NR_MAPS; i++) {
		CHECK_EQ(rl_layout_value_size(14, i), (int)rl_map_defs[i].value_size,
			 rl_map_defs[i].name);
		CHECK_EQ(rl_layout_map_type(14, i), rl_map_defs[i].type, rl_map_defs[i].name);
		CHECK_EQ(rl_layout_key_size(14, i), rl_map_defs[i].key_size,
			 rl_map_defs[i].name);
	}
}
