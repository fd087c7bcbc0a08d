#!/bin/bash
# Concurrent use and faults under continuous traffic (issue: hardening).
# After each fault: the operation happened fully or not at all, the program
# keeps enforcing, counters never go backwards, and status/detach explain
# and repair any broken state.
# Usage: tests/stress/faults.sh BUILD_DIR
set -u
suite=stress
. "$(dirname "$0")/../lib.sh"
lib_init "${1:-build}" rls
# The kills below follow the bpf_link attach (its link dies with the
# process); where the kernel runs libxdp's dispatcher, attach would use it
# instead, whose killed attaches tests/vm/multi.sh covers.
export LIBXDP_SKIP_DISPATCHER=1

# Traffic for the whole run: 200 sources, 20k pps, in the background.
traffic() {
	in_tx "$gen" --dev "$vtx" --src 198.18.0.1 --sources 200 --rate 20000 \
		--duration "$1" >/dev/null 2>&1 &
	bg+=($!)
}

lib_setup_ns && setup_link || lib_abort setup "cannot create namespaces"

# ---- concurrent quota set/del and stats readers under traffic ----------
rl attach "$vrx" --default-pps 50 >/dev/null
traffic 60
sleep 1
workers=()
for w in 1 2 3 4; do
	(
		for i in $(seq 1 40); do
			rl quota set --iface "$vrx" "198.18.$w.0/24" --pps $((i + 10)) >/dev/null || exit 1
			rl quota del --iface "$vrx" "198.18.$w.0/24" >/dev/null || exit 1
		done
		rl quota set --iface "$vrx" "198.18.$w.0/24" --pps 77 >/dev/null || exit 1
	) &
	workers+=($!)
done
(
	last=0
	for i in $(seq 1 30); do
		now=$(total passed_packets) || exit 1
		[ -n "$now" ] && [ "$now" -ge "$last" ] || exit 2
		last=$now
	done
) &
readers=$!
st=0
for p in "${workers[@]}"; do wait "$p" || st=1; done
wait "$readers"; rst=$?
result concurrent_quota_changes "$st" "a quota set/del failed"
result stats_readers_monotonic "$rst" "stats failed or counters went backwards"
n=$(rl quota list --iface "$vrx" --json | jq '[.interfaces[0].rules[] | select(.pps == 77)] | length')
result rules_after_concurrency "$([ "$n" = 4 ] && echo 0 || echo 1)" "expected 4 rules at 77 pps, got $n"
n=$(rl quota list --iface "$vrx" --json | jq '.interfaces[0].rules | length')
result no_leaked_rules "$([ "$n" = 6 ] && echo 0 || echo 1)" "expected 6 rules (4 + default v4/v6), got $n"

# ---- SIGKILL in the middle of quota set ---------------------------------
before=$(total passed_packets)
bad=0
for i in $(seq 1 30); do
	# not through rl(): $! must be the CLI itself (nsenter execs it), not
	# a subshell whose death would leave the CLI running
	nsenter --net="/run/netns/$rx" "$cli" quota set --iface "$vrx" 198.18.9.0/24 \
		--pps $((100 + i)) >/dev/null 2>&1 &
	p=$!
	sleep "0.00$((RANDOM % 9))"
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	# the rule is there with one of the rates, or not there at all
	r=$(rl quota list --iface "$vrx" --json |
		jq -r '.interfaces[0].rules[] | select(.prefix == "198.18.9.0/24") | .pps')
	case "$r" in ''|1[0-9][0-9]) ;; *) bad=1 ;; esac
	rl quota del --iface "$vrx" 198.18.9.0/24 >/dev/null 2>&1
done
after=$(total passed_packets)
result kill_during_quota_set "$bad" "a killed quota set left a bad rule"
result counters_survive_kills "$([ "$after" -ge "$before" ] && echo 0 || echo 1)"
# a clean change still works and is enforced
rl quota set --iface "$vrx" 198.18.9.0/24 --pps 5 >/dev/null
n=$(rl quota list --iface "$vrx" --json | jq '[.interfaces[0].rules[] | select(.prefix == "198.18.9.0/24")] | length')
result quota_set_after_kills "$([ "$n" = 1 ] && echo 0 || echo 1)"
rl detach "$vrx" >/dev/null

