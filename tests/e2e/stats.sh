# shellcheck shell=bash
# e2e area: stats: the busiest sources, the human table, --watch.
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# ---- stats: the busiest sources, by dropped then passed packets ---------------------
test_stats_top() {
	fresh && quota 198.18.22.0/24 --pps 3 && quota 198.18.22.2 --pps 6 &&
		quota 198.18.22.10 --pps 6 && quota 198.18.22.12 --pps unlimited ||
		{ result stats_top_default_10 1 "attach or quota set"; return; }
	# LAST:SENT from 198.18.22.LAST, each source at once: .2 and .10 pass 6,
	# .12 everything, the others 3. Dropped: .1 and .2 20, .3 to .9 18 to 12,
	# .10 and .11 11 (.10 ranks first: it passed more), .12 and .13 none.
	local a got want out
	for a in 1:23 2:26 3:21 4:20 5:19 6:18 7:17 8:16 9:15 10:17 11:14 12:50 13:3; do
		send --src "198.18.22.${a%:*}" --count "${a#*:}" >/dev/null
	done
	want=$(printf '198.18.22.%s ' 2 1 3 4 5 6 7 8 9 10)
	got=$(rl stats --iface "$vrx" --json |
		jq -r '[.interfaces[0].sources[].address] | join(" ")')
	[ "$got" = "${want% }" ]
	result stats_top_default_10 $? "stats without --top listed $got (want $want)"
	got=$(rl stats --iface "$vrx" --json --top 3 | jq -c '[.interfaces[0].sources[] |
		[.address, .passed_packets, .dropped_packets]]')
	[ "$got" = '[["198.18.22.2",6,20],["198.18.22.1",3,20],["198.18.22.3",3,18]]' ]
	result stats_top_3 $? "stats --top 3: $got"
	# the human table, every column: totals, then the sources under
	# aligned headers
	out=$(rl stats --iface "$vrx" --wide)
	[[ $out == "$vrx (ifindex "* ]] && grep -Eq '^ +PACKETS +BYTES$' <<<"$out" &&
		grep -Eq '^passed +92 +5520$' <<<"$out" && grep -Eq '^dropped +167 +10020$' <<<"$out" &&
		grep -Eq '^ADDRESS +DROPPED\(pkts\) +DROPPED\(bytes\) +PASSED\(pkts\) +PASSED\(bytes\) +WINDOW\(pkts\) +WINDOW\(bytes\) +VERIFIED +RULE$' <<<"$out" &&
		[ "$(grep -c '^198\.18\.22\.' <<<"$out")" = 10 ] &&
		[ "$(table_row "$out" ADDRESS 198.18.22.2 | cut -d ' ' -f 1-5,9)" = "198.18.22.2 20 1200 6 360 198.18.22.2/32" ]
	result stats_table $? "stats printed:"$'\n'"$out"
}

# ---- stats --watch: redraws in place, with rates ----------------------------------
test_stats_watch() {
	fresh --default-pps 10 || { result stats_watch 1 "attach"; return; }
	local f=/tmp/$id.watch o=/tmp/$id.watchout rc frames rates g p d
	tmpfiles+=("$o")
	send_bg "$f" --src 198.18.20.1 --rate 100 --burst 1 --duration 3
	g=$!
	sleep 0.3
	# on a terminal (script gives one), stopped with Ctrl-C after 2.5 s
	script -qec "timeout --preserve-status -s INT 2.5 nsenter --net=/run/netns/$rx $cli stats --iface $vrx --watch 1" \
		/dev/null >"$o"; rc=$?
	frames=$(grep -c $'\e\[H' "$o")
	# packets/s of the last complete redraw: passed ~10, dropped ~90
	rates=$(tr -d '\r' <"$o" | awk '$1 == "passed" && $4 != "-" { p = $4 }
		$1 == "dropped" && $4 != "-" { d = $4 } END { print p + 0, d + 0 }')
	wait "$g"
	read -r p d <<<"$rates"
	check stats_watch "rc == 0 && frames >= 2 && p >= 5 && p <= 15 && d >= 70 && d <= 100" \
		"exit $rc after Ctrl-C, $frames redraws, rates passed $p/s dropped $d/s (want 10, 90)"
}

# A newcomer verified while it had an entry in `newcomers` gets one in
# `sources`; stats shows it once, with the totals of both.
test_stats_verified_newcomer_once() {
	local a=198.18.34.1 j rows
	fresh && quota 198.18.34.0/24 --pps 1000 --new-pps 1000 ||
		{ result stats_verified_newcomer_once 1 "attach or quota set"; return; }
	send --src "$a" --count 10 >/dev/null &&
		send_answered "$a" 20 >/dev/null ||
		{ result stats_verified_newcomer_once 1 "send"; return; }
	j=$(stats_json)
	rows=$(jq -c --arg a "$a" '[.interfaces[0].sources[] | select(.address == $a) |
		.passed_packets]' <<<"$j")
	[ "$rows" = "[30]" ] &&
		jq -e '.interfaces[0].tracked_sources == 1' <<<"$j" >/dev/null
	result stats_verified_newcomer_once $? "passed packets of $a's rows: $rows (want [30]); tracked $(jq '.interfaces[0].tracked_sources' <<<"$j")"
}
