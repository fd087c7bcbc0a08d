// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Typed options (user/cli/opt.c): each kind's good values stored at its
 * field's offset and size, nothing else of the config touched; bad values
 * refused naming the option, the problem and what to give. */
#include <errno.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/values.h"
#include "ratelimit.h"
#include "../harness.h"

/* A config with a guard on each side of every field: a store that misses
 * its offset or its size shows in a guard. */
struct cfg {
	__u64 g0;
	__u8 u8;
	__u64 g1;
	__u16 u16;
	__u64 g2;
	__u32 u32;
	__u64 g3;
	__u64 u64;
	__u64 g4;
	bool flag;
	bool given;
	__u64 g5;
	const char *str;
	int mode;
	__u64 g6;
	char text[8];
	__u64 g7;
};

#define GUARD 0x5a5a5a5a5a5a5a5aULL

static void cfg_init(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->g0 = c->g1 = c->g2 = c->g3 = c->g4 = c->g5 = c->g6 = c->g7 = GUARD;
}

static bool guards_ok(const struct cfg *c)
{
	return c->g0 == GUARD && c->g1 == GUARD && c->g2 == GUARD && c->g3 == GUARD &&
	       c->g4 == GUARD && c->g5 == GUARD && c->g6 == GUARD && c->g7 == GUARD;
}

static const struct rl_opt_word modes[] = {
	{ "auto", 0 }, { "native", 1 }, { "generic", 2 }, { NULL, 0 },
};

/* PARSE: a word of at most 7 letters into text[8] */
static int parse_word(const char *arg, void *field, char *err, size_t errlen)
{
	if (strlen(arg) > 7 || strspn(arg, "abcdefghijklmnopqrstuvwxyz") != strlen(arg)) {
		snprintf(err, errlen, "bad word '%s': use 1 to 7 letters a-z", arg);
		return -EINVAL;
	}
	snprintf(field, 8, "%s", arg);
	return 0;
}

#define T struct cfg
static const struct rl_opt o_rate = { .name = "rate", .kind = RL_OPT_RATE,
	RL_OPT_FIELD(T, u64), RL_OPT_HAVE(T, given) };
static const struct rl_opt o_rate_unl = { .name = "rate", .kind = RL_OPT_RATE,
	.unlimited = true, RL_OPT_FIELD(T, u64) };
static const struct rl_opt o_dur = { .name = "every", .kind = RL_OPT_DURATION,
	RL_OPT_FIELD(T, u64) };
static const struct rl_opt o_dur_range = { .name = "ban", .kind = RL_OPT_DURATION,
	.zero = true, .min = RL_NSEC_PER_MSEC, .max = 24 * 3600 * RL_NSEC_PER_SEC,
	RL_OPT_FIELD(T, u64) };
static const struct rl_opt o_count8 = { .name = "n8", .kind = RL_OPT_COUNT,
	.max = 1000, RL_OPT_FIELD(T, u8) };
static const struct rl_opt o_count16 = { .name = "n16", .kind = RL_OPT_COUNT,
	.min = 1, .max = 65535, RL_OPT_FIELD(T, u16) };
static const struct rl_opt o_count32 = { .name = "buckets", .kind = RL_OPT_COUNT,
	.min = 1, .max = 16, RL_OPT_FIELD(T, u32), .note = "per window" };
static const struct rl_opt o_count_unl = { .name = "burst", .kind = RL_OPT_COUNT,
	.min = 1, .max = 4294967294ULL, .unlimited = true, RL_OPT_FIELD(T, u64) };
static const struct rl_opt o_switch = { .name = "dry-run", .kind = RL_OPT_SWITCH,
	RL_OPT_FIELD(T, flag) };
static const struct rl_opt o_bits = { .name = "pass", .kind = RL_OPT_SWITCH,
	.bits = 0x4, RL_OPT_FIELD(T, u32), RL_OPT_HAVE(T, given) };
static const struct rl_opt o_string = { .name = "file", .kind = RL_OPT_STRING,
	RL_OPT_FIELD(T, str) };
static const struct rl_opt o_iface = RL_OPT_IFACE(T, str, "the interface");
static const struct rl_opt o_json = RL_OPT_JSON(T, flag, "JSON");
static const struct rl_opt o_enum = { .name = "mode", .kind = RL_OPT_ENUM,
	.words = modes, RL_OPT_FIELD(T, mode) };