# ---- SIGKILL at each step of attach ----------------------------------------
# strace kills the CLI on entering the Nth call of a syscall, before the
# call runs. The steps come from a trace of a whole attach: every mkdir and
# rename, the load of the XDP program, every bpf() call from the staging
# directory on (each pin, the link, the config write) and the exit. After
# each kill the interface is attached fully (status ok, enforcing) or not
# at all: no XDP program, status flags any leftovers as BROKEN, detach
# removes them (exit 0; 1 when there was nothing), a fresh attach works.
leftovers() {	# pins of $vrx: its directory, staging directories
	[ -e "$pins/$vrx" ] && echo "$vrx"
	ls "$pins" 2>/dev/null | grep -F "$vrx attaching "
}
hooks_left() {	# egress hook filters (tc clsact, rl_egress) on $vrx
	ip netns exec "$rx" tc filter show dev "$vrx" egress 2>/dev/null | grep -c rl_egress
}
no_xdp() {	# no XDP program on $vrx (a killed link goes with its process)
	for _ in $(seq 1 50); do
		[ -z "$(xdp_prog_id "$vrx")" ] && return 0
		sleep 0.1
	done
	return 1
}
enforces() {	# SRC [WANT]: 100 frames from SRC, 10 pass (--default-pps 10, 1 s)
	in_tx "$gen" --dev "$vtx" --src "$1" --count 100 >/dev/null 2>&1
	[ "$(src_stat "$1" passed_packets)" = "${2:-10}" ] &&
		[ "$(rl status --json | jq -r ".interfaces[] | select(.ifname == \"$vrx\") | .state")" = ok ]
}
killed_attach() {	# SYSCALL N: attach, killed on entering the Nth SYSCALL
	in_rx strace -f -qq -o /dev/null -e trace="$1" \
		-e inject="$1:signal=SIGKILL:when=$2" \
		"$cli" attach "$vrx" --default-pps 10 >/dev/null 2>&1
}
# "SYSCALL N LABEL" for each call of a strace TRACE from WHERE on: "stage"
# (attach: every call that is not bpf(), the bpf() calls from the staging
# directory on) or "load" (every call from the XDP program's load on);
# the XDP program's load itself in both.
trace_steps() {	# TRACE WHERE
	awk -v where="$2" '{
		sc = $2; sub(/\(.*/, "", sc); n[sc]++
		what = ""
		if (sc == "bpf") {
			what = tolower($2); sub(/^bpf\(bpf_/, "", what); sub(/,.*/, "", what)
		}
		if (match($0, /"\/[^"]*"/)) {
			p = substr($0, RSTART + 1, RLENGTH - 2)
			if (p ~ / attaching [0-9]+$/) p = "staging"
			else sub(/.*\//, "", p)
			what = what (what == "" ? "" : "_") p
		}
		if (sc == "mkdir" && / attaching /) staged = 1
		if (/prog_type=BPF_PROG_TYPE_XDP/) loaded = 1
		if (/prog_type=BPF_PROG_TYPE_XDP/ || (where == "stage" && (sc != "bpf" || staged)) ||
		    (where == "load" && loaded))
			print sc, n[sc], what
	}' "$1"
}
attach_steps() {	# TRACE: "SYSCALL N LABEL" for each step of a traced attach
	in_rx strace -f -qq -o "$1" -e trace=bpf,mkdir,rename,exit_group \
		"$cli" attach "$vrx" --default-pps 10 >/dev/null || return 1
	rl detach "$vrx" >/dev/null || return 1
	trace_steps "$1" stage
}
trace=$(mktemp); tmpfiles+=("$trace")
# Kill KIND (attach, reload) at each step KIND_steps traces (at least MIN
# of them), checking each with KIND_killed_at SYSCALL N NAME K.
killed_steps() {	# KIND MIN
	local step sc n what k=0 steps=()
	mapfile -t steps < <("$1_steps" "$trace")
	result "$1_steps_traced" "$([ ${#steps[@]} -ge "$2" ] && echo 0 || echo 1)" \
		"strace gave ${#steps[@]} steps (is strace installed? scripts/install-deps.sh)"
	for step in "${steps[@]}"; do
		read -r sc n what <<<"$step"
		k=$((k + 1))
		"$1_killed_at" "$sc" "$n" "$sc$n${what:+_$what}" "$k"
	done
}
attach_killed_at() {	# SYSCALL N NAME K
	local sc=$1 n=$2 name=$3 k=$4 why=() rc left st n_b
	killed_attach "$sc" "$n"; rc=$?
	[ "$rc" = 137 ] || why+=("not killed (rc $rc)")
	if [ -e "$pins/$vrx/link" ]; then
		# the commit point passed: a complete attachment
		enforces "198.18.77.$k" || why+=("attached but not ok and enforcing")
		rl detach "$vrx" >/dev/null || why+=("detach failed")
	else
		no_xdp || why+=("XDP program left on the interface")
		left=$(leftovers)
		st=$(rl status)
		if [ -n "$left" ]; then
			n_b=$(rl status --json | jq "[.interfaces[] | select(.ifname == \"$vrx\" and .state == \"broken\")] | length")
			[ "${n_b:-0}" -ge 1 ] && grep -q "^$vrx .*BROKEN" <<<"$st" &&
				grep -q "detach" <<<"$st" ||
				why+=("status does not flag the leftovers ($left): $(grep -F "$vrx" <<<"$st")")
			rl detach "$vrx" >/dev/null 2>&1 || why+=("detach of the leftovers exited $?")
			[ -z "$(leftovers)" ] || why+=("detach left $(leftovers)")
		else
			# a row of its own: another run's attachment may name
			# $vrx in its EGRESS column (ifindexes of other namespaces)
			grep -q "^$vrx " <<<"$st" && why+=("status lists $vrx with nothing pinned")
			rl detach "$vrx" >/dev/null 2>&1 && why+=("detach of nothing succeeded")
		fi
		# the egress hook went with the leftovers (or was never added)
		[ "$(hooks_left)" = 0 ] || why+=("$(hooks_left) egress hook filter(s) left")
		rl attach "$vrx" --default-pps 10 >/dev/null || why+=("attach after the kill failed")
		enforces "198.18.77.$k" || why+=("attach after the kill: not ok and enforcing")
		rl detach "$vrx" >/dev/null || why+=("detach after the kill failed")
	fi
	[ "$(hooks_left)" = 0 ] || why+=("detach left $(hooks_left) egress hook filter(s)")
	result "attach_killed_at_$name" "${#why[@]}" "${why[*]}"
}
killed_steps attach 10
# the next attach reaps staging directories of dead attaches and works
killed_attach rename 1
before=$(ls "$pins" 2>/dev/null | grep -cF "$vrx attaching ")
rl attach "$vrx" --default-pps 50 >/dev/null
st=$?
leftover=$(ls "$pins" 2>/dev/null | grep -cF "$vrx attaching ")
result attach_after_kills "$([ "$before" = 1 ] && [ "$st" = 0 ] && [ "$leftover" = 0 ] && echo 0 || echo 1)" \
	"staging dirs before: $before, attach rc=$st, staging dirs left: $leftover"

# ---- pins removed by hand ------------------------------------------------
rm -f "$pins/$vrx/rules_v6"
rl status | grep -q "^$vrx .*BROKEN"; s1=$?
rl quota set --iface "$vrx" 198.18.0.0/16 --pps 1 >/dev/null 2>&1; s2=$?
rl quota list --iface "$vrx" >/dev/null 2>&1; s3=$?
rl detach "$vrx" >/dev/null; s4=$?
[ -e "$pins/$vrx" ]; s5=$?
ip -n "$rx" -d link show "$vrx" | grep -q "prog/xdp"; s6=$?
result removed_pin_flagged "$s1" "status does not flag a missing pin"
result removed_pin_refused "$([ "$s2" = 1 ] && [ "$s3" = 1 ] && echo 0 || echo 1)" \
	"quota commands did not refuse (set rc=$s2, list rc=$s3)"
result removed_pin_detach_repairs "$([ "$s4" = 0 ] && [ "$s5" = 1 ] && [ "$s6" = 1 ] && echo 0 || echo 1)"

# a foreign object under the pin path is refused, never written to
rl attach "$vrx" >/dev/null
rm -f "$pins/$vrx/rules"
bpftool map create "$pins/$vrx/rules" type hash key 4 value 8 entries 4 name foreign
rl quota set --iface "$vrx" 198.18.0.0/16 --pps 1 2>&1 >/dev/null | grep -q "not a map this version"; s1=$?
n=$(bpftool map dump pinned "$pins/$vrx/rules" | grep -c key)
result foreign_map_refused "$([ "$s1" = 0 ] && [ "$n" = 0 ] && echo 0 || echo 1)"
rl detach "$vrx" >/dev/null

# a map of the very same shape, but not the linked program's: refused too,
# or its empty trie would make the live default rule's slot look free
rl attach "$vrx" --default-pps 50 >/dev/null
rm -f "$pins/$vrx/rules_v4"
bpftool map create "$pins/$vrx/rules_v4" type lpm_trie key 8 value 4 entries 4096 \
	name rules_v4 flags 1
rl quota set 198.18.0.0/16 --pps 0 --iface "$vrx" 2>&1 >/dev/null | grep -q "not one the attached program uses"
s1=$?
n=$(bpftool map dump pinned "$pins/$vrx/rules_v4" | grep -c key)
rules=$(bpftool -j map dump pinned "$pins/$vrx/rules" |
	jq -c '[.[] | select(.formatted.value.flags % 2 == 1) | .formatted.value.pps]')
rl status | grep -q "^$vrx .*BROKEN"; s2=$?
result same_shape_map_refused "$([ "$s1" = 0 ] && [ "$n" = 0 ] && [ "$rules" = "[50,50]" ] &&
	[ "$s2" = 0 ] && echo 0 || echo 1)" \
	"quota set refused: $s1, foreign trie entries $n, live rules pps $rules, status flags: $s2"
rl detach "$vrx" >/dev/null

# a quota change cut short leaves the rules generation odd: what quota list
# shows is enforced, status says so, and the next change completes it
rl attach "$vrx" --default-pps 1000 >/dev/null
rl quota set 198.18.30.0/24 --pps 0 --iface "$vrx" >/dev/null
off=$(config_offset rules_gen)
read -ra odd <<<"$(config_bytes "$vrx")"
odd[${off:-0}]=$(printf "0x%02x" $(( ${odd[${off:-0}]} | 1 )))	# low byte: odd
config_write "$vrx" "${odd[*]}"
rl status | grep "$vrx" | grep -q "BROKEN: a quota change was cut short"; s1=$?
in_tx "$gen" --dev "$vtx" --src 198.18.30.1 --count 20 >/dev/null 2>&1
n=$(src_stat 198.18.30.1 dropped_packets)
r=$(src_stat 198.18.30.1 passed_packets)
rl quota set 198.18.31.0/24 --pps 5 --iface "$vrx" >/dev/null; s2=$?
rl status | grep "$vrx" | grep -q " ok"; s3=$?
result interrupted_change_flagged "$([ -n "$off" ] && [ "$s1" = 0 ] && [ "$r" = 0 ] && [ "$n" = 20 ] &&
	[ "$s2" = 0 ] && [ "$s3" = 0 ] && echo 0 || echo 1)" \
	"offset '$off'; status flags it: $s1; blocked source passed $r, dropped $n of 20; next change rc=$s2, then ok: $s3"
rl detach "$vrx" >/dev/null

# a config written by another layout version is refused, never rewritten:
# bump the layout field (its offset from the object's BTF) by hand
rl attach "$vrx" >/dev/null
rl quota set --iface "$vrx" 198.18.9.0/24 --pps 9 >/dev/null
off=$(config_offset layout)
bumped=$(config_bump_layout "$vrx")
rl quota set --iface "$vrx" 198.18.9.0/24 --pps 1 2>&1 >/dev/null | grep -q "different version"; s1=$?
rl quota list --iface "$vrx" >/dev/null 2>&1; s2=$?
rl stats --iface "$vrx" >/dev/null 2>&1; s3=$?
rl status | grep -q "^$vrx .*BROKEN"; s4=$?
after=$(config_bytes "$vrx")
n=$(bpftool -j map dump pinned "$pins/$vrx/rules" |
	jq '[.[] | select(.formatted.value.pps == 9)] | length')
result old_layout_refused "$([ -n "$off" ] && [ "$s1" = 0 ] && [ "$s2" = 1 ] && [ "$s3" = 1 ] &&
	[ "$s4" = 0 ] && [ "$after" = "$bumped" ] && [ "$n" = 1 ] && echo 0 || echo 1)" \
	"offset '$off'; quota set refused: $s1, list rc=$s2, stats rc=$s3, status flags: $s4, config untouched: $([ "$after" = "$bumped" ] && echo yes || echo no), rule kept: $n"
