# shellcheck shell=bash
# e2e area: views: every default human view (stats, stats --watch, quota
# list, status) fits 80 columns, or $COLUMNS, or the terminal's width,
# with long IPv6 addresses, scopes and large counters; --wide shows every
# column; stats --sort orders; a scoped window under its source's row;
# each rule's counters in quota list -v and its JSON, across quota set and
# reload.
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# The CLI with no $COLUMNS (the caller's must not decide) and stdout not a
# terminal: the views' 80 columns.
rl80() { env -u COLUMNS nsenter --net="/run/netns/$rx" "$cli" "$@"; }
# The longest line of the text on stdin, escape sequences and CRs removed.
widest() { sed $'s/\e\\[[0-9;]*[A-Za-z]//g; s/\r//g' | LC_ALL=C awk '{ if (length > w) w = length } END { print w + 0 }'; }

# A long IPv6 source (tracked per /96, as scoped rules want) under a rule with
# every limit, a scoped rule and its window under the source, 300k frames
# and rule counters of 19 digits: each default view within 80 columns
# (and within $COLUMNS, or the terminal's width, when wider), --wide with
# every column.
views_setup() {
	local big
	fresh --ipv6-prefix 96 --default-pps 1000 &&
		quota 2001:db8:ffff:ffff:ffff:ffff::/96 --pps 100k --bps 125M \
			--aggregate-pps 1M --aggregate-bps 1G --new-pps 50k --new-bps 10M \
			--ban 1m --burst 500 &&
		quota 2001:db8:ffff:ffff:ffff:ffff::/96 --proto tcp --dport 80 --syn --pps 5 ||
		return 1
	send --src 2001:db8:ffff:ffff:ffff:ffff:ffff:fff1 --count 300000 >/dev/null &&
		send --src 2001:db8:ffff:ffff:ffff:ffff:ffff:fff1 --tcp-syn --count 20 \
			--dst 2001:db8:1::1 >/dev/null || return 1
	# rule counters no traffic here would reach (bpftool writes each CPU)
	big=$(printf '%016x' 1234567890123456789 | sed 's/../& /g' | tr ' ' '\n' | tac | tr '\n' ' ')
	for slot in 0 1 2 3; do
		bpftool map update pinned "$pins/$vrx/rule_counters" key $slot 0 0 0 \
			value hex $big $big $big $big || return 1
	done
}