static const struct rl_opt o_on_off = { .name = "cookies", .kind = RL_OPT_ENUM,
	.words = rl_opt_on_off, RL_OPT_FIELD(T, u64) };
static const struct rl_opt o_parse = { .name = "word", .kind = RL_OPT_PARSE,
	.parse = parse_word, RL_OPT_FIELD(T, text), RL_OPT_HAVE(T, given) };
#undef T

/* Refused: -EINVAL, the message holding each of `words`, nothing stored. */
static void refused(const struct rl_opt *o, const char *arg, const char *w1,
		    const char *w2)
{
	struct cfg c, before;
	char err[RL_ERR_LEN] = "";
	int ret;

	cfg_init(&c);
	before = c;
	ret = rl_opt_store(o, &c, arg, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL, arg);
	CHECK(!strncmp(err, "--", 2) && !strncmp(err + 2, o->name, strlen(o->name)),
	      "--%s '%s': the message names the option: %s", o->name, arg, err);
	CHECK(strstr(err, w1) && (!w2 || strstr(err, w2)),
	      "--%s '%s': the message says '%s'%s%s: %s", o->name, arg, w1,
	      w2 ? " and " : "", w2 ? w2 : "", err);
	CHECK(!memcmp(&c, &before, sizeof(c)), "--%s '%s': nothing stored", o->name, arg);
}

/* Stored: 0, the config as `want` (set up by the caller), guards kept. */
static struct cfg stored(const struct rl_opt *o, const char *arg)
{
	char err[RL_ERR_LEN] = "";
	struct cfg c;

	cfg_init(&c);
	CHECK_EQ(rl_opt_store(o, &c, arg, err, sizeof(err)), 0, err);
	CHECK(guards_ok(&c), "--%s '%s': a neighbour of its field changed", o->name,
	      arg ? arg : "");
	return c;
}

TEST(opt_rate)
{
	struct cfg c = stored(&o_rate, "10k");

	CHECK_EQ(c.u64, 10000, "10k");
	CHECK(c.given, "its have flag");
	CHECK_EQ(stored(&o_rate, "0").u64, 0, "0");
	CHECK_EQ(stored(&o_rate_unl, "unlimited").u64, RL_UNLIMITED, "unlimited");
	refused(&o_rate, "unlimited", "bad rate", "0 to 18446744073709551614 per second)");
	refused(&o_rate, "5x", "bad rate '5x'", "allowed");
	refused(&o_rate_unl, "-1", "'-1'", "or unlimited");
	refused(&o_rate_unl, "99999999999999999999", "too large", NULL);
}

TEST(opt_duration)
{
	CHECK_EQ(stored(&o_dur, "500ms").u64, 500 * RL_NSEC_PER_MSEC, "500ms");
	CHECK_EQ(stored(&o_dur, "2h").u64, 7200 * RL_NSEC_PER_SEC, "2h");
	CHECK_EQ(stored(&o_dur_range, "0").u64, 0, "0: none");
	CHECK_EQ(stored(&o_dur_range, "1ms").u64, RL_NSEC_PER_MSEC, "the least");
	CHECK_EQ(stored(&o_dur_range, "24h").u64, 24 * 3600 * RL_NSEC_PER_SEC, "the most");
	refused(&o_dur, "soon", "bad duration 'soon'", "ms, s, m or h");
	refused(&o_dur, "1H", "bad duration", NULL);
	refused(&o_dur_range, "25h", "'25h' is out of range", "1ms to 24h, or 0 for none");
	refused(&o_dur_range, "1441m", "out of range", "1ms to 24h");
	refused(&o_dur_range, "1.5s", "bad duration", "use 1ms to 24h, or 0 for none");
	refused(&o_dur_range, "-1s", "bad duration", "1ms to 24h");
}