rl detach "$vrx" >/dev/null; s1=$?
result old_layout_detach_repairs "$([ "$s1" = 0 ] && [ ! -e "$pins/$vrx" ] && echo 0 || echo 1)"

# ---- interface deleted while attached, detach, re-attach -----------------
rl attach "$vrx" --default-pps 50 >/dev/null
ip -n "$rx" link del "$vrx"
rl status | grep -q "^$vrx .*BROKEN"; s1=$?
rl detach "$vrx" >/dev/null; s2=$?
result deleted_iface_flagged "$s1"
result deleted_iface_detach "$([ "$s2" = 0 ] && [ ! -e "$pins/$vrx" ] && echo 0 || echo 1)"
setup_link
ok=0
for i in 1 2 3; do
	rl attach "$vrx" --default-pps 10 >/dev/null || ok=1
	rl detach "$vrx" >/dev/null || ok=1
done
rl attach "$vrx" --default-pps 10 >/dev/null || ok=1
in_tx "$gen" --dev "$vtx" --src 198.18.0.1 --count 100 >/dev/null 2>&1
# per source: a fresh link also carries the kernel's own IPv6 ND/MLD frames
p=$(rl stats --iface "$vrx" --json |
	jq '.interfaces[0].sources[] | select(.address == "198.18.0.1") | .passed_packets')
