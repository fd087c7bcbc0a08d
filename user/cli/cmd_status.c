// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit status: attached interfaces, their settings and health. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "lib/map_memory.h"
#include "lib/egress.h"
#include "lib/verified_map.h"
#include "lib/attach_txn.h"
#include "lib/attached_state.h"
#include "lib/ban_map.h"
#include "lib/iface.h"
#include "cli/json_writer.h"
#include "lib/pin.h"
#include "lib/rule.h"
#include "lib/rule_txn.h"
#include "lib/settings.h"
#include "lib/sync_status.h"
#include "lib/sync_value.h"
#include "cli/table.h"
#include "cli/text.h"
#include "lib/values.h"
#include "lib/xdp_multi.h"

/*
 * Wait, at most 2 s, for a change in progress (attach, detach, quota) to
 * end, so that an attach between its steps is not reported as broken.
 */
static void settle(void)
{
	for (int i = 0; i < 200 && rl_change_running(); i++)
		usleep(10 * 1000);
}

/* One line of status: an interface, or what a dead attach left. */
struct status_row {
	char ifname[NAME_MAX + 1];
	bool opened;			/* its pins opened: the settings are known */
	struct rl_settings set;
	__u32 sources_map_entries;
	bool have_mem;
	struct rl_memory mem;		/* its maps (xdp-ratelimit(8) Memory) */
	int rules;			/* or -errno */
	int bans;			/* that hold; or -errno */
	const char *problem;		/* NULL when fine */
	char why[RL_ERR_LEN];		/* text of a problem found at run time */
	char staging_dir[PATH_MAX];	/* a dead attach's staging directory */
	int sync;			/* a sync agent was started: 1, else 0 */
	bool sync_alive;
	struct rl_sync_state sync_st;
	__u64 verified;			/* sources verified now */
	/* the egress hook: the interfaces it sits on, and whether each has
	 * it (a filter removed by hand leaves nothing verified) */
	int hooks[RL_MAX_REPLIES_VIA], nhooks;
	__u32 hook_prog[RL_MAX_REPLIES_VIA];	/* 0: missing */
	__u32 egress_pin;	/* the program pinned as egress; 0: none */
	struct rl_xdp_progs progs;	/* every XDP program on the interface */
	/* under the dispatcher: our stub and the program in its slot */
	__u32 stub_id, slot_id;
};

struct status {
	struct status_row rows[2 * RL_MAX_IFACES];
	size_t n;
	bool broken;
	struct rl_netns self;
	/* other namespaces' attachments: shown as such, never judged from
	 * here (their interfaces are not ours to look at) */
	struct rl_netns_pins others[RL_MAX_IFACES];
	int nothers;
	/* pins of an earlier release's flat layout, which reload carries */
	char flat[RL_MAX_IFACES][IF_NAMESIZE];
	int nflat;
	bool wide;	/* problems in the table, not below it */
	int width;	/* of the view (rl_view_width) */
};

static void netns_text(const struct rl_netns *ns, char *buf, size_t len)
{
	snprintf(buf, len, "net:[%llu]", (unsigned long long)ns->inode);
}

/* The other namespaces' attachments and the flat layout's pins, in the
 * table's tail: named, never repaired from here. One whose link says its
 * interface is gone (deleted, or with its namespace) is marked so, with
 * the directory whose removal frees what its pins hold, and, when every
 * one there is gone, the namespace's directory that is left empty then
 * (no detach can run in a deleted namespace to remove it). */
