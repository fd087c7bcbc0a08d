#!/bin/bash
# Fleet sync (xdp-ratelimit sync) against a real redis-server: hosts are
# receiving namespaces, each with its own attach and its own agent; one
# sender namespace has a veth to each and sends one source to all of them.
# Redis listens on a Unix socket in a directory of this run (reachable from
# every namespace, nothing on any network), and is killed at the end.
#
# What XDP passed is counted independently, by nftables on each receiver's
# ingress (after XDP). The bound checked is doc/design/fleet.md: over T
# seconds, at most ceil(T / (W - W/B)) windows, each holding at most
#   Q + (H - 1) * min(Q, r * L) + H * (ncpus - 1)
# with L = 2 * interval + W/B + E (a lease taken before a share arrived
# lasts until its bucket ends; E: two exchanges and the scheduling of this
# loaded VM, taken as 50 ms), r the rate sent to each host. Unsynced, two
# hosts would pass at least 2 x Q per second.
#
# Usage: tests/sync/run.sh [BUILD_DIR] [NAME...]
set -u
suite=sync
. "$(dirname "$0")/../lib.sh"
lib_args rls "$@"

. "$here/hosts.sh"
sock=$dir/redis.sock
redis_url=unix://$sock

tests=(bad_input two_hosts_one_quota redis_restart redis_slow agent_restart late_joiner agent_reload
	agent_reload_window agent_stops output_width hostile_writer hostile_flood hostile_trickle tls_tunnel no_auth_elsewhere)
check_test_names

# ---- Redis -------------------------------------------------------------------
redis_start() {	# [EXTRA ARGS...]
	redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' \
		--appendonly no --dir "$dir" "$@" >>"$dir/redis.log" 2>&1 &
	redis_pid=$!
	local i
	for ((i = 0; i < 50; i++)); do
		redis-cli -s "$sock" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	return 1
}
redis_stop() {
	[ -n "$redis_pid" ] || return 0
	kill "$redis_pid" 2>/dev/null
	wait "$redis_pid" 2>/dev/null
	redis_pid=
}

lib_require redis-server
for f in "$cli" "$gen"; do
	[ -x "$f" ] || lib_abort setup "$f is missing: build with make OUTPUT=$build"
done
lib_setup_ns && setup_host 0 && setup_host 1 && setup_host 2 ||
	lib_abort setup "cannot create namespaces and links"
redis_start || lib_abort setup "redis-server did not start: $(tail -3 "$dir/redis.log")"

# ---- bad input: refused, nothing changed ---------------------------------------
test_bad_input() {
	attach 0 || { result bad_input 1 "attach"; return; }
	local bad=() out rc a
	for a in "--redis http://x:1:2" "--redis redis://h" "--redis unix://rel" \
		"--redis redis://h:1 --fleet a{b}" "--redis redis://h:1 --fleet a:b" \
		"--redis redis://h:1 --interval 500us" "--redis redis://h:1 --interval 0ms" \
		"--redis redis://h:1 --interval 2s" "--fleet web" \
		"--redis redis://u:pw@h:1"; do
		# shellcheck disable=SC2086
		out=$(on 0 "$cli" sync --iface "${rxdev[0]}" $a --fleet-key-file "$keyfile" 2>&1)
		rc=$?
		[ "$rc" = 2 ] && [[ $out == "xdp-ratelimit: "* ]] || bad+=("'$a': exit $rc: $out")
	done
	# a server that is not there; a wrong password (and none given)
	local k=(--fleet-key-file "$keyfile")
	out=$(on 0 "$cli" sync --iface "${rxdev[0]}" --redis "unix://$dir/none.sock" "${k[@]}" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $out == *"cannot connect"* ]] || bad+=("unreachable: exit $rc: $out")
	redis-server --port 0 --unixsocket "$dir/pw.sock" --requirepass "s$id" --save '' \
		--appendonly no --dir "$dir" >>"$dir/redis-pw.log" 2>&1 &
	local pw=$!
	for ((a = 0; a < 50; a++)); do [ -S "$dir/pw.sock" ] && break; sleep 0.1; done
	out=$(REDISCLI_AUTH=wrong on 0 "$cli" sync --iface "${rxdev[0]}" --redis "unix://$dir/pw.sock" "${k[@]}" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $out == *"AUTH"* ]] || bad+=("wrong password: exit $rc: $out")
	out=$(on 0 "$cli" sync --iface "${rxdev[0]}" --redis "unix://$dir/pw.sock" "${k[@]}" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $out == *"NOAUTH"* ]] || bad+=("no password: exit $rc: $out")
	echo "wrong" >"$dir/pwfile"
	chmod 600 "$dir/pwfile"
	out=$(on 0 "$cli" sync --iface "${rxdev[0]}" --redis "unix://$dir/pw.sock" --password-file "$dir/pwfile" "${k[@]}" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $out == *"WRONGPASS"* ]] || bad+=("wrong --password-file: exit $rc: $out")
	# an ACL user: AUTH USER PASSWORD, a wrong user refused
	redis-cli -s "$dir/pw.sock" --no-auth-warning -a "s$id" ACL SETUSER "fleet$id" on ">u$id" '~xrl:*' \
		'+@hash' '+pexpire' '+ping' '+cluster|slots' '+select' >/dev/null
	echo "u$id" >"$dir/pwfile"
	out=$(on 0 "$cli" sync --iface "${rxdev[0]}" --redis "unix://$dir/pw.sock" --password-file "$dir/pwfile" \
		--redis-user "nosuch$id" "${k[@]}" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $out == *"WRONGPASS"* ]] || bad+=("wrong --redis-user: exit $rc: $out")
	# the right user, from a file: it starts (and stops on SIGTERM)
	nsenter --net="/run/netns/${hosts[0]}" "$cli" sync --iface "${rxdev[0]}" \
		--redis "unix://$dir/pw.sock" --password-file "$dir/pwfile" --redis-user "fleet$id" "${k[@]}" \
		>"$dir/pw-agent.log" 2>&1 &
	agent[0]=$!
	state_within 0 ok 50 || bad+=("right password: not ok: $(cat "$dir/pw-agent.log")")
	agent_stop 0 || bad+=("SIGTERM: exit $?")
	kill "$pw" 2>/dev/null
	wait "$pw" 2>/dev/null
	# nothing changed by the refusals: no sync state, the program never
	# started reading `remote`... but the agent that ran did set it
	[ "$(sync_state 0)" = none ] || bad+=("a sync state is left: $(sync_state 0)")
	check bad_input "${#bad[@]} == 0" "${bad[*]}"
	attach 0 || return
	out=$(on 0 "$cli" sync --iface "${rxdev[0]}" --redis "unix://$dir/none.sock" 2>&1)
	a=$(bpftool -j map dump pinned "$(pin_dir "${rxdev[0]}")/config" | jq '.[0].formatted.value.remote_used')
	check refused_changes_nothing "a == 0" "config.remote_used is $a after a refused sync"
}

