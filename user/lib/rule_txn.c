// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A whole rule set replaced crash-safely (rules_txn.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/pin.h"
#include "lib/rule_replace.h"
#include "lib/rule_store.h"
#include "lib/rule_txn.h"

/* Tries of rl_rules_read before it settles for what it read: each retry
 * means a change completed meanwhile, which takes milliseconds. */
#define READ_TRIES	100

static void txn_path(const char *iface, char *buf, size_t len)
{
	rl_pin_path(buf, len, iface, RL_PIN_RESTORING);
}

bool rl_rule_txn_pending(const char *iface)
{
	char path[PATH_MAX];

	txn_path(iface, path, sizeof(path));
	return access(path, F_OK) == 0;
}

/* The pinned rule set: count, -ENOENT when none is pinned, or -errno. */
static int txn_read(const char *iface, struct rl_rule *out, int max)
{
	char path[PATH_MAX];
	__u32 entries;
	int fd, n = 0;

	txn_path(iface, path, sizeof(path));
	/* a look, never a write: readers such as the exporter hold no
	 * writable fd */
	fd = rl_map_pin_open_flags(path, BPF_F_RDONLY, BPF_MAP_TYPE_ARRAY,
				   sizeof(__u32), sizeof(struct rl_rule), &entries);
	if (fd < 0)
		return fd;
	for (__u32 i = 0; i < entries && n < max; i++) {
		if (bpf_map_lookup_elem(fd, &i, &out[n])) {
			n = -errno;
			break;
		}
		/* an empty set is one unused entry */
		if (out[n].flags & RL_RULE_F_USED)
			n++;
	}
	close(fd);
	if (n > 0)
		qsort(out, n, sizeof(*out), rl_rule_cmp);
	return n;
}

static int txn_apply(const struct rl_iface *ifc, const struct rl_rule *want,
		     int n, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret = rl_rule_replace(&ifc->m, want, n, err, errlen);

	if (ret < 0)
		return ret;	/* the pin stays: status reports it */
	txn_path(ifc->name, path, sizeof(path));
	if (unlink(path) && errno != ENOENT) {
		ret = -errno;
		snprintf(err, errlen, "cannot remove %s: %s", path, strerror(-ret));
	}
	return ret;
}

int rl_rule_txn_finish(const struct rl_iface *ifc, char *err, size_t errlen)
{
	struct rl_rule *want = calloc(RL_MAX_RULES, sizeof(*want));
	int n, ret;

	if (!want) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n = txn_read(ifc->name, want, RL_MAX_RULES);
	if (n == -ENOENT) {
		ret = 0;
	} else if (n < 0) {
		ret = n;
		snprintf(err, errlen,
			 "cannot read the rule set an interrupted restore left (%s): 'xdp-ratelimit detach %s' and attach again",
			 strerror(-n), ifc->name);
	} else {
		ret = txn_apply(ifc, want, n, err, errlen);
		ret = ret < 0 ? ret : 1;
	}
	free(want);
	return ret;
}

int rl_rule_txn_replace(const struct rl_iface *ifc, const struct rl_rule *want,
			 int n, char *err, size_t errlen)
{
	struct rl_rule *live = calloc(RL_MAX_RULES, sizeof(*live));
	struct rl_rule *sorted = calloc(n ? n : 1, sizeof(*sorted));
	char path[PATH_MAX];
	int fd = -1, ret, nlive;

	if (!live || !sorted) {
		ret = -ENOMEM;
		goto fail;
	}
	/* nothing to change: write nothing, not even the journal */
	nlive = rl_rule_list(&ifc->m, live, RL_MAX_RULES);
	if (nlive < 0) {
		ret = nlive;
		goto fail;
	}
	memcpy(sorted, want, n * sizeof(*want));
	qsort(sorted, n, sizeof(*sorted), rl_rule_cmp);
	if (nlive == n && !memcmp(live, sorted, n * sizeof(*sorted))) {
		/* writes only to complete a change cut short */
		ret = rl_rule_replace(&ifc->m, sorted, n, err, errlen);
		goto out;
	}
	/* no map name: libbpf 1.1 would first probe the kernel for names
	 * with a half-written bpf_attr (tests/valgrind.supp); the pin path
	 * names it */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32),
			    sizeof(struct rl_rule), n ? n : 1, NULL);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	for (__u32 i = 0; i < (__u32)n; i++) {
		if (bpf_map_update_elem(fd, &i, &sorted[i], BPF_ANY)) {
			ret = -errno;
			goto fail;
		}
	}
	txn_path(ifc->name, path, sizeof(path));
	if (bpf_obj_pin(fd, path)) {	/* the commit point */
		ret = -errno;
		goto fail;
	}
	ret = txn_apply(ifc, sorted, n, err, errlen);
	goto out;
fail:
	snprintf(err, errlen, "cannot record the new rule set: %s",
		 strerror(-ret));
out:
	if (fd >= 0)
		close(fd);
	free(live);
	free(sorted);
	return ret;
}

int rl_rules_read(const struct rl_iface *ifc, struct rl_rule *out, int max)
{
	struct rl_config before, after;
	int n = 0, ret;

	for (int i = 0; i < READ_TRIES; i++) {
		n = txn_read(ifc->name, out, max);
		if (n != -ENOENT)
			return n;
		ret = rl_config_read(&ifc->m, &before);
		if (ret)
			return ret;
		n = rl_rule_list(&ifc->m, out, max);
		if (n < 0)
			return n;
		ret = rl_config_read(&ifc->m, &after);
		if (ret)
			return ret;
		/* every change moves the generation; a restore pins its set
		 * before it moves it */
		if (after.rules_gen == before.rules_gen &&
		    !rl_rule_txn_pending(ifc->name))
			return n;
	}
	return n;
}
