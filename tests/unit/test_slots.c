// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Redis Cluster routing on the host (user/lib/sync_slots.c): key slots as
 * Redis computes them (values from the cluster specification and CLUSTER
 * KEYSLOT), a CLUSTER SLOTS reply made into a slot map, redirections.
 */
#include <errno.h>
#include <string.h>
#include "lib/sync_slots.h"
#include "harness.h"

static unsigned int slot(const char *k)
{
	return rl_key_slot(k, strlen(k));
}

TEST(key_slot_as_redis)
{
	CHECK_EQ(slot("123456789"), 0x31c3, "CRC16 XMODEM check value");
	CHECK_EQ(slot("somekey"), 11058, "CLUSTER KEYSLOT somekey");
	CHECK_EQ(slot("foo{hash_tag}"), 2515, "CLUSTER KEYSLOT foo{hash_tag}");
	CHECK_EQ(slot("foo"), 12182, "CLUSTER KEYSLOT foo");
}

TEST(key_slot_hash_tag)
{
	/* the tag alone: a source's keys share a slot whatever the width */
	CHECK_EQ(slot("xrl:{web|198.18.0.7}:100000000"), slot("web|198.18.0.7"), "tag");
	CHECK_EQ(slot("xrl:{web|198.18.0.7}:5"), slot("xrl:{web|198.18.0.7}:100000000"),
		 "same tag, same slot");
	CHECK_NE(slot("xrl:{web|198.18.0.7}:5"), slot("xrl:{web|198.18.0.8}:5"),
		 "another source, (here) another slot");
	/* the specification's edge cases */
	CHECK_EQ(slot("foo{}{bar}"), rl_key_slot("foo{}{bar}", 10), "empty tag: whole key");
	CHECK_NE(slot("foo{}{bar}"), slot("bar"), "empty first tag: not the second");
	CHECK_EQ(slot("foo{{bar}}zap"), slot("{bar"), "tag from the first '{'");
	CHECK_EQ(slot("foo{bar}{zap}"), slot("bar"), "the first tag only");
	CHECK_EQ(slot("foo{bar"), rl_key_slot("foo{bar", 7), "unclosed: whole key");
	CHECK_EQ(rl_key_slot("{a}b", 2), rl_key_slot("{a", 2), "no '}' within len");
}

/* reply builders: a CLUSTER SLOTS reply of hiredis's own structs */
static redisReply rep_int(long long v)
{
	return (redisReply){ .type = REDIS_REPLY_INTEGER, .integer = v };
}

static redisReply rep_str(char *s)
{
	return (redisReply){ .type = REDIS_REPLY_STRING, .str = s, .len = strlen(s) };
}

static redisReply rep_arr(redisReply **e, size_t n)
{
	return (redisReply){ .type = REDIS_REPLY_ARRAY, .element = e, .elements = n };
}

TEST(slot_map_from_cluster_slots)
{
	char h1[] = "198.18.201.1", h2[] = "", id[] = "abc";
	redisReply lo0 = rep_int(0), hi0 = rep_int(5460), ip0 = rep_str(h1),
		   pt0 = rep_int(7000), id0 = rep_str(id);
	redisReply lo1 = rep_int(5461), hi1 = rep_int(16383), ip1 = rep_str(h2),
		   pt1 = rep_int(7001);
	redisReply lo2 = rep_int(100), hi2 = rep_int(100);	/* one slot, node 0 again */
	redisReply rip = rep_str(h1), rpt = rep_int(7100);	/* a replica: not routed */
	redisReply *n0e[] = { &ip0, &pt0, &id0 }, *n1e[] = { &ip1, &pt1 }, *re[] = { &rip, &rpt };
	redisReply n0 = rep_arr(n0e, 3), n1 = rep_arr(n1e, 2), rn = rep_arr(re, 2);
	redisReply *r0e[] = { &lo0, &hi0, &n0 }, *r1e[] = { &lo1, &hi1, &n1, &rn },
		   *r2e[] = { &lo2, &hi2, &n0 };
	redisReply r0 = rep_arr(r0e, 3), r1 = rep_arr(r1e, 4), r2 = rep_arr(r2e, 3);
	redisReply *top[] = { &r0, &r1, &r2 };
	redisReply all = rep_arr(top, 3);
	struct rl_slot_map m;
	char err[256];

	CHECK_EQ(rl_slot_map_parse(&m, &all, "seed", err, sizeof(err)), 0, "parsed");
	CHECK_EQ(m.nnodes, 2, "two masters (a node named twice is one)");
	CHECK(!strcmp(m.node[0].host, "198.18.201.1") && m.node[0].port == 7000, "node 0");
	CHECK(!strcmp(m.node[1].host, "seed") && m.node[1].port == 7001,
	      "no address: the seed's, got %s", m.node[1].host);
	CHECK_EQ(m.owner[0], 0, "slot 0");
	CHECK_EQ(m.owner[5460], 0, "slot 5460");
	CHECK_EQ(m.owner[5461], 1, "slot 5461");
	CHECK_EQ(m.owner[16383], 1, "slot 16383");
	CHECK_EQ(rl_slot_map_node(&m, "198.18.201.1", 7100), 2, "the replica: a new node");

	/* malformed: refused with a reason, nothing routed */
	hi0 = rep_int(16384);
	CHECK_EQ(rl_slot_map_parse(&m, &all, "seed", err, sizeof(err)), -EPROTO, "slot out of range");
	CHECK(strstr(err, "malformed") != NULL, "err: %s", err);
	hi0 = rep_int(5460);
	pt1 = rep_str(h1);
	CHECK_EQ(rl_slot_map_parse(&m, &all, "seed", err, sizeof(err)), -EPROTO, "port not a number");
	all = rep_arr(top, 0);
	CHECK_EQ(rl_slot_map_parse(&m, &all, "seed", err, sizeof(err)), -EPROTO, "no slot served");
	CHECK_EQ(m.owner[0], RL_SLOT_NONE, "nothing routed");
}

TEST(redirect_parse)
{
	struct rl_redirect r;

	CHECK(rl_redirect_parse("MOVED 3999 198.18.201.2:7001", "s", &r), "MOVED");
	CHECK(!r.ask && r.slot == 3999 && r.port == 7001 && !strcmp(r.host, "198.18.201.2"),
	      "MOVED fields: %d %u %s:%d", r.ask, r.slot, r.host, r.port);
	CHECK(rl_redirect_parse("ASK 16383 :7002", "s", &r), "ASK, no host");
	CHECK(r.ask && r.slot == 16383 && r.port == 7002 && !strcmp(r.host, "s"),
	      "ASK fields: %d %u %s:%d", r.ask, r.slot, r.host, r.port);
	CHECK(rl_redirect_parse("MOVED 1 2001:db8::1:7000", "s", &r) &&
	      !strcmp(r.host, "2001:db8::1") && r.port == 7000, "IPv6: the last ':'");
	CHECK(!rl_redirect_parse("ERR wrong number of arguments", "s", &r), "another error");
	CHECK(!rl_redirect_parse("MOVED 16384 h:1", "s", &r), "slot out of range");
	CHECK(!rl_redirect_parse("MOVED 1 h", "s", &r), "no port");
	CHECK(!rl_redirect_parse("MOVED 1 h:0", "s", &r), "port 0");
	CHECK(!rl_redirect_parse("MOVED x h:1", "s", &r), "slot not a number");
	CHECK(!rl_redirect_parse("MOVEDX 1 h:1", "s", &r), "not MOVED");
}