# ---- two hosts, one quota ------------------------------------------------------
test_two_hosts_one_quota() {
	attach 0 && attach 1 || { result two_hosts_one_quota 1 "attach"; return; }
	agent_start 0 && agent_start 1
	state_within 0 ok 50 && state_within 1 ok 50 ||
		{ result two_hosts_one_quota 1 "agents not ok: $(cat "$dir"/agent*.log)"; return; }
	local a0 a1 t b line senders
	a0=$(total_arrived 0 1)
	send_all 3 "$RATE" 0 1 &
	senders=$!
	# the source's hash in Redis (one key, hash-tagged), a field per host
	# and bucket: both hosts wrote theirs (read while the source is sent:
	# the key expires a window after the last write)
	local fields
	both_fields() {
		fields=$(redis-cli -s "$sock" hkeys "xrl:{f$id|$SRC}:$((BUCKET_MS * 1000000))" | tr '\n' ' ')
		[[ $fields == *"/${rxdev[0]}:"* && $fields == *"/${rxdev[1]}:"* ]]
	}
	within 20 both_fields
	result redis_fields_per_host $? "fields of xrl:{f$id|$SRC}:...: '$fields'"
	wait "$senders"
	t=$(( $(total_arrived 0 1) - a0 ))
	b=$(bound 3 2 "$RATE")
	a1=$(( 3 * PPS * 2 ))	# each host alone: at least Q per second each
	echo "  two hosts, 3 s at $RATE pps each, quota $PPS/s, --interval $INTERVAL: $t passed (bound $b)"
	check two_hosts_one_quota "t <= b && t >= 3 * PPS * 8 / 10" \
		"sent $RATE pps to each of 2 hosts for 3 s, quota $PPS/s: passed $t across both (bound $b; unsynced hosts pass about $a1)"
	line=$(on 0 "$cli" status --wide | grep "^${rxdev[0]} sync: ")
	[[ $line == *"sync: ok, fleet f$id (last exchange "* ]]
	result status_shows_sync $? "status: '$line'"
	# the agent never holds up quota set or detach
	local t0 t1
	t0=$(date +%s%N)
	on 0 "$cli" quota set 198.18.9.0/24 --pps 7 --iface "${rxdev[0]}" >/dev/null
	t1=$(date +%s%N)
	check quota_set_not_held "(t1 - t0) / 1000000 < 1000" "quota set took $(( (t1 - t0) / 1000000 )) ms"
}

# 2 s of traffic to hosts 0 and 1: what passed across both within the bound.
one_quota_2s() {	# NAME WHAT
	local a0 t b
	a0=$(total_arrived 0 1)
	send_all 2 "$RATE" 0 1
	t=$(( $(total_arrived 0 1) - a0 ))
	b=$(bound 2 2 "$RATE")
	echo "  $2: $t passed in 2 s (bound $b)"
	check "$1" "t <= b" "$2: $t in 2 s across both (bound $b)"
}

