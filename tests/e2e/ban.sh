# shellcheck shell=bash
# e2e area: bans (quota set --ban, ban list, ban del) on real traffic: a
# drop for a source's own quota bans it, ban list, stats and status show
# it, every packet of it drops, the ban outlives the rule, ban del lifts it.
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

test_ban_lifecycle() {
	local a=198.18.27.7 rule=198.18.27.0/24 out left rc
	fresh && quota "$rule" --pps 20 --ban 5s ||
		{ result ban_setup 1 "attach or quota set"; return; }
	out=$(rl quota list --iface "$vrx" --json)
	jq -e --arg r "$rule" '.interfaces[0].rules[] | select(.prefix == $r) |
		.ban_ms == 5000 and .new_pps == null and .new_bps == null' <<<"$out" >/dev/null
	result ban_in_quota_list $? "quota list --json: $out"
	# 50 at full speed against 20 a window: the 21st drops and bans
	send_answered "$a" 50 >/dev/null
	out=$(rl ban list --iface "$vrx" --json)
	left=$(jq -r --arg a "$a" --arg r "$rule" \
		'.interfaces[0].bans[] | select(.address == $a and .rule == $r) | .ms_left' <<<"$out")
	check ban_listed "${left:-0} > 3000 && ${left:-0} <= 5000" "ban list --json: $out"
	out=$(rl ban list --iface "$vrx")
	[[ $out == "$vrx: 1 banned source"$'\n'"ADDRESS "*" TIME_LEFT  RULE"$'\n'* ]] &&
		[[ $(table_row "$out" ADDRESS "$a") =~ ^$a\ [0-9]+\.[0-9]s\ $rule$ ]] &&
		[[ $(table_row "$(rl ban list --iface "$vrx" --wide)" ADDRESS "$a") =~ ^$a\ [0-9]+\.[0-9]s\ $rule$ ]]
	result ban_list_table $? "ban list printed:"$'\n'"$out"
	out=$(stats_json)
	jq -e --arg a "$a" '.interfaces[0] | .banned_sources == 1 and .bans[0].address == $a and
		.totals.banned_packets == 29 and
		(.sources[] | select(.address == $a) | .ban_ms_left > 0 and .dropped_packets == 30)' \
		<<<"$out" >/dev/null
	result ban_in_stats $? "stats --json: $out"
	out=$(rl stats --iface "$vrx")
	[[ $out == *"banned: 1 source"* ]] && table_row "$out" ADDRESS "$a" | grep -q "$rule"
	result ban_in_stats_table $? "stats printed:"$'\n'"$out"
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | .bans')
	[ "$out" = 1 ] && [[ $(table_row "$(rl status)" IFACE "$vrx") == *" ok (1 banned)" ]]
	result ban_in_status $? "status --json bans: $out"
	# banned: every packet drops, even within the quota's window again
	sleep 1
	send --src "$a" --count 5 >/dev/null
	check ban_drops_everything "$(src_stat "$a" passed_packets) == 20 && $(src_stat "$a" dropped_packets) == 35" \
		"banned: nothing more passed"
	rl quota del "$rule" --iface "$vrx" >/dev/null &&
		rl ban list --iface "$vrx" | grep -q "^$a "
	result ban_survives_quota_del $? "the ban went with the rule"
	out=$(rl ban del "$a" --iface "$vrx"); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx: ban of $a lifted" ]
	result ban_del $? "exit $rc, printed: $out"
	send --src "$a" --count 5 >/dev/null	# no rule covers it now
	check ban_del_lifts "$(src_stat "$a" passed_packets) == 25" "after ban del"
	# ban del all, on a fresh ban
	quota "$rule" --pps 20 --ban 1m && send_answered "$a" 50 >/dev/null
	out=$(rl ban del all --iface "$vrx"); rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$vrx: 1 ban lifted" ] &&
		[ "$(rl ban list --iface "$vrx" --json)" = "{\"interfaces\": [{\"ifname\": \"$vrx\", \"bans\": []}]}" ]
	result ban_del_all $? "exit $rc, printed: $out"
}

# A block bans nobody: tracked sources whose rule becomes --pps 0, or a
# --bps whose budget is below one frame, drop every frame, with --ban set,
# and ban list stays empty.
test_ban_never_by_a_block() {
	local a=198.18.28.7 b=198.18.29.7 out d
	fresh && quota 198.18.28.0/24 --pps 20 --ban 5s && quota 198.18.29.0/24 --pps 20 --ban 5s ||
		{ result ban_block_setup 1 "attach or quota set"; return; }
	send --src "$a" --count 1 >/dev/null	# tracked
	send --src "$b" --count 1 >/dev/null
	quota 198.18.28.0/24 --pps 0 --ban 5s && quota 198.18.29.0/24 --pps 1k --bps 50 --ban 5s ||
		{ result ban_block_setup 1 "quota set to a block"; return; }
	send_answered "$a" 30 >/dev/null
	send_answered "$b" 30 >/dev/null
	out=$(rl ban list --iface "$vrx" --json)
	d=$(( $(src_stat "$a" dropped_packets) + $(src_stat "$b" dropped_packets) ))
	check ban_never_by_a_block "$(jq '.interfaces[0].bans | length' <<<"$out") == 0 && d == 60 && $(total banned_packets) == 0" \
		"--pps 0 and --bps 50 with --ban: dropped $d (want 60), ban list --json: $out"
}