test_views_fit() {
	local why=() out w v o=/tmp/$id.views.watch g
	tmpfiles+=("$o")
	views_setup || { result views_fit 1 "setup"; return; }
	for v in "stats --iface $vrx" "stats --sort dropped-rate --iface $vrx" \
		"stats --top 0 --iface $vrx" "quota list --iface $vrx" \
		"quota list -v --iface $vrx" "status"; do
		# shellcheck disable=SC2086
		out=$(rl80 $v 2>&1)
		w=$(widest <<<"$out")
		[ "$w" -le 80 ] || why+=("'$v' is $w columns wide:"$'\n'"$out")
	done
	# the scoped window right under its source's row
	out=$(rl80 stats --iface "$vrx")
	grep -A1 '^2001:db8:ffff:ffff:ffff:ffff::/96 ' <<<"$out" |
		grep -q '^  `- tcp dport 80 syn ' || why+=("no scoped row under its source:"$'\n'"$out")
	# counts abbreviated in the narrow view, exact with --wide
	grep -Eq '^2001:db8:ffff:ffff:ffff:ffff::/96 .* [0-9.]+k ' <<<"$out" ||
		why+=("stats: no abbreviated count")
	out=$(rl80 quota list -v --iface "$vrx")
	grep -q ' 2.47E ' <<<"$out" || why+=("quota list -v: 2 x 1234567890123456789 not as 2.47E:"$'\n'"$out")
	# --wide: every column, counts exact
	out=$(rl80 stats --iface "$vrx" --wide)
	grep -Eq '^ADDRESS +DROPPED\(pkts\) +DROPPED\(bytes\) +PASSED\(pkts\) +PASSED\(bytes\) +WINDOW\(pkts\) +WINDOW\(bytes\) +VERIFIED +RULE$' <<<"$out" &&
		[ "$(awk '$1 == "2001:db8:ffff:ffff:ffff:ffff::/96" { print $2 + $4 }' <<<"$out")" = 300000 ] ||
		why+=("stats --wide:"$'\n'"$out")
	out=$(rl80 stats --iface "$vrx" --wide --sort rate)
	grep -Eq '^ADDRESS +DROPPED\(pps\) +DROPPED\(B/s\) +PASSED\(pps\) +PASSED\(B/s\) +DROPPED\(pkts\) ' <<<"$out" ||
		why+=("stats --wide --sort rate:"$'\n'"$out")
	out=$(rl80 quota list -v --wide --iface "$vrx")
	grep -Eq '^PREFIX +SCOPE +PASSED +DROPPED +PASSED\(bytes\) +DROPPED\(bytes\) +PPS +BPS +AGGREGATE_PPS +AGGREGATE_BPS +NEW_PPS +NEW_BPS +BAN +BURST +SYN_COOKIES$' <<<"$out" &&
		grep -q ' 2469135780246913578 ' <<<"$out" || why+=("quota list -v --wide:"$'\n'"$out")
	out=$(rl80 status --wide)
	grep -Eq '^IFACE +MODE +WINDOW +BUCKETS +MAX_SRC +MEMORY +IPV6_PFX +RULES +VERIFIED +EGRESS +STATE$' <<<"$out" ||
		why+=("status --wide:"$'\n'"$out")
	# $COLUMNS wider: more columns; narrower than 80: still 80
	out=$(COLUMNS=160 rl stats --iface "$vrx")
	w=$(widest <<<"$out")
	[ "$w" -gt 80 ] && [ "$w" -le 160 ] && grep -q 'VERIFIED  RULE$' <<<"$out" ||
		why+=("COLUMNS=160: $w columns:"$'\n'"$out")
	[ "$(COLUMNS=40 rl stats --iface "$vrx" | widest)" -le 80 ] &&
		[ "$(COLUMNS=40 rl stats --iface "$vrx" | widest)" -gt 40 ] || why+=("COLUMNS=40 is not 80")
	# --watch on a terminal of 80, then of 140 columns (script's pty, its
	# size set with stty), stopped with Ctrl-C after two frames
	send_bg "$o.send" --src 2001:db8:ffff:ffff:ffff:ffff:ffff:fff2 --rate 200 --duration 4
	g=$!
	for w in 80 140; do
		script -qec "stty cols $w rows 50; env -u COLUMNS timeout --preserve-status -s INT 2.5 nsenter --net=/run/netns/$rx $cli stats --iface $vrx --watch 1" \
			/dev/null >"$o"
		v=$(widest <"$o")
		[ "$(grep -c $'\e\[H' "$o")" -ge 2 ] && [ "$v" -le "$w" ] || why+=("--watch on $w columns: $v wide")
		if [ "$w" = 80 ]; then
			! grep -q 'RULE' "$o" || why+=("--watch on 80 columns shows RULE")
		else
			grep -q 'VERIFIED  RULE' "$o" || why+=("--watch on 140 columns: no RULE column")
		fi
	done
	wait "$g"
	result views_fit "${#why[@]}" "$(printf '%s\n' "${why[@]}")"
}

