#!/bin/bash
# Fleet sync (xdp-ratelimit sync) through a real Redis Cluster of three
# masters (redis-server processes started here, killed by PID at the end).
# The cluster lives in a namespace of its own: each node on 198.18.201.N
# (port 7000, its bus 17000) on that namespace's loopback, reached from
# each host namespace through a veth (198.18.202.0/30 per host) and a
# route. Hosts, agents and the bound are tests/sync/hosts.sh's (the
# bound: doc/design/fleet.md).
#
# Usage: tests/sync/cluster.sh [BUILD_DIR] [NAME...]
set -u
suite=sync-cluster
. "$(dirname "$0")/../lib.sh"
lib_args rlk "$@"
. "$here/hosts.sh"

rns=${id}k		# the cluster's namespace
extra_ns=("$rns")
nodes=(198.18.201.1 198.18.201.2 198.18.201.3)
PORT=7000
declare -A node_pid=()
redis_url=redis://${nodes[0]}:$PORT

tests=(two_hosts_one_quota keys_spread slot_moved node_down)
check_test_names

# ---- the cluster -------------------------------------------------------------
in_r() { ip netns exec "$rns" "$@"; }
rcli() {	# NODE(0..2) ARGS...: redis-cli to that node
	local n=$1
	shift
	in_r redis-cli -h "${nodes[$n]}" -p "$PORT" "$@"
}
setup_cluster_net() {
	local n
	ip netns add "$rns" && ip -n "$rns" link set lo up || return 1
	for n in 0 1 2; do
		ip -n "$rns" addr add "${nodes[$n]}/32" dev lo || return 1
	done
	# a veth from the cluster to hosts 0 and 1, and a route to the nodes
	for n in 0 1; do
		ip link add "${id}g$n" netns "$rns" type veth peer name "${id}h$n" netns "${hosts[$n]}" &&
			ip -n "$rns" addr add "198.18.202.$((4 * n + 1))/30" dev "${id}g$n" &&
			ip -n "${hosts[$n]}" addr add "198.18.202.$((4 * n + 2))/30" dev "${id}h$n" &&
			ip -n "$rns" link set "${id}g$n" up && ip -n "${hosts[$n]}" link set "${id}h$n" up &&
			ip -n "${hosts[$n]}" route add 198.18.201.0/24 via "198.18.202.$((4 * n + 1))" ||
			return 1
	done
}
node_start() {	# N: node N, with its cluster config file (kept across restarts)
	local n=$1
	mkdir -p "$dir/n$n"
	# not through in_r: a function sent to the background is a subshell,
	# and $! must be the server's own PID
	ip netns exec "$rns" redis-server --bind "${nodes[$n]}" --port "$PORT" --protected-mode no \
		--cluster-enabled yes --cluster-config-file "$dir/n$n/nodes.conf" \
		--cluster-node-timeout 1000 --cluster-announce-ip "${nodes[$n]}" \
		--save '' --appendonly no --dir "$dir/n$n" >>"$dir/node$n.log" 2>&1 &
	node_pid[$n]=$!
	servers+=($!)
	local i
	for ((i = 0; i < 50; i++)); do
		rcli "$n" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	return 1
}
node_stop() {	# N
	kill "${node_pid[$1]}" 2>/dev/null
	wait "${node_pid[$1]}" 2>/dev/null
}
# Poll until every node says cluster_state:ok, at most TRIES x 0.1 s.
cluster_ok_within() {	# TRIES
	local i n ok
	for ((i = 0; i < $1; i++)); do
		ok=0
		for n in 0 1 2; do
			rcli "$n" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && ok=$((ok + 1))
		done
		[ "$ok" = 3 ] && return 0
		sleep 0.1
	done
	return 1
}
node_id() { rcli "$1" cluster myid; }
# The address of the master serving KEY's slot, from CLUSTER NODES (its
# slot ranges from field 9; "[...]" are migrations, not ownership).
owner_of() {	# KEY
	local slot
	slot=$(rcli 0 cluster keyslot "$1")
	rcli 0 cluster nodes | awk -v s="$slot" '$3 ~ /master/ {
		for (i = 9; i <= NF; i++) {
			if ($i ~ /^\[/) continue
			n = split($i, r, "-"); if (n == 1) r[2] = r[1]
			if (s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) { split($2, a, ":"); print a[1] }
		} }'
}
# The latest bucket among KEY's fields (HOST:BUCKET) on node N, asked
# after ASKING (the slot may be importing there).
last_bucket() {	# N KEY
	printf 'ASKING\nHKEYS %s\n' "$2" | rcli "$1" | sed -n 's/.*:\([0-9][0-9]*\)$/\1/p' | sort -n | tail -1
}
key_of() { echo "xrl:{f$id|$1}:$((BUCKET_MS * 1000000))"; }