static void print_elsewhere(const struct status *st)
{
	/* the names wrap onto lines of their own: 80 columns */
	char ns[32], dir[NAME_MAX + 1], line[RL_MAX_IFACES * (IF_NAMESIZE + 8) + 128];
	int at;

	for (int i = 0; i < st->nothers; i++) {
		const struct rl_netns_pins *o = &st->others[i];
		int gone = 0;

		netns_text(&o->ns, ns, sizeof(ns));
		printf("%s", i ? "" : "\n");
		at = snprintf(line, sizeof(line), "in network namespace %s (not this one):", ns);
		for (int k = 0; k < o->n; k++) {
			at += snprintf(line + at, sizeof(line) - (size_t)at, " %s", o->names[k]);
			if (o->gone[k])		/* kept with its name */
				at += snprintf(line + at, sizeof(line) - (size_t)at, "%c(gone)",
					       RL_TABLE_NBSP);
			gone += o->gone[k];
		}
		rl_print_wrapped_at(stdout, line, st->width, 0, 2);
		if (!gone)
			continue;
		rl_netns_dir(&o->ns, dir, sizeof(dir));
		/* each command on a line of its own: 80 columns */
		printf("  (gone): the interface was deleted, or its namespace; the pins\n"
		       "  only hold memory now, which this frees:\n"
		       "  rm -r %s/%s/IFACE\n",
		       RL_PIN_TOP, dir);
		if (gone == o->n)
			printf("  then the namespace's directory, empty once none is left:\n"
			       "  rmdir %s/%s\n", RL_PIN_TOP, dir);
	}
	if (st->nflat) {
		at = snprintf(line, sizeof(line), "pins of an earlier release (%s/IFACE):", RL_PIN_TOP);
		for (int k = 0; k < st->nflat; k++)
			at += snprintf(line + at, sizeof(line) - (size_t)at, " %s", st->flat[k]);
		printf("\n");
		rl_print_wrapped_at(stdout, line, st->width, 0, 2);
		printf("'xdp-ratelimit reload IFACE', run in the interface's network namespace,\n"
		       "  moves them into that namespace's directory\n");
	}
}

static void elsewhere_json(struct rl_json *j, const struct status *st)
{
	char ns[32], sub[NAME_MAX + 1], dir[PATH_MAX];

	rl_json_name(j, "other_namespaces");
	rl_json_array_start(j);
	for (int i = 0; i < st->nothers; i++) {
		const struct rl_netns_pins *o = &st->others[i];

		rl_json_object_start(j);
		netns_text(&o->ns, ns, sizeof(ns));
		rl_json_string_field(j, "netns", ns);
		rl_json_uint_field(j, "netns_inode", o->ns.inode);
		rl_netns_dir(&o->ns, sub, sizeof(sub));
		snprintf(dir, sizeof(dir), "%s/%s", RL_PIN_TOP, sub);
		rl_json_string_field(j, "pin_dir", dir);
		rl_json_name(j, "interfaces");
		rl_json_array_start(j);
		for (int k = 0; k < o->n; k++)
			rl_json_string(j, o->names[k]);
		rl_json_array_end(j);
		rl_json_name(j, "gone");
		rl_json_array_start(j);
		for (int k = 0; k < o->n; k++)
			if (o->gone[k])
				rl_json_string(j, o->names[k]);
		rl_json_array_end(j);
		rl_json_object_end(j);
	}
	rl_json_array_end(j);
	rl_json_name(j, "earlier_release_pins");
	rl_json_array_start(j);
	for (int k = 0; k < st->nflat; k++)
		rl_json_string(j, st->flat[k]);
	rl_json_array_end(j);
}

/* The programs on the interface by that name here, as libxdp lists them
 * (none when it is gone or cannot be read). */
static void rows_progs(struct status_row *r)
{
	char ifname[IF_NAMESIZE];
	int ifindex, fd;

	rl_pin_dir_iface(r->ifname, ifname, sizeof(ifname));
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex || rl_xdp_progs_read(ifindex, &r->progs))
		memset(&r->progs, 0, sizeof(r->progs));
	fd = rl_xdp_multi_slot(r->ifname, &r->slot_id);
	if (fd >= 0 && rl_xdp_multi_where(r->ifname, &r->stub_id) >= 0)
		close(fd);
	else {
		if (fd >= 0)
			close(fd);
		r->stub_id = r->slot_id = 0;
	}
}