result reattach_enforces "$([ "$ok" = 0 ] && [ "$p" = 10 ] && echo 0 || echo 1)" \
	"passed $p of 100 with quota 10"
rl detach "$vrx" >/dev/null

# ---- SIGKILL at each step of reload ----------------------------------------
# As for attach: the steps of a traced reload, from the load of its XDP
# program on (every bpf() call, each netlink message that replaces an
# egress filter, the rename of the egress pin, the exit). Killed before
# bpf_link_update (its commit point), the old program enforces with its
# state: the same program id, rules, settings and egress filter. Killed
# after it, the new program enforces, and the same reload run again
# completes it (the settings in status, one egress filter running the new
# program, which the egress pin names). At every step a pin (egress or
# egress_next) names what the egress filter runs.
reload_steps() {	# TRACE
	rl attach "$vrx" --default-pps 10 >/dev/null || return 1
	in_rx strace -f -qq -o "$1" -e trace=bpf,sendto,rename,exit_group \
		"$cli" reload "$vrx" --verified-ttl 5m >/dev/null || return 1
	rl detach "$vrx" >/dev/null || return 1
	trace_steps "$1" load
}
ttl_of() {	# verified_ttl_ms of $vrx in status
	rl status --json | jq -r ".interfaces[] | select(.ifname == \"$vrx\") | .verified_ttl_ms"
}
egress_prog() {	# the program id of the egress hook filter on $vrx
	ip netns exec "$rx" tc -j filter show dev "$vrx" egress 2>/dev/null |
		jq -r '[.[] | .options.prog.id? // empty][0] // empty'
}
egress_pinned() {	# PIN: the id of the program pinned as PIN for $vrx
	bpftool -j prog show pinned "$pins/$vrx/$1" 2>/dev/null | jq -r '.id // empty'
}
# The egress filter's program has a pin at every step: egress, or
# egress_next while a reload moves the filter to it (why gets what is wrong).
egress_named() {	# WHEN
	local f
	f=$(egress_prog)
	[ -n "$f" ] && { [ "$(egress_pinned egress)" = "$f" ] || [ "$(egress_pinned egress_next)" = "$f" ]; } ||
		why+=("$1: the egress filter runs '$f', pinned: egress '$(egress_pinned egress)', egress_next '$(egress_pinned egress_next)'")
}
# Once a reload is done: egress names it, and no egress_next is left.
egress_done() {	# WHEN
	[ -n "$(egress_prog)" ] && [ "$(egress_pinned egress)" = "$(egress_prog)" ] &&
		[ ! -e "$pins/$vrx/egress_next" ] ||
		why+=("$1: the egress filter runs '$(egress_prog)', egress pins '$(egress_pinned egress)', egress_next $(ls "$pins/$vrx" | grep -c egress_next)")
}
# Attach with a rule, note its program, egress filter and rules (the
# caller's id0 eg0 rules0), then run reload ARGS killed on entering the
# Nth SYSCALL (rc; why gets what went wrong).
killed_reload() {	# SYSCALL N ARGS...
	local sc=$1 n=$2
	shift 2
	rl attach "$vrx" --default-pps 10 >/dev/null &&
		rl quota set --iface "$vrx" 198.18.79.0/24 --pps 7 >/dev/null || why+=("attach")
	id0=$(xdp_prog_id "$vrx") eg0=$(egress_prog)
	rules0=$(rl quota list --iface "$vrx" --json)
	in_rx strace -f -qq -o /dev/null -e trace="$sc" \
		-e inject="$sc:signal=SIGKILL:when=$n" \
		"$cli" reload "$vrx" "$@" >/dev/null 2>&1; rc=$?
	[ "$rc" = 137 ] || why+=("not killed (rc $rc)")
}
reload_killed_at() {	# SYSCALL N NAME K
	local name=$3 k=$4 why=() rc id0 id1 eg0 rules0
	killed_reload "$1" "$2" --verified-ttl 5m
	egress_named killed
	id1=$(xdp_prog_id "$vrx")
	[ -n "$id1" ] || why+=("no XDP program left")
	[ "$(rl quota list --iface "$vrx" --json)" = "$rules0" ] || why+=("rules changed")
	if [ "$id1" = "$id0" ]; then
		# not committed: nothing changed
		[ "$(ttl_of)" = 600000 ] || why+=("old program, but status shows ttl $(ttl_of)")
		[ "$(egress_prog)" = "$eg0" ] || why+=("egress filter runs $(egress_prog), not $eg0")
	else
		rl reload "$vrx" --verified-ttl 5m >/dev/null || why+=("the reload again failed")
		[ "$(ttl_of)" = 300000 ] || why+=("reloaded again, status shows ttl $(ttl_of)")
		[ "$(egress_prog)" != "$eg0" ] || why+=("egress filter still runs the old program")
		egress_done "reloaded again"
	fi
	[ "$(hooks_left)" = 1 ] || why+=("$(hooks_left) egress hook filters")
	enforces "198.18.78.$k" || why+=("not ok and enforcing")
	rl detach "$vrx" >/dev/null || why+=("detach failed")
	[ "$(hooks_left)" = 0 ] || why+=("detach left $(hooks_left) egress hook filter(s)")
	result "reload_killed_at_$name" "${#why[@]}" "${why[*]}"
}
killed_steps reload 5

