#!/bin/bash
# The fleet sync agent's cost and the fleet bound, measured (doc/design/fleet.md): two hosts (namespaces, each its own attach and `sync` agent) and a
# redis-server on a Unix socket of the run; N sources send to both hosts at
# twice their quota each. Per --interval: the agent's CPU per interval and
# per active source, its Redis round trips per interval, how long an
# exchange takes, and each source's passes across both hosts per window
# against the bound. Prints a table and writes BUILD_DIR/bench/sync.json.
#
# Usage: bench/sync.sh BUILD_DIR [full|quick|smoke]
#   full: 10,000 sources, intervals 1ms 10ms 100ms, 4 s each
#   quick: the same, 2 s each; smoke: 200 sources, 10ms, 1 s, and a check
#   that every figure is sane (ends "bench-sync: N passed, N failed")
set -u
out=$(cd "${1:-build}" && pwd) || exit 1
mode=${2:-full}
cli=$out/xdp-ratelimit
gen=$out/trafficgen
id=rbs$$x
tx=${id}t
hosts=("${id}0" "${id}1")
dir=$(mktemp -d /tmp/xdp-rl-bsync.XXXXXX)
sock=$dir/redis.sock
head -c 32 /dev/urandom >"$dir/fleet.key" && chmod 600 "$dir/fleet.key"
pids=()
PPS=10			# each source: 10 per 1 s window
case $mode in
full)	N=10000 intervals="off 1ms 10ms 100ms" secs=4 ;;
quick)	N=10000 intervals="${BENCH_SYNC_INTERVALS:-off 1ms 10ms 100ms}" secs=2 ;;
*)	N=200 intervals="10ms" secs=1 ;;
esac
RATE=$(( 2 * PPS * N ))	# frames per second to each host
ncpus=$(nproc)
CLK_TCK=$(getconf CLK_TCK)

cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for p in 0 1; do
		[ -e "/run/netns/${hosts[$p]}" ] &&
			nsenter --net="/run/netns/${hosts[$p]}" "$cli" detach "${id}r$p" >/dev/null 2>&1
	done
	ip netns del "$tx" 2>/dev/null
	for p in "${hosts[@]}"; do ip netns del "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "bench-sync: $*" >&2; }
on() { local h=$1; shift; nsenter --net="/run/netns/${hosts[$h]}" "$@"; }

ip netns add "$tx" || exit 1
MAC=()
for h in 0 1; do
	ip netns add "${hosts[$h]}" &&
		ip link add "${id}t$h" netns "$tx" type veth peer name "${id}r$h" netns "${hosts[$h]}" &&
		ip -n "$tx" link set "${id}t$h" up && ip -n "${hosts[$h]}" link set "${id}r$h" up ||
		{ say "setup failed"; exit 1; }
	MAC[$h]=$(ip -n "${hosts[$h]}" -j link show "${id}r$h" | jq -r '.[0].address')
done
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' --appendonly no \
	--dir "$dir" >"$dir/redis.log" 2>&1 &
redis=$!
pids+=("$redis")
for ((i = 0; i < 50; i++)); do redis-cli -s "$sock" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -s "$sock" ping 2>/dev/null | grep -q PONG ||
	{ echo "bench/sync.sh: redis-server did not start within 5 s: $(tail -3 "$dir/redis.log")" >&2; exit 1; }

# CPU seconds (user + system) of PID so far
cpu_s() { awk -v t="$CLK_TCK" '{ printf "%.6f\n", ($14 + $15) / t }' "/proc/$1/stat"; }
sync_json() { on "$1" "$cli" status --json | jq -c --arg i "${id}r$1" '.interfaces[] | select(.ifname == $i) | .sync'; }

