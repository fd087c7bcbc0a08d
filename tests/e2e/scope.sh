# shellcheck shell=bash
# e2e area: rule scope and burst on the command line: quota set/del with
# --proto, --dport, --syn and --burst, as quota list (table and JSON), save
# and restore show them, and every bad input refused with nothing changed.
# The state the CLI keeps, not the verdicts (tests/prog judge traffic).
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (fresh, quota, rl, result, check, ...); `bad` and
# `state` are tests/e2e/cli.sh's. Each test_NAME is one test.

# The rules of $vrx as one line each: prefix, proto, dport, syn, burst, pps.
scope_rules() {
	rl quota list --iface "$vrx" --json | jq -r '.interfaces[0].rules[] |
		[.prefix, (.proto | tostring), (.dport | tostring), (.syn | tostring),
		 (.burst | tostring), (.pps | tostring)] | join(" ")'
}

# ---- set, list, JSON, del -------------------------------------------------------
test_scope_set_list_del() {
	fresh && quota default --pps 1000 &&
		quota default --proto tcp --syn --pps 20 --burst 5 &&
		quota 198.18.30.0/24 --proto udp --dport 53 --pps 50 &&
		quota 198.18.30.0/24 --proto tcp --dport 1000-2000 --pps 30 &&
		quota 2001:db8:30::/48 --proto icmpv6 --pps 10 &&
		quota 198.18.30.7 --proto 47 --pps 0 &&
		quota 198.18.30.8 --pps 100 --burst 7 ||
		{ result scope_set 1 "attach or quota set"; return; }
	local got want out json
	got=$(scope_rules)
	want="0.0.0.0/0 null null null null 1000
0.0.0.0/0 tcp null true 5 20
198.18.30.0/24 tcp 1000-2000 null null 30
198.18.30.0/24 udp 53 null null 50
198.18.30.7/32 47 null null null 0
198.18.30.8/32 null null null 7 100
::/0 null null null null 1000
::/0 tcp null true 5 20
2001:db8:30::/48 icmpv6 null null null 10"
	[ "$got" = "$want" ]
	result scope_list_json $? "quota list --json rules:"$'\n'"$got"$'\n'"want:"$'\n'"$want"
	# every rule carries the four fields, null when unset
	json=$(rl quota list --iface "$vrx" --json)
	jq -e '[.interfaces[0].rules[] | has("proto") and has("dport") and has("syn") and has("burst")] | all' \
		<<<"$json" >/dev/null
	result scope_json_fields $? "$json"
	out=$(rl quota list --iface "$vrx" --wide)
	# the last column is SYN_COOKIES (off), BURST the one before it
	[[ $out == "$vrx: 9 rules"$'\n'"PREFIX "*" SCOPE "*" PPS "*" BAN "*" BURST "*" SYN_COOKIES"$'\n'* ]] &&
		has_each -E "$out" \
			'^0\.0\.0\.0/0 +tcp syn +20 .* 5 +off$' \
			'^198\.18\.30\.0/24 +udp dport 53 +50 ' \
			'^198\.18\.30\.0/24 +tcp dport 1000-2000 +30 ' \
			'^198\.18\.30\.7/32 +proto 47 +0 ' \
			'^198\.18\.30\.8/32 +- +100 .* 7 +off$' \
			'^0\.0\.0\.0/0 +- +1000 .* - +off$'
	result scope_list_table $? "quota list printed:"$'\n'"$out"
	# set again changes the limits of that rule only: same prefix and scope
	quota default --proto tcp --syn --pps 25 --burst unlimited &&
		quota 198.18.30.8 --burst unlimited
	got=$(scope_rules | grep -E '^(0\.0\.0\.0/0 tcp|198\.18\.30\.8/32|0\.0\.0\.0/0 null)')
	want="0.0.0.0/0 null null null null 1000
0.0.0.0/0 tcp null true null 25
198.18.30.8/32 null null null null 100"
	[ "$got" = "$want" ]
	result scope_set_again $? "after set again:"$'\n'"$got"
	# del names the rule by prefix and scope; the others stay
	local rc out2
	out2=$(rl quota del 198.18.30.0/24 --proto udp --dport 53 --iface "$vrx"); rc=$?
	got=$(scope_rules | grep -c '^198\.18\.30\.0/24 ')
	[ "$rc" = 0 ] && [ "$got" = 1 ] && [[ $out2 == *"rule 198.18.30.0/24 udp dport 53 deleted"* ]] &&
		scope_rules | grep -q '^198\.18\.30\.0/24 tcp 1000-2000 '
	result scope_del_one $? "exit $rc: $out2; rules of the /24 left: $got"
	rl quota del default --proto tcp --syn --iface "$vrx" >/dev/null; rc=$?
	got=$(scope_rules | grep -c ' tcp null true ')
	[ "$rc" = 0 ] && [ "$got" = 0 ] && [ "$(scope_rules | grep -c '/0 null ')" = 2 ]
	result scope_del_default $? "exit $rc: scoped default halves left: $got"
	# the unscoped rule of a prefix is not its scoped one's
	rl quota del 198.18.30.7 --iface "$vrx" >/dev/null 2>&1; rc=$?
	[ "$rc" = 1 ] && scope_rules | grep -q '^198\.18\.30\.7/32 47 '
	result scope_del_unscoped_keeps_scoped $? "exit $rc"
}