# ---- Redis killed and restarted: local counts, degraded, resumed ----------------
test_redis_restart() {
	[ -n "${agent[0]:-}" ] && [ -n "${agent[1]:-}" ] || { attach 0 && attach 1 && agent_start 0 && agent_start 1; }
	state_within 0 ok 50 || { result redis_restart 1 "agent not ok"; return; }
	redis_stop
	local a0 t b line
	a0=$(total_arrived 0 1)
	state_within 0 degraded 30 && state_within 1 degraded 30
	result redis_down_degraded $? "status says $(sync_state 0), $(sync_state 1)"
	line=$(on 0 "$cli" status --wide | grep "^${rxdev[0]} sync: ")
	[[ $line == *"sync: degraded since "*"local counts only"* ]]
	result status_degraded_line $? "status: '$line'"
	# local enforcement goes on: each host at most its own quota
	send_all 2 "$RATE" 0 1
	t=$(( $(total_arrived 0 1) - a0 ))
	b=$(( 2 * ( (2000 + 899) / 900 ) * (PPS + ncpus - 1) ))
	check redis_down_local_quota "t <= b && t >= 2 * PPS" \
		"Redis down, 2 s to 2 hosts: passed $t (each host its own quota: at most $b)"
	redis_start || { result redis_restart 1 "redis did not restart"; return; }
	state_within 0 ok 80 && state_within 1 ok 80
	result redis_back_resumed $? "after the restart: $(sync_state 0), $(sync_state 1)"
	kill -0 "${agent[0]}" 2>/dev/null && kill -0 "${agent[1]}" 2>/dev/null
	result agents_kept_running $? "an agent exited while Redis was down"
	sleep 1.1	# the local-only window leaves
	one_quota_2s resumed_one_quota "Redis back"
}

# ---- Redis slow (stopped, not gone): degraded, then resumed ------------------------
test_redis_slow() {
	[ -n "${agent[0]:-}" ] || { attach 0 && agent_start 0; }
	state_within 0 ok 50 || { result redis_slow_degraded 1 "agent not ok"; return; }
	kill -STOP "$redis_pid"
	state_within 0 degraded 30
	result redis_slow_degraded $? "Redis not answering: status says $(sync_state 0)"
	kill -CONT "$redis_pid"
	state_within 0 ok 80
	result redis_slow_resumed $? "Redis answering again: status says $(sync_state 0)"
}

# ---- an agent killed and restarted catches up --------------------------------------
test_agent_restart() {
	[ -n "${agent[0]:-}" ] && [ -n "${agent[1]:-}" ] || { attach 0 && attach 1 && agent_start 0 && agent_start 1; }
	state_within 1 ok 50 || { result agent_restart 1 "agent not ok"; return; }
	agent_stop 1 KILL
	local st
	st=$(sync_state 1)
	[ "$st" = gone ]
	result agent_killed_gone $? "status after kill -9: $st"
	sleep 1.1	# host 1's share ages out on host 0, host 0's on host 1
	agent_start 1
	state_within 1 ok 50 || { result agent_restart 1 "restarted agent not ok"; return; }
	one_quota_2s agent_restarted_one_quota "agent restarted"
	# fields a previous run left, of buckets long gone (as after a
	# reboot; planted: the killed run's may have expired with the key):
	# the agent deletes them, read at an exchange, while the source is
	# sent (the key then lives on)
	local stale=() b0 f senders
	send_all 3 "$RATE" 0 1 &
	senders=$!
	b0=$(( $(date +%s%N) / (BUCKET_MS * 1000000) ))
	for f in 50 51 52; do stale+=("$(hostname)/${rxdev[1]}:$((b0 - f))" "x1 1 60 $(( (b0 - f) * BUCKET_MS * 1000000 )) 0"); done
	redis-cli -s "$sock" hset "xrl:{f$id|$SRC}:$((BUCKET_MS * 1000000))" "${stale[@]}" >/dev/null
	old_fields() {
		local now_b
		now_b=$(( $(date +%s%N) / (BUCKET_MS * 1000000) ))
		redis-cli -s "$sock" hkeys "xrl:{f$id|$SRC}:$((BUCKET_MS * 1000000))" |
			awk -F: -v h="/${rxdev[1]}" -v old=$((now_b - 12)) 'index($1, h) && $2 + 0 < old' | wc -l
	}
	within 15 eval '[ "$(old_fields)" = 0 ]'
	result agent_restart_deletes_old_fields $? "$(old_fields) fields of host 1 older than the window left"
	wait "$senders"
}