static void row_iface(struct status *st, const char *name)
{
	static struct rl_rule rules[RL_MAX_RULES];
	struct status_row *r = &st->rows[st->n++];
	struct rl_iface ifc;
	int id;

	snprintf(r->ifname, sizeof(r->ifname), "%.*s", IF_NAMESIZE, name);
	if (rl_attached_state(name, &ifc, &r->opened, r->why, sizeof(r->why)))
		r->problem = r->why;
	st->broken |= r->problem != NULL;
	rows_progs(r);
	if (!r->opened)
		return;
	r->set = ifc.cfg.set;
	r->sources_map_entries = ifc.sources_max_entries;
	r->have_mem = !rl_memory_read(&ifc.m, rl_ncpus(), &r->mem);
	r->rules = rl_rules_read(&ifc, rules, RL_MAX_RULES);
	r->bans = rl_bans_count(&ifc.m, rl_prog_now_ns(&ifc.cfg.set));
	r->sync = rl_sync_state_read(&ifc.m, &r->sync_st, &r->sync_alive) == 1;
	if (rl_verified_count(&ifc.m, &ifc.cfg.set, rl_prog_now_ns(&ifc.cfg.set),
			      &r->verified, NULL))
		r->verified = 0;
	r->nhooks = rl_egress_hooks((int)r->set.ifindex, r->set.replies_via, r->hooks);
	for (int i = 0; i < r->nhooks; i++) {
		id = rl_egress_prog_id((int)r->set.ifindex, r->hooks[i]);
		r->hook_prog[i] = id > 0 ? (__u32)id : 0;
	}
	id = rl_egress_pinned_id(name);
	r->egress_pin = id > 0 ? (__u32)id : 0;
	rl_iface_close(&ifc);
}

/* The egress hook as "eth0,eth1(missing)"; "(unpinned)": its filter runs
 * a program that the egress pin does not name (attached by a version that
 * did not pin it, or a reload that did not finish). */
static void format_hooks(const struct status_row *r, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < r->nhooks && off < len; i++) {
		char name[IF_NAMESIZE];

		if (!if_indextoname((unsigned int)r->hooks[i], name))
			snprintf(name, sizeof(name), "#%d", r->hooks[i]);
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "", name);
		if (!r->hook_prog[i] && off < len)
			off += (size_t)snprintf(buf + off, len - off, "(missing)");
		else if (r->hook_prog[i] != r->egress_pin && off < len)
			off += (size_t)snprintf(buf + off, len - off, "(unpinned)");
	}
}

/*
 * Staging directories of attaches that died before their link pin (see
 * attach_txn.h), as broken entries: the interface is not attached, but
 * the maps stay pinned until 'detach IFACE'.
 */
static void rows_stale_stages(struct status *st)
{
	char names[RL_MAX_IFACES][NAME_MAX + 1];
	int n = rl_attach_stale_stages(NULL, false, names, RL_MAX_IFACES), pid;

	for (int i = 0; i < n; i++) {
		struct status_row *r = &st->rows[st->n++];

		rl_pin_stage_parse(names[i], r->ifname, &pid);
		rl_pin_path(r->staging_dir, sizeof(r->staging_dir), names[i], NULL);
		snprintf(r->why, sizeof(r->why),
			 rl_link_ifindex(names[i], NULL) > 0 || rl_xdp_multi_runs(names[i]) ?
			 "an attach (pid %d) died half way and left its pins in '%s', with its program still attached, unreported; 'xdp-ratelimit detach %s' removes both" :
			 "an attach (pid %d) died half way and left its pins in '%s'; the program is not attached; 'xdp-ratelimit detach %s' removes them",
			 pid, r->staging_dir, r->ifname);
		r->problem = r->why;
		st->broken = true;
	}
}

/* "sync": null, or {"fleet", "state", "pid", "interval_ms",
 * "last_exchange_ms_ago" (null: none yet), "degraded_since_ms" (Unix time
 * in ms, null when not degraded), "error", "sources" (active in the last
 * interval), "exchanges", "failures" (intervals), "round_trips",
 * "busy_us" (the last interval's work), "rejected": {"format", "mac",
 * "range", "date"} (other hosts' fields ignored), "key_errors"} */