# ---- save and restore carry scopes and bursts -------------------------------------
test_scope_save_restore() {
	fresh && quota default --pps 1000 &&
		quota default --proto tcp --syn --pps 20 --burst 5 &&
		quota 198.18.31.0/24 --proto udp --dport 53 --pps 50 &&
		quota 198.18.31.0/24 --proto tcp --dport 80-443 --syn --pps 5 &&
		quota 198.18.31.9 --pps 10 --burst 3 ||
		{ result scope_save 1 "attach or quota set"; return; }
	local saved before after out rc file
	saved=$(rl save --iface "$vrx")
	has_each -xF "$saved" \
		"quota set default --pps 20 --burst 5 --proto tcp --syn --iface $vrx" \
		"quota set 198.18.31.0/24 --pps 50 --proto udp --dport 53 --iface $vrx" \
		"quota set 198.18.31.0/24 --pps 5 --proto tcp --dport 80-443 --syn --iface $vrx" \
		"quota set 198.18.31.9/32 --pps 10 --burst 3 --iface $vrx" \
		"quota set default --pps 1000 --iface $vrx"
	result scope_save_lines $? "save printed:"$'\n'"$saved"
	before=$(scope_rules)
	# the same file again changes nothing
	out=$(rl restore - <<<"$saved"); rc=$?
	[ "$rc" = 0 ] && [[ $out == *unchanged* ]] && [ "$(scope_rules)" = "$before" ]
	result scope_restore_same $? "exit $rc: $out"
	# a file without the scoped rules deletes them, one with a new one adds it
	file=$(grep -v -- '--proto udp' <<<"$saved")
	file+=$'\n'"quota set 198.18.31.0/24 --proto icmp --pps 2 --iface $vrx"
	out=$(rl restore - <<<"$file"); rc=$?
	after=$(scope_rules)
	[ "$rc" = 0 ] && ! grep -q ' udp 53 ' <<<"$after" &&
		grep -q '^198\.18\.31\.0/24 icmp null null null 2$' <<<"$after" &&
		grep -q '^198\.18\.31\.0/24 tcp 80-443 true null 5$' <<<"$after" &&
		[ "$(grep -c ' tcp null true 5 20$' <<<"$after")" = 2 ]
	result scope_restore_replaces $? "exit $rc: $out; rules:"$'\n'"$after"
	# and back: the saved file gives the rules it was saved from
	rl restore - <<<"$saved" >/dev/null; rc=$?
	[ "$rc" = 0 ] && [ "$(scope_rules)" = "$before" ]
	result scope_restore_back $? "exit $rc: rules:"$'\n'"$(scope_rules)"
	# a del line names a scope; a scope with no rule above is refused, FILE:LINE
	file=$saved$'\n'"quota del 198.18.31.0/24 --proto udp --dport 54 --iface $vrx"
	out=$(rl restore - <<<"$file" 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ $out == *"<stdin>:"*"no rule for 198.18.31.0/24 udp dport 54"* ]] &&
		[ "$(scope_rules)" = "$before" ]
	result scope_restore_del_unknown $? "exit $rc: $out"
}