# ---- a host joining late learns what the fleet passed ------------------------------
test_late_joiner() {
	[ -n "${agent[0]:-}" ] && [ -n "${agent[1]:-}" ] || { attach 0 && attach 1 && agent_start 0 && agent_start 1; }
	attach 2 || { result late_joiner 1 "attach"; return; }
	# the fleet uses up the window on hosts 0 and 1 ...
	send_all 1 "$RATE" 0 1
	agent_start 2
	state_within 2 ok 50 || { result late_joiner 1 "agent 2 not ok: $(cat "$dir/agent2.log")"; return; }
	# ... then the source reaches host 2 too, right away
	# In that second the fleet passes what leaves the window (about Q),
	# plus what the lag lets through, plus the bucket a second spans
	# beyond W. Host 2 without the fleet's counts would pass a whole
	# quota of its own on top.
	local a0 a2 t t2 b rl=$(( RATE * (2 * INTERVAL_MS + BUCKET_MS + 50) / 1000 ))
	a0=$(total_arrived 0 1 2) a2=$(arrived 2)
	send_all 1 "$RATE" 0 1 2
	t=$(( $(total_arrived 0 1 2) - a0 )) t2=$(( $(arrived 2) - a2 ))
	b=$(( PPS + 2 * rl + 3 * (ncpus - 1) + PPS / 10 ))
	echo "  late joiner: $t2 passed there, $t by the fleet in 1 s (bound $b)"
	check late_joiner_catches_up "t2 < PPS * 6 / 10 && t <= b" \
		"host 2 joined a full window: it passed $t2 in 1 s (a quota of its own: $PPS), the fleet $t (bound $b)"
}

# ---- reloads: in place the agent syncs on; onto new maps it takes those ------------
test_agent_reload() {
	[ -n "${agent[0]:-}" ] && [ -n "${agent[1]:-}" ] || { attach 0 && attach 1 && agent_start 0 && agent_start 1; }
	state_within 0 ok 50 && state_within 1 ok 50 || { result agent_reload 1 "agents not ok"; return; }
	on 0 "$cli" reload "${rxdev[0]}" >/dev/null || { result agent_reload 1 "reload in place"; return; }
	state_within 0 ok 50 && kill -0 "${agent[0]}" 2>/dev/null
	result agent_reload_in_place $? "after a reload in place: $(sync_state 0); $(tail -2 "$dir/agent0.log")"
	# new maps (the window kept: the fleet shares it)
	on 0 "$cli" reload "${rxdev[0]}" --max-sources 70000 >/dev/null ||
		{ result agent_reload 1 "reload --max-sources"; return; }
	local i
	for ((i = 0; i < 50; i++)); do
		grep -q "^${rxdev[0]} runs on new maps" "$dir/agent0.log" && break
		sleep 0.1
	done
	state_within 0 ok 50 && kill -0 "${agent[0]}" 2>/dev/null && [ "$i" -lt 50 ]
	result agent_reload_new_maps $? "after a reload onto new maps: $(sync_state 0); $(tail -2 "$dir/agent0.log")"
	sleep 1.1	# a window of the new maps' own counts
	one_quota_2s agent_reload_one_quota "host 0 reloaded onto new maps"
	# the fleet's share reaches the new maps: the agent writes them while
	# both hosts pass the source (polled: it is written at an exchange)
	local entries=0 senders
	send_all 3 "$RATE" 0 1 &
	senders=$!
	remote_entries() {
		entries=$(bpftool -j map dump pinned "$(pin_dir "${rxdev[0]}")/remote" | jq length)
		[ "$entries" -gt 0 ]
	}
	within 25 remote_entries
	wait "$senders"
	check agent_reload_new_maps_remote "entries > 0" "entries of the new maps' remote: $entries"
}

# ---- a reload to a window shorter than the agent's --interval: it stops, exit 2 ------
test_agent_reload_window() {
	attach 2 && agent_start 2 && state_within 2 ok 50 ||
		{ result agent_reload_window 1 "agent 2 not ok: $(tail -2 "$dir/agent2.log")"; return; }
	local p=${agent[2]} i rc
	on 2 "$cli" reload "${rxdev[2]}" --window 10ms >/dev/null ||
		{ result agent_reload_window 1 "reload --window 10ms"; return; }
	for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	wait "$p"
	rc=$?
	unset "agent[2]"
	[ "$i" -lt 50 ] && [ "$rc" = 2 ] &&
		grep -q -- "--interval must be at least 1ms and at most the window (10ms)" "$dir/agent2.log" &&
		[ "$(sync_state 2)" = gone ]	# the state reload carried names it: status says it is gone
	result agent_reload_window_too_short $? "exit $rc after ${i}0 ms, state $(sync_state 2): $(tail -2 "$dir/agent2.log")"
}

# ---- detach and SIGTERM: the agent stops cleanly ---------------------------------
test_agent_stops() {
	[ -n "${agent[0]:-}" ] || { attach 0 && agent_start 0; }
	state_within 0 ok 50 || { result agent_stops_on_detach 1 "agent not ok"; return; }
	local p=${agent[0]} i rc
	on 0 "$cli" detach "${rxdev[0]}" >/dev/null
	for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	wait "$p"
	rc=$?
	unset "agent[0]"
	check agent_stops_on_detach "i < 50 && rc == 0" "agent still running 5 s after detach, or exit $rc: $(tail -2 "$dir/agent0.log")"
	attach 0 && agent_start 0 && state_within 0 ok 50 || { result agent_sigterm 1 "restart"; return; }
	agent_stop 0 TERM
	rc=$?
	[ "$rc" = 0 ] && [ "$(sync_state 0)" = none ]
	result agent_sigterm $? "exit $rc, state $(sync_state 0)"
}

