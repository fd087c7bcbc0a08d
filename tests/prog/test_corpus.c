// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The hostile-frames corpus (tests/corpus/frames.txt, format described at
 * its top): every frame through BPF_PROG_TEST_RUN, checking its verdict and
 * that exactly the counters of its kind moved, by one frame. The corpus is
 * found at $RL_CORPUS, else tests/corpus/frames.txt from the working
 * directory (make test runs from the repository root), else relative to
 * the test binary (build/test_prog, build/DIR/test_prog).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"

#define CORPUS_DEFAULT "tests/corpus/frames.txt"
#define CORPUS_MAX_FRAME 16384
#define CORPUS_NAME 64
#define CORPUS_MAX_RULES 16
#define CORPUS_MAX_FAILS 20	/* mismatches printed before summing up */

enum kind { K_PASSED, K_DROPPED, K_MALFORMED, K_NON_IP, K_ENCAP, K_NR };
static const char *const kind_names[K_NR] = {
	"passed", "dropped", "malformed", "non_ip", "encap",
};

struct bytes {
	char name[CORPUS_NAME];
	__u8 *data;
	size_t len;
};

struct entry {
	char name[CORPUS_NAME + 16];
	int line;
	bool pass;
	enum kind kind;
	const __u8 *data;	/* owned by the frame it was cut from */
	size_t len;
};

struct corpus {
	const char *path;
	struct bytes *defs, *frames;
	size_t ndefs, nframes;
	struct entry *e;
	size_t n;
	char rule_prefix[CORPUS_MAX_RULES][RL_PREFIX_STRLEN];
	__u64 rule_pps[CORPUS_MAX_RULES];
	int nrules;
};

static void *grow(void *p, size_t n, size_t size)
{
	/* one more element, zeroed */
	p = realloc(p, (n + 1) * size);
	if (!p) {
		perror("corpus");
		exit(1);
	}
	memset((char *)p + n * size, 0, size);
	return p;
}

static const struct bytes *find(const struct bytes *b, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(b[i].name, name))
			return &b[i];
	return NULL;
}

static bool append(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > CORPUS_MAX_FRAME)
		return false;
	b->data = realloc(b->data, b->len + n);
	if (!b->data && b->len + n)
		return false;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' :
	       isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10 : -1;
}

/* One $NAME or hex token (no repeat count) into b; an error or NULL. */
static const char *token_once(struct corpus *c, struct bytes *b, const char *t)
{
	if (t[0] == '$') {
		const struct bytes *d = find(c->defs, c->ndefs, t + 1);

		if (!d)
			return "unknown $NAME";
		return append(b, d->data, d->len) ? NULL : "frame too long";
	}
	if (strlen(t) % 2)
		return "odd number of hex digits";
	for (; *t; t += 2) {
		int hi = hexval(t[0]), lo = hexval(t[1]);
		__u8 v = (__u8)(hi << 4 | lo);

		if (hi < 0 || lo < 0)
			return "not hex";
		if (!append(b, &v, 1))
			return "frame too long";
	}
	return NULL;
}

/* One BYTES token into b: pad=N, or $NAME or hex with an optional *N. */
static const char *token(struct corpus *c, struct bytes *b, char *t)
{
	char *star = strchr(t, '*'), *end;
	long times = 1;
	const char *err = NULL;

	if (!strncmp(t, "pad=", 4)) {
		unsigned long to = strtoul(t + 4, &end, 10);
		__u8 zero = 0;

		if (*end || to < b->len || to > CORPUS_MAX_FRAME)
			return "pad=N shorter than the bytes before it, or too long";
		while (b->len < to)
			append(b, &zero, 1);
		return NULL;
	}
	if (star) {
		*star = '\0';
		times = strtol(star + 1, &end, 10);
		if (*end || times < 1 || times > CORPUS_MAX_FRAME)
			return "bad repeat count *N";
	}
	for (long i = 0; i < times && !err; i++)
		err = token_once(c, b, t);
	return err;
}