: >"$dir/rows.jsonl"
for iv in $intervals; do
	for h in 0 1; do
		on "$h" "$cli" attach "${id}r$h" --default-pps "$PPS" >/dev/null || exit 1
		[ "$iv" = off ] && continue	# the baseline: each host alone
		nsenter --net="/run/netns/${hosts[$h]}" "$cli" sync --iface "${id}r$h" \
			--redis "unix://$sock" --fleet "b$id" --interval "$iv" --fleet-key-file "$dir/fleet.key" \
			>"$dir/agent$h.log" 2>&1 &
		agent[$h]=$!
		pids+=("${agent[$h]}")
	done
	# each agent syncing (status ok) before the traffic, at most 5 s
	for h in 0 1; do
		[ "$iv" = off ] && break
		for ((i = 0; i < 50; i++)); do
			[ "$(sync_json "$h" | jq -r .state)" = ok ] && break
			sleep 0.1
		done
		[ "$(sync_json "$h" | jq -r .state)" = ok ] ||
			{ echo "bench/sync.sh: agent $h not ok within 5 s: $(tail -2 "$dir/agent$h.log")" >&2; exit 1; }
	done
	# traffic to both hosts; measure the agents over its middle part
	for h in 0 1; do
		nsenter --net="/run/netns/$tx" "$gen" --dev "${id}t$h" --dst-mac "${MAC[$h]}" \
			--src 198.18.0.1 --sources "$N" --rate "$RATE" --duration "$secs" \
			--json >"$dir/gen$h.json" 2>&1 &
		g[$h]=$!
	done
	sleep 0.5
	zero='{"exchanges": 0, "round_trips": 0, "busy_us": 0, "sources": 0}'
	if [ "$iv" = off ]; then c0=0 s0=$zero; else c0=$(cpu_s "${agent[0]}") s0=$(sync_json 0); fi
	r0=$(redis-cli -s "$sock" info stats | awk -F: '/total_commands_processed/ { print $2 + 0 }')
	t0=$(date +%s.%N)
	sleep "$(awk -v s="$secs" 'BEGIN { print s - 1 }')"
	if [ "$iv" = off ]; then c1=0 s1=$zero; else c1=$(cpu_s "${agent[0]}") s1=$(sync_json 0); fi
	r1=$(redis-cli -s "$sock" info stats | awk -F: '/total_commands_processed/ { print $2 + 0 }')
	t1=$(date +%s.%N)
	wait "${g[0]}" "${g[1]}"
	# per source, passes across both hosts
	for h in 0 1; do
		on "$h" "$cli" stats --iface "${id}r$h" --json --top 0 |
			jq -c '[.interfaces[0].sources[] | {a: .address, p: .passed_packets}]' >"$dir/src$h.json"
	done
	jq -nc --slurpfile a "$dir/src0.json" --slurpfile b "$dir/src1.json" \
		--argjson s0 "$s0" --argjson s1 "$s1" --arg iv "$iv" --argjson c0 "$c0" \
		--argjson c1 "$c1" --argjson t0 "$t0" --argjson t1 "$t1" --argjson secs "$secs" \
		--argjson n "$N" --argjson q "$PPS" --argjson ncpus "$ncpus" \
		--argjson rc "$(( r1 - r0 ))" --slurpfile g0 "$dir/gen0.json" \
		--slurpfile g1 "$dir/gen1.json" '
		def ms: if endswith("ms") then rtrimstr("ms") | tonumber else rtrimstr("s") | tonumber * 1000 end;
		($a[0] + $b[0]) | group_by(.a) | map(map(.p) | add) as $per |
		(($s1.exchanges - $s0.exchanges) | if . < 1 then 1 else . end) as $ex |
		($iv | if . == "off" then 0 else ms end) as $ivms |
		(($t1 - $t0) * 1000 / $ex) as $eff |
		{interval: $iv, sources: $n, seconds: $secs,
		 sent_per_host: $g0[0].sent,
		 exchanges_per_s: ($ex * 1000 / (($t1 - $t0) * 1000)),
		 effective_interval_ms: $eff,
		 busy_ms: ($s1.busy_us / 1000),
		 cpu_ms_per_interval: (($c1 - $c0) * 1000 / $ex),
		 cpu_us_per_source: (($c1 - $c0) * 1e6 / $ex / (if $s1.sources > 0 then $s1.sources else 1 end)),
		 round_trips_per_interval: (($s1.round_trips - $s0.round_trips) / $ex),
		 redis_cmds_per_s: ($rc / ($t1 - $t0)),
		 active_sources: $s1.sources,
		 sent_seconds: ([$g0[0].seconds, $g1[0].seconds] | max),
		 windows: ((([$g0[0].seconds, $g1[0].seconds] | max) * 1000 + 899) / 900 | floor),
		 max_source_passed: ($per | max), mean_source_passed: (($per | add) / ($per | length)),
		 unsynced: ($q * 2 * $secs),
		 lag_ms: (2 * ([$ivms, $eff] | max) + 2 * ($s1.busy_us / 1000) + 100)} |
		.bound = (.windows * ($q + ([$q, (2 * $q) * .lag_ms / 1000] | min) + 2 * ($ncpus - 1))) |
		if $iv == "off" then .bound = (.windows * 2 * ($q + $ncpus - 1)) | .effective_interval_ms = 0 else . end' \
		>>"$dir/rows.jsonl" || say "interval $iv: cannot read the results"
	for h in 0 1; do
		if [ "$iv" != off ]; then
			kill "${agent[$h]}" 2>/dev/null
			wait "${agent[$h]}" 2>/dev/null
		fi
		on "$h" "$cli" detach "${id}r$h" >/dev/null
	done
	redis-cli -s "$sock" flushall >/dev/null