# stats --sort: A dropped most since attach (long ago), B is being
# dropped now, C passed most; --watch sorts by the drop rate now.
test_stats_sort() {
	local a=198.18.70.1 b=198.18.70.2 c=198.18.70.3 why=() got f=/tmp/$id.sortb g o=/tmp/$id.sortwatch
	tmpfiles+=("$o")
	fresh && quota 198.18.70.0/24 --pps 10 && quota "$c" --pps unlimited ||
		{ result stats_sort 1 "attach or quota set"; return; }
	send --src "$a" --count 600 >/dev/null &&
		send --src "$c" --count 1000 >/dev/null || { result stats_sort 1 "send"; return; }
	order() { rl stats --iface "$vrx" --json "$@" | jq -r '[.interfaces[0].sources[].address] | join(" ")'; }
	got=$(order --sort dropped); [ "$got" = "$a $c" ] || why+=("dropped: $got")
	got=$(order); [ "$got" = "$a $c" ] || why+=("default: $got")
	got=$(order --sort passed); [ "$got" = "$c $a" ] || why+=("passed: $got")
	# B: 10 of 100 a second pass, for 8 s
	send_bg "$f" --src "$b" --rate 100 --duration 8
	g=$!
	b_dropped() { [ "$(src_stat "$b" dropped_packets)" -gt 0 ]; }
	within 30 b_dropped || why+=("B never dropped")
	got=$(order --sort dropped-rate); [ "${got%% *}" = "$b" ] || why+=("dropped-rate: $got")
	got=$(order --sort rate); [ "${got%% *}" = "$b" ] || why+=("rate: $got")
	rl stats --iface "$vrx" --json --sort dropped-rate | jq -e --arg b "$b" \
		'.interfaces[0].sources[0] | .address == $b and .rates.dropped_pps >= 50' >/dev/null ||
		why+=("dropped-rate: no rates in the JSON")
	# --watch: frames of JSON lines; the second has rates, B first
	timeout --preserve-status -s INT 2.5 nsenter --net="/run/netns/$rx" "$cli" stats \
		--iface "$vrx" --watch 1 --json >"$o"
	sed -n 2p "$o" | jq -e --arg b "$b" '.interfaces[0].sources[0].address == $b' >/dev/null ||
		why+=("--watch: $(sed -n 2p "$o" | jq -c '[.interfaces[0].sources[] | [.address, .rates.dropped_pps]]')")
	wait "$g"
	result stats_sort "${#why[@]}" "${why[*]}"
}

# Each rule's counters: quota list -v and --json, kept across quota set
# and reload (in place and onto new maps), zero for a rule made anew.
test_quota_list_counters() {
	local a=198.18.71.1 rule=198.18.71.0/24 why=() out
	fresh --default-pps 1000 && quota "$rule" --pps 10 ||
		{ result quota_list_counters 1 "attach or quota set"; return; }
	send --src "$a" --count 30 >/dev/null || { result quota_list_counters 1 "send"; return; }
	counted() { rl quota list -v --iface "$vrx" --json | jq -r --arg r "$rule" '.interfaces[0].rules[] |
		select(.prefix == $r) | "\(.passed_packets) \(.passed_bytes) \(.dropped_packets) \(.dropped_bytes)"'; }
	[ "$(counted)" = "10 600 20 1200" ] || why+=("after 30 frames: $(counted)")
	out=$(rl quota list -v --iface "$vrx")
	grep -Eq '^PREFIX +SCOPE +PASSED +DROPPED +LIMITS$' <<<"$out" &&
		grep -Eq "^${rule//./\\.} +- +10 +20 +--pps 10$" <<<"$out" || why+=("quota list -v:"$'\n'"$out")
	grep -q 'PASSED' <<<"$(rl quota list --iface "$vrx")" && why+=("quota list without -v shows counters")
	rl quota list --iface "$vrx" --json | jq -e '.interfaces[0].rules[] | has("passed_packets")' >/dev/null &&
		why+=("quota list --json without -v has counters")
	quota "$rule" --pps 20 && [ "$(counted)" = "10 600 20 1200" ] || why+=("after quota set: $(counted)")
	rl reload "$vrx" >/dev/null && [ "$(counted)" = "10 600 20 1200" ] || why+=("after reload: $(counted)")
	rl reload "$vrx" --window 2s >/dev/null && [ "$(counted)" = "10 600 20 1200" ] ||
		why+=("after reload onto new maps: $(counted)")
	# a fresh window of 2 s at 20 pps: 40 of 50 pass
	send --src "$a" --count 50 >/dev/null
	[ "$(counted)" = "50 3000 30 1800" ] || why+=("counting on after the reloads: $(counted), want 50 3000 30 1800")
	rl quota del "$rule" --iface "$vrx" >/dev/null && quota "$rule" --pps 10 &&
		[ "$(counted)" = "0 0 0 0" ] || why+=("a rule made anew: $(counted)")
	result quota_list_counters "${#why[@]}" "${why[*]}"
}