lib_require redis-server redis-cli
for f in "$cli" "$gen"; do
	[ -x "$f" ] || lib_abort setup "$f is missing: build with make OUTPUT=$build"
done
lib_setup_ns && setup_host 0 && setup_host 1 && setup_cluster_net ||
	lib_abort setup "cannot create namespaces and links"
for n in 0 1 2; do
	node_start "$n" || lib_abort setup "redis node $n did not start: $(tail -3 "$dir/node$n.log")"
done
in_r redis-cli --cluster create "${nodes[0]}:$PORT" "${nodes[1]}:$PORT" "${nodes[2]}:$PORT" \
	--cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 ||
	lib_abort setup "redis-cli --cluster create: $(tail -3 "$dir/create.log")"
cluster_ok_within 100 || lib_abort setup "the cluster is not ok: $(rcli 0 cluster info | head -1)"

# ---- two hosts, one quota, through the cluster ---------------------------------
test_two_hosts_one_quota() {
	attach 0 && attach 1 || { result two_hosts_one_quota 1 "attach"; return; }
	# each host is told another node: any master leads to the whole cluster
	agent_start 0 && redis_url=redis://${nodes[1]}:$PORT agent_start 1
	state_within 0 ok 50 && state_within 1 ok 50 ||
		{ result two_hosts_one_quota 1 "agents not ok: $(cat "$dir"/agent*.log)"; return; }
	grep -q "Redis Cluster of 3 masters" "$dir/agent0.log"
	result cluster_detected $? "agent 0 says: $(head -1 "$dir/agent0.log")"
	local a0 t b fields
	a0=$(total_arrived 0 1)
	send_all 3 "$RATE" 0 1
	t=$(( $(total_arrived 0 1) - a0 ))
	fields=$(rcli 0 -c hkeys "$(key_of "$SRC")" | tr '\n' ' ')
	[[ $fields == *"/${rxdev[0]}:"* && $fields == *"/${rxdev[1]}:"* ]]
	result cluster_fields_per_host $? "fields of $(key_of "$SRC"): '$fields'"
	b=$(bound 3 2 "$RATE")
	echo "  two hosts through the cluster, 3 s at $RATE pps each, quota $PPS/s: $t passed (bound $b)"
	check two_hosts_one_quota "t <= b && t >= 3 * PPS * 8 / 10" \
		"sent $RATE pps to each of 2 hosts for 3 s, quota $PPS/s: passed $t across both (bound $b; unsynced hosts pass about $((3 * PPS * 2)))"
}