done

mkdir -p "$out/bench"
jq -s '{sync: .}' "$dir/rows.jsonl" >"$out/bench/sync.json"
printf '%-9s %8s %9s %9s %10s %10s %11s %9s %12s %10s %8s %9s\n' INTERVAL SOURCES EFF_MS BUSY_MS CPU_MS/INT CPU_US/SRC RTRIPS/INT REDIS/S MAX_SRC/RUN MEAN/RUN BOUND MEAN/S
jq -r '.sync[] | [.interval, .sources, (.effective_interval_ms | floor), (.busy_ms | floor),
	(.cpu_ms_per_interval * 100 | floor / 100), (.cpu_us_per_source * 100 | floor / 100),
	(.round_trips_per_interval * 10 | floor / 10), (.redis_cmds_per_s | floor),
	.max_source_passed, (.mean_source_passed * 10 | floor / 10), (.bound | floor),
	(.mean_source_passed / .sent_seconds * 10 | floor / 10)] | @tsv' \
	"$out/bench/sync.json" |
	awk -F'\t' '{ printf "%-9s %8s %9s %9s %10s %10s %11s %9s %12s %10s %8s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
echo "(MEAN/S: a source's passes across both hosts per second of traffic: the fleet's quota is $PPS, each host alone $((2 * PPS)); per source over $secs s (as paced; BOUND counts the windows the senders really took) at $((2 * PPS)) pps to each of 2 hosts, quota $PPS/s; 'off': no agent, each host alone; bound as doc/design/fleet.md with the measured exchange time; REDIS/S counts every command Redis ran)"

if [ "$mode" = smoke ]; then
	passed=0 failed=0
	ok=$(jq '[.sync[] | select(.exchanges_per_s > 0 and .active_sources > 0 and
		.round_trips_per_interval >= 1 and .max_source_passed > 0 and
		.max_source_passed <= .bound)] | length' "$out/bench/sync.json")
	if [ "$ok" = "$(echo $intervals | wc -w)" ]; then
		echo "ok   bench/sync"; passed=1
	else
		echo "FAIL bench/sync: $(cat "$out/bench/sync.json")"; failed=1
	fi
	echo "bench-sync: $passed passed, $failed failed"
	[ "$failed" = 0 ]
fi