/* A count in fields of 1, 2, 4 and 8 bytes, each at its own offset. */
TEST(opt_count)
{
	struct cfg c = stored(&o_count8, "255");

	CHECK_EQ(c.u8, 255, "a __u8");
	CHECK(!c.u16 && !c.u32 && !c.u64, "only its field");
	CHECK_EQ(stored(&o_count16, "65535").u16, 65535, "a __u16");
	CHECK_EQ(stored(&o_count32, "16").u32, 16, "a __u32");
	CHECK_EQ(stored(&o_count_unl, "4294967294").u64, 4294967294ULL, "a __u64");
	c = stored(&o_count_unl, "unlimited");
	CHECK_EQ(c.u64, 0, "unlimited is 0");
	/* what the field holds bounds the row's maximum */
	refused(&o_count8, "256", "from 0 to 255", NULL);
	refused(&o_count32, "17", "bad value '17'", "from 1 to 16 (per window)");
	refused(&o_count32, "0", "from 1 to 16", NULL);
	refused(&o_count32, "x", "whole number", NULL);
	refused(&o_count32, "-1", "'-1'", NULL);
	refused(&o_count_unl, "0", "from 1 to 4294967294", ", or unlimited");
	refused(&o_count_unl, "4294967295", "4294967294", "unlimited");
}

TEST(opt_switch_string_iface)
{
	struct cfg c = stored(&o_switch, NULL);

	CHECK(c.flag && !c.given, "a bool switch");
	c = stored(&o_json, NULL);
	CHECK(c.flag, "--json");
	cfg_init(&c);
	c.u32 = 0x1;
	{
		char err[RL_ERR_LEN];

		CHECK_EQ(rl_opt_store(&o_bits, &c, NULL, err, sizeof(err)), 0, "bits");
	}
	CHECK_EQ(c.u32, 0x5, "its bits added to the field's");
	CHECK(c.given && guards_ok(&c), "its have flag, nothing else");
	c = stored(&o_string, "/etc/key");
	CHECK(c.str && !strcmp(c.str, "/etc/key"), "a string as given");
	c = stored(&o_iface, "eth0");
	CHECK(c.str && !strcmp(c.str, "eth0"), "an interface name");
	refused(&o_iface, "", "empty", "ip link");
	refused(&o_iface, "a/b", "'/'", NULL);
	refused(&o_iface, "0123456789abcdef", "15 characters", NULL);
}

TEST(opt_enum_and_parse)
{
	struct cfg c = stored(&o_enum, "generic");

	CHECK_EQ(c.mode, 2, "generic");
	CHECK_EQ(stored(&o_enum, "auto").mode, 0, "auto");
	CHECK_EQ(stored(&o_on_off, "on").u64, 1, "on");
	CHECK_EQ(stored(&o_on_off, "off").u64, 0, "off");
	refused(&o_enum, "turbo", "bad value 'turbo'", "use auto, native or generic");
	refused(&o_on_off, "yes", "'yes' is neither on nor off", "use on or off");
	c = stored(&o_parse, "abc");
	CHECK(!strcmp(c.text, "abc") && c.given, "parsed into its field");
	refused(&o_parse, "abcdefgh", "bad word 'abcdefgh'", "1 to 7 letters");
}

/* Every row of every command's table is a kind the parser takes, at a
 * field inside the command's config; RL_OPT_CALL rows only where the
 * command has an opt(). */
static void rows_fit(const struct rl_cmd *cmd, const char *path)
{
	for (int i = 0; cmd->subcmds && cmd->subcmds[i]; i++)
		rows_fit(cmd->subcmds[i], cmd->subcmds[i]->name);
	for (const struct rl_opt *o = cmd->opts; o && o->name; o++) {
		if (o->kind == RL_OPT_CALL) {
			CHECK(cmd->opt, "%s --%s: a CALL row, no opt()", path, o->name);
			continue;
		}
		CHECK(o->offset + o->size <= cmd->cfg_size && o->size,
		      "%s --%s: its field is outside the config", path, o->name);
		CHECK(!o->have || o->have - 1 + sizeof(bool) <= cmd->cfg_size,
		      "%s --%s: its have flag is outside the config", path, o->name);
		CHECK((o->kind == RL_OPT_SWITCH) == !o->arg,
		      "%s --%s: a switch takes no value, the others one", path, o->name);
		CHECK(o->kind != RL_OPT_ENUM || o->words, "%s --%s: words", path, o->name);
		CHECK(o->kind != RL_OPT_PARSE || o->parse, "%s --%s: parse", path, o->name);
		CHECK(o->kind != RL_OPT_COUNT || o->size <= 8, "%s --%s: size", path, o->name);
	}
}

TEST(opt_tables_fit_their_configs)
{
	for (int i = 0; rl_commands[i]; i++)
		rows_fit(rl_commands[i], rl_commands[i]->name);
}