# ---- several sources: their keys on more than one master -------------------------
# Sets on_nodes (masters holding any of the sources' keys) and bad (sources
# whose hash is not on the master of its slot, holding host 0's fields);
# true when the keys are on 2 masters or more and none is bad.
keys_spread_seen() {	# SOURCES...
	local s n owner
	on_nodes=0 bad=()
	for n in 0 1 2; do
		[ "$(rcli "$n" --scan --pattern "xrl:{f$id|198.18.0.[12]*" | wc -l)" -gt 0 ] &&
			on_nodes=$((on_nodes + 1))
	done
	# each source's hash on the master of its slot (a plain HLEN there,
	# no redirection)
	for s in "$@"; do
		owner=$(owner_of "$(key_of "$s")")
		for n in 0 1 2; do [ "${nodes[$n]}" = "$owner" ] && break; done
		[ "$(rcli "$n" hlen "$(key_of "$s")" 2>&1)" -gt 0 ] 2>/dev/null ||
			bad+=("$s: not on its master $owner")
	done
	[ "$on_nodes" -ge 2 ] && [ ${#bad[@]} = 0 ]
}
test_keys_spread() {
	[ -n "${agent[0]:-}" ] || { attach 0 && agent_start 0 && state_within 0 ok 50; }
	local srcs=() pids=() s on_nodes=0 bad=()
	for s in 10 11 12 13 14 15 16 17 18 19 20 21; do srcs+=("198.18.0.$s"); done
	# the sources keep sending while Redis is read: a key is written at
	# the agent's next exchange and expires a window after the last, so a
	# reading after the traffic could come too early or too late
	for s in "${srcs[@]}"; do
		in_tx "$gen" --dev "${txdev[0]}" --dst-mac "${MAC[0]}" --src "$s" \
			--rate 50 --duration 30 --json >/dev/null 2>&1 &
		pids+=($!)
	done
	within 50 keys_spread_seen "${srcs[@]}"
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	check keys_spread "on_nodes >= 2 && ${#bad[@]} == 0" \
		"12 sources: keys on $on_nodes of 3 masters; ${bad[*]}"
}

# ---- a source's slot moves to another master (ASK while it moves, then MOVED) ----
test_slot_moved() {
	[ -n "${agent[0]:-}" ] && [ -n "${agent[1]:-}" ] ||
		{ attach 0 && attach 1 && agent_start 0 && agent_start 1; }
	state_within 0 ok 50 && state_within 1 ok 50 || { result slot_moved 1 "agents not ok"; return; }
	local key slot from to i f0 f1 a0 t b pids=() l0 slow
	l0=$(wc -l <"$dir/agent0.log")
	key=$(key_of "$SRC")
	slot=$(rcli 0 cluster keyslot "$key")
	f0=$(on 0 "$cli" status --json | jq --arg i "${rxdev[0]}" '.interfaces[] | select(.ifname == $i) | .sync.failures')
	for ((from = 0; from < 3; from++)); do [ "${nodes[$from]}" = "$(owner_of "$key")" ] && break; done
	to=$(( (from + 1) % 3 ))
	# traffic all along, so that the agents exchange the source meanwhile
	a0=$(total_arrived 0 1)
	send_all 4 "$RATE" 0 1 &
	pids+=($!)
	rcli "$to" cluster setslot "$slot" importing "$(node_id "$from")" >/dev/null &&
		rcli "$from" cluster setslot "$slot" migrating "$(node_id "$to")" >/dev/null &&
		rcli "$from" migrate "${nodes[$to]}" "$PORT" "" 0 5000 keys "$key" >/dev/null
	# the key is on its new master, the slot still the old one's: the
	# agents are answered ASK and write there after ASKING: a field of a
	# bucket later than any the key had when it moved appears there
	local b0 b1
	b0=$(last_bucket "$to" "$key")
	for ((i = 0; i < 30; i++)); do
		b1=$(last_bucket "$to" "$key")
		[ "${b1:-0}" -gt "${b0:-0}" ] && break
		sleep 0.1
	done
	local asked=$i
	# the new owner first, then the old (as redis-cli --cluster does: the
	# old one's MOVED then leads to a node that knows it owns the slot)
	for n in "$to" "$from" $(( (to + 1) % 3 )); do
		rcli "$n" cluster setslot "$slot" node "$(node_id "$to")" >/dev/null
	done
	# while the source is still sent (the key expires a window after the
	# agents' last write): the key on its new master
	moved_there() { [ "$(owner_of "$key")" = "${nodes[$to]}" ] &&
		[ "$(rcli "$to" hlen "$key")" -gt 0 ] 2>/dev/null; }
	within 20 moved_there
	result slot_moved_key_there $? "key $key: owner $(owner_of "$key"), hlen on ${nodes[$to]}: $(rcli "$to" hlen "$key")"
	wait "${pids[@]}"
	t=$(( $(total_arrived 0 1) - a0 ))
	b=$(bound 4 2 "$RATE")
	f1=$(on 0 "$cli" status --json | jq --arg i "${rxdev[0]}" '.interfaces[] | select(.ifname == $i) | .sync.failures')
	echo "  slot $slot moved from ${nodes[$from]} to ${nodes[$to]} under traffic: $t passed in 4 s (bound $b)"
	# no exchange failed for the move; one a loaded machine answered
	# too late is no failure of ASK or MOVED (the agent logs it as such)
	slow=$(tail -n +"$((l0 + 1))" "$dir/agent0.log" | grep -c "no reply in time")
	check slot_moved "asked < 30 && f1 - f0 <= slow && t <= b && $(state_within 0 ok 100 && echo 1 || echo 0)" \
		"ASK followed: $([ "$asked" -lt 30 ] && echo yes || echo no); failures $f0 -> $f1 ($slow replies too late); $t passed (bound $b); agent: $(tail -2 "$dir/agent0.log")"
}

# ---- a master down: degraded, then back ----------------------------------------------
test_node_down() {
	[ -n "${agent[0]:-}" ] || { attach 0 && agent_start 0; }
	state_within 0 ok 50 || { result node_down 1 "agent not ok"; return; }
	node_stop 2
	state_within 0 degraded 50
	result node_down_degraded $? "a master killed: status says $(on 0 "$cli" status | grep "^${rxdev[0]} sync: "); agent: $(tail -2 "$dir/agent0.log")"
	kill -0 "${agent[0]}" 2>/dev/null
	result node_down_agent_runs $? "the agent exited"
	node_start 2 && cluster_ok_within 150 ||
		{ result node_back_resumed 1 "the node did not rejoin: $(rcli 2 cluster info | head -1)"; return; }
	state_within 0 ok 100
	result node_back_resumed $? "after the node came back: $(sync_state 0)"
}

run_tests test_
lib_finish