# ---- SIGKILL at each step of a reload onto new maps ------------------------
# reload --window 2s builds new maps (reload_txn.h): from the load of its
# XDP program on, the first and the last call of each kind (bpf() by
# command: the carry's thousands of map reads and writes are a step at
# each end), which covers the staging directory, its pins (the link
# last), bpf_link_update (the commit point), the exchange of the pin
# directories, the unpinning of the old maps, the egress filter's
# replacement and the exit. Killed before the commit point, the old
# program enforces with its settings, rules and egress filter, status ok;
# after it, the new program runs. Either way the same reload run again
# completes it (a staging directory left is completed or removed), with
# the rules kept, one egress filter on the new program, the new window
# enforced, and no staging directory left.
rebuild_steps() {	# TRACE
	rl attach "$vrx" --default-pps 10 >/dev/null || return 1
	in_rx strace -f -qq -o "$1" -e trace=bpf,mkdir,rename,renameat2,unlink,rmdir,sendto,exit_group \
		"$cli" reload "$vrx" --window 2s >/dev/null || return 1
	rl detach "$vrx" >/dev/null || return 1
	awk '{
		sc = $2; sub(/\(.*/, "", sc); n[sc]++
		kind = sc
		if (sc == "bpf") {
			kind = tolower($2); sub(/^bpf\(bpf_/, "", kind); sub(/,.*/, "", kind)
		}
		what = (sc == "bpf") ? kind : ""
		if (match($0, /"\/[^"]*"/)) {
			p = substr($0, RSTART + 1, RLENGTH - 2)
			if (p ~ / reloading [0-9]+$/) p = "staging"
			else sub(/.*\//, "", p)
			what = what (what == "" ? "" : "_") p
		}
		if (/prog_type=BPF_PROG_TYPE_XDP/) loaded = 1
		if (!loaded) next
		step[NR] = sc " " n[sc] " " what; kind_of[NR] = kind
		if (!(kind in first)) first[kind] = NR
		last[kind] = NR
	} END {
		for (i = 1; i <= NR; i++)
			if ((i in step) && (first[kind_of[i]] == i || last[kind_of[i]] == i))
				print step[i]
	}' "$1"
}
window_of() {	# window_ms and state of $vrx in status
	rl status --json | jq -c ".interfaces[] | select(.ifname == \"$vrx\") | [.window_ms, .state]"
}
stages_left() { ls "$pins" 2>/dev/null | grep -cF "$vrx reloading "; }
rebuild_killed_at() {	# SYSCALL N NAME K
	local name=$3 k=$4 why=() rc id0 id1 eg0 rules0 out
	killed_reload "$1" "$2" --window 2s
	egress_named killed
	id1=$(xdp_prog_id "$vrx")
	[ -n "$id1" ] || why+=("no XDP program left")
	if [ "$id1" = "$id0" ]; then
		# not committed: nothing changed
		[ "$(window_of)" = '[1000,"ok"]' ] || why+=("old program, but status shows $(window_of)")
		[ "$(rl quota list --iface "$vrx" --json)" = "$rules0" ] || why+=("rules changed")
		[ "$(egress_prog)" = "$eg0" ] || why+=("egress filter runs $(egress_prog), not $eg0")
		enforces "198.18.76.$k" || why+=("old program not ok and enforcing")
	fi
	out=$(rl reload "$vrx" --window 2s 2>&1) || why+=("the reload again failed: $out")
	[ "$(window_of)" = '[2000,"ok"]' ] || why+=("reloaded again, status shows $(window_of)")
	[ "$(rl quota list --iface "$vrx" --json)" = "$rules0" ] || why+=("rules not kept")
	[ "$(egress_prog)" != "$eg0" ] || why+=("egress filter still runs the old program")
	egress_done "reloaded again"
	[ "$(hooks_left)" = 1 ] || why+=("$(hooks_left) egress hook filters")
	[ "$(stages_left)" = 0 ] || why+=("$(stages_left) staging directories left")
	enforces "198.18.78.$k" 20 || why+=("not ok and enforcing 20 in 2 s")
	rl detach "$vrx" >/dev/null || why+=("detach failed")
	[ "$(hooks_left)" = 0 ] || why+=("detach left $(hooks_left) egress hook filter(s)")
	[ -z "$(xdp_prog_id "$vrx")" ] || why+=("detach left the XDP program")
	result "rebuild_killed_at_$name" "${#why[@]}" "${why[*]}"
}
killed_steps rebuild 15
# detach after a reload killed between the commit point and the exchange
# of the pin directories: it completes the exchange, then detaches all
rl attach "$vrx" --default-pps 10 >/dev/null
in_rx strace -f -qq -o /dev/null -e trace=renameat2 -e inject=renameat2:signal=SIGKILL:when=1 \
	"$cli" reload "$vrx" --window 2s >/dev/null 2>&1; rc=$?
s1=$(stages_left)
rl detach "$vrx" >/dev/null; s2=$?
result rebuild_killed_then_detach "$([ "$rc" = 137 ] && [ "$s1" = 1 ] && [ "$s2" = 0 ] &&
	[ "$(stages_left)" = 0 ] && [ ! -e "$pins/$vrx" ] && [ -z "$(xdp_prog_id "$vrx")" ] &&
	[ "$(hooks_left)" = 0 ] && echo 0 || echo 1)" \
	"killed: rc $rc, staging dirs $s1; detach rc $s2; left: $(stages_left) staging, pins $(ls "$pins" | grep -cF "$vrx"), xdp '$(xdp_prog_id "$vrx")', hooks $(hooks_left)"

lib_finish