static void sync_json(struct rl_json *j, const struct status_row *r)
{
	const struct rl_sync_state *s = &r->sync_st;
	struct timespec ts;
	__u64 now;

	rl_json_name(j, "sync");
	if (!r->sync) {
		rl_json_null(j);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (__u64)ts.tv_sec * RL_NSEC_PER_SEC + (__u64)ts.tv_nsec;
	rl_json_object_start(j);
	rl_json_string_field(j, "fleet", s->fleet);
	rl_json_string_field(j, "state", rl_sync_health_name(s, r->sync_alive));
	rl_json_uint_field(j, "pid", s->pid);
	rl_json_uint_field(j, "interval_ms", s->interval_ns / RL_NSEC_PER_MSEC);
	rl_json_uint_or_null_field(j, "last_exchange_ms_ago", s->last_ok_ns,
				   now > s->last_ok_ns ? (now - s->last_ok_ns) / RL_NSEC_PER_MSEC : 0);
	rl_json_uint_or_null_field(j, "degraded_since_ms",
				   s->health == RL_SYNC_DEGRADED && s->degraded_ns,
				   s->degraded_ns / RL_NSEC_PER_MSEC);
	rl_json_string_field(j, "error", s->error);
	rl_json_uint_field(j, "sources", s->sources);
	rl_json_uint_field(j, "exchanges", s->exchanges);
	rl_json_uint_field(j, "failures", s->failures);
	rl_json_uint_field(j, "round_trips", s->round_trips);
	rl_json_uint_field(j, "busy_us", s->busy_ns / 1000);
	rl_json_name(j, "rejected");
	rl_json_object_start(j);
	for (int k = 0; k < RL_SYNC_REJECTS; k++)
		rl_json_uint_field(j, rl_field_verdict_name(RL_FIELD_FORMAT + k), s->rejected[k]);
	rl_json_object_end(j);
	rl_json_uint_field(j, "key_errors", s->key_errors);
	rl_json_object_end(j);
}

/* "programs": [{"name", "id", "priority" (null: not under libxdp's
 * dispatcher), "chain_actions": ["XDP_PASS", ...], "tail_call_id" (the
 * program our stub runs; null for the others)}], in running order */
static void progs_json(struct rl_json *j, const struct status_row *r)
{
	const struct rl_xdp_progs *pr = &r->progs;

	rl_json_name(j, "programs");
	rl_json_array_start(j);
	for (int i = 0; i < pr->n; i++) {
		const struct rl_xdp_prog *p = &pr->p[i];
		char acts[96], *a, *save = NULL;

		rl_json_object_start(j);
		rl_json_string_field(j, "name", p->name);
		rl_json_uint_field(j, "id", p->id);
		rl_json_uint_or_null_field(j, "priority", pr->dispatcher, p->prio);
		rl_json_name(j, "chain_actions");
		rl_json_array_start(j);
		rl_xdp_actions_format(p->actions, acts, sizeof(acts));
		for (a = strtok_r(acts, ",", &save); a; a = strtok_r(NULL, ",", &save))
			rl_json_string(j, a);
		rl_json_array_end(j);
		rl_json_uint_or_null_field(j, "tail_call_id",
					   r->slot_id && p->id == r->stub_id, r->slot_id);
		rl_json_object_end(j);
	}
	rl_json_array_end(j);
}

/* "memory": null, or {"bytes" (every map), "max_sources_bytes" (the
 * maps --max-sources sizes), "grow_bytes" (at most this more as rules
 * and fleet shares are written), "possible_cpus", "maps": {NAME: bytes}} */
static void memory_json(struct rl_json *j, const struct status_row *r)
{
	rl_json_name(j, "memory");
	if (!r->have_mem) {
		rl_json_null(j);
		return;
	}
	rl_json_object_start(j);
	rl_json_uint_field(j, "bytes", r->mem.total);
	rl_json_uint_field(j, "max_sources_bytes", r->mem.per_source);
	rl_json_uint_field(j, "grow_bytes", r->mem.grow_total);
	rl_json_uint_field(j, "possible_cpus", (__u64)r->mem.ncpus);
	rl_json_name(j, "maps");
	rl_json_object_start(j);
	for (int i = 0; i < RL_NR_MAPS; i++)
		rl_json_uint_field(j, rl_map_defs[i].name, r->mem.map[i]);
	rl_json_object_end(j);
	rl_json_object_end(j);
}

static void row_json(struct rl_json *j, const struct status_row *r)
{
	const struct rl_settings *s = &r->set;
	char w[32];

	rl_json_object_start(j);
	rl_json_string_field(j, "ifname", r->ifname);
	if (r->opened) {
		rl_format_duration(s->window_ns, w, sizeof(w));
		rl_json_uint_field(j, "ifindex", s->ifindex);
		rl_json_string_field(j, "mode", rl_mode_name(s->mode));
		rl_json_string_field(j, "window", w);
		rl_json_uint_field(j, "window_ms", s->window_ns / RL_NSEC_PER_MSEC);
		rl_json_uint_field(j, "buckets", s->nbuckets);
		rl_json_uint_field(j, "max_sources", s->max_sources);
		rl_json_uint_field(j, "sources_map_entries", r->sources_map_entries);
		memory_json(j, r);
		rl_json_uint_field(j, "ipv6_prefix", s->v6_prefix);
		rl_json_bool_field(j, "dry_run", s->flags & RL_F_DRY_RUN);
		rl_json_bool_field(j, "pass_malformed", s->flags & RL_F_PASS_MALFORMED);
		rl_json_uint_field(j, "rules", r->rules < 0 ? 0 : r->rules);
		rl_json_uint_field(j, "bans", r->bans < 0 ? 0 : r->bans);
		rl_json_uint_field(j, "verified_sources", r->verified);
		rl_json_uint_field(j, "verified_ttl_ms", s->verified_ttl_ns / RL_NSEC_PER_MSEC);
		rl_json_name(j, "egress_hooks");
		rl_json_array_start(j);
		for (int i = 0; i < r->nhooks; i++) {
			char name[IF_NAMESIZE];

			if (!if_indextoname((unsigned int)r->hooks[i], name))
				snprintf(name, sizeof(name), "#%d", r->hooks[i]);
			rl_json_object_start(j);
			rl_json_string_field(j, "ifname", name);
			rl_json_uint_or_null_field(j, "prog_id", r->hook_prog[i] != 0,
						   r->hook_prog[i]);
			rl_json_bool_field(j, "pinned", r->hook_prog[i] &&
					   r->hook_prog[i] == r->egress_pin);
			rl_json_object_end(j);
		}
		rl_json_array_end(j);
		rl_json_uint_or_null_field(j, "egress_pin_prog_id", r->egress_pin != 0,
					   r->egress_pin);
	}
	if (r->opened)
		sync_json(j, r);
	if (!*r->staging_dir)
		progs_json(j, r);
	rl_json_string_field(j, "state", r->problem ? "broken" : "ok");
	if (r->problem)
		rl_json_string_field(j, "problem", r->problem);
	if (*r->staging_dir)
		rl_json_string_field(j, "staging_dir", r->staging_dir);
	rl_json_object_end(j);
}

enum { COL_IFACE, COL_MODE, COL_WINDOW, COL_BUCKETS, COL_MAX_SRC, COL_MEMORY,
       COL_IPV6_PFX, COL_RULES, COL_VERIFIED, COL_EGRESS, COL_STATE, NR_COLS };

static void row_cell(const void *ctx, size_t row, int col, char *buf,
		     size_t len)
{
	const struct status_row *r = &((const struct status *)ctx)->rows[row];
	const struct rl_settings *s = &r->set;

	if (!r->opened && col != COL_IFACE && col != COL_STATE) {
		snprintf(buf, len, "-");
		return;
	}
	switch (col) {
	case COL_IFACE:
		snprintf(buf, len, "%s", r->ifname);
		break;
	case COL_MODE:
		snprintf(buf, len, "%s", rl_mode_name(s->mode));
		break;
	case COL_WINDOW:
		rl_format_duration(s->window_ns, buf, len);
		break;
	case COL_BUCKETS:
		snprintf(buf, len, "%u", s->nbuckets);
		break;
	case COL_MAX_SRC:
		snprintf(buf, len, "%llu", (unsigned long long)s->max_sources);
		break;
	case COL_MEMORY:
		if (r->have_mem)
			rl_table_bytes(r->mem.total, "", buf, len);
		else
			snprintf(buf, len, "-");
		break;
	case COL_IPV6_PFX:
		snprintf(buf, len, "/%u", s->v6_prefix);
		break;
	case COL_RULES:
		snprintf(buf, len, r->rules < 0 ? "-" : "%d", r->rules);
		break;
	case COL_VERIFIED:
		snprintf(buf, len, "%llu", (unsigned long long)r->verified);
		break;
	case COL_EGRESS:
		format_hooks(r, buf, len);
		break;
	default: {	/* COL_STATE */
		const struct status *st = ctx;
		char banned[32] = "";

		if (r->opened && r->bans > 0)
			snprintf(banned, sizeof(banned), " (%d banned)", r->bans);
		/* narrow: the problem follows the table */
		snprintf(buf, len, "%s%s%s%s",
			 !r->problem ? "ok" : st->wide ? "BROKEN: " : "BROKEN (below)",
			 r->problem && st->wide ? r->problem : "",
			 r->opened && (s->flags & RL_F_DRY_RUN) ? " (dry run)" : "",
			 banned);
	}
	}
}

/* The second table: every XDP program on each interface, as
 * `xdp-loader status` lists them. */
struct prog_row {
	const struct status_row *r;
	int i;
};

enum { PCOL_IFACE, PCOL_PRIO, PCOL_NAME, PCOL_ID, PCOL_ACTIONS, PCOL_RUNS, NR_PCOLS };

static void prog_cell(const void *ctx, size_t row, int col, char *buf,
		      size_t len)
{
	const struct prog_row *pr = &((const struct prog_row *)ctx)[row];
	const struct rl_xdp_progs *ps = &pr->r->progs;
	const struct rl_xdp_prog *p = &ps->p[pr->i];

	switch (col) {
	case PCOL_IFACE:
		snprintf(buf, len, "%s", pr->r->ifname);
		break;
	case PCOL_PRIO:
		snprintf(buf, len, ps->dispatcher ? "%u" : "-", p->prio);
		break;
	case PCOL_NAME:
		snprintf(buf, len, "%s", p->name);
		break;
	case PCOL_ID:
		snprintf(buf, len, "%u", p->id);
		break;
	case PCOL_RUNS:
		if (pr->r->slot_id && p->id == pr->r->stub_id)
			snprintf(buf, len, "tail call: id %u", pr->r->slot_id);
		else
			snprintf(buf, len, "-");
		break;
	case PCOL_ACTIONS:
		rl_xdp_actions_format(p->actions, buf, len);
		if (!*buf)
			snprintf(buf, len, "-");
	}
}

static void print_progs(const struct status *st)
{
	/* narrow: the chain actions leave first, then the tail call */
	static const struct rl_table_col cols[NR_PCOLS] = {
		{ "IFACE", true, 0 }, { "PRIO", false, 0 }, { "XDP_PROGRAM", true, 0 },
		{ "ID", false, 0 }, { "CHAIN_ACTIONS", true, 2 }, { "RUNS", true, 1 },
	};
	struct prog_row rows[2 * RL_MAX_IFACES * RL_XDP_MAX_PROGS];
	size_t n = 0;

	for (size_t i = 0; i < st->n; i++)
		for (int k = 0; k < st->rows[i].progs.n; k++)
			rows[n++] = (struct prog_row){ &st->rows[i], k };
	if (!n)
		return;
	printf("\n");
	rl_table_print_fit(stdout, cols, NR_PCOLS, n, prog_cell, rows, st->width);
}

/* "IFACE: TEXT", wrapped to the view's width under its start. */
/* A line under the table: the name and the text (which may quote a
 * server's error text) shown as the terminal may print them (text.h). */
static void print_note(const struct status *st, const char *ifname,
		       const char *what, const char *text)
{
	char name[RL_SHOWN_LEN], *shown = malloc(strlen(text) * 4 + 1);
	int n = printf("%s %s: ", rl_text_shown(ifname, name, sizeof(name)), what);
	const char *t = shown ? rl_text_shown(text, shown, strlen(text) * 4 + 1) : "?";

	n = n > 0 ? n : 0;
	rl_print_wrapped_at(stdout, t, st->width, n, rl_note_indent(t, st->width, n));
	free(shown);
}

static void print_table(const struct status *st)
{
	/* narrow: the memory leaves first, then the egress hooks, the IPv6
	 * prefix, the buckets, the table size and the verified count */
	static const struct rl_table_col cols[NR_COLS] = {
		{ "IFACE", true, 0 }, { "MODE", true, 0 }, { "WINDOW", true, 0 },
		{ "BUCKETS", false, 3 }, { "MAX_SRC", false, 2 }, { "MEMORY", false, 6 },
		{ "IPV6_PFX", false, 4 }, { "RULES", false, 0 },
		{ "VERIFIED", false, 1 }, { "EGRESS", true, 5 },
		{ "STATE", true, 0 },
	};

	if (!st->n) {
		printf("no interface is attached in this network namespace\n");
		print_elsewhere(st);
		return;
	}
	rl_table_print_fit(stdout, cols, NR_COLS, st->n, row_cell, st, st->width);
	for (size_t i = 0; i < st->n && !st->wide; i++)
		if (st->rows[i].problem) {
			if (i == 0 || !st->rows[i - 1].problem)
				printf("\n");
			print_note(st, st->rows[i].ifname, "is BROKEN", st->rows[i].problem);
		}
	print_progs(st);
	for (size_t i = 0; i < st->n; i++) {
		char line[256];

		if (!st->rows[i].sync)
			continue;
		rl_sync_state_format(&st->rows[i].sync_st, st->rows[i].sync_alive,
				     line, sizeof(line));
		print_note(st, st->rows[i].ifname, "sync", line);
	}
	if (st->broken) {
		printf("\n");
		rl_print_wrapped(stdout, "repair: 'xdp-ratelimit detach IFACE' removes a broken attachment; then attach again",
				 st->width, 0);
	}
	print_elsewhere(st);
}

static int print_json(const struct status *st)
{
	struct rl_json j;

	char ns[32];

	rl_json_begin(&j, stdout);
	rl_json_object_start(&j);
	netns_text(&st->self, ns, sizeof(ns));
	rl_json_string_field(&j, "netns", ns);
	rl_json_uint_field(&j, "netns_inode", st->self.inode);
	rl_json_string_field(&j, "pin_dir", rl_pin_root());
	rl_json_name(&j, "interfaces");
	rl_json_array_start(&j);
	for (size_t i = 0; i < st->n; i++)
		row_json(&j, &st->rows[i]);
	rl_json_array_end(&j);
	elsewhere_json(&j, st);
	rl_json_object_end(&j);
	return rl_json_end(&j);
}

struct status_args {
	bool json;
	bool wide;
};

static int status_run(void *cfg)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE];
	struct status *st = calloc(1, sizeof(*st));
	int n;

	if (!st)
		return rl_fail("status: out of memory");
	settle();
	n = rl_ifaces_list(names, RL_MAX_IFACES);
	if (n < 0) {
		free(st);
		return rl_fail("status: cannot read %s: %s", rl_pin_root(), strerror(-n));
	}
	for (int i = 0; i < n; i++)
		row_iface(st, names[i]);
	rows_stale_stages(st);
	(void)rl_netns_self(&st->self);
	st->nothers = rl_netns_others(st->others, RL_MAX_IFACES);
	st->nflat = rl_pins_legacy(st->flat, RL_MAX_IFACES);
	if (st->nothers < 0 || st->nflat < 0) {
		n = st->nothers < 0 ? st->nothers : st->nflat;
		free(st);
		return rl_fail("status: cannot read %s: %s", RL_PIN_TOP, strerror(-n));
	}
	st->wide = ((struct status_args *)cfg)->wide;
	st->width = rl_view_width(st->wide);
	if (((struct status_args *)cfg)->json)
		n = print_json(st);
	else
		print_table(st);
	free(st);
	if (fflush(stdout) || n == -EIO)
		return rl_fail("status: cannot write the output: %s", strerror(EIO));
	return RL_EXIT_OK;
}

const struct rl_cmd rl_cmd_status = {
	.name = "status",
	.summary = "show attached interfaces and their settings",
	.doc =
		"List the interfaces attached in this network namespace with their\n"
		"settings, and flag broken state (a link whose interface is gone,\n"
		"missing or foreign pins, what an interrupted attach left) with the\n"
		"command that repairs it. Other namespaces' attachments are named\n"
		"as such, never judged from here.\n",
	.opts = (const struct rl_opt[]){
		RL_OPT_JSON(struct status_args, json,
			    "print one JSON object on one line instead of a table"),
		{ .name = "wide", .kind = RL_OPT_SWITCH,
		  RL_OPT_FIELD(struct status_args, wide), .help =
		  "every column, and each problem in the table (default: the\n"
		  "view fits the terminal, at least 80 columns, problems below)" },
		{ 0 }
	},
	.flags = RL_CMD_ROOT,
	.cfg_size = sizeof(struct status_args),
	.run = status_run,
};
