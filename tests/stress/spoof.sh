#!/bin/bash
# Spoofed-source floods (issue: hardening): millions of packets from random
# IPv4 and IPv6 sources against a table far smaller than the population,
# without and then with an aggregate budget on the rule they match.
# The receiver's own stack counts (nftables, prerouting) what XDP passed,
# independently of xdp-ratelimit's counters.
#
# Populations: IPv4 floods come from 198.18.0.0/16, 65,536 sources (the
# benchmark range 198.18.0.0/15 holds 131,072 at most, and the paced
# sources below live in the other /16); IPv6 floods from random /64s of
# 2001:db8::/32 (2^32 of them). Both are 64 times --max-sources or more.
# Usage: tests/stress/spoof.sh BUILD_DIR
set -u
suite=stress
. "$(dirname "$0")/../lib.sh"
lib_init "${1:-build}" rlf
secs=3					# per flood phase
max=1024				# --max-sources
agg=5000				# aggregate budget, pps
steady=198.19.7.7 allowed=198.19.8.8	# outside the flood's 198.18.0.0/16
steady_pps=10				# the steady source's quota (it sends 100 pps)
stopf=/tmp/$id.stop
tmpfiles+=("/tmp/$id.allowed" "/tmp/$id.flood" "$stopf" "/tmp/$id.reader1" "/tmp/$id.reader2")

# packets the receiving stack saw from one source set (nft counter NAME)
seen() { in_rx nft -j list counter inet rlspoof "$1" |
	jq '.nftables[] | select(.counter) | .counter.packets'; }