/* VERDICT KIND, the next two words */
static bool parse_expect(char **save, struct entry *e)
{
	const char *verdict = strtok_r(NULL, " \t\r\n", save);
	const char *kind = strtok_r(NULL, " \t\r\n", save);

	if (!verdict || !kind)
		return false;
	if (strcmp(verdict, "pass") && strcmp(verdict, "drop"))
		return false;
	e->pass = !strcmp(verdict, "pass");
	for (int k = 0; k < K_NR; k++) {
		if (!strcmp(kind, kind_names[k])) {
			e->kind = (enum kind)k;
			/* as attached by default: the kind decides the verdict */
			return e->pass == (k == K_PASSED || k == K_NON_IP);
		}
	}
	return false;
}

static struct entry *add_entry(struct corpus *c, const char *name, int line)
{
	struct entry *e;

	c->e = grow(c->e, c->n, sizeof(*c->e));
	e = &c->e[c->n++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->line = line;
	return e;
}

/* One line (comment already cut off); an error message or NULL. */
static const char *parse_line(struct corpus *c, char *line, int lineno)
{
	char *save, *word = strtok_r(line, " \t\r\n", &save);
	const char *name, *err;

	if (!word)
		return NULL;
	name = strtok_r(NULL, " \t\r\n", &save);
	if (!name || strlen(name) >= CORPUS_NAME)
		return "missing or too long NAME";
	if (!strcmp(word, "rule")) {
		char *pps = strtok_r(NULL, " \t\r\n", &save);

		if (c->nrules == CORPUS_MAX_RULES || !pps || strncmp(pps, "pps=", 4) ||
		    strlen(name) >= RL_PREFIX_STRLEN)
			return "want: rule PREFIX pps=N";
		strcpy(c->rule_prefix[c->nrules], name);
		c->rule_pps[c->nrules++] = strtoull(pps + 4, NULL, 10);
		return NULL;
	}
	if (!strcmp(word, "def") || !strcmp(word, "frame")) {
		bool def = word[0] == 'd';
		struct bytes b = { 0 };
		struct entry e = { 0 };
		char *t;

		if (find(def ? c->defs : c->frames, def ? c->ndefs : c->nframes, name))
			return "NAME used twice";
		if (!def && !parse_expect(&save, &e))
			return "want: VERDICT KIND (pass|drop, passed|dropped|malformed|non_ip|encap, agreeing)";
		strcpy(b.name, name);
		while ((t = strtok_r(NULL, " \t\r\n", &save)))
			if ((err = token(c, &b, t)))
				return err;
		if (def) {
			c->defs = grow(c->defs, c->ndefs, sizeof(b));
			c->defs[c->ndefs++] = b;
			return NULL;
		}
		if (b.len < ETH_HLEN)
			return "frame shorter than an Ethernet header";
		c->frames = grow(c->frames, c->nframes, sizeof(b));
		c->frames[c->nframes++] = b;
		e.data = b.data;
		e.len = b.len;
		e.line = lineno;
		strcpy(e.name, name);
		*add_entry(c, name, lineno) = e;
		return NULL;
	}
	if (!strcmp(word, "cuts")) {
		const struct bytes *base = find(c->frames, c->nframes, name);
		char *from = strtok_r(NULL, " \t\r\n", &save);
		char *to = strtok_r(NULL, " \t\r\n", &save);
		struct entry e = { 0 };
		unsigned long lo, hi;

		if (!base)
			return "cuts of an unknown frame";
		if (!from || !to || !parse_expect(&save, &e))
			return "want: cuts NAME FROM TO VERDICT KIND";
		lo = strtoul(from, NULL, 10);
		hi = strtoul(to, NULL, 10);
		if (lo < ETH_HLEN || hi <= lo || hi > base->len + 1)
			return "want ETH_HLEN <= FROM < TO <= frame length + 1";
		for (unsigned long len = lo; len < hi; len++) {
			char cut[sizeof(e.name)];

			snprintf(cut, sizeof(cut), "%s cut at %lu", name, len);
			e.data = base->data;
			e.len = len;
			e.line = lineno;
			strcpy(e.name, cut);
			*add_entry(c, cut, lineno) = e;
		}
		return NULL;
	}
	return "unknown line: want def, rule, frame or cuts";
}

static FILE *open_corpus(const char **path)
{
	static char buf[PATH_MAX + 64];
	const char *rel[] = { "/../tests/corpus/frames.txt",
			      "/../../tests/corpus/frames.txt" };
	char exe[PATH_MAX];
	ssize_t n;
	FILE *f;

	*path = getenv("RL_CORPUS") ? getenv("RL_CORPUS") : CORPUS_DEFAULT;
	if ((f = fopen(*path, "r")) || getenv("RL_CORPUS"))
		return f;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", exe, rel[i]);
		if ((f = fopen(buf, "r"))) {
			*path = buf;
			return f;
		}
	}
	return NULL;
}