# ---- what the agent prints fits 80 columns, whatever the names -------------------
# An interface name of 15 characters (the kernel's longest), a fleet of 64
# and a host name of 64 (both the longest), in a UTS namespace of the
# agent's own: its first lines, a reload onto new maps and the detach that
# stops it, and status's line of the agent, each line at most 80 columns,
# every name whole.
test_output_width() {
	local long fleet host p rc why=() out problems status
	long=$(printf '%.15s' "${id}wwwwwwwwwwwwwww")
	fleet=$(printf '%.64s' "f${id}$(printf 'x%.0s' {1..64})")
	host=$(printf '%.64s' "h${id}$(printf 'y%.0s' {1..64})")
	rx_ifaces+=("$long")	# cleanup detaches it
	ip -n "${hosts[0]}" link add "$long" type bridge && ip -n "${hosts[0]}" link set "$long" up &&
		on 0 "$cli" attach "$long" >/dev/null ||
		{ result output_width 1 "setup"; ip -n "${hosts[0]}" link del "$long" 2>/dev/null; return; }
	# nsenter, unshare and sh exec in turn: $! is the agent
	nsenter --net="/run/netns/${hosts[0]}" unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$host" \
		"$cli" sync --iface "$long" --redis "$redis_url" --fleet "$fleet" --fleet-key-file "$keyfile" \
		>"$dir/width.log" 2>&1 &
	p=$! agent[w]=$!	# cleanup kills it
	width_synced() { on 0 "$cli" status --json |
		jq -e --arg i "$long" '.interfaces[] | select(.ifname == $i) | .sync.state == "ok"' >/dev/null; }
	within 50 width_synced || why+=("agent not ok")
	# status's line of the agent, with the fleet's name whole (not a terminal, no COLUMNS: 80)
	status=$(on 0 env -u COLUMNS "$cli" status 2>&1)
	on 0 "$cli" reload "$long" --max-sources 70000 >/dev/null || why+=("reload")
	within 50 grep -q "^$long runs on new maps" "$dir/width.log" || why+=("no new maps line")
	on 0 "$cli" detach "$long" >/dev/null || why+=("detach")
	gone_agent() { ! kill -0 "$p" 2>/dev/null; }
	within 50 gone_agent || kill "$p" 2>/dev/null
	wait "$p"
	rc=$?
	unset "agent[w]"
	out=$(cat "$dir/width.log")
	[ "$rc" = 0 ] || why+=("exit $rc")
	problems=$(width_problems "$out" "syncing $long every [0-9]* ms" "  in fleet $fleet" "  as host $host" \
		"$long runs on new maps (a reload or an attach):" "  syncing them every [0-9]* ms" \
		"$long was detached: sync stops")
	problems+=$(width_problems "$status" "$long sync: ok, fleet" "    $fleet (last")
	ip -n "${hosts[0]}" link del "$long"
	[ -z "$problems" ] || why+=("$problems")
	result output_width "${#why[@]}" "${why[*]}; printed: $out; status: $status"
}

# ---- a hostile Redis: a writer without the fleet key ------------------------------
# sync_field N NAME: host N's sync.NAME from status --json (jq path)
sync_field() { on "$1" "$cli" status --json |
	jq -r --arg i "${rxdev[$1]}" ".interfaces[] | select(.ifname == \$i) | .sync.$2"; }