# frames the receiving veth took in (every one runs the XDP program)
rx_frames() { ip -n "$rx" -j -s link show "$vrx" | jq '.[0].stats64.rx.packets'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

lib_setup_ns &&
	# two queues: frames sent on CPU 1 (the paced sources) get their own
	# ring, so the flood on CPU 0 cannot crowd them out before XDP
	ip link add "$vtx" netns "$tx" numtxqueues 2 numrxqueues 2 type veth \
		peer name "$vrx" netns "$rx" numtxqueues 2 numrxqueues 2 &&
	ip -n "$tx" link set "$vtx" up && ip -n "$rx" link set "$vrx" up &&
	ip -n "$rx" addr add 198.19.1.1/24 dev "$vrx" ||
	lib_abort spoof_setup "cannot create namespaces"
mac=$(ip -n "$rx" -br link show "$vrx" | awk '{print $3}')
in_rx nft -f - <<'EOF' || lib_abort spoof_setup nft
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
	rl quota set 198.19.7.0/24 --pps "$steady_pps" --iface "$vrx" >/dev/null &&
	rl quota set "$allowed" --pps unlimited --iface "$vrx" >/dev/null ||
	lib_abort spoof_setup attach

# The memory the kernel charges for the table (sources, their index, their
# keys and their history) is doc/design/memory.md's formula.
ncpus=$(nproc --all)
e=$(bpftool map show pinned "$pins/$vrx/sources" -j | jq .max_entries)
nb=$(bpftool map show pinned "$pins/$vrx/source_index" -j | jq .max_entries)
ek=$(bpftool map show pinned "$pins/$vrx/source_keys" -j | jq .max_entries)
eh=$(bpftool map show pinned "$pins/$vrx/history" -j | jq .max_entries)
mem=0
for m in sources source_index source_keys history; do
	mem=$((mem + $(bpftool map show pinned "$pins/$vrx/$m" -j | jq .bytes_memlock)))
done
vsz=$(bpftool map show pinned "$pins/$vrx/sources" -j | jq .bytes_value)
isz=$(bpftool map show pinned "$pins/$vrx/source_index" -j | jq .bytes_value)
ksz=$(bpftool map show pinned "$pins/$vrx/source_keys" -j | jq .bytes_value)
hsz=$(bpftool map show pinned "$pins/$vrx/history" -j | jq .bytes_value)
pow=1; while [ "$pow" -lt "$eh" ]; do pow=$((pow * 2)); done
want=$((e * (8 + ncpus * ((vsz + 7) / 8 * 8)) +
	(nb * ((isz + 7) / 8 * 8) + 4095) / 4096 * 4096 + 4096 +
	(ek * ((ksz + 7) / 8 * 8) + 4095) / 4096 * 4096 + 4096 +
	eh * (64 + (hsz + 7) / 8 * 8) + 16 * pow))
check spoof_memory_formula "e == 16 * nb && ek == e && mem >= want && mem <= want + 4096" \
	"memlock $mem B, formula $want B (+ <4 KiB fixed) for $e slots in $nb buckets ($eh of history)"

# Paced background senders for all four phases, stopped (SIGTERM) after
# the last: a steady source limited to 10 pps sending 100 pps, and an
# allow-listed one at 1000 pps. (nsenter execs the generator: $! is it.)
run_s=$((2 * 12 + 2 * secs + 20))
nsenter --net="/run/netns/$tx" "$gen" --dev "$vtx" --dst-mac "$mac" \
	--src "$steady" --rate 100 --duration "$run_s" --cpu 1 >/dev/null 2>&1 &
steady_pid=$!
bg+=($!)
nsenter --net="/run/netns/$tx" "$gen" --dev "$vtx" --dst-mac "$mac" \
	--src "$allowed" --rate 1000 --duration "$run_s" --cpu 1 --json \
	>"/tmp/$id.allowed" 2>&1 &
allowed_pid=$!
bg+=($!)
sleep 1

# A stats reader: `stats --iface $vrx ARGS` again and again until $stopf
# exists; writes "runs, slowest in ms, failures" to FILE.
reader() {	# FILE ARGS...
	local f=$1 n=0 slow=0 bad=0 t0 ms
	shift
	while [ ! -e "$stopf" ]; do
		t0=$(now_ms)
		rl stats --iface "$vrx" "$@" >/dev/null 2>&1 || bad=$((bad + 1))
		ms=$(($(now_ms) - t0))
		[ "$ms" -gt "$slow" ] && slow=$ms
		n=$((n + 1))
	done
	echo "$n $slow $bad" >"$f"
}

# Flood FAMILIES [MIN_FRAMES]: random sources at full speed for $secs (with
# MIN_FRAMES: then on until that many frames reached XDP, at most 12 s in
# all: a flood that mostly passes runs at the speed of the receiving
# stack), with two stats readers in parallel (JSON with every source; the
# table with the top 50). Prints: frames received by the veth, passed to
# the stack; the steady source's passes and the milliseconds between the
# two readings that bound them; stats runs, slowest ms, failures (both
# readers). FAMILIES is 4, 6 or 46: both at once, a generator each (the
# default rule is one rule: both families share its budgets). (The
# generator sends more than a veth ring holds: the rest never reach XDP.)
flooded() {	# FAMILIES: the flood's packets the stack saw
	local fam n=0
	for fam in $(grep -o . <<<"$1"); do n=$((n + $(seen "flood$fam"))); done
	echo "$n"
}
flood() {
	local before after rx0 rx1 s0 s1 t0 t1 g gs=() r1 r2 src fam dur=$secs min=${2:-0}
	[ "$min" -gt 0 ] && dur=20	# a backstop: it stops at MIN frames
	rm -f "$stopf" "/tmp/$id.reader1" "/tmp/$id.reader2"
	t0=$(now_ms)
	s0=$(seen steady) before=$(flooded "$1") rx0=$(rx_frames)
	for fam in $(grep -o . <<<"$1"); do
		if [ "$fam" = 4 ]; then
			src=(--src 198.18.0.0 --sources 65536)
		else
			src=(--src 2001:db8:: --sources 100000000)
		fi
		# (nsenter execs the generator: $! is the generator itself)
		nsenter --net="/run/netns/$tx" "$gen" --dev "$vtx" --dst-mac "$mac" \
			"${src[@]}" --random --seed $$ --duration "$dur" --cpu 0 --json \
			>/dev/null 2>&1 &
		g=$!
		gs+=("$g")
		bg+=("$g")
	done
	sleep 0.5
	reader "/tmp/$id.reader1" --json --top 0 &
	r1=$!
	reader "/tmp/$id.reader2" --top 50 &
	r2=$!
	if [ "$min" -gt 0 ]; then
		while kill -0 "$g" 2>/dev/null; do
			[ $(($(now_ms) - t0)) -ge $((secs * 1000)) ] &&
				[ $(($(rx_frames) - rx0)) -ge "$min" ] && break
			sleep 0.2
		done
		kill -TERM "${gs[@]}" 2>/dev/null
	fi
	wait "${gs[@]}"
	touch "$stopf"
	wait "$r1" "$r2"
	after=$(flooded "$1") rx1=$(rx_frames) s1=$(seen steady)
	t1=$(now_ms)
	read -r n1 slow1 bad1 <"/tmp/$id.reader1" || n1=0 slow1=999999 bad1=1
	read -r n2 slow2 bad2 <"/tmp/$id.reader2" || n2=0 slow2=999999 bad2=1
	echo "$((rx1 - rx0)) $((after - before)) $((s1 - s0)) $((t1 - t0))" \
		"$((n1 + n2)) $((slow1 > slow2 ? slow1 : slow2)) $((bad1 + bad2))"
}

# What a source at QUOTA per 1 s window may pass in MS milliseconds: any
# interval of W - W/B (0.9 s) holds at most the quota plus ncpus - 1
# (doc/design/window.md, doc/design/cpus.md).
steady_bound() {	# MS
	echo $(( ($1 + 899) / 900 * (steady_pps + ncpus - 1) ))
}
# The steady source keeps sending through a flood: its limit holds.
check_steady() {	# NAME PASSED MS
	local b
	b=$(steady_bound "$3")
	check "$1" "$2 <= $b && $2 > 0" \
		"steady source (quota $steady_pps pps, sending 100 pps) passed $2 in $3 ms (at most $b)"
}
check_stats() {	# NAME RUNS SLOWEST FAILURES
	check "$1" "$2 >= 2 && $3 < 2000 && $4 == 0" \
		"two parallel stats readers: $2 runs, slowest $3 ms, $4 failed"
}

# ---- without an aggregate budget ---------------------------------------
# a million frames aimed at (a loaded machine may send fewer in the
# backstop's time: at least 500,000, some 500 times the table, must come)
read -r sent4a pass4a st4a ms4a runs4a slow4a bad4a <<<"$(flood 4 1000000)"
echo "  no aggregate: IPv4 $sent4a frames from 65,536 random sources reached XDP, $pass4a passed; steady source $st4a in $ms4a ms; stats $runs4a runs, slowest $slow4a ms"
check spoof_v4_flood_without_aggregate "sent4a >= 500000 && pass4a * 2 >= sent4a" \
	"without an aggregate most of a spoofed flood passes (each new source its own quota): $pass4a of $sent4a"
check_steady spoof_v4_steady_source_limited "$st4a" "$ms4a"
check_stats spoof_v4_stats_answers "$runs4a" "$slow4a" "$bad4a"

read -r sent6a pass6a st6a ms6a runs6a slow6a bad6a <<<"$(flood 6 1000000)"
echo "  no aggregate: IPv6 $sent6a frames from random /64s reached XDP, $pass6a passed; steady source $st6a in $ms6a ms; stats $runs6a runs, slowest $slow6a ms"
check spoof_v6_flood_without_aggregate "sent6a >= 500000 && pass6a * 2 >= sent6a" \
	"without an aggregate most of a spoofed flood passes (each new /64 its own quota): $pass6a of $sent6a"
check_steady spoof_v6_steady_source_limited "$st6a" "$ms6a"
check_stats spoof_v6_stats_answers "$runs6a" "$slow6a" "$bad6a"

# ---- with an aggregate budget on the rule the floods match ---------------
# Both families at once: the default rule is one rule, with one aggregate
# window for IPv4 and IPv6 (one per family would pass twice the budget).
rl quota set default --aggregate-pps "$agg" --iface "$vrx" >/dev/null ||
	result spoof_aggregate_set 1 "quota set default --aggregate-pps $agg failed"
read -r sentb passb stb msb runsb slowb badb <<<"$(flood 46)"
echo "  aggregate $agg pps: IPv4 and IPv6 at once, $sentb frames reached XDP, $passb passed"
# at most the budget per second of flooding plus one window, both together
check spoof_aggregate_holds_both_families "sentb >= 1000000 && passb <= agg * (secs + 1) + ncpus" \
	"IPv4 + IPv6 flood passed $passb, one budget of $agg/s over ${secs}s"
check spoof_aggregate_used "passb >= agg * (secs - 1)" \
	"the budget should be used, not starved: $passb"
# the steady source keeps its window while the aggregate refuses newcomers
check_steady spoof_steady_source_limited_aggregate "$stb" "$msb"
check_stats spoof_stats_answers_aggregate "$runsb" "$slowb" "$badb"

kill -TERM "$steady_pid" "$allowed_pid" 2>/dev/null
wait "$allowed_pid"
a_sent=$(jq .sent "/tmp/$id.allowed" 2>/dev/null || echo -1)
# the last frames through the stack: wait for them, with a bound
allowed_all_seen() { a_seen=$(seen allowed); [ "$a_seen" = "$a_sent" ]; }
within 20 allowed_all_seen
check spoof_allowlisted_loses_nothing "a_sent > 0 && a_seen == a_sent" \
	"allow-listed source: sent $a_sent, received $a_seen"
s=$(rl status --json | jq -r ".interfaces[] | select(.ifname == \"$vrx\") | .state")
ip -n "$rx" -d link show "$vrx" | grep -q "prog/xdp"; xdp=$?
check spoof_still_attached "xdp == 0" "status: $s"
p=$(total passed_packets) d=$(total dropped_packets) r=$(rx_frames)
check spoof_counted_once "p + d <= r && r - (p + d) <= 10" \
	"passed $p + dropped $d, but the veth received $r"
lib_finish