static bool corpus_load(struct corpus *c)
{
	char line[4096];
	int lineno = 0;
	bool ok = true;
	FILE *in;

	memset(c, 0, sizeof(*c));
	in = open_corpus(&c->path);
	if (!CHECK(in, "cannot open the corpus %s (set RL_CORPUS=PATH)", c->path))
		return false;
	while (fgets(line, sizeof(line), in)) {
		char *hash = strchr(line, '#');
		const char *err;

		lineno++;
		ok = CHECK(strchr(line, '\n') || feof(in), "%s:%d: line too long",
			   c->path, lineno);
		if (!ok)
			break;
		if (hash)
			*hash = '\0';
		err = parse_line(c, line, lineno);
		ok = CHECK(!err, "%s:%d: %s", c->path, lineno, err);
		if (!ok)
			break;
	}
	fclose(in);
	return ok && CHECK(c->n > 0, "%s: no frames", c->path);
}

static void corpus_free(struct corpus *c)
{
	for (size_t i = 0; i < c->ndefs; i++)
		free(c->defs[i].data);
	for (size_t i = 0; i < c->nframes; i++)
		free(c->frames[i].data);
	free(c->defs);
	free(c->frames);
	free(c->e);
}

/*
 * How many bytes of a long frame the program sees. BPF_PROG_TEST_RUN puts
 * at most a page less headroom and tailroom in the first buffer (3520 bytes
 * with 4 KiB pages) and the rest in fragments, which a program without
 * frags support does not see (a device never gives it such frames: native
 * XDP refuses MTUs above a page for it, generic XDP linearises). Measured
 * with a long non-IP frame, which passes and counts what was seen.
 */
static size_t first_buffer_len(struct fixture *f)
{
	static __u8 probe[CORPUS_MAX_FRAME];
	struct rl_counters moved;
	size_t seen;

	memset(probe, 0, sizeof(probe));
	probe[12] = 0x88;	/* local experimental EtherType */
	probe[13] = 0xb5;
	if (fixture_run_counted(f, probe, sizeof(probe), 0, T0, &moved) != XDP_PASS)
		return 0;
	seen = moved.passed_bytes;
	CHECK(seen >= 1514 && seen < sizeof(probe),
	      "first buffer of a multi-buffer frame: %zu bytes", seen);
	return seen;
}

/* What one frame of entry e must add to the totals. */
static struct rl_counters expected_delta(const struct entry *e, bool pass_malformed,
					 size_t first_buffer)
{
	bool pass = e->pass ||
		    (pass_malformed && (e->kind == K_MALFORMED || e->kind == K_ENCAP));
	size_t seen = e->len < first_buffer ? e->len : first_buffer;
	struct rl_counters d = { 0 };

	d.passed_pkts = pass;
	d.passed_bytes = pass ? seen : 0;
	d.dropped_pkts = !pass;
	d.dropped_bytes = pass ? 0 : seen;
	d.malformed_pkts = e->kind == K_MALFORMED;
	d.non_ip_pkts = e->kind == K_NON_IP;
	d.encap_pkts = e->kind == K_ENCAP;
	return d;
}

