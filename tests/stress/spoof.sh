#!/bin/bash
# Spoofed-source floods (issue: hardening): millions of packets from random
# IPv4 and IPv6 sources against a table far smaller than the population.
# The receiver's own stack counts (nftables, prerouting) what XDP passed,
# independently of xdp-ratelimit's counters.
# Usage: tests/stress/spoof.sh BUILD_DIR
set -u
suite=stress
. "$(dirname "$0")/../lib.sh"
lib_init "${1:-build}" rlf
secs=3					# per flood phase
max=1024				# --max-sources
agg=5000				# aggregate budget, pps
steady=198.19.7.7 allowed=198.19.8.8	# outside the flood's 198.18.0.0/16
tmpfiles+=("/tmp/$id.allowed" "/tmp/$id.flood")

gen_tx() { nsenter --net="/run/netns/$tx" "$gen" --dev "$vtx" --dst-mac "$mac" "$@"; }
# packets the receiving stack saw from one source set (nft counter NAME)
seen() { ip netns exec "$rx" nft -j list counter inet rlspoof "$1" |
	jq '.nftables[] | select(.counter) | .counter.packets'; }
# frames the receiving veth took in (every one runs the XDP program)
rx_frames() { ip -n "$rx" -j -s link show "$vrx" | jq '.[0].stats64.rx.packets'; }

lib_setup_ns &&
	# two queues: frames sent on CPU 1 (the paced sources) get their own
	# ring, so the flood on CPU 0 cannot crowd them out before XDP
	ip link add "$vtx" netns "$tx" numtxqueues 2 numrxqueues 2 type veth \
		peer name "$vrx" netns "$rx" numtxqueues 2 numrxqueues 2 &&
	ip -n "$tx" link set "$vtx" up && ip -n "$rx" link set "$vrx" up &&
	ip -n "$rx" addr add 198.19.1.1/24 dev "$vrx" ||
	lib_abort spoof_setup "cannot create namespaces"
mac=$(ip -n "$rx" -br link show "$vrx" | awk '{print $3}')
ip netns exec "$rx" nft -f - <<'EOF' || lib_abort spoof_setup nft
table inet rlspoof {
	counter flood4 {}
	counter flood6 {}
	counter steady {}
	counter allowed {}
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		ip saddr 198.18.0.0/16 counter name flood4
		ip6 saddr 2001:db8::/32 counter name flood6
		ip saddr 198.19.7.7 counter name steady
		ip saddr 198.19.8.8 counter name allowed
	}
}
EOF

rl attach "$vrx" --max-sources "$max" --default-pps 10 >/dev/null &&
	rl quota set 198.19.7.0/24 --pps 10 >/dev/null &&
	rl quota set "$allowed" --pps unlimited >/dev/null ||
	lib_abort spoof_setup attach

# The memory the kernel charges for the table is the README's formula.
ncpus=$(nproc --all)
e=$(bpftool map show pinned "$pins/$vrx/sources" -j | jq .max_entries)
mem=$(bpftool map show pinned "$pins/$vrx/sources" -j | jq .bytes_memlock)
pow=1; while [ "$pow" -lt "$e" ]; do pow=$((pow * 2)); done
want=$((e * (72 + ncpus * 312) + 16 * pow))
check spoof_memory_formula "mem >= want && mem <= want + 4096" \
	"memlock $mem B, formula $want B (+ <4 KiB fixed) for $e entries"

# Paced background senders for all three phases: a steady source limited
# to 10 pps sending 100 pps, and an allow-listed one at 1000 pps.
run_s=$((3 * secs + 6))
gen_tx --src "$steady" --rate 100 --duration "$run_s" --cpu 1 >/dev/null 2>&1 &
bg+=($!)
gen_tx --src "$allowed" --rate 1000 --duration "$run_s" --cpu 1 --json \
	>"/tmp/$id.allowed" 2>&1 &
allowed_pid=$!
bg+=($!)
sleep 1