# ---- the limit of RL_MAX_SCOPES scopes ---------------------------------------------
test_scope_limit() {
	fresh --default-pps 100 || { result scope_limit 1 "attach"; return; }
	local p ok=0 err rc before
	for p in $(seq 1001 1016); do
		quota 198.18.32.0/24 --proto udp --dport "$p" --pps 5 || ok=1
	done
	result scope_sixteen $ok "16 scopes set"
	before=$(scope_rules)
	err=$(rl quota set 198.18.32.0/24 --proto udp --dport 2000 --pps 5 --iface "$vrx" 2>&1 >/dev/null); rc=$?
	[ "$rc" = 1 ] && [[ $err == "xdp-ratelimit: "*"16 scopes"* ]] && [ "$(scope_rules)" = "$before" ]
	result scope_seventeenth_refused $? "exit $rc: $err"
	# a scope in use takes more rules; a freed one is reused
	quota 198.18.33.0/24 --proto udp --dport 1001 --pps 5 &&
		rl quota del 198.18.32.0/24 --proto udp --dport 1005 --iface "$vrx" >/dev/null &&
		quota 198.18.32.0/24 --proto udp --dport 2000 --pps 5
	result scope_entry_reused $? "$(scope_rules | tail -3)"
	# restore of a file with 17 scopes is refused before anything changes
	local file
	before=$(scope_rules)
	file=$(rl save --iface "$vrx")$'\n'"quota set 198.18.34.0/24 --proto tcp --syn --pps 1 --iface $vrx"
	err=$(rl restore - <<<"$file" 2>&1 >/dev/null); rc=$?
	[ "$rc" = 1 ] && [[ $err == *"more than 16 scopes"* ]] && [ "$(scope_rules)" = "$before" ]
	result scope_restore_too_many $? "exit $rc: $err"
}

# ---- bad input: exit status, the allowed values, nothing changed --------------------
test_scope_bad_input() {
	fresh --default-pps 10 && quota 198.18.35.0/24 --proto tcp --syn --pps 5 ||
		{ result scope_bad_input 1 "attach"; return; }
	local q=(quota set) i=(--iface "$vrx")
	state0=$(state)
	bad dport_no_proto 2 "--proto tcp or --proto udp" rl "${q[@]}" default --dport 53 --pps 5 "${i[@]}"
	bad dport_icmp 2 "--proto tcp or --proto udp" rl "${q[@]}" default --proto icmp --dport 53 --pps 5 "${i[@]}"
	bad syn_no_proto 2 "--syn needs --proto tcp" rl "${q[@]}" default --syn --pps 5 "${i[@]}"
	bad syn_udp 2 "--syn needs --proto tcp" rl "${q[@]}" default --proto udp --syn --pps 5 "${i[@]}"
	bad port_zero 2 "1 to 65535" rl "${q[@]}" default --proto udp --dport 0 --pps 5 "${i[@]}"
	bad port_too_big 2 "1 to 65535" rl "${q[@]}" default --proto udp --dport 65536 --pps 5 "${i[@]}"
	bad port_reversed 2 "the first no higher" rl "${q[@]}" default --proto tcp --dport 2000-1000 --pps 5 "${i[@]}"
	bad port_garbage 2 "1 to 65535" rl "${q[@]}" default --proto tcp --dport http --pps 5 "${i[@]}"
	bad proto_unknown 2 "tcp, udp, icmp, icmpv6" rl "${q[@]}" default --proto sctp --pps 5 "${i[@]}"
	bad proto_too_big 2 "0 to 255" rl "${q[@]}" default --proto 256 --pps 5 "${i[@]}"
	bad burst_zero 2 "unlimited" rl "${q[@]}" default --burst 0 "${i[@]}"
	bad burst_garbage 2 "unlimited" rl "${q[@]}" default --burst lots "${i[@]}"
	bad burst_negative 2 "unlimited" rl "${q[@]}" default --burst -1 "${i[@]}"
	bad burst_too_big 2 "4294967294" rl "${q[@]}" default --burst 4294967295 "${i[@]}"
	bad del_dport_no_proto 2 "--proto tcp or --proto udp" rl quota del default --dport 53 "${i[@]}"
	bad del_burst 2 "--burst" rl quota del default --burst 5 "${i[@]}"
	bad del_no_such_scope 1 "no rule for 198.18.35.0/24 udp dport 53" \
		rl quota del 198.18.35.0/24 --proto udp --dport 53 "${i[@]}"
	bad del_scope_other_prefix 1 "no rule for 198.18.36.0/24 tcp syn" \
		rl quota del 198.18.36.0/24 --proto tcp --syn "${i[@]}"
	bad del_unscoped_of_scoped 1 "no rule for 198.18.35.0/24" \
		rl quota del 198.18.35.0/24 "${i[@]}"
	bad scope_only 2 "--burst" rl "${q[@]}" default --proto tcp "${i[@]}"
}