/* Every entry once; returns the number of entries that went wrong. */
static int run_corpus(const struct corpus *c, __u32 flags)
{
	bool pass_malformed = flags & RL_F_PASS_MALFORMED;
	struct rl_attach_req req;
	struct fixture f;
	size_t first_buffer;
	int bad = 0;

	rl_attach_req_defaults(&req);
	req.flags = flags;
	if (!fixture_open(&f, &req))
		goto out;
	fixture_hold(&f);
	for (int i = 0; i < c->nrules; i++)
		if (!fixture_pps(&f, c->rule_prefix[i], c->rule_pps[i]))
			goto out;
	first_buffer = first_buffer_len(&f);
	for (size_t i = 0; i < c->n; i++) {
		const struct entry *e = &c->e[i];
		struct rl_counters want = expected_delta(e, pass_malformed, first_buffer);
		struct rl_counters got;
		int v = fixture_run_counted(&f, e->data, e->len, 0, T0, &got);
		bool ok;

		ok = v == (want.passed_pkts ? XDP_PASS : XDP_DROP) &&
		     got.passed_pkts == want.passed_pkts &&
		     got.passed_bytes == want.passed_bytes &&
		     got.dropped_pkts == want.dropped_pkts &&
		     got.dropped_bytes == want.dropped_bytes &&
		     got.malformed_pkts == want.malformed_pkts &&
		     got.non_ip_pkts == want.non_ip_pkts &&
		     got.encap_pkts == want.encap_pkts &&
		     got.untracked_pkts == 0 &&
		     /* only an IP frame judged by its source may become one */
		     got.new_sources <= (e->kind == K_PASSED);
		if (ok)
			continue;
		if (++bad <= CORPUS_MAX_FAILS)
			CHECK(false, "%s:%d %s (%zu bytes, %s): verdict %d, want %s; "
			      "moved passed %llu/%llu B, dropped %llu/%llu B, malformed %llu, "
			      "non_ip %llu, encap %llu, new sources %llu, untracked %llu",
			      c->path, e->line, e->name, e->len, kind_names[e->kind], v,
			      want.passed_pkts ? "pass" : "drop",
			      (unsigned long long)got.passed_pkts,
			      (unsigned long long)got.passed_bytes,
			      (unsigned long long)got.dropped_pkts,
			      (unsigned long long)got.dropped_bytes,
			      (unsigned long long)got.malformed_pkts,
			      (unsigned long long)got.non_ip_pkts,
			      (unsigned long long)got.encap_pkts,
			      (unsigned long long)got.new_sources,
			      (unsigned long long)got.untracked_pkts);
	}
	CHECK_EQ(bad, 0, "corpus entries that went wrong");
out:
	fixture_close(&f);
	return bad;
}

static void corpus_test(__u32 flags)
{
	struct corpus c;

	if (corpus_load(&c)) {
		int counts[K_NR] = { 0 };

		for (size_t i = 0; i < c.n; i++)
			counts[c.e[i].kind]++;
		printf("    %zu frames from %s: %d passed, %d dropped, %d malformed, "
		       "%d non_ip, %d encap\n", c.n, c.path, counts[K_PASSED], counts[K_DROPPED],
		       counts[K_MALFORMED], counts[K_NON_IP], counts[K_ENCAP]);
		run_corpus(&c, flags);
	}
	corpus_free(&c);
}

TEST(corpus_hostile_frames)
{
	corpus_test(0);
}

TEST(corpus_hostile_frames_pass_malformed)
{
	corpus_test(RL_F_PASS_MALFORMED);
}