# Send SOURCE to host N at RATE pps for SECONDS: prints what was sent.
send_src() {	# N SOURCE RATE SECONDS
	in_tx "$gen" --dev "${txdev[$1]}" --dst-mac "${MAC[$1]}" --src "$2" --rate "$3" \
		--duration "$4" --json 2>/dev/null | jq -r .sent
}
src_passed() {	# N SOURCE: what host N's program passed of SOURCE
	on "$1" "$cli" stats --iface "${rxdev[$1]}" --json --top 1000 |
		jq -r --arg a "$2" '[.interfaces[0].sources[] | select(.address == $a) | .passed_packets][0] // 0'
}
# Every field of every key rewritten, fields added, a source's key planted
# as a list: a source under its quota passes all it sends, one over it at
# most its local quota, the source of the list too; every kind of forgery
# is counted, the agents stay ok. The sources under their quota send less
# than a quota in all (a sender a loaded machine holds up and that then
# catches up could otherwise fill a window) and are used by no other test
# (whose real counts the fleet would rightly count).
test_hostile_writer() {
	[ -n "${agent[0]:-}" ] && [ -n "${agent[1]:-}" ] || { attach 0 && attach 1 && agent_start 0 && agent_start 1; }
	state_within 0 ok 50 && state_within 1 ok 50 || { result hostile_writer 1 "agents not ok"; return; }
	local under=198.18.0.43 over=198.18.0.42 listed=198.18.0.41 w s_u s_l p_u p_l p_o why=() b
	python3 "$here/hostile.py" writer "$sock" "f$id" "xrl:{f$id|$listed}:$((BUCKET_MS * 1000000))" \
		>"$dir/writer.log" 2>&1 &
	w=$!
	bg+=("$w")
	local senders=()
	send_src 1 "$over" "$RATE" 2 >/dev/null &	# the fleet's share of it: forged
	senders+=($!)
	send_src 0 "$over" "$RATE" 2 >/dev/null &
	senders+=($!)
	send_src 0 "$listed" 200 2 >"$dir/sent-listed" &
	senders+=($!)
	s_u=$(send_src 0 "$under" 200 2)
	wait "${senders[@]}"
	s_l=$(cat "$dir/sent-listed")
	settled 20 src_passed 0 "$over"
	p_u=$(src_passed 0 "$under") p_l=$(src_passed 0 "$listed") p_o=$(src_passed 0 "$over")
	b=$(( ( (2000 + 899) / 900 ) * (PPS + ncpus - 1) ))
	[ "$p_u" = "$s_u" ] || why+=("under its quota: $p_u of $s_u passed")
	[ "$p_l" = "$s_l" ] || why+=("the source of the list key: $p_l of $s_l passed")
	[ "$p_o" -le "$b" ] && [ "$p_o" -ge "$PPS" ] || why+=("over its quota: $p_o passed (local quota: $PPS to $b)")
	local k
	for k in mac range format; do
		[ "$(sync_field 0 "rejected.$k")" -gt 0 ] || why+=("no $k rejection counted: $(sync_field 0 rejected)")
	done
	[ "$(sync_field 0 key_errors)" -gt 0 ] || why+=("the list key's error not counted")
	grep -q "key xrl:{f$id|$listed}.*WRONGTYPE" "$dir/agent0.log" || why+=("the key's error not logged: $(tail -2 "$dir/agent0.log")")
	state_within 0 ok 30 && state_within 1 ok 30 || why+=("agents: $(sync_state 0), $(sync_state 1): $(sync_field 0 error)")
	kill "$w" 2>/dev/null
	wait "$w" 2>/dev/null
	echo "  hostile writer: under its quota $p_u of $s_u passed, the list key's $p_l, over $p_o (local bound $b); rejected $(sync_field 0 rejected | tr -d ' \n'), key errors $(sync_field 0 key_errors)"
	result hostile_writer "${#why[@]}" "${why[*]}"
	redis-cli -s "$sock" del "xrl:{f$id|$listed}:$((BUCKET_MS * 1000000))" >/dev/null
}

# A field of 5 MB planted in a source's key: the agent reads 4 MiB of the
# reply at most (its memory stays small), fails that exchange, then leaves
# that key unread for a window: one failed exchange a window (1 s), the
# others work (ok again), and the source passes all it sends under its
# quota.
test_hostile_flood() {
	[ -n "${agent[0]:-}" ] || { attach 0 && agent_start 0; }
	state_within 0 ok 50 || { result hostile_flood 1 "agent not ok"; return; }
	local src=198.18.0.44 key rss why=() s f0 f1 t0 t1 senders
	key="xrl:{f$id|$src}:$((BUCKET_MS * 1000000))"
	f0=$(sync_field 0 failures)
	t0=$(date +%s%N)
	head -c 5000000 /dev/zero | tr '\0' a | redis-cli -s "$sock" -x hset "$key" junk >/dev/null
	send_src 0 "$src" 150 3 >"$dir/sent-flood" &
	senders=$!
	within 30 grep -q "key $key: its reply is too long" "$dir/agent0.log" ||
		why+=("no reply cut: $(tail -2 "$dir/agent0.log")")
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/${agent[0]}/status")
	state_within 0 ok 30 || why+=("not ok again: $(sync_state 0)")
	wait "$senders"
	s=$(cat "$dir/sent-flood")
	settled 20 src_passed 0 "$src"
	[ "$(src_passed 0 "$src")" = "$s" ] || why+=("under its quota: $(src_passed 0 "$src") of $s passed")
	# (ASan's shadow and quarantine: 4 times as much)
	[ "$rss" -lt $([[ $out == */sanitize ]] && echo 262144 || echo 65536) ] ||
		why+=("the agent's peak memory: $rss kB")
	redis-cli -s "$sock" hdel "$key" junk >/dev/null
	f1=$(sync_field 0 failures) t1=$(date +%s%N)
	# about one a window (a loaded machine adds timeouts of its own);
	# that it was ok in between is what tells the skip from none
	[ $((f1 - f0)) -le $(( 2 * (t1 - t0) / 1000000000 + 2 )) ] ||
		why+=("failures $f0 -> $f1 in $(( (t1 - t0) / 1000000 )) ms: more than one a window")
	echo "  a 5 MB field: the agent's peak memory $rss kB, failures $f0 -> $f1 in $(( (t1 - t0) / 1000000 )) ms"
	result hostile_flood "${#why[@]}" "${why[*]}"
}