# ---- scoped rules covering IPv6 need --ipv6-prefix 96 or shorter ---------------------
test_scope_ipv6_prefix() {
	fresh --ipv6-prefix 128 --default-pps 10 || { result scope_ipv6_prefix 1 "attach"; return; }
	local q=(quota set) i=(--iface "$vrx")
	state0=$(state)
	bad scope_v6_tracked_128 1 "--ipv6-prefix 96 or shorter" \
		rl "${q[@]}" 2001:db8::/32 --proto tcp --syn --pps 5 "${i[@]}"
	bad scope_default_tracked_128 1 "--ipv6-prefix 96 or shorter" \
		rl "${q[@]}" default --proto udp --dport 53 --pps 5 "${i[@]}"
	# IPv4 prefixes are fine, and so is an unscoped IPv6 rule
	quota 198.18.37.0/24 --proto tcp --syn --pps 5 && quota 2001:db8::/32 --pps 5
	result scope_v4_with_ipv6_prefix_128 $? "quota set"
	fresh --ipv6-prefix 96 && quota default --proto tcp --syn --pps 5
	result scope_default_tracked_96 $? "quota set default --proto tcp --syn on /96"
}

# ---- the maps: one `scopes` entry per scope, the lowest free, freed with ------------
# its last rule; config.scopes_used; the scoped tries
# Entries of `scopes` in use, as "INDEX:PROTO:FLAGS:LO-HI" words.
scope_entries() {
	bpftool -j map dump pinned "$pins/$vrx/scopes" | jq -r '.[] | (.formatted // .) |
		select(.value.rank != 0) |
		"\(.key):\(.value.proto):\(.value.flags):\(.value.dport_lo)-\(.value.dport_hi)"' |
		paste -sd ' '
}
scopes_used() {
	bpftool -j map dump pinned "$pins/$vrx/config" | jq -r '.[0] | (.formatted // .) | .value.scopes_used'
}
scoped_tries() {	# "FAMILY:PREFIXLEN:SCOPE" of every scoped trie entry
	local f
	for f in v4 v6; do
		bpftool -j map dump pinned "$pins/$vrx/scoped_$f" | jq -r --arg f "$f" '.[] |
			(.formatted // .) | "\($f):\(.key.prefixlen):\(.key.scope)"'
	done | sort | paste -sd ' '
}
test_scope_maps() {
	fresh && quota default --pps 1000 && quota default --proto tcp --syn --pps 5 ||
		{ result scope_maps 1 "attach or quota set"; return; }
	local e u t why=()
	e=$(scope_entries) u=$(scopes_used) t=$(scoped_tries)
	[ "$e" = "0:6:1:0-0" ] && [ "$u" = 1 ] && [ "$t" = "v4:32:0 v6:32:0" ] ||
		why+=("default tcp syn: entries '$e', scopes_used $u, tries '$t'")
	quota 198.18.38.0/24 --proto udp --dport 53 --pps 5 &&
		quota 198.18.39.0/24 --proto tcp --syn --pps 5
	e=$(scope_entries) u=$(scopes_used) t=$(scoped_tries)
	[ "$e" = "0:6:1:0-0 1:17:2:53-53" ] && [ "$u" = 2 ] &&
		[ "$t" = "v4:32:0 v4:56:0 v4:56:1 v6:32:0" ] ||
		why+=("two scopes: entries '$e', scopes_used $u, tries '$t'")
	rl quota del default --proto tcp --syn --iface "$vrx" >/dev/null
	e=$(scope_entries) u=$(scopes_used)
	[ "$e" = "0:6:1:0-0 1:17:2:53-53" ] && [ "$u" = 2 ] ||
		why+=("entry 0 still used by the /24: '$e', scopes_used $u")
	rl quota del 198.18.39.0/24 --proto tcp --syn --iface "$vrx" >/dev/null
	e=$(scope_entries) u=$(scopes_used)
	[ "$e" = "1:17:2:53-53" ] && [ "$u" = 2 ] ||
		why+=("entry 0 freed with its last rule: '$e', scopes_used $u")
	quota 198.18.40.0/24 --proto icmp --pps 5
	e=$(scope_entries) u=$(scopes_used)
	[ "$e" = "0:1:0:0-0 1:17:2:53-53" ] && [ "$u" = 2 ] ||
		why+=("the lowest free entry: '$e', scopes_used $u")
	rl quota del 198.18.38.0/24 --proto udp --dport 53 --iface "$vrx" >/dev/null
	e=$(scope_entries) u=$(scopes_used)
	[ "$e" = "0:1:0:0-0" ] && [ "$u" = 1 ] ||
		why+=("the highest freed: '$e', scopes_used $u")
	rl quota del 198.18.40.0/24 --proto icmp --iface "$vrx" >/dev/null
	e=$(scope_entries) u=$(scopes_used) t=$(scoped_tries)
	[ -z "$e" ] && [ "$u" = 0 ] && [ -z "$t" ] ||
		why+=("none left: '$e', scopes_used $u, tries '$t'")
	result scope_maps "${#why[@]}" "${why[*]}"
	# restore brings the maps to the file's scopes the same way
	rl restore - >/dev/null <<<"$(rl save --iface "$vrx")
quota set 198.18.41.0/24 --proto tcp --dport 80 --syn --pps 5 --iface $vrx"
	e=$(scope_entries) u=$(scopes_used) t=$(scoped_tries)
	[ "$e" = "0:6:3:80-80" ] && [ "$u" = 1 ] && [ "$t" = "v4:56:0" ]
	result scope_maps_restore $? "entries '$e', scopes_used $u, tries '$t'"
}

# ---- the table's entries: a source's scoped window is one more, and said ----------
test_scope_windows_counted() {
	fresh && quota default --pps 1000 && quota default --proto tcp --syn --pps 50 ||
		{ result scope_windows_counted 1 "attach or quota set"; return; }
	local j p why=()
	# 198.18.32.1: UDP (its own window) and SYNs (a SYN window);
	# 198.18.32.2: SYNs only
	send --src 198.18.32.1 --count 5 >/dev/null &&
		send --src 198.18.32.1 --count 5 --tcp-syn >/dev/null &&
		send --src 198.18.32.2 --count 5 --tcp-syn >/dev/null
	j=$(stats_json "$vrx" 0)
	jq -e '.interfaces[0] | .tracked_sources == 3 and .scoped_windows == 2' <<<"$j" >/dev/null ||
		why+=("stats --json: $(jq -c '.interfaces[0] | {tracked_sources, scoped_windows}' <<<"$j")")
	grep -q '^sources: 3 tracked (max 65536) of which 2 scoped rules'"'"' windows, ' \
		<<<"$(rl stats --iface "$vrx" --top 0 --wide)" || why+=("stats: $(rl stats --iface "$vrx" --top 0 --wide | grep '^sources:')")
	p=$(rl stats --prometheus --iface "$vrx")
	grep -q "^xdp_ratelimit_scoped_windows{ifname=\"$vrx\"} 2$" <<<"$p" &&
		grep -q "^xdp_ratelimit_sources{ifname=\"$vrx\"} 3$" <<<"$p" ||
		why+=("prometheus: $(grep -E '^xdp_ratelimit_(sources|scoped_windows)\{' <<<"$p")")
	result scope_windows_counted "${#why[@]}" "${why[*]}"
}

# ---- a deleted scoped rule's windows go with it (no later rule in its slot
# inherits them); a restore that drops it does the same
test_scope_windows_go_with_rule() {
	fresh && quota default --pps 1000 && quota default --proto tcp --syn --pps 50 &&
		quota 198.18.33.0/24 --proto tcp --syn --pps 40 ||
		{ result scope_windows_go 1 "attach or quota set"; return; }
	local w why=()
	windows() { stats_json "$vrx" 0 | jq -c '.interfaces[0] | [.tracked_sources, .scoped_windows]'; }
	send --src 198.18.32.5 --count 5 --tcp-syn >/dev/null &&
		send --src 198.18.33.5 --count 5 --tcp-syn >/dev/null
	w=$(windows)
	[ "$w" = "[2,2]" ] || why+=("after SYNs of two sources under two SYN rules: $w, want [2,2]")
	rl quota del 198.18.33.0/24 --proto tcp --syn --iface "$vrx" >/dev/null
	w=$(windows)
	[ "$w" = "[1,1]" ] || why+=("after quota del of the /24's SYN rule: $w, want [1,1]")
	# a new scoped rule takes the freed slot: its source starts afresh
	quota 198.18.33.0/24 --proto udp --dport 53 --pps 3
	w=$(windows)
	[ "$w" = "[1,1]" ] || why+=("after a new rule in the freed slot: $w, want [1,1]")
	# restore without the default's SYN rule: its windows go
	rl restore - >/dev/null <<<"quota set default --pps 1000 --iface $vrx"
	w=$(windows)
	[ "$w" = "[0,0]" ] || why+=("after a restore without SYN rules: $w, want [0,0]")
	result scope_windows_go_with_rule "${#why[@]}" "${why[*]}"
}