# Flood FAMILY: random sources at full speed for $secs; prints "frames
# received by the veth, passed to the stack, stats latency in ms" (the
# generator sends more than a veth ring holds: the rest never reach XDP)
flood() {
	local before after rx0 rx1 t0 t1 lat=0 src
	if [ "$1" = 4 ]; then
		src=(--src 198.18.0.0 --sources 65536)
	else
		src=(--src 2001:db8:: --sources 100000000)
	fi
	before=$(seen "flood$1") rx0=$(rx_frames)
	gen_tx "${src[@]}" --random --seed $$ --duration "$secs" --cpu 0 --json \
		>"/tmp/$id.flood" 2>&1 &
	local g=$!
	sleep 1
	# stats keeps answering under the flood
	t0=$(date +%s%N)
	rl stats --iface "$vrx" --json >/dev/null || lat=999999
	t1=$(date +%s%N)
	[ "$lat" = 0 ] && lat=$(((t1 - t0) / 1000000))
	wait "$g"
	after=$(seen "flood$1") rx1=$(rx_frames)
	echo "$((rx1 - rx0)) $((after - before)) $lat"
}

steady0=$(seen steady)
read -r sent4a pass4a lat1 <<<"$(flood 4)"
steady1=$(seen steady)
echo "  no aggregate: $sent4a IPv4 frames from 65,536 random sources reached XDP, $pass4a passed"
check spoof_flood_without_aggregate "sent4a >= 1000000 && pass4a * 2 >= sent4a" \
	"without an aggregate most of a spoofed flood passes (each new source its own quota): $pass4a of $sent4a"

rl quota set default --aggregate-pps "$agg" >/dev/null
t0=$(date +%s%N)
read -r sent4b pass4b lat2 <<<"$(flood 4)"
read -r sent6 pass6 lat3 <<<"$(flood 6)"
t1=$(date +%s%N)
steady2=$(seen steady)
elapsed_ms=$(((t1 - t0) / 1000000))
echo "  aggregate $agg pps: IPv4 $sent4b reached XDP, $pass4b passed; IPv6 $sent6 (random /64s), $pass6 passed"
# each family: at most the budget per second of flooding plus one window
check spoof_aggregate_holds_v4 "sent4b >= 1000000 && pass4b <= agg * (secs + 1) + ncpus" \
	"IPv4 flood passed $pass4b, budget $agg/s over ${secs}s"
check spoof_aggregate_holds_v6 "sent6 >= 1000000 && pass6 <= agg * (secs + 1) + ncpus" \
	"IPv6 flood passed $pass6, budget $agg/s over ${secs}s"
check spoof_aggregate_used "pass4b >= agg * (secs - 1) && pass6 >= agg * (secs - 1)" \
	"the budget should be used, not starved: v4 $pass4b, v6 $pass6"
# the steady source keeps its window while the aggregate refuses newcomers:
# 10 pps over the two floods, plus one window
st=$((steady2 - steady1))
check spoof_steady_source_limited "st <= 10 * (elapsed_ms / 1000 + 2)" \
	"steady source passed $st in ${elapsed_ms} ms at 10 pps"
wait "$allowed_pid"
a_sent=$(jq .sent "/tmp/$id.allowed" 2>/dev/null || echo -1)
a_seen=$(seen allowed)
check spoof_allowlisted_loses_nothing "a_sent > 0 && a_seen == a_sent" \
	"allow-listed source: sent $a_sent, received $a_seen"
check spoof_stats_answers "lat1 < 2000 && lat2 < 2000 && lat3 < 2000" \
	"stats took $lat1 / $lat2 / $lat3 ms under the flood"
s=$(rl status --json | jq -r ".interfaces[] | select(.ifname == \"$vrx\") | .state")
ip -n "$rx" -d link show "$vrx" | grep -q "prog/xdp"; xdp=$?
check spoof_still_attached "xdp == 0" "status: $s"
p=$(total passed_packets) d=$(total dropped_packets) r=$(rx_frames)
check spoof_counted_once "p + d <= r && r - (p + d) <= 10" \
	"passed $p + dropped $d, but the veth received $r"
echo "  steady source during the flood without aggregate: $((steady1 - steady0)) passed in ${secs}+ s (limit 10 pps; an eviction by the churn restarts its window)"
lib_finish