# A Redis that trickles its replies (a proxy, one byte each 20 ms): the
# agent is degraded within a bound, `status` keeps moving, a source under
# its quota passes all it sends; replies back to normal: ok again, and
# "reconnected" logged once for that outage; trickling again, SIGTERM ends
# the agent within 1 s.
test_hostile_trickle() {
	attach 2 || { result hostile_trickle 1 "attach"; return; }
	local p t0 t1 rc f0 f1 a0 s why=() l0 n
	rm -f "$dir/trickle"
	l0=$(cat "$dir/agent2.log" 2>/dev/null | wc -l)	# earlier runs of agent 2 wrote there
	python3 "$here/hostile.py" proxy "$dir/proxy.sock" "$sock" 0.02 "$dir/trickle" \
		>"$dir/proxy.log" 2>&1 &
	p=$!
	bg+=("$p")
	within 50 test -S "$dir/proxy.sock" || { result hostile_trickle 1 "the proxy did not start"; return; }
	redis_url=unix://$dir/proxy.sock agent_start 2
	state_within 2 ok 50 || { result hostile_trickle 1 "agent 2 not ok through the proxy: $(tail -2 "$dir/agent2.log")"; return; }
	touch "$dir/trickle"
	state_within 2 degraded 50 || why+=("not degraded with replies trickling: $(sync_state 2)")
	f0=$(sync_field 2 failures)
	within 50 eval '[ "$(sync_field 2 failures)" -gt "$f0" ]' || why+=("status frozen: failures $f0")
	s=$(send_src 2 198.18.0.45 200 2)
	settled 20 src_passed 2 198.18.0.45
	[ "$(src_passed 2 198.18.0.45)" = "$s" ] || why+=("under its quota: $(src_passed 2 198.18.0.45) of $s passed")
	rm -f "$dir/trickle"
	state_within 2 ok 80 || why+=("not ok once replies are back: $(sync_state 2)")
	# each outage logs "degraded" once when it starts and "reconnected"
	# once when it ends (a loaded machine may add an outage of its own)
	n=$(tail -n +$((l0 + 1)) "$dir/agent2.log" | grep -o 'degraded, enforcing\|reconnected' | uniq -c |
		awk '$1 > 1 || $2 == "reconnected" { r += ($2 == "reconnected") } $1 > 1 { bad = 1 } END { print bad ? -1 : r + 0 }')
	[ "$n" -ge 1 ] || why+=("'reconnected' not once an outage: $(tail -n +$((l0 + 1)) "$dir/agent2.log" | head -c 600)")
	touch "$dir/trickle"
	state_within 2 degraded 50 || why+=("not degraded with replies trickling again: $(sync_state 2)")
	t0=$(date +%s%N)
	kill -TERM "${agent[2]}"
	wait "${agent[2]}"
	rc=$?
	t1=$(date +%s%N)
	unset "agent[2]"
	[ "$rc" = 0 ] && [ $(( (t1 - t0) / 1000000 )) -lt 1000 ] ||
		why+=("SIGTERM: exit $rc after $(( (t1 - t0) / 1000000 )) ms")
	echo "  trickling Redis: degraded, SIGTERM ended the agent in $(( (t1 - t0) / 1000000 )) ms"
	result hostile_trickle "${#why[@]}" "${why[*]}"
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}

