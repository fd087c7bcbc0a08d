# Fleet-sync test hosts, shared by tests/sync/run.sh (one redis-server) and
# tests/sync/cluster.sh (a Redis Cluster): receiving namespaces ("hosts"),
# each with its own attach and its own agent, and one sender namespace with
# a veth to each that sends one source to all of them. What XDP passed is
# counted independently, by nftables on each receiver's ingress.
#
# Source after tests/lib.sh's lib_init; set redis_url before agent_start.
# Cleanup (trap) kills the agents and redis servers ($redis_pid, servers)
# by PID, detaches, deletes the hosts' and extra_ns's namespaces.
# shellcheck shell=bash

# hosts: $rx (from lib.sh) and two more; a veth from the sender to each
hosts=("$rx" "${id}s" "${id}u")
txdev=("${id}a" "${id}c" "${id}e")
rxdev=("${id}b" "${id}d" "${id}f")
rx_ifaces=("${rxdev[@]}")
ncpus=$(nproc)
dir=$(mktemp -d /tmp/xdp-rl-sync.XXXXXX)
# the fleet key every agent is given: root's, mode 600
keyfile=$dir/fleet.key
head -c 32 /dev/urandom >"$keyfile" && chmod 600 "$keyfile"
redis_pid=
servers=()	# more redis-server PIDs
extra_ns=()	# more namespaces to delete
declare -A agent=()


sync_cleanup() {
	local p
	for p in "${agent[@]}" $redis_pid "${servers[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	# detach (the agents exit on it) while the namespaces exist (the cluster
	# suite has no third host: no pin directory to look for there)
	for p in 0 1 2; do
		[ -e "$(pin_dir "${rxdev[$p]}" "${hosts[$p]}" 2>/dev/null)" ] && on "$p" "$cli" detach "${rxdev[$p]}" >/dev/null 2>&1
	done
	for p in "${hosts[1]}" "${hosts[2]}" "${extra_ns[@]}"; do
		ip netns del "$p" 2>/dev/null
	done
	rm -rf "$dir"
	lib_cleanup
}
trap sync_cleanup EXIT

on() {	# HOST CMD...: run in host HOST's namespace (0, 1, 2)
	local h=$1
	shift
	nsenter --net="/run/netns/${hosts[$h]}" "$@"
}

# ---- hosts -------------------------------------------------------------------
MAC=()
setup_host() {	# N
	local n=$1 h=${hosts[$1]}
	[ "$n" = 0 ] || ip netns add "$h" || return 1
	ip link add "${txdev[$n]}" netns "$tx" type veth peer name "${rxdev[$n]}" netns "$h" &&
		ip -n "$tx" link set "${txdev[$n]}" up && ip -n "$h" link set "${rxdev[$n]}" up &&
		MAC[$n]=$(ip -n "$h" -j link show "${rxdev[$n]}" | jq -r '.[0].address') &&
		ip netns exec "$h" nft -f - <<EOF
table netdev c_sync {
	counter src {}
	chain in {
		type filter hook ingress device "${rxdev[$n]}" priority 0; policy accept;
		ip saddr $SRC counter name src
	}
}
EOF
}
arrived() {	# N: frames of $SRC that XDP passed on host N
	ip netns exec "${hosts[$1]}" nft -j list counter netdev c_sync src |
		jq '.nftables[] | select(.counter) | .counter.packets'
}
attach() {	# N
	[ -e "$(pin_dir "${rxdev[$1]}" "${hosts[$1]}")" ] && on "$1" "$cli" detach "${rxdev[$1]}" >/dev/null
	on "$1" "$cli" attach "${rxdev[$1]}" --default-pps "$PPS" >/dev/null
}
agent_start() {	# N [ARGS...]
	local n=$1
	shift
	# nsenter execs the CLI: $! is the agent itself
	nsenter --net="/run/netns/${hosts[$n]}" "$cli" sync --iface "${rxdev[$n]}" \
		--redis "$redis_url" --fleet "f$id" --interval "$INTERVAL" --fleet-key-file "$keyfile" "$@" \
		>>"$dir/agent$n.log" 2>&1 &
	agent[$n]=$!
}
agent_stop() {	# N [SIGNAL]
	[ -n "${agent[$1]:-}" ] || return 0
	kill "-${2:-TERM}" "${agent[$1]}" 2>/dev/null
	wait "${agent[$1]}" 2>/dev/null
	local rc=$?
	unset "agent[$1]"
	return $rc
}
# status of host N's agent: "ok", "degraded", "starting", "gone" or "none"
sync_state() {	# N
	on "$1" "$cli" status --json |
		jq -r --arg i "${rxdev[$1]}" '.interfaces[] | select(.ifname == $i) | .sync.state // "none"'
}
# Poll until host N's sync state is STATE, at most TRIES x 0.1 s.
state_within() {	# N STATE TRIES
	local i
	for ((i = 0; i < $3; i++)); do
		[ "$(sync_state "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# Send $SRC to each host in HOSTS at RATE pps for SECONDS, all at once.
send_all() {	# SECONDS RATE HOSTS...
	local s=$1 r=$2 pids=() n
	shift 2
	for n in "$@"; do
		in_tx "$gen" --dev "${txdev[$n]}" --dst-mac "${MAC[$n]}" --src "$SRC" \
			--rate "$r" --duration "$s" --json >/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
}
total_arrived() {	# HOSTS...
	local t=0 n
	for n in "$@"; do t=$((t + $(arrived "$n"))); done
	echo "$t"
}
# The bound over SECONDS of traffic to H hosts at RATE each (header).
bound() {	# SECONDS H RATE
	local L=$((2 * INTERVAL_MS + BUCKET_MS + 50)) q=$PPS
	local rl=$(( $3 * L / 1000 ))
	[ "$rl" -lt "$q" ] || rl=$q
	local windows=$(( ($1 * 1000 + 899) / 900 ))
	echo $(( windows * (q + ($2 - 1) * rl + $2 * (ncpus - 1)) ))
}

SRC=198.18.0.7
PPS=500			# Q = 500 per 1 s window, 10 buckets of 100 ms
INTERVAL=20ms INTERVAL_MS=20
BUCKET_MS=100
RATE=1000		# twice the quota, to each host
