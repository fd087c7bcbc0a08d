#!/bin/bash
# Running it for real: rules files (save, restore, killed restores),
# Prometheus (stats --prometheus, the exporter over HTTP), the systemd
# units and make install. Each test by name: tests/ops/run.sh BUILD_DIR
# [TEST...] (names as below, without t_).
set -u
suite=ops
. "$(dirname "$0")/../lib.sh"
lib_args rlo "$@"
tests=(restore_replaces save_restore save_restore_ban restore_bad_input restore_test_noflush
	restore_stdin_unlocked restore_killed
	restore_attach_killed stats_prometheus exporter exporter_slow_clients exporter_reads
	names install units)
check_test_names

vtx2=${id}c vrx2=${id}d			# a second pair, attached by restore
rx_ifaces+=("$vrx2")
# the exporter's, on the rx loopback: below the ephemeral ports (32768 and up),
# which a client of an earlier test in the namespace may still hold
port=$((10000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'lib_cleanup; rm -rf "$tmp"' EXIT

lib_require
lib_setup_ns && setup_link && setup_link "$vtx2" "$vrx2" 201 &&
	ip -n "$rx" link set lo up || lib_abort setup "cannot create namespaces and links"
mac=$(mac_of "$vrx")

send() { in_tx "$gen" --dev "$vtx" --dst-mac "$mac" "$@" >/dev/null 2>&1; }
send_answered() { send_answered_to "$mac" "$@" >/dev/null; }	# ADDRESS COUNT (lib.sh)
rules_of() {	# IFACE: its rules as quota list --json gives them
	rl quota list --iface "$1" --json | jq -c '.interfaces[0].rules'
}
gen_of() {	# IFACE: the rules generation (moved by every rule change)
	bpftool -j map dump pinned "$(pin_dir "$1")/config" |
		jq '.[0].formatted.value.rules_gen'
}
state_of() {	# IFACE: ok or broken, as status --json says
	rl status --json | jq -r --arg i "$1" '.interfaces[] | select(.ifname == $i) | .state'
}
# What restore and a file have to say: FILE:LINE in every error.
restore_err() {	# FILE: exit status and stderr of restore FILE
	rl restore "$1" 2>&1 >/dev/null
}

# The rule sets the tests move between: A is on the interface, B changes
# one rule, keeps two, deletes one and adds one.
file_a() {	# IFACE
	cat <<EOF
attach $1 --window 5s --buckets 10 --default-pps 1000
quota set 198.18.10.0/24 --pps 10 --iface $1
quota set 198.18.11.0/24 --pps 20 --aggregate-pps 5k --iface $1   # changes in B
quota set 198.18.12.0/24 --pps 0 --iface $1                        # gone in B
quota set 2001:db8::/32 --bps 1M --iface $1
EOF
}
file_b() {	# IFACE
	cat <<EOF
# B
attach $1 --default-pps 1000 --window 5s
quota set 198.18.10.0/24 --pps 10 --iface $1
quota set 198.18.11.0/24 --pps 30 --iface $1
quota set 198.18.13.7 --pps unlimited --iface $1
quota set 2001:db8::/32 --bps 1M --iface $1
EOF
}
file_a "$vrx" >"$tmp/a.rules"
file_b "$vrx" >"$tmp/b.rules"

# ---- save and restore ----------------------------------------------------
t_restore_replaces() {
	local out rc g0
	rl detach "$vrx" >/dev/null 2>&1
	out=$(rl restore "$tmp/a.rules"); rc=$?
	[ "$rc" = 0 ] && [ "$(state_of "$vrx")" = ok ] &&
		[ "$(rules_of "$vrx" | jq length)" = 6 ]
	result restore_attaches $? "exit $rc, $(state_of "$vrx"), rules $(rules_of "$vrx"): $out"
	# 198.18.10.1 uses up its budget of 50 (10 pps over 5 s) under A; B
	# keeps that rule, so its window and counters must survive the restore
	send --src 198.18.10.1 --count 60
	g0=$(gen_of "$vrx")
	out=$(rl restore "$tmp/b.rules"); rc=$?
	send --src 198.18.10.1 --count 5
	local p d
	p=$(src_stat 198.18.10.1 passed_packets) d=$(src_stat 198.18.10.1 dropped_packets)
	check restore_keeps_unchanged_windows "rc == 0 && p == 50 && d == 15" \
		"exit $rc; 198.18.10.1 at 10 pps over 5 s, 65 sent: $p passed, $d dropped"
	[ "$(rules_of "$vrx" | jq -c '[.[] | [.prefix, .pps, .aggregate_pps]]')" = \
		'[["0.0.0.0/0",1000,null],["198.18.10.0/24",10,null],["198.18.11.0/24",30,null],["198.18.13.7/32",null,null],["::/0",1000,null],["2001:db8::/32",null,null]]' ]
	result restore_gives_the_files_rules $? "$(rules_of "$vrx")"
	g0=$(gen_of "$vrx")
	out=$(rl restore "$tmp/b.rules"); rc=$?
	[ "$rc" = 0 ] && [ "$(gen_of "$vrx")" = "$g0" ] && [[ $out == *unchanged* ]]
	result restore_twice_changes_nothing $? "exit $rc, generation $g0 -> $(gen_of "$vrx"): $out"
}

t_save_restore() {
	local s1 s2 g0 stats1 stats2 out rc
	rl detach "$vrx" >/dev/null 2>&1
	rl attach "$vrx" --mode generic --window 500ms --buckets 5 --max-sources 1000 \
		--ipv6-prefix 56 --pass-malformed >/dev/null &&
		rl quota set default --pps 100 --iface "$vrx" >/dev/null &&
		rl quota set ::/0 --pps 200 --iface "$vrx" >/dev/null &&
		rl quota set 198.18.20.0/24 --pps 5 --bps 10k --aggregate-pps 1k \
			--aggregate-bps 1M --iface "$vrx" >/dev/null &&
		rl quota set 198.18.21.1 --pps unlimited --iface "$vrx" >/dev/null &&
		rl quota set 2001:db8:1::/48 --pps 0 --iface "$vrx" >/dev/null ||
		{ result save_restore 1 "setup"; return; }
	send --src 198.18.20.1 --count 8
	s1=$(rl save --iface "$vrx")
	# every option of the attach and of each rule, as typed
	has_each -xF "$s1" \
		"attach $vrx --mode generic --window 500ms --buckets 5 --max-sources 1000 --ipv6-prefix 56 --priority 20 --verified-ttl 10m --pass-malformed" \
		"quota set 0.0.0.0/0 --pps 100 --iface $vrx" \
		"quota set ::/0 --pps 200 --iface $vrx" \
		"quota set 198.18.20.0/24 --pps 5 --bps 10000 --aggregate-pps 1000 --aggregate-bps 1000000 --iface $vrx" \
		"quota set 198.18.21.1/32 --pps unlimited --iface $vrx" \
		"quota set 2001:db8:1::/48 --pps 0 --iface $vrx"
	result save_prints_every_setting $? "$s1"
	# on the live interface: nothing written, counters and windows as they were
	g0=$(gen_of "$vrx")
	stats1=$(stats_json "$vrx" | jq -c '.interfaces[0].sources')
	out=$(rl save --iface "$vrx" | rl restore - 2>&1); rc=$?
	stats2=$(stats_json "$vrx" | jq -c '.interfaces[0].sources')
	[ "$rc" = 0 ] && [ "$(gen_of "$vrx")" = "$g0" ] && [ "$stats1" = "$stats2" ] &&
		[ "$(rl save --iface "$vrx")" = "$s1" ]
	result save_pipe_restore_changes_nothing $? "exit $rc: $out; generation $g0 -> $(gen_of "$vrx")"
	# onto a bare interface: the same attachment again
	rl detach "$vrx" >/dev/null
	out=$(rl restore - <<<"$s1" 2>&1); rc=$?
	s2=$(rl save --iface "$vrx")
	[ "$rc" = 0 ] && [ "$s1" = "$s2" ] && [ "$(state_of "$vrx")" = ok ]
	result save_restore_round_trip $? "exit $rc: $out"$'\n'"$(diff <(echo "$s1") <(echo "$s2"))"
}

# Issue 11's rule options in rules files: a newcomer budget and a ban are
# saved as typed and restored unchanged, and no restore lifts a ban.
bans_of() {	# IFACE: its bans as [address, rule] pairs
	rl ban list --iface "$1" --json |
		jq -c '[.interfaces[0].bans[] | [.address, .rule]]'
}
bans_used() {	# IFACE: config.bans_used (the program looks bans up)
	bpftool -j map dump pinned "$(pin_dir "$1")/config" |
		jq '.[0].formatted.value.bans_used'
}
t_save_restore_ban() {
	local a=198.18.30.1 rule=198.18.30.0/24 s1 s2 g0 b0 out rc d
	rl detach "$vrx" >/dev/null 2>&1
	rl attach "$vrx" --window 1s >/dev/null &&
		rl quota set default --pps 1000 --new-pps 2k --ban 1m --iface "$vrx" >/dev/null &&
		rl quota set "$rule" --pps 20 --new-pps 100 --new-bps 1M --ban 30s \
			--iface "$vrx" >/dev/null ||
		{ result save_restore_ban 1 "setup"; return; }
	send_answered "$a" 50	# 20 a window: the 21st drops and bans
	b0=$(bans_of "$vrx")
	[ "$b0" = "[[\"$a\",\"$rule\"]]" ]
	result ban_before_save $? "ban list: $b0"
	out=$(rl stats --prometheus --iface "$vrx")
	[ "$(metric "$out" "xdp_ratelimit_banned_sources{ifname=\"$vrx\"}")" = 1 ] &&
		[ "$(metric "$out" "xdp_ratelimit_banned_packets_total{ifname=\"$vrx\"}")" = "$(total banned_packets)" ] &&
		promtool check metrics <<<"$out" >/dev/null 2>&1
	result prometheus_bans $? "$(grep banned <<<"$out")"
	s1=$(rl save --iface "$vrx")
	grep -qx "quota set default --pps 1000 --new-pps 2000 --ban 1m --iface $vrx" <<<"$s1" &&
		grep -qx "quota set $rule --pps 20 --new-pps 100 --new-bps 1000000 --ban 30s --iface $vrx" <<<"$s1"
	result save_prints_newcomer_and_ban $? "$s1"
	# on the live interface: nothing written, the ban held
	g0=$(gen_of "$vrx")
	out=$(rl restore - <<<"$s1" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$(gen_of "$vrx")" = "$g0" ] && [[ $out == *unchanged* ]] &&
		[ "$(rl save --iface "$vrx")" = "$s1" ] && [ "$(bans_of "$vrx")" = "$b0" ]
	result restore_newcomer_ban_unchanged $? "exit $rc: $out; generation $g0 -> $(gen_of "$vrx"); bans $(bans_of "$vrx")"
	# a restore that changes the banning rule (no --ban now) lifts no ban:
	# every packet of the banned source still drops
	out=$(sed 's/ --ban 30s//' <<<"$s1" | rl restore - 2>&1); rc=$?
	d=$(src_stat "$a" dropped_packets)
	send --src "$a" --count 5
	[ "$rc" = 0 ] && [ "$(bans_of "$vrx")" = "$b0" ] &&
		[ "$(src_stat "$a" dropped_packets)" = $((d + 5)) ]
	result restore_keeps_bans $? "exit $rc: $out; bans $(bans_of "$vrx"); dropped $d -> $(src_stat "$a" dropped_packets)"
	# onto a bare interface: the same rules, and bans enforced from the start
	rl detach "$vrx" >/dev/null
	out=$(rl restore - <<<"$s1" 2>&1); rc=$?
	s2=$(rl save --iface "$vrx")
	[ "$rc" = 0 ] && [ "$s1" = "$s2" ] && [ "$(bans_used "$vrx")" = 1 ]
	result save_restore_ban_round_trip $? "exit $rc: $out; bans_used $(bans_used "$vrx")"$'\n'"$(diff <(echo "$s1") <(echo "$s2"))"
}

# A bad file changes nothing: the rules of $vrx, its generation, and
# $vrx2 stays detached even when an earlier line attaches it.
t_restore_bad_input() {
	local before g0 bad=() f=$tmp/bad.rules name want line err rc
	rl detach "$vrx" >/dev/null 2>&1
	rl restore "$tmp/b.rules" >/dev/null || { result restore_bad_input 1 "setup"; return; }
	before=$(rules_of "$vrx") g0=$(gen_of "$vrx")
	try() {	# NAME LINE WANT FILE_TEXT: restore exits 1 with FILE:LINE: ...WANT...
		name=$1 line=$2 want=$3
		printf '%b\n' "$4" >"$f"
		err=$(restore_err "$f"); rc=$?
		[ "$rc" = 1 ] && [[ $err == "xdp-ratelimit: $f:$line: "*"$want"* ]] ||
			bad+=("$name: exit $rc, said '$err'")
	}
	local a2="attach $vrx2 --default-pps 10"
	try unknown_command 2 "unknown command 'frob'" "$a2"$'\n'"frob"
	try bad_value 3 "bad rate '10x'" "$a2"$'\n'"# x"$'\n'"quota set 198.18.0.0/15 --pps 10x --iface $vrx"
	try bad_prefix 2 "198.18.0.0/15" "$a2"$'\n'"quota set 198.18.0.1/15 --pps 10 --iface $vrx"
	try unknown_option 2 "--ppz" "$a2"$'\n'"quota set 198.18.0.0/15 --ppz 10 --iface $vrx"
	try kernel_refused_name 2 "not an interface name" "$a2"$'\n'"attach bad/name"
	try name_too_long 2 "15 characters" "$a2"$'\n'"quota set default --pps 1 --iface ${vrx}xxxxxxxxxxxxxxxx"
	try not_attached 2 "nosuch$$ is not attached and no line above attaches it" \
		"$a2"$'\n'"quota set default --pps 1 --iface nosuch$$"
	try no_such_interface 2 "no interface named 'nosuch$$'" "$a2"$'\n'"attach nosuch$$"
	try other_settings 2 "--window 2s (attached with 5s)" "$a2"$'\n'"attach $vrx --window 2s"
	try not_a_rules_command 2 "'detach' does not belong in a rules file" "$a2"$'\n'"detach $vrx"
	try help 2 "--help does not belong" "$a2"$'\n'"quota set default --help"
	try attached_twice 3 "second time" "$a2"$'\n'"quota set default --pps 1 --iface $vrx2"$'\n'"attach $vrx2"
	try ipv6_too_long 2 "longer than the /64" "$a2"$'\n'"quota set 2001:db8::/80 --pps 1 --iface $vrx2"
	try budget_too_large 2 "--pps 4294967294 or less" "$a2"$'\n'"quota set default --pps 5G --iface $vrx2"
	try del_missing 2 "no rule for 198.18.9.0/24" "$a2"$'\n'"quota del 198.18.9.0/24 --iface $vrx2"
	try nul_byte 2 "NUL" "$a2"$'\n'"quota set default --pps 1\\0 --iface $vrx"
	err=$(rl restore "$tmp/nonexistent" 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ $err == *"cannot read $tmp/nonexistent: No such file"* ]] ||
		bad+=("unreadable: exit $rc, said '$err'")
	err=$(rl restore "$tmp" 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ $err == *"Is a directory"* ]] || bad+=("directory: exit $rc, said '$err'")
	check restore_bad_lines_named "${#bad[@]} == 0" "${bad[*]}"
	[ "$(rules_of "$vrx")" = "$before" ] && [ "$(gen_of "$vrx")" = "$g0" ] &&
		[ ! -e "$(pin_dir "$vrx2")" ] && [ -z "$(xdp_prog_id "$vrx2")" ]
	result restore_bad_file_changes_nothing $? "rules $(rules_of "$vrx"), generation $g0 -> $(gen_of "$vrx"), $vrx2 pins: $(ls "$(pin_dir "$vrx2")" 2>&1)"
}

# restore --test and --noflush against the saved set B: --test prints what
# would change, by rule, and changes nothing; --noflush adds and changes
# with each line's own limits, never deletes.
t_restore_test_noflush() {
	local out rc g0 before f=$tmp/n.rules want
	rl detach "$vrx" >/dev/null 2>&1
	rl restore "$tmp/b.rules" >/dev/null || { result restore_test 1 "setup"; return; }
	before=$(rules_of "$vrx") g0=$(gen_of "$vrx")
	out=$(rl restore --test "$tmp/a.rules" 2>&1); rc=$?
	want="$vrx: +1 -1 ~1, 6 rules (test: nothing changed)
  ~ 198.18.11.0/24 --pps 20 --aggregate-pps 5000 (was --pps 30)
  + 198.18.12.0/24 --pps 0
  - 198.18.13.7/32 --pps unlimited"
	[ "$rc" = 0 ] && [ "$out" = "$want" ] && [ "$(rules_of "$vrx")" = "$before" ] &&
		[ "$(gen_of "$vrx")" = "$g0" ]
	result restore_test_prints_by_rule $? "exit $rc, printed:"$'\n'"$out"$'\n'"generation $g0 -> $(gen_of "$vrx")"
	# a file that would attach: nothing attached
	file_b "$vrx2" >"$tmp/b2t.rules"
	out=$(rl restore --test "$tmp/b2t.rules" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx2: not attached, would attach: +6 -0 ~0, 6 rules
  (test: nothing changed)" ] &&
		[ ! -e "$(pin_dir "$vrx2")" ] && [ -z "$(xdp_prog_id "$vrx2")" ]
	result restore_test_attaches_nothing $? "exit $rc: $out"
	# a bad line: FILE:LINE, exit 1, nothing changed
	printf 'quota set 198.18.14.0/24 --pps 5 --iface %s\nquota set 198.18.15.0/24 --pps 5 --iface nosuch%s\n' "$vrx" "$$" >"$f"
	out=$(rl restore --test "$f" 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ $out == "xdp-ratelimit: $f:2: nosuch$$ is not attached"* ]] &&
		[ "$(rules_of "$vrx")" = "$before" ] && [ "$(gen_of "$vrx")" = "$g0" ]
	result restore_test_bad_line $? "exit $rc: $out"
	# --noflush: one line adds one rule; one naming a limit of an existing
	# rule changes that limit only (as quota set would); nothing deleted
	printf 'quota set 198.18.7.7 --pps unlimited --iface %s\n' "$vrx" >"$f"
	out=$(rl restore --test --noflush "$f" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx: +1 -0 ~0, 7 rules (test: nothing changed)
  + 198.18.7.7/32 --pps unlimited" ] && [ "$(rules_of "$vrx")" = "$before" ]
	result restore_test_noflush $? "exit $rc: $out"
	send --src 198.18.10.1 --count 60
	out=$(rl restore --noflush "$f" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx: +1 -0 ~0, 7 rules
  + 198.18.7.7/32 --pps unlimited" ] &&
		[ "$(rules_of "$vrx" | jq -c 'length')" = 7 ]
	result restore_noflush_adds $? "exit $rc: $out; rules $(rules_of "$vrx")"
	printf 'quota set 198.18.10.0/24 --aggregate-pps 2k\n' >"$f"
	out=$(rl restore --noflush --iface "$vrx" "$f" 2>&1); rc=$?
	send --src 198.18.10.1 --count 5
	local p d
	p=$(src_stat 198.18.10.1 passed_packets) d=$(src_stat 198.18.10.1 dropped_packets)
	[ "$rc" = 0 ] && [ "$out" = "$vrx: +0 -0 ~1, 7 rules
  ~ 198.18.10.0/24 --pps 10 --aggregate-pps 2000 (was --pps 10)" ] &&
		[ "$p" = 50 ] && [ "$d" = 15 ]
	result restore_noflush_changes_as_quota_set $? "exit $rc: $out; 198.18.10.1 at 10 pps over 5 s, 65 sent: $p passed, $d dropped"
	g0=$(gen_of "$vrx")
	out=$(rl restore --noflush --iface "$vrx" "$f" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx: +0 -0 ~0, 7 rules, unchanged" ] && [ "$(gen_of "$vrx")" = "$g0" ]
	result restore_noflush_twice_unchanged $? "exit $rc: $out"
	# and plain restore puts B back, saying what it took away
	out=$(rl restore "$tmp/b.rules" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx: +0 -1 ~1, 6 rules
  ~ 198.18.10.0/24 --pps 10 (was --pps 10 --aggregate-pps 2000)
  - 198.18.7.7/32 --pps unlimited" ] && [ "$(rules_of "$vrx")" = "$before" ]
	result restore_prints_change $? "exit $rc: $out"
}

# restore - reads all of its input before it takes the lock: with its
# pipe held open, another change completes.
t_restore_stdin_unlocked() {
	local fifo=$tmp/fifo pid out rc sc
	rl detach "$vrx" >/dev/null 2>&1
	rl restore "$tmp/b.rules" >/dev/null || { result restore_stdin_unlocked 1 "setup"; return; }
	mkfifo "$fifo" && exec 7<>"$fifo"
	# not through rl(), a function: $! must be the CLI (nsenter execs it)
	nsenter --net="/run/netns/$rx" "$cli" restore - <"$fifo" >"$tmp/stdin.out" 2>&1 7>&- &
	pid=$!
	echo "quota set 198.18.40.0/24 --pps 4 --iface $vrx" >&7
	# blocked reading its input (read(2) is syscall 0)
	within 100 bash -c "[ \"\$(cut -d' ' -f1 /proc/$pid/syscall 2>/dev/null)\" = 0 ]"
	sc=$(cut -d' ' -f1 "/proc/$pid/syscall" 2>/dev/null)
	out=$(in_rx timeout 20 "$cli" quota set 198.18.41.0/24 --pps 5 --iface "$vrx" 2>&1); rc=$?
	[ "$sc" = 0 ] && [ "$rc" = 0 ] && kill -0 "$pid" 2>/dev/null
	result restore_stdin_read_before_lock $? "restore in syscall $sc; quota set: exit $rc: $out"
	echo "quota set 198.18.41.0/24 --pps 5 --iface $vrx" >&7
	exec 7>&-
	wait "$pid"; rc=$?
	[ "$rc" = 0 ] && rules_of "$vrx" | jq -e 'any(.[]; .prefix == "198.18.40.0/24") and
		any(.[]; .prefix == "198.18.41.0/24") and (length == 2)' >/dev/null
	result restore_stdin_then_applies $? "exit $rc: $(cat "$tmp/stdin.out"); rules $(rules_of "$vrx")"
	rm -f "$fifo"
}

# LeakSanitizer cannot run under ptrace: the sanitizer build (make
# SANITIZE=1 test) runs without leak checks under strace.
traced() { ASAN_OPTIONS=detect_leaks=0 in_rx strace -f -qq "$@"; }

# strace kills the CLI on entering the Nth call of a syscall. STEPS: every
# call of a traced restore that writes (map updates and deletes, the pin,
# the unlink), numbered among the bpf (or unlink) calls as strace counts.
write_steps() {	# TRACE
	awk '{
		sc = $0; sub(/^[0-9]+ +/, "", sc); sub(/\(.*/, "", sc)
		if (sc != "bpf" && sc != "unlink" && sc != "rename" && sc != "exit_group") next
		n[sc]++
		if (sc == "bpf" && !/BPF_MAP_UPDATE_ELEM|BPF_MAP_DELETE_ELEM|BPF_OBJ_PIN|BPF_MAP_CREATE|BPF_LINK_CREATE/) next
		what = sc
		if (sc == "bpf") { what = $0; sub(/^[^(]*\(BPF_/, "", what); sub(/,.*/, "", what) }
		print sc, n[sc], what
	}' "$1"
}
killed_restore() {	# SYSCALL N FILE
	traced -o /dev/null -e trace="$1" -e inject="$1:signal=SIGKILL:when=$2" \
		"$cli" restore "$3" >/dev/null 2>&1
}

# status judges no interface while any CLI holds the lock (other test runs
# on this machine take it too): ask again for up to 10 s.
cut_short_reported() {
	for _ in $(seq 1 20); do
		rl status | grep -q "restore was cut short" && return 0
		sleep 0.5
	done
	return 1
}

# Killed at each write, restore leaves A or B as quota list shows it;
# status names a cut-short restore, and restoring again completes it.
t_restore_killed() {
	local ra rb trace=$tmp/trace steps=() step sc n what k=0 why now
	rl detach "$vrx" >/dev/null 2>&1
	rl restore "$tmp/a.rules" >/dev/null 2>"$tmp/err" && ra=$(rules_of "$vrx") &&
		rl restore "$tmp/b.rules" >/dev/null 2>>"$tmp/err" && rb=$(rules_of "$vrx") &&
		rl restore "$tmp/a.rules" >/dev/null 2>>"$tmp/err" ||
		{ result restore_killed 1 "setup: $(cat "$tmp/err")"; return; }
	traced -o "$trace" -e trace=bpf,unlink,exit_group "$cli" restore "$tmp/b.rules" >/dev/null
	mapfile -t steps < <(write_steps "$trace")
	rl restore "$tmp/a.rules" >/dev/null
	result restore_steps_traced "$([ ${#steps[@]} -ge 10 ] && echo 0 || echo 1)" \
		"strace gave ${#steps[@]} write steps"
	why=()
	for step in "${steps[@]}"; do
		read -r sc n what <<<"$step"
		k=$((k + 1))
		killed_restore "$sc" "$n" "$tmp/b.rules"
		now=$(rules_of "$vrx")
		[ "$now" = "$ra" ] || [ "$now" = "$rb" ] || why+=("$sc$n $what: neither A nor B: $now")
		if [ -e "$(pin_dir "$vrx")/restoring" ]; then
			[ "$now" = "$rb" ] || why+=("$sc$n $what: pending but not B")
			cut_short_reported ||
				why+=("$sc$n $what: status does not say the restore was cut short")
		fi
		rl restore "$tmp/b.rules" >/dev/null && [ "$(rules_of "$vrx")" = "$rb" ] &&
			[ ! -e "$(pin_dir "$vrx")/restoring" ] && [ "$(state_of "$vrx")" = ok ] ||
			why+=("$sc$n $what: restoring again did not complete B: $(rl status | grep "$vrx")")
		rl restore "$tmp/a.rules" >/dev/null
	done
	check restore_killed_old_or_new "${#why[@]} == 0 && k >= 10" "${why[*]}"
}

# Killed while it attaches $vrx2: not attached, or attached with the
# file's whole rule set (written before the link pin, the commit point).
t_restore_attach_killed() {
	local f=$tmp/b2.rules trace=$tmp/trace2 steps=() step sc n what why=() want
	file_b "$vrx2" >"$f"
	traced -o "$trace" -e trace=bpf,rename,exit_group "$cli" restore "$f" >/dev/null &&
		want=$(rules_of "$vrx2") && rl detach "$vrx2" >/dev/null ||
		{ result restore_attach_killed 1 "setup"; return; }
	# the last rule write before the link, the link, its pin, the rename, exit
	mapfile -t steps < <(write_steps "$trace" | awk '
		$3 == "LINK_CREATE" { print last; linked = 1 }
		!linked && $3 == "MAP_UPDATE_ELEM" { last = $0 }
		linked && ($3 == "LINK_CREATE" || $3 == "OBJ_PIN" || $1 == "rename" || $1 == "exit_group")')
	for step in "${steps[@]}"; do
		read -r sc n what <<<"$step"
		killed_restore "$sc" "$n" "$f"
		if [ -e "$(pin_dir "$vrx2")/link" ]; then
			[ "$(rules_of "$vrx2")" = "$want" ] && [ "$(state_of "$vrx2")" = ok ] ||
				why+=("$sc$n $what: attached without the file's rules")
		else
			for _ in $(seq 1 50); do
				[ -z "$(xdp_prog_id "$vrx2")" ] && break
				sleep 0.1
			done
			[ -z "$(xdp_prog_id "$vrx2")" ] || why+=("$sc$n $what: XDP program left")
		fi
		rl detach "$vrx2" >/dev/null 2>&1
	done
	check restore_attach_killed "${#why[@]} == 0 && ${#steps[@]} >= 4" \
		"${#steps[@]} steps: ${why[*]}"
}

# ---- Prometheus ----------------------------------------------------------
metric() {	# TEXT NAME{LABELS}: the value of one sample
	awk -v s="$2" '$1 == s { print $2 }' <<<"$1"
}

# What rule 198.18.10.0/24 judged, passed + dropped, from Prometheus.
rule_judged() {
	rl stats --prometheus --iface "$vrx" | awk -v i="$vrx" '
		$1 == "xdp_ratelimit_rule_packets_total{ifname=\"" i "\",rule=\"198.18.10.0/24\",scope=\"\",verdict=\"passed\"}" ||
		$1 == "xdp_ratelimit_rule_packets_total{ifname=\"" i "\",rule=\"198.18.10.0/24\",scope=\"\",verdict=\"dropped\"}" { n += $2 }
		END { print n + 0 }'
}
t_stats_prometheus() {
	local out rc n r0
	rl restore "$tmp/b.rules" >/dev/null
	r0=$(rule_judged)
	send --src 198.18.10.1 --sources 5 --count 100
	out=$(rl stats --prometheus --iface "$vrx" --top 3); rc=$?
	promtool check metrics <<<"$out" >/dev/null 2>&1
	result stats_prometheus_promtool $? "$(promtool check metrics <<<"$out" 2>&1 | head -5)"
	n=$(grep -c "^xdp_ratelimit_source_packets_total{" <<<"$out")
	[ "$rc" = 0 ] &&
		[ "$(metric "$out" "xdp_ratelimit_packets_total{ifname=\"$vrx\",verdict=\"passed\"}")" = "$(total passed_packets)" ] &&
		[ "$(metric "$out" "xdp_ratelimit_packets_total{ifname=\"$vrx\",verdict=\"dropped\"}")" = "$(total dropped_packets)" ] &&
		[ "$(metric "$out" "xdp_ratelimit_sources_max{ifname=\"$vrx\"}")" = 65536 ] &&
		[ "$(metric "$out" "xdp_ratelimit_refused_sources_max{ifname=\"$vrx\"}")" = 16384 ] &&
		[ "$(metric "$out" "xdp_ratelimit_source_packets_total{ifname=\"$vrx\",source=\"198.18.10.1\",rule=\"198.18.10.0/24\",verdict=\"dropped\"}")" = "$(src_stat 198.18.10.1 dropped_packets)" ] &&
		[ "$n" = 6 ] && grep -q "^# TYPE xdp_ratelimit_sources gauge$" <<<"$out"
	result stats_prometheus_values $? "exit $rc, $n source series (want 3 x 2):"$'\n'"$out"
	# per rule: the 100 frames its rule judged, a pair of series per rule
	# (4 rules, the default's two halves: 6)
	n=$(grep -c '^xdp_ratelimit_rule_packets_total{' <<<"$out")
	[ "$(( $(rule_judged) - r0 ))" = 100 ] && [ "$n" = 12 ] &&
		grep -q '^# TYPE xdp_ratelimit_rule_bytes_total counter$' <<<"$out"
	result stats_prometheus_rules $? "rule 198.18.10.0/24 judged $r0 before, $(rule_judged) after 100 frames; $n rule series (want 6 x 2):"$'\n'"$(grep '^xdp_ratelimit_rule_' <<<"$out")"
	out=$(rl stats --prometheus --json 2>&1); rc=$?
	[ "$rc" = 2 ] && [[ $out == *"one of --json and --prometheus"* ]]
	result stats_prometheus_json_refused $? "exit $rc: $out"
}

exporter_start() {	# LOG ARGS...: start it in rx; $! is the exporter
	local log=$1
	shift
	nsenter --net="/run/netns/$rx" "$cli" exporter "$@" >"$log" 2>&1 &
	bg+=($!)
	for _ in $(seq 1 100); do
		grep -qs "^serving " "$log" && return 0
		kill -0 "$!" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
scrape() { in_rx curl -sf --max-time 5 "http://127.0.0.1:$port/metrics"; }

t_exporter() {
	local log=$tmp/exporter.log pid out rc bad=() i
	exporter_start "$log" --listen "127.0.0.1:$port" --top 2 ||
		{ result exporter_serves 1 "did not start: $(cat "$log")"; return; }
	pid=${bg[-1]}
	out=$(scrape); rc=$?
	[ "$rc" = 0 ] && promtool check metrics <<<"$out" >/dev/null 2>&1 &&
		[ "$(metric "$out" "xdp_ratelimit_packets_total{ifname=\"$vrx\",verdict=\"passed\"}")" = "$(total passed_packets)" ] &&
		[ "$(grep -c "^xdp_ratelimit_source_packets_total{ifname=\"$vrx\"," <<<"$out")" = 4 ]
	result exporter_serves_metrics $? "curl exit $rc: $(promtool check metrics <<<"$out" 2>&1 | head -3)"
	# only the address given: nothing on the veth's address, nor 0.0.0.0
	in_rx ss -Hltn "sport = :$port" | awk '{ print $4 }' | grep -qvx "127.0.0.1:$port"
	local others=$?
	in_rx curl -s --max-time 2 "http://198.18.200.2:$port/metrics" >/dev/null
	local rc2=$?
	[ "$others" != 0 ] && [ "$rc2" = 7 ]
	result exporter_binds_only_its_address $? "listeners: $(in_rx ss -Hltn "sport = :$port"), curl on the veth address exit $rc2"
	# concurrent scrapes, each complete
	local pids=()
	for i in $(seq 1 8); do
		scrape >"$tmp/scrape.$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in $(seq 1 8); do
		promtool check metrics <"$tmp/scrape.$i" >/dev/null 2>&1 &&
			grep -q "^xdp_ratelimit_packets_total{ifname=\"$vrx\"" "$tmp/scrape.$i" ||
			bad+=("scrape $i")
	done
	check exporter_concurrent_scrapes "${#bad[@]} == 0" "${bad[*]}"
	# garbage, a request never finished, and clients gone mid-response
	in_rx python3 - "$port" <<'EOF'
import socket, struct, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"\x16\x03\x01\x02\x00garbage\r\n\r\n")
s.recv(100)
s.close()
idle = socket.create_connection(("127.0.0.1", port))
idle.sendall(b"GET /metr")
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    s.recv(1)
    # reset: the server's next write fails
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
EOF
	out=$(in_rx curl -s --max-time 5 -w '\n%{http_code}' "http://127.0.0.1:$port/nothing")
	kill -0 "$pid" 2>/dev/null && scrape | promtool check metrics >/dev/null 2>&1 &&
		[ "${out##*$'\n'}" = 404 ]
	result exporter_survives_bad_clients $? "alive: $(kill -0 "$pid" 2>&1 && echo yes); $(tail -3 "$log")"
	# a busy port fails at once, before serving
	local log2=$tmp/exporter2.log
	in_rx timeout 5 "$cli" exporter --listen "127.0.0.1:$port" >"$log2" 2>&1; rc=$?
	[ "$rc" = 1 ] && grep -q "Address already in use" "$log2" && ! grep -q serving "$log2"
	result exporter_busy_port $? "exit $rc: $(cat "$log2")"
	in_rx timeout 5 "$cli" exporter --listen "localhost:$port" >"$log2" 2>&1; rc=$?
	[ "$rc" = 2 ] && grep -q "numeric address" "$log2"
	result exporter_bad_address $? "exit $rc: $(cat "$log2")"
	in_rx timeout 5 "$cli" exporter --listen "198.18.99.1:$port" >"$log2" 2>&1; rc=$?
	[ "$rc" = 1 ] && grep -q "Cannot assign requested address" "$log2"
	result exporter_foreign_address $? "exit $rc: $(cat "$log2")"
	kill -TERM "$pid"; wait "$pid"; rc=$?
	result exporter_stops_on_sigterm "$rc" "exit $rc"
}

# Slow clients cannot starve a scrape: 100 half-open connections from one
# address (it holds at most 16 of the slots, the rest are refused) and 100
# from 100 addresses (each holds one of 512); a scrape still answers within
# a second, and the server drops them once idle for 5 s.
t_exporter_slow_clients() {
	local log=$tmp/exporter-slow.log addr=198.18.200.2 pid out
	# 198.18.202.0/24 all local to rx: the clients' addresses
	in_rx ip route add local 198.18.202.0/24 dev lo ||
		{ result exporter_slow_clients 1 "cannot add the clients' addresses"; return; }
	exporter_start "$log" --listen "$addr:$port" ||
		{ result exporter_slow_clients 1 "did not start: $(cat "$log")"; return; }
	pid=${bg[-1]}
	out=$(in_rx python3 "$here/half_open.py" "$addr" "$port" 16 "$tmp/slow.body")
	jq -e '.held_one == 16 and .held_many == 100' <<<"$out" >/dev/null
	result exporter_per_address_limit $? "$out"
	jq -e '.curl == 0 and .code == 200 and .seconds < 1' <<<"$out" >/dev/null &&
		promtool check metrics <"$tmp/slow.body" >/dev/null 2>&1
	result exporter_scrape_beside_half_open $? "$out; $(promtool check metrics <"$tmp/slow.body" 2>&1 | head -3)"
	jq -e '.left == 0 and .dropped_after <= 12' <<<"$out" >/dev/null
	result exporter_drops_idle_clients $? "$out"
	# about 200 connections refused or dropped: 10 lines a minute say so
	local said
	said=$(grep -c "^xdp-ratelimit: exporter: " "$log")
	check exporter_log_bounded "said >= 1 && said <= 10" "$said lines: $(tail -3 "$log")"
	kill -TERM "$pid"; wait "$pid"
	in_rx ip route del local 198.18.202.0/24 dev lo
}

# One reading of the maps serves every scrape of the next second, and the
# exporter reads through read-only map fds: strace counts the readings
# (each opens the counters of every interface once) and their flags.
t_exporter_reads() {
	local log=$tmp/exporter-reads.log trace=$tmp/exporter.strace pid spid i
	local start end scrapes readings writable tasks
	# an interface of ours to read, when run alone
	[ -e "$(pin_dir "$vrx")" ] || rl attach "$vrx" >/dev/null
	exporter_start "$log" --listen "127.0.0.1:$port" ||
		{ result exporter_reads 1 "did not start: $(cat "$log")"; return; }
	pid=${bg[-1]}
	strace -f -e trace=bpf -e signal=none -o "$trace" -p "$pid" 2>"$tmp/strace.err" &
	spid=$!
	bg+=("$spid")
	# every thread attached before the burst: strace says so for each
	tasks=$(ls "/proc/$pid/task" | wc -l)
	attached() {	# "Process N attached with T threads", or a line each
		grep -q "attached with $tasks threads" "$tmp/strace.err" ||
			[ "$(grep -c attached "$tmp/strace.err")" -ge "$tasks" ]
	}
	within 100 attached ||
		{ result exporter_reads 1 "strace: $(cat "$tmp/strace.err")"; kill "$spid" "$pid"; return; }
	# four scrapers in a loop for 2.5 s
	local scrapers=()
	start=$(date +%s%N)
	for i in 1 2 3 4; do
		( n=0; while [ $(( $(date +%s%N) - start )) -lt 2500000000 ]; do
			scrape >/dev/null && n=$((n + 1)); done; echo "$n" >"$tmp/scrapes.$i" ) &
		scrapers+=($!)
	done
	wait "${scrapers[@]}"
	end=$(date +%s%N)
	kill "$spid"; wait "$spid" 2>/dev/null
	scrapes=$(cat "$tmp"/scrapes.* | paste -sd+ | bc)
	readings=$(grep -c "BPF_OBJ_GET, {pathname=\"$(pin_dir "$vrx")/counters\"" "$trace")
	# a reading each second at most, and at least one per second scraped
	check exporter_one_reading_per_second "readings >= 2 && readings <= 2 + (end - start) / 1000000000 && scrapes > 2 * readings" \
		"$readings readings for $scrapes scrapes in $(( (end - start) / 1000000 )) ms"
	# map pins opened read-only (a link needs read-write: not a map)
	writable=$(grep 'BPF_OBJ_GET, ' "$trace" | grep -v 'BPF_F_RDONLY' | grep -v '/link"')
	[ "$readings" -gt 0 ] && [ -z "$writable" ]
	result exporter_read_only_fds $? "$(head -3 <<<"$writable")"
	kill -TERM "$pid"; wait "$pid"
}

# A name Linux allows but UTF-8 does not (0xff), with a control character
# (ESC), through every output: JSON and Prometheus stay valid (the byte as
# U+00FF), the terminal gets \xff and \x1b, never the bytes.
t_names() {
	local odd=v$'\xff\x1b'$id peer=${id}e json=vÿ$'\x1b'$id shown="v\\xff\\x1b$id"
	local log=$tmp/exporter-names.log out rc pid
	rx_ifaces+=("$odd")
	setup_link "$peer" "$odd" 204 &&
		rl attach "$odd" >/dev/null &&
		rl quota set 198.18.0.0/15 --pps 1000 --iface "$odd" >/dev/null ||
		{ result names_attach 1 "cannot attach to the odd name"; return; }
	# (ip -j writes the name's ESC raw, which jq refuses: mac_of cannot read it)
	in_tx "$gen" --dev "$peer" --dst-mac "$(ip -n "$rx" -br link show dev "$odd" | awk '{ print $3 }')" \
		--src 198.18.9.1 --count 5 >"$tmp/names.gen" 2>&1
	terminal_safe() {	# the text on stdin: UTF-8, no control but newline
		python3 -c 'import sys; t = sys.stdin.buffer.read().decode("utf-8"); sys.exit(any(c < " " and c != "\n" or "\x7f" <= c < "\xa0" for c in t))' 2>/dev/null
	}
	has_json_name() {	# DOC [KEY]: valid JSON whose interfaces hold the name
		jq -e --arg n "$json" '[.interfaces[] | select(.ifname == $n)] | length == 1' <<<"$1" >/dev/null
	}
	out=$(rl status 2>/dev/null); rc=$?
	[ "$rc" = 0 ] && terminal_safe <<<"$out" && grep -qF "$shown" <<<"$out"
	result names_status $? "exit $rc: $(grep -aF "$id" <<<"$out" | cat -v)"
	out=$(rl status --json 2>/dev/null)
	has_json_name "$out"
	result names_status_json $? "$(cat -v <<<"$out" | head -c 400)"
	out=$(rl stats --iface "$odd"); rc=$?
	[ "$rc" = 0 ] && terminal_safe <<<"$out" && grep -qF "$shown (ifindex" <<<"$out"
	result names_stats $? "exit $rc: $(cat -v <<<"$out" | head -3)"
	counted() {	# the frames sent reached the program (veth delivers later)
		out=$(rl stats --json --iface "$odd")
		has_json_name "$out" &&
			[ "$(jq -r --arg n "$json" '.interfaces[] | select(.ifname == $n) | .totals.passed_packets' <<<"$out")" = 5 ]
	}
	within 50 counted
	result names_stats_json $? "$(cat "$tmp/names.gen"): $(cat -v <<<"$out" | head -c 400)"
	out=$(rl stats --prometheus --iface "$odd")
	promtool check metrics <<<"$out" >/dev/null 2>&1 &&
		grep -qF "xdp_ratelimit_packets_total{ifname=\"$json\",verdict=\"passed\"}" <<<"$out"
	result names_stats_prometheus $? "$(promtool check metrics <<<"$out" 2>&1 | head -3)"
	out=$(rl quota list --json --iface "$odd")
	has_json_name "$out"
	result names_quota_list_json $? "$(cat -v <<<"$out" | head -c 400)"
	out=$(rl ban list --json --iface "$odd")
	has_json_name "$out"
	result names_ban_list_json $? "$(cat -v <<<"$out" | head -c 400)"
	out=$( (rl quota list --iface "$odd"; rl ban list --iface "$odd") 2>&1)
	terminal_safe <<<"$out" && grep -qF "$shown: 1 rule" <<<"$out" &&
		grep -qF "$shown: 0 banned sources" <<<"$out"
	result names_lists_shown $? "$(cat -v <<<"$out")"
	out=$(rl ban del 198.18.9.9 --iface "$odd" 2>&1); rc=$?
	[ "$rc" = 1 ] && terminal_safe <<<"$out" && grep -qF "not banned on $shown" <<<"$out"
	result names_error_shown $? "exit $rc: $(cat -v <<<"$out")"
	exporter_start "$log" --listen "127.0.0.1:$port" ||
		{ result names_exporter 1 "did not start: $(cat "$log")"; return; }
	pid=${bg[-1]}
	out=$(scrape); rc=$?
	[ "$rc" = 0 ] && promtool check metrics <<<"$out" >/dev/null 2>&1 &&
		grep -qF "xdp_ratelimit_packets_total{ifname=\"$json\",verdict=\"passed\"}" <<<"$out"
	result names_exporter $? "curl exit $rc: $(promtool check metrics <<<"$out" 2>&1 | head -3)"
	kill -TERM "$pid"; wait "$pid"
	rl detach "$odd" >/dev/null
}

# ---- install and the units -----------------------------------------------
t_install() {
	local d=$tmp/destdir p=/usr/local want got res
	rl restore "$tmp/b.rules" >/dev/null 2>&1 ||
		{ rl detach "$vrx" >/dev/null 2>&1; rl restore "$tmp/b.rules" >/dev/null; }
	make -s -C "$repo" install OUTPUT="$build" DESTDIR="$d" >/dev/null 2>&1
	want="$p/lib/systemd/system/xdp-ratelimit-exporter.service
$p/lib/systemd/system/xdp-ratelimit-sync@.service
$p/lib/systemd/system/xdp-ratelimit@.service
$p/sbin/xdp-ratelimit
$p/share/bash-completion/completions/xdp-ratelimit
/etc/xdp-ratelimit/IFACE.rules.example"
	[ -e "$repo/doc/xdp-ratelimit.8" ] && want+=$'\n'"$p/share/man/man8/xdp-ratelimit.8"
	got=$(cd "$d" && find . -type f | sed 's/^\.//' | sort)
	# the units name the binary and the rules files where they are
	[ "$got" = "$(sort <<<"$want")" ] && "$d$p/sbin/xdp-ratelimit" --version | grep -q "^xdp-ratelimit " &&
		[ "$(sed -n 's/^ExecStart=//p' "$d$p/lib/systemd/system/xdp-ratelimit@.service")" = "$p/sbin/xdp-ratelimit reload --if-attached %I
$p/sbin/xdp-ratelimit restore --iface %I /etc/xdp-ratelimit/%I.rules" ] &&
		grep -qx "EnvironmentFile=/etc/xdp-ratelimit/%I.sync" "$d$p/lib/systemd/system/xdp-ratelimit-sync@.service" &&
		! grep -q '@[A-Z]*@' "$d$p"/lib/systemd/system/*
	result install_files $? "installed:"$'\n'"$got"
	# the completion, as installed: commands, options, attached
	# interfaces, prefixes from quota list, subcommands of ban and its
	# banned addresses (none here)
	res=$(PATH="$d$p/sbin:$PATH" in_rx bash -c '
		. "$1"
		t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
		      _xdp_ratelimit; echo "${COMPREPLY[*]}"; }
		t xdp-ratelimit res
		t xdp-ratelimit stats --prom
		t xdp-ratelimit events --
		t xdp-ratelimit quota ""
		t xdp-ratelimit detach "$2"
		t xdp-ratelimit quota del --iface "$2" 198.18.1
		t xdp-ratelimit ban ""
		t xdp-ratelimit ban del --iface "$2" ""
		t xdp-ratelimit sy
		t xdp-ratelimit sync --int
		t xdp-ratelimit sync --redis ""
		t xdp-ratelimit stats --sort dropped-' _ \
		"$d$p/share/bash-completion/completions/xdp-ratelimit" "$vrx")
	[ "$res" = "restore
--prometheus
--iface --json --help
set del list --help
$vrx
198.18.10.0/24 198.18.11.0/24 198.18.13.7/32
list del --help
all
sync
--interval
redis:// unix:///
dropped-rate" ]
	result install_bash_completion $? "completed:"$'\n'"$res"
	# uninstall leaves a rules file of the operator's, and its directory
	echo "attach $vrx" >"$d/etc/xdp-ratelimit/$vrx.rules"
	make -s -C "$repo" uninstall OUTPUT="$build" DESTDIR="$d" >/dev/null 2>&1
	got=$(find "$d" -type f)
	[ "$got" = "$d/etc/xdp-ratelimit/$vrx.rules" ] && rm "$got" &&
		make -s -C "$repo" uninstall OUTPUT="$build" DESTDIR="$d" >/dev/null 2>&1 &&
		[ ! -e "$d/etc/xdp-ratelimit" ]
	result uninstall_removes_them $? "left: $got"
}

# systemd-analyze verify of every unit, as installed (PREFIX real, so that
# it checks the binary is there), templates and an instance of each; the
# man page is checked once the tree has it. Then the units' own command
# lines as systemd would run them (it is not PID 1 here): with only the
# capabilities the unit keeps (setpriv --bounding-set, no new privileges),
# the exporter in a read-only mount namespace of its own.
t_units() {
	local p=$tmp/prefix v=$tmp/instances u rc man=--man=no res etc=$tmp/prefix/etc/xdp-ratelimit
	local unit why=() cfg0 tot0 out pid line
	local caps=(setpriv --bounding-set -all,+bpf,+net_admin,+sys_admin --no-new-privs)
	make -s -C "$repo" install OUTPUT="$build" PREFIX="$p" CONFDIR="$etc" >/dev/null 2>&1
	mkdir -p "$v"
	for u in "$p"/lib/systemd/system/*.service; do
		u=${u##*/}
		cp "$p/lib/systemd/system/$u" "$v/${u/@./@${vrx2}.}"
	done
	[ -e "$repo/doc/xdp-ratelimit.8" ] && man=--man=yes
	res=$(cd "$p/lib/systemd/system" && MANPATH=$p/share/man: systemd-analyze verify $man ./*.service 2>&1 &&
		cd "$v" && MANPATH=$p/share/man: systemd-analyze verify $man ./*.service 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$(ls "$v" | wc -l)" = 3 ]
	result units_verify $? "$res"
	# and verify can fail: a unit naming a binary that is not there
	sed "s|$p/sbin/xdp-ratelimit|$p/sbin/nonexistent|" "$v/xdp-ratelimit@$vrx2.service" >"$tmp/broken@x.service"
	! (cd "$tmp" && systemd-analyze verify --man=no ./broken@x.service >/dev/null 2>&1)
	result units_verify_can_fail $?
	unit=$v/xdp-ratelimit@$vrx2.service
	grep -qx "CapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN CAP_SYS_ADMIN" "$unit" &&
		grep -qx "NoNewPrivileges=yes" "$unit" && ! grep -q '^ExecStop' "$unit" &&
		! grep -q '^Condition' "$unit" &&
		grep -qx "IPAddressAllow=localhost" "$v/xdp-ratelimit-exporter.service" &&
		grep -qx "ProtectSystem=strict" "$v/xdp-ratelimit-exporter.service"
	result units_hardened $? "$(grep -h -e '^Cap' -e '^NoNew' -e '^ExecStop' -e '^Condition' -e '^IPAddress' -e '^ProtectSystem' "$v"/*)"
	run_exec() {	# KEY: the unit's KEY= lines in rx, in order, as systemd would
		: >"$tmp/exec.out"
		while read -r line; do
			line=${line//%I/$vrx2}
			# shellcheck disable=SC2086
			in_rx "${caps[@]}" $line >>"$tmp/exec.out" 2>&1 || return 1
		done < <(sed -n "s/^$1=//p" "$unit")
	}
	# no file, an empty one (the example as installed), a bad one: the
	# unit fails and says why, and nothing is attached
	rl detach "$vrx2" >/dev/null 2>&1
	run_exec ExecStart && why+=("no file: started")
	grep -q "cannot read $etc/$vrx2.rules: No such file" "$tmp/exec.out" || why+=("no file: $(cat "$tmp/exec.out")")
	cp "$etc/IFACE.rules.example" "$etc/$vrx2.rules"
	run_exec ExecStart && why+=("the example: started")
	grep -q "$etc/$vrx2.rules has no command" "$tmp/exec.out" || why+=("the example: $(cat "$tmp/exec.out")")
	printf 'attach %s\nquota set default --pps 10x\n' "$vrx2" >"$etc/$vrx2.rules"
	run_exec ExecStart && why+=("a bad line: started")
	grep -q "$etc/$vrx2.rules:2: .*10x" "$tmp/exec.out" || why+=("a bad line: $(cat "$tmp/exec.out")")
	[ ! -e "$(pin_dir "$vrx2")" ] || why+=("attached")
	check unit_fails_on_bad_file "${#why[@]} == 0" "${why[*]}"
	# a good file, whose lines need no --iface: attached with its rules
	sed 's/ --iface [^ ]*//' <(file_b "$vrx2") >"$etc/$vrx2.rules"
	run_exec ExecStart && [ "$(state_of "$vrx2")" = ok ] &&
		[ "$(rules_of "$vrx2" | jq length)" = 6 ] && grep -qx "$vrx2: attached, +6 -0 ~0, 6 rules" "$tmp/exec.out"
	result unit_start_attaches $? "$(cat "$tmp/exec.out")"
	# restart: stop runs nothing, start again reloads in place (the same
	# maps: counters, bans, windows kept) and applies the file (unchanged)
	in_tx "$gen" --dev "$vtx2" --dst-mac "$(mac_of "$vrx2")" --src 198.18.10.1 --count 5 >/dev/null 2>&1
	settled 50 total passed_packets "$vrx2" >/dev/null
	cfg0=$(bpftool -j map show pinned "$(pin_dir "$vrx2")/config" | jq .id)
	tot0=$(total passed_packets "$vrx2")
	run_exec ExecStart && grep -q "^reloaded $vrx2 " "$tmp/exec.out" &&
		grep -qx "$vrx2: +0 -0 ~0, 6 rules, unchanged" "$tmp/exec.out" &&
		[ "$(bpftool -j map show pinned "$(pin_dir "$vrx2")/config" | jq .id)" = "$cfg0" ] &&
		[ "$tot0" -ge 5 ] && [ "$(total passed_packets "$vrx2")" = "$tot0" ]
	result unit_restart_reloads_in_place $? "config map $cfg0, passed $tot0 -> $(total passed_packets "$vrx2"): $(cat "$tmp/exec.out")"
	# reload: a quota set not saved is reverted, and it says which
	rl quota set 198.18.99.0/24 --pps 1 --iface "$vrx2" >/dev/null
	run_exec ExecReload && grep -qx "$vrx2: +0 -1 ~0, 6 rules" "$tmp/exec.out" &&
		grep -qx "  - 198.18.99.0/24 --pps 1" "$tmp/exec.out" && [ "$(rules_of "$vrx2" | jq length)" = 6 ]
	result unit_reload_reverts_unsaved $? "$(cat "$tmp/exec.out")"
	# save --to-unit keeps it: the file the unit reads, whole (in an
	# overlay of /etc in a mount namespace of its own: the host's /etc
	# stays as it is)
	rl quota set 198.18.99.0/24 --pps 1 --iface "$vrx2" >/dev/null
	mkdir -p "$tmp/ov"
	out=$(in_rx unshare -m --propagation private bash -c '
		mount -t tmpfs tmpfs "$1" && mkdir "$1/u" "$1/w" &&
			mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/u,workdir=$1/w" /etc || exit 9
		"$2" save --iface "$3" --to-unit || exit 1
		cmp <("$2" save --iface "$3") "/etc/xdp-ratelimit/$3.rules" && echo same
		stat -c "mode %a" "/etc/xdp-ratelimit/$3.rules"
		ls -A /etc/xdp-ratelimit | grep -c "^\."
		"$2" restore --test --iface "$3" "/etc/xdp-ratelimit/$3.rules"' _ "$tmp/ov" "$cli" "$vrx2" 2>&1)
	[ "$out" = "saved $vrx2 to /etc/xdp-ratelimit/$vrx2.rules:
  'systemctl reload xdp-ratelimit@$vrx2' applies it
same
mode 644
0
$vrx2: +0 -0 ~0, 7 rules, unchanged (test: nothing changed)" ] && [ ! -e "/etc/xdp-ratelimit/$vrx2.rules" ]
	result save_to_unit $? "$out"
	# the exporter's own line, read-only and with its capabilities, serves
	line=$(sed -n 's/^ExecStart=//p' "$v/xdp-ratelimit-exporter.service")
	line=${line//\$XDP_RATELIMIT_EXPORTER_OPTS/--listen 127.0.0.1:$((port + 1))}
	# shellcheck disable=SC2086
	nsenter --net="/run/netns/$rx" unshare -m --propagation slave bash -c '
		mount -o remount,bind,ro / && mount -o remount,bind,ro /sys &&
			mount -o remount,bind,ro /sys/fs/bpf && exec "$@"' _ \
		"${caps[@]}" $line >"$tmp/exporter.log" 2>&1 &
	pid=$!
	scrape_unit() { in_rx curl -sf --max-time 5 "http://127.0.0.1:$((port + 1))/metrics"; }
	within 100 scrape_unit >/dev/null
	out=$(scrape_unit)
	grep -q "^xdp_ratelimit_packets_total{ifname=\"$vrx2\",verdict=\"passed\"} $tot0\$" <<<"$out"
	result unit_exporter_read_only $? "$(cat "$tmp/exporter.log"; grep "$vrx2" <<<"$out" | head -3)"
	kill -TERM "$pid"; wait "$pid"
	rl detach "$vrx2" >/dev/null
	rm -rf "$p"
}

run_tests t_
lib_finish