# ---- TLS: the agent through a local stunnel4 client, the certificate checked -------
# Redis behind a stunnel4 server (as on the Redis host), the agent on a
# stunnel4 client's socket (as on each fleet host) that verifies the
# server's certificate against the fleet's CA and its name. All on Unix
# sockets of the run. A server whose certificate another CA signed: the
# client refuses it, and the agent fails to start (exit 1).
tls_conf() {	# NAME CLIENT(yes|no) ACCEPT CONNECT [OPTION=VALUE...]
	local f=$dir/$1.conf
	shift
	{
		echo "foreground = yes"
		echo "pid ="
		echo "output = $f.log"
		echo "[redis]"
		echo "client = $1"
		echo "accept = $2"
		echo "connect = $3"
		shift 3
		printf '%s\n' "$@"
	} >"$f"
	echo "$f"
}
tls_start() {	# CONF SOCKET: stunnel4 on CONF, until SOCKET is there
	stunnel4 "$1" >/dev/null 2>&1 &
	servers+=($!)
	within 50 test -S "$2"
}
test_tls_tunnel() {
	command -v stunnel4 >/dev/null && command -v openssl >/dev/null ||
		{ result tls_tunnel 1 "stunnel4 or openssl is missing: scripts/install-deps.sh --test"; return; }
	attach 2 || { result tls_tunnel 1 "attach"; return; }
	local t=$dir/tls why=() out rc name=redis.fleet.test
	mkdir -p "$t" && chmod 700 "$t"
	# the fleet's CA, the server's certificate for $name, and a rogue CA's
	local ca
	for ca in ca rogue; do
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$ca fleet CA" \
			-keyout "$t/$ca.key" -out "$t/$ca.pem" >/dev/null 2>&1 || why+=("$ca CA")
	done
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$t/server.key" \
		-out "$t/server.csr" >/dev/null 2>&1 &&
		openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" \
			-CAcreateserial -days 2 -extfile <(echo "subjectAltName=DNS:$name") \
			-out "$t/server.pem" >/dev/null 2>&1 || why+=("server certificate")
	[ ${#why[@]} = 0 ] || { result tls_tunnel 1 "openssl: ${why[*]}"; return; }
	tls_start "$(tls_conf tls-server no "$t/server.sock" "$sock" "cert = $t/server.pem" \
		"key = $t/server.key")" "$t/server.sock" || why+=("the stunnel4 server did not start")
	tls_start "$(tls_conf tls-client yes "$t/client.sock" "$t/server.sock" "CAfile = $t/ca.pem" \
		"verifyChain = yes" "checkHost = $name")" "$t/client.sock" || why+=("the stunnel4 client did not start")
	tls_start "$(tls_conf tls-rogue yes "$t/rogue.sock" "$t/server.sock" "CAfile = $t/rogue.pem" \
		"verifyChain = yes" "checkHost = $name")" "$t/rogue.sock" || why+=("the rogue client did not start")
	[ ${#why[@]} = 0 ] || { result tls_tunnel 1 "${why[*]}"; return; }
	redis_url=unix://$t/client.sock agent_start 2
	state_within 2 ok 50 || why+=("through the tunnel: $(sync_state 2): $(tail -2 "$dir/agent2.log")")
	# a source sent there is exchanged through it: its key in Redis
	send_src 2 "$SRC" 300 1 >/dev/null
	within 20 eval '[ -n "$(redis-cli -s "$sock" hkeys "xrl:{f$id|$SRC}:$((BUCKET_MS * 1000000))" | grep "/${rxdev[2]}:")" ]' ||
		why+=("no field of host 2 in Redis")
	agent_stop 2 || why+=("SIGTERM: exit $?")
	# a certificate the fleet's CA did not sign: refused, the agent too
	out=$(on 2 "$cli" sync --iface "${rxdev[2]}" --redis "unix://$t/rogue.sock" --fleet "f$id" \
		--fleet-key-file "$keyfile" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && [[ $out == "xdp-ratelimit: sync: redis"* ]] || why+=("rogue certificate: exit $rc: $out")
	grep -q 'certificate verify failed' "$dir/tls-rogue.conf.log" ||
		why+=("the rogue client did not check: $(tail -2 "$dir/tls-rogue.conf.log")")
	result tls_tunnel "${#why[@]}" "${why[*]}"
}

# ---- the password goes nowhere but the configured server ---------------------------
# A server that is not a cluster answers every key's command MOVED to an
# address (a listener in host 2's namespace): the agent does not follow
# (the sources stay local, counted as key errors; all of them: degraded),
# and nothing, no AUTH, reaches that address.
test_no_auth_elsewhere() {
	attach 2 || { result no_auth_elsewhere 1 "attach"; return; }
	local t=198.18.203.1 why=() pw=$dir/fake-pw
	ip -n "${hosts[2]}" link set lo up && ip -n "${hosts[2]}" addr add "$t/32" dev lo ||
		{ result no_auth_elsewhere 1 "address $t"; return; }
	: >"$dir/elsewhere.log"
	nsenter --net="/run/netns/${hosts[2]}" python3 "$here/hostile.py" listen "$t" 7100 \
		"$dir/elsewhere.log" >/dev/null 2>&1 &
	servers+=($!)
	python3 "$here/hostile.py" fake "$dir/fake.sock" "$t:7100" >/dev/null 2>&1 &
	servers+=($!)
	within 50 test -S "$dir/fake.sock" &&
		within 50 eval "on 2 ss -ltn 'sport = :7100' | grep -q 7100" ||
		{ result no_auth_elsewhere 1 "the fake server or the listener did not start"; return; }
	echo "secret$id" >"$pw" && chmod 600 "$pw"
	redis_url=unix://$dir/fake.sock agent_start 2 --password-file "$pw"
	state_within 2 ok 50 || why+=("agent 2: $(sync_state 2): $(tail -2 "$dir/agent2.log")")
	# while the source is sent (active, it is exchanged every interval)
	local sender
	send_src 2 "$SRC" 100 8 >/dev/null &
	sender=$!
	within 50 eval '[ "$(sync_field 2 key_errors)" -gt 0 ]' || why+=("no key error counted")
	# every key failing is no exchange: degraded, saying why
	state_within 2 degraded 50 && [[ $(sync_field 2 error) == "every key failed: "*"not a cluster"* ]] ||
		why+=("every key failed, yet $(sync_state 2): $(sync_field 2 error)")
	wait "$sender"
	grep -q "not a cluster: not followed" "$dir/agent2.log" || why+=("log: $(tail -2 "$dir/agent2.log")")
	agent_stop 2 || why+=("SIGTERM: exit $?")
	[ ! -s "$dir/elsewhere.log" ] || why+=("reached $t: $(head -c 200 "$dir/elsewhere.log" | tr -c '[:print:]' .)")
	result no_auth_elsewhere "${#why[@]}" "${why[*]}"
}

run_tests test_
lib_finish
