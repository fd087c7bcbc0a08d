# shellcheck shell=bash
# e2e area: events (xdp-ratelimit events) on real traffic: a flood prints
# limited for the flooding source and nothing for one within its quota,
# released once it stops, banned and unbanned; one line per change whatever
# the CPUs; a second follower is refused; SIGTERM, SIGINT and detach end it
# with exit 0. Sourced by tests/e2e/run.sh, which sets up the namespaces
# and links and holds the helpers (send, fresh, quota, ...). Each test_NAME
# is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# Start `events --iface $vrx ARGS` in the background, output to FILE and
# FILE.err; $follower is its PID. False unless it says it follows within 5 s.
follow_start() {	# FILE ARGS...
	local f=$1 i
	shift
	tmpfiles+=("$f" "$f.err")
	# wide: one line per event, as these tests read them (width.sh: wrapped)
	nsenter --net="/run/netns/$rx" env COLUMNS=200 "$cli" events --iface "$vrx" "$@" >"$f" 2>"$f.err" &
	follower=$!
	bg+=("$follower")
	for ((i = 0; i < 50; i++)); do
		grep -qs "^following $vrx" "$f.err" && return 0
		sleep 0.1
	done
	return 1
}

# Wait at most TRIES x 0.1 s for a line of FILE matching the ERE.
wait_line() {	# FILE ERE TRIES
	local i
	for ((i = 0; i < $3; i++)); do
		grep -Eq "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# Stop the follower with SIGNAL; its exit status, or 124 if it did not end
# within 3 s.
follow_stop() {	# SIGNAL
	local i
	kill -s "$1" "$follower" 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		kill -0 "$follower" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$follower" 2>/dev/null && return 124
	wait "$follower"
}

# The follower's exit status once it ended by itself within 3 s, else 124.
follow_ended() {
	local i
	for ((i = 0; i < 30; i++)); do
		kill -0 "$follower" 2>/dev/null || { wait "$follower"; return; }
		sleep 0.1
	done
	return 124
}

test_events_flood() {
	local f=/tmp/$id.ev a=198.18.30.1 b=198.18.30.2 rule=198.18.30.0/24 out rc t
	fresh && quota "$rule" --pps 20 || { result events_setup 1 "attach or quota set"; return; }
	follow_start "$f" --json ||
		{ result events_follows 1 "no 'following' on stderr: $(cat "$f.err")"; return; }
	# 100 at full speed against 20 a window; the other source within quota
	send --src "$a" --count 100 >/dev/null
	send --src "$b" --count 10 >/dev/null
	t=$(date +%s)
	wait_line "$f" "\"limited\"" 30
	out=$(jq -c --arg a "$a" 'select(.event == "limited" and .address == $a)' "$f")
	jq -e --arg i "$vrx" --arg r "$rule" --argjson t "$t" -s 'length == 1 and
		(.[0] | .ifname == $i and .rule == $r and keys == ["address", "event", "ifname", "rule", "scope", "time"] and .scope == null and
		 (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")) and
		 (((.time | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) - $t | fabs) < 5))' <<<"$out" >/dev/null
	result events_limited_json $? "limited lines of $a: $out"
	# the flood stopped: released a window after its last drop (the sweep:
	# a silent source runs no program)
	wait_line "$f" "\"released\"" 40
	out=$(jq -c '[.event, .address]' "$f" | paste -sd ' ')
	[ "$out" = "[\"limited\",\"$a\"] [\"released\",\"$a\"]" ]
	result events_released_once $? "lines: $out (want limited, released of $a only; none of $b)"
	out=$(rl events --iface "$vrx" 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ $out == "xdp-ratelimit: events: another 'xdp-ratelimit events' follows $vrx"* ]]
	result events_one_follower $? "a second follower: exit $rc, said: $out"
	follow_stop TERM; rc=$?
	check events_sigterm "rc == 0" "exit $rc after SIGTERM; stderr: $(cat "$f.err")"
	check events_none_lost "$(total events_lost) == 0" "stats: events_lost"
}

test_events_ban() {
	local f=/tmp/$id.evb a=198.18.31.1 rule=198.18.31.0/24 out rc date
	fresh && quota "$rule" --pps 20 --ban 2s ||
		{ result events_ban_setup 1 "attach or quota set"; return; }
	follow_start "$f" || { result events_ban_follows 1 "$(cat "$f.err")"; return; }
	send_answered "$a" 50 >/dev/null
	wait_line "$f" " banned " 30
	# human lines: time, interface, event, address, rule (ban: its length)
	date='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}'
	grep -Eq "^$date  $vrx +banned +${a//./\\.} +${rule//./\\.} for 2s$" "$f"
	result events_banned_line $? "printed: $(cat "$f")"
	# the receiver's answer verified it first (the egress hook)
	grep -Eq "^$date  $vrx +verified +${a//./\\.} +${rule//./\\.}$" "$f"
	result events_verified_line $? "printed: $(cat "$f")"
	# silent since: unbanned at the ban's end, then released (a window after
	# the last drop, but never while banned)
	wait_line "$f" " unbanned " 40
	wait_line "$f" " released " 20
	out=$(awk '{ print $4 }' "$f" | paste -sd ' ')
	[ "$out" = "verified banned limited unbanned released" ] &&
		grep -Eq "^$date  $vrx +unbanned +${a//./\\.} +${rule//./\\.}$" "$f"
	result events_unbanned $? "printed:"$'\n'"$(cat "$f")"
	follow_stop INT; rc=$?
	check events_sigint "rc == 0" "exit $rc after SIGINT; stderr: $(cat "$f.err")"
}

test_events_detach() {
	local f=/tmp/$id.evd rc
	fresh --default-pps 10 || { result events_detach 1 "attach"; return; }
	follow_start "$f" || { result events_detach 1 "$(cat "$f.err")"; return; }
	rl detach "$vrx" >/dev/null
	follow_ended; rc=$?
	[ "$rc" = 0 ] && grep -q "^xdp-ratelimit: events: $vrx was detached$" "$f.err"
	result events_detach $? "exit $rc; stderr: $(cat "$f.err")"
}

# A reload in place keeps the maps: the follower reads on. A reload onto
# new maps: it follows those, and says so.
test_events_reload() {
	local f=/tmp/$id.evr rc out a=198.18.31.1 b=198.18.31.2
	fresh --default-pps 10 || { result events_reload 1 "attach"; return; }
	follow_start "$f" --json || { result events_reload 1 "$(cat "$f.err")"; return; }
	rl reload "$vrx" >/dev/null || { result events_reload 1 "reload in place"; return; }
	send --src "$a" --count 50 >/dev/null
	wait_line "$f" "\"limited\".*\"$a\"|\"$a\".*\"limited\"" 30
	out=$(jq -c --arg a "$a" 'select(.event == "limited" and .address == $a)' "$f")
	kill -0 "$follower" 2>/dev/null && [ -n "$out" ]
	result events_reload_in_place $? "after a reload in place: limited of $a '$out'; stderr: $(cat "$f.err")"
	rl reload "$vrx" --window 2s >/dev/null || { result events_reload 1 "reload --window"; return; }
	wait_line "$f.err" "^xdp-ratelimit: events: $vrx runs on new maps" 30
	result events_reload_new_maps_said $? "stderr: $(cat "$f.err")"
	send --src "$b" --count 50 >/dev/null
	wait_line "$f" "\"limited\".*\"$b\"|\"$b\".*\"limited\"" 30
	out=$(jq -c --arg b "$b" 'select(.event == "limited" and .address == $b)' "$f")
	[ -n "$out" ]
	result events_reload_new_maps_followed $? "limited of $b from the new maps: '$out'"
	rl detach "$vrx" >/dev/null
	follow_ended; rc=$?
	[ "$rc" = 0 ]
	result events_reload_then_detach $? "exit $rc; stderr: $(cat "$f.err")"
}
