#!/bin/bash
# make bench: xdp-ratelimit against bare XDP, nftables and iptables, in one
# run on this machine. Prints one table and writes
# BUILD_DIR/bench/results.json.
#
# Usage: bench/run.sh BUILD_DIR [--smoke]
#   BENCH_QUICK=1   every part, shorter and fewer repeats (about 40 s)
#   --smoke         a tiny version of each part; checks that each produced
#                   sane numbers (not speed targets); ends "bench: N passed,
#                   N failed"
#   BENCH_GROUPS="v6_1m" BENCH_REPS=N: only those throughput groups, N repeats
#   BENCH_CPU=N     the CPU the generator, its receiver and the cost runs
#                   use (default: the last one)
#
# Parts, in this order:
#   cost        per-packet cost, BPF_PROG_TEST_RUN (ratelimit-bench cost)
#   memory      the sources, source_index, source_keys and history maps as
#               the kernel charges them (bpftool memlock)
#   accuracy    paced traffic at 1.5x, 2x and 10x the quota: packets passed
#               per window, xdp-ratelimit, nftables and hashlimit (while the
#               throughput part's big tables are being allocated)
#   throughput  trafficgen at full speed over a veth pair into (a) bare
#               XDP_DROP, (b) xdp-ratelimit dropping, (c) its dry run,
#               (d) an nftables meter, (e) iptables hashlimit, and the
#               minimal per-source limiter (the floor of any)
#   pairs       the spoofed floods (without and with an aggregate budget,
#               with a newcomer budget) against the single-source rate, in
#               back-to-back runs repeated many times: the ratio the target
#               is about
#   sweep       table size: 2^10 to 2^22 sources (as far as memory allows),
#               Mpps of bare XDP_DROP, the minimal limiter, xdp-ratelimit
#               and an nftables meter, each holding every source; drawn
#               with gnuplot (full mode: bench/sweep.png and bench/sweep.dat
#               beside PERFORMANCE.md)
#   established established sources and a spoofed flood in the same rule
#               with a newcomer budget: what the established sources lost
#   dispatcher  xdp-ratelimit under libxdp's dispatcher against attached
#               directly, in Debian 12's own kernel (6.1) under qemu, where
#               the dispatcher works: per-packet cost and veth rows beside
#               bare XDP_DROP, the minimal limiter and an nftables meter
#               (bench/vm-dispatcher.sh, booted by tests/vm/run.sh)
#   cpus        the per-packet cost of a light source (one packet per
#               bucket: each rolls the bucket and refreshes its lease), of
#               a refresh (light minus under) and of one source under quota,
#               in Debian 12's own kernel under qemu booted three times, with
#               possible_cpus=2, 16 and 64 (2 vCPUs present in each):
#               ratelimit-bench cpus in bench/vm-cpus.sh, ratios of 16 and
#               64 to 2 (an emulated CPU: only ratios within the run mean
#               anything). --smoke boots none (three boots take minutes
#               each): it runs ratelimit-bench cpus here, on this machine's
#               possible CPUs, and checks its figures are sane
#   (the VM parts: a boot that hung in qemu's firmware, no kernel output
#   within VM_FIRST_OUTPUT, is killed and booted again by tests/vm/run.sh,
#   and said here: "bench: PART: no kernel output within ...")
#   sync        (not --smoke: tests/run.sh runs bench/sync.sh smoke as a
#               suite of its own) the fleet sync agent's cost and bound at
#               10,000 sources and 1, 10 and 100 ms intervals (bench/sync.sh)
#
#   BENCH_PARTS="cpus dispatcher": only these parts (names as above;
#               pairs runs only beside throughput, whose receivers it
#               uses), e.g. an A/B run of one part; the report then has
#               only their figures and targets
#
# Ends with the time each part took ("bench: finished in N s").
#
# Everything runs in network namespaces made here and deleted on exit
# (netfilter rules live and die in them), with addresses from
# 198.18.0.0/15 and 2001:db8::/32 only.
set -u
out=$(cd "${1:-build}" && pwd) || exit 1
here=$(cd "$(dirname "$0")" && pwd)
mode=full
[ "${BENCH_QUICK:-0}" = 1 ] && mode=quick
[ "${2:-}" = --smoke ] && mode=smoke
cli=$out/xdp-ratelimit
gen=$out/trafficgen
bench=$out/ratelimit-bench
res=$out/bench
ncpus=$(nproc --all)
cpu=${BENCH_CPU:-$((ncpus - 1))}
id=rlb$$x	# the x ends the pid: no glob of ours matches another run's names
tx=${id}-tx
pins=/sys/fs/bpf/xdp-ratelimit
tmp=$(mktemp -d)
nss=()
bg=()
started=$(date +%s)
phases=()	# NAME=SECONDS, for the time report
phase_t=$started

big_dry_run=1	# (c) with 1,000,000 sources: another 800 MB table to fill
# quick: the memory part reads the tables of the throughput receivers f
# (--max-sources 65,536) and B (1,048,576) instead of attaching its own
mem_from_rx=0
# pair_reps x pair_secs: back-to-back runs of the single-source reference
# and the two spoofed floods (the ratios of the spoofed-flood targets)
case $mode in
full)	cost_args=(--rounds 25 --ms 20)
	tp_reps=5 tp_secs=1.5
	groups="v4_1 v4_1024 v6_1 v6_1m v6_1m_shuf spoof"
	pair_reps=11 pair_secs=1
	mem_sizes="65536 1000000" mem_reps=2
	sweep_sizes="1024 4096 16384 65536 262144 1048576 4194304"
	sweep_reps=3 sweep_secs=1
	acc_secs=4 acc_rates="1.5 2 10" acc_pops="1 1000" ;;
quick)	cost_args=(--rounds 5 --ms 3)
	tp_reps=2 tp_secs=0.1
	groups="v4_1 v4_1024 v6_1 v6_1m v6_1m_shuf spoof" big_dry_run=0
	pair_reps=5 pair_secs=0.25
	mem_sizes="" mem_reps=1 mem_from_rx=1
	sweep_sizes="1024 65536" sweep_reps=1 sweep_secs=0.2
	acc_secs=1.2 acc_rates="2" acc_pops="1 1000" ;;
smoke)	cost_args=(--rounds 2 --ms 1)
	tp_reps=1 tp_secs=0.3
	groups="v4_1"
	pair_reps=0 pair_secs=0
	mem_sizes="65536" mem_reps=1
	sweep_sizes="1024 4096" sweep_reps=1 sweep_secs=0.2
	acc_secs=1.3 acc_rates="2" acc_pops="1" ;;
esac
# BENCH_GROUPS="v6_1m": only these throughput groups (an A/B run of one
# figure); BENCH_REPS=N: that many repeats of them
groups=${BENCH_GROUPS:-$groups}
tp_reps=${BENCH_REPS:-$tp_reps}
# BENCH_PARTS="cpus": only these parts
all_parts="cost memory accuracy throughput pairs sweep established dispatcher cpus sync"
for p in ${BENCH_PARTS:-}; do
	[[ " $all_parts " = *" $p "* ]] || {
		echo "bench: BENCH_PARTS: no part named '$p' (parts: $all_parts)" >&2
		rm -rf "$tmp"	# (before the trap that cleans up)
		exit 2
	}
done
want() { [ -z "${BENCH_PARTS:-}" ] || [[ " $BENCH_PARTS " = *" $1 "* ]]; }
want memory || { mem_sizes="" mem_from_rx=0; }
want accuracy || acc_pops=""
want throughput || groups=""
want pairs || pair_reps=0
want sweep || sweep_sizes=""

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }
# The boots tests/vm/run.sh killed and booted again (no kernel output in
# time: qemu hung in its firmware), as its log VM_LOG says.
vm_retries() {	# PART VM_LOG
	local l
	while IFS= read -r l; do
		say "$1: ${l#vm: }"
	done < <(grep -a '^vm: no kernel output' "$2")
}

cleanup() {
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	local own=()
	for n in "${nss[@]}"; do
		# CLI pins are per namespace and interface name
		for d in "$pins"/*/"${id}"*; do
			[ -e "$d" ] && nsenter --net="/run/netns/$n" "$cli" detach \
				"$(basename "$d")" >/dev/null 2>&1
		done
		own+=("$(nsenter --net="/run/netns/$n" "$cli" status --json 2>/dev/null |
			jq -r '.pin_dir // empty')")
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$pins"/*/"${id}"* 2>/dev/null
	# this run's namespaces' own, when empty; never every netns:*: another
	# run's directory is empty, and locked, while its change starts
	for d in "${own[@]}"; do [ -z "$d" ] || rmdir "$d" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || die "needs root (XDP, namespaces, bpffs)"
for b in "$cli" "$gen" "$bench"; do
	[ -x "$b" ] || die "$b is missing: run 'make' first"
done
for t in nft iptables ip6tables bpftool jq python3 awk; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh)"
done
mkdir -p "$res" || exit 1

in_ns() { local n=$1; shift; nsenter --net="/run/netns/$n" "$@"; }
newns() { ip netns add "$1" && nss+=("$1"); }
elapsed() { echo $(( $(date +%s) - started )); }
calc() { awk "BEGIN { printf \"%.10g\\n\", $1 }"; }	# EXPR: a number
phase() {	# NAME: the part that just ended, for the time report
	local now
	now=$(date +%s)
	phases+=("$1=$((now - phase_t))")
	phase_t=$now
}

# A veth pair: $tx end T in the generator's namespace, R in namespace N.
pair() {	# N T R
	ip link add "$2" netns "$tx" type veth peer name "$3" netns "$1" &&
	ip -n "$tx" link set "$2" up && ip -n "$1" link set "$3" up
}

# ---- receivers --------------------------------------------------------
# nftables: per-source meter with `limit rate over` in the prerouting hook
# at raw priority (the earliest IP hook), IPv4 and IPv6; on the packets
# $match4 / $match6 select (default: all).
nft_meter() {	# NS RATE [BURST]: RATE as nft writes it, e.g. 1/second
	local burst=${3:+ burst $3 packets}
	in_ns "$1" nft -f - <<EOF
table ip rlb {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		${match4:-} meter m4 size ${meter_size:-2097152} { ip saddr limit rate over $2$burst } drop
	}
}
table ip6 rlb {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		${match6:-} meter m6 size ${meter_size:-2097152} { ip6 saddr limit rate over $2$burst } drop
	}
}
EOF
}
# iptables hashlimit per source in raw PREROUTING (its earliest hook), on
# the packets $hl_match selects (default: all)
# (a new table name each time: a rule reuses an existing table of its name)
hl_n=0
# EXPIRE: ms before an idle source is forgotten (default 10 s: a limit of
# 1/minute needs more, or a source gets a fresh burst every 10 s)
hashlimit() {	# NS RATE [BURST [EXPIRE]]: RATE as iptables writes it, e.g. 1/sec
	local t
	hl_n=$((hl_n + 1))
	for t in iptables ip6tables; do
		# shellcheck disable=SC2086
		in_ns "$1" "$t" -t raw -A PREROUTING ${hl_match:-} -m hashlimit --hashlimit-mode srcip \
			--hashlimit-above "$2" ${3:+--hashlimit-burst "$3"} \
			${4:+--hashlimit-htable-expire "$4"} \
			--hashlimit-name "rlb${t:0:3}$hl_n" \
			--hashlimit-htable-size 1048576 --hashlimit-htable-max 1048576 \
			-j DROP || return 1
	done
}

# ======================================================================
# 1. per-packet cost
# ======================================================================
if want cost; then
	say "per-packet cost (BPF_PROG_TEST_RUN on CPU $cpu) ..."
	"$bench" cost "${cost_args[@]}" --cpu "$cpu" >"$tmp/cost.json" ||
		say "cost: failed"
fi

# ======================================================================
# 2. memory
# ======================================================================
phase cost
: >"$tmp/memory.jsonl"
mem_row() {	# DEV MAX_SOURCES: the maps of DEV as the kernel charges them
	local map j src idx keys hist tot=0 dir
	dir=$(ls -d "$pins"/netns:*/"$1" | head -n 1)	# its namespace's
	for map in config counters sources source_index source_keys source_pool history \
		rules rules_v4 rules_v6 aggregates agg_history refused bans events; do
		j=$(bpftool map show pinned "$dir/$map" -j) || continue
		tot=$((tot + $(jq .bytes_memlock <<<"$j")))
		[ "$map" = sources ] && src=$j
		[ "$map" = source_index ] && idx=$j
		[ "$map" = source_keys ] && keys=$j
		[ "$map" = history ] && hist=$j
	done
	# per source: its per-CPU values (a slot of sources per way of the
	# index), the index's buckets, each slot's key and its history
	jq -c --argjson n "$2" --argjson tot "$tot" --argjson h "$hist" --argjson x "$idx" \
		--argjson k "$keys" \
		'{max_sources: $n, slots: .max_entries, value_size: .bytes_value,
		  buckets: $x.max_entries, bucket_size: $x.bytes_value,
		  keys: $k.max_entries, key_size: $k.bytes_value,
		  sources_memlock: .bytes_memlock, index_memlock: $x.bytes_memlock,
		  keys_memlock: $k.bytes_memlock, history_memlock: $h.bytes_memlock,
		  history_entries: $h.max_entries, history_value_size: $h.bytes_value,
		  memlock: (.bytes_memlock + $x.bytes_memlock + $k.bytes_memlock +
			    $h.bytes_memlock),
		  program_total: $tot}' <<<"$src" >>"$tmp/memory.jsonl"
	"$bench" sizes "$2" 64 >>"$tmp/sizes64.jsonl"
}
if [ -n "$mem_sizes" ]; then
	say "memory ($(elapsed)s) ..."
	m=${id}-mem
	newns "$m" && ip -n "$m" link add "${id}ma" type veth peer name "${id}mb" ||
		die "namespaces"
fi
for n in $mem_sizes; do
	for r in $(seq 1 "$mem_reps"); do
		in_ns "$m" "$cli" attach "${id}ma" --max-sources "$n" >/dev/null || {
			say "memory: attach --max-sources $n failed"; continue; }
		mem_row "${id}ma" "$n"
		in_ns "$m" "$cli" detach "${id}ma" >/dev/null
	done
done
phase memory

# ======================================================================
# 3. throughput on a veth pair: the receivers
# ======================================================================
newns "$tx" || die "namespaces"
# receivers: one namespace each, set up once
#   a bare XDP_DROP            b xdp-ratelimit, 1 pps per source
#   m the minimal limiter (bench/minimal.bpf.c: 1 packet per second, the
#     program's clock)
#   c the same, --dry-run      d nftables meter      e iptables hashlimit
#   B, C, D, E: b, c, d, e for the 1,000,000-source runs: a table above
#      the population (--max-sources 1,048,576) and 1 frame per source per
#      minute: at 1 pps each of a million sources would pass 1 Mpps into
#      the stack, and the figure would measure the stack, not the lookups.
#      xdp-ratelimit: --window 1m --default-bps 2 (a 120-byte budget holds
#      one 62-byte frame); nftables and hashlimit: 1/minute, burst 1
#      (hashlimit forgets an idle source after 2 minutes, not 10 s).
#   M: the minimal limiter for the 1,000,000-source runs: sized as B's
#      table, 1 frame per source per minute
#   f: b with a small table (65,536) against 1,000,000 spoofed sources
#   g: f with an aggregate budget on the rule the flood matches
#   h: f with a newcomer budget instead
#   s, t, u: TCP SYNs (trafficgen --tcp-syn) against a SYN-scoped rule:
#      s xdp-ratelimit `quota set default --proto tcp --syn --pps 1` beside
#      --default-pps 1, t an nftables meter on `tcp flags syn`, u
#      hashlimit `-p tcp --syn`
recv_cases="a m b c d e s t u"
want throughput || recv_cases=""
case " $groups " in *" v6_1m "*|*" v6_1m_shuf "*)
	recv_cases="$recv_cases B M D E"
	[ "$big_dry_run" = 1 ] && recv_cases="$recv_cases C" ;;
esac
case " $groups " in *" spoof "*) recv_cases="$recv_cases f g h" ;; esac
# xdp-ratelimit receivers attach in the background, each on its own
# interface, while the others are set up in turn (iptables takes a lock
# of its own). The 1,048,576-entry tables (B, C) take seconds of kernel
# time to allocate: they start first, and the accuracy part runs
# meanwhile, which measures no speed.
rl_setup() {	# CASE
	local n=${id}-$1 d=${id}r$1
	case $1 in
	b|f) in_ns "$n" "$cli" attach "$d" --default-pps 1 ;;
	s) in_ns "$n" "$cli" attach "$d" --default-pps 1 &&
	   in_ns "$n" "$cli" quota set default --proto tcp --syn --pps 1 --iface "$d" ;;
	c) in_ns "$n" "$cli" attach "$d" --default-pps 1 --dry-run ;;
	B) in_ns "$n" "$cli" attach "$d" --window 1m --default-bps 2 --max-sources 1048576 ;;
	C) in_ns "$n" "$cli" attach "$d" --window 1m --default-bps 2 --max-sources 1048576 \
		--dry-run ;;
	g) in_ns "$n" "$cli" attach "$d" --default-pps 1 &&
	   in_ns "$n" "$cli" quota set 2001:db8::/32 --pps 1 --aggregate-pps 10k \
		--iface "$d" ;;
	h) in_ns "$n" "$cli" attach "$d" --default-pps 1 &&
	   in_ns "$n" "$cli" quota set 2001:db8::/32 --pps 1 --new-pps 10k \
		--iface "$d" ;;
	esac >/dev/null
}
setups=()
rx_start() {	# CASE...: namespaces, veth pairs, xdp-ratelimit in the background
	local c n
	for c in "$@"; do
		n=${id}-$c
		[[ " $recv_cases " = *" $c "* ]] && [ ! -e "/run/netns/$n" ] || continue
		newns "$n" && pair "$n" "${id}t$c" "${id}r$c" ||
			die "cannot create namespace $n"
		case $c in [bcfghsBC])
			rl_setup "$c" &
			setups+=("$!:$c")
			bg+=("$!") ;;
		esac
	done
}
rx_start B C

# ======================================================================
# 4. accuracy (while the big tables of the throughput receivers are
#    allocated: it measures no speed)
# ======================================================================
[ -n "$acc_pops" ] && say "accuracy ($(elapsed)s) ..."
x=${id}-x
newns "$x" && pair "$x" "${id}tx" "${id}rx" &&
	ip -n "$x" addr add 198.18.1.1/24 dev "${id}rx" || die "namespaces"
mac=$(ip -n "$x" -j link show "${id}rx" | jq -r '.[0].address')
: >"$tmp/accuracy.jsonl"

acc_run() {	# TOOL SOURCES QUOTA MULT
	local tool=$1 nsrc=$2 q=$3 mult=$4 rate j
	rate=$(awk "BEGIN { printf \"%d\\n\", $q * $nsrc * $mult + 0.5 }")
	# the receiver loads while the limiter is set up (nothing is sent
	# before both are ready), and stops at SIGTERM 0.2 s after the last
	# frame is sent (the duration is only a backstop); nsenter execs it,
	# so that $! is the receiver itself
	rm -f "$tmp/ready"
	nsenter --net="/run/netns/$x" "$bench" recv --duration "$(calc "$acc_secs + 30")" \
		--budget "$q" --window-ms 1000 --buckets 10 --ready "$tmp/ready" \
		$(case $tool in xdp-ratelimit*) echo --program-clock ;; esac) >"$tmp/recv.json" &
	local rp=$!
	bg+=("$rp")
	case $tool in
	xdp-ratelimit) in_ns "$x" "$cli" attach "${id}rx" --default-pps "$q" >/dev/null ;;
	# --burst of a tenth of the quota: a bucket's share (10 buckets)
	xdp-ratelimit-burst)
		in_ns "$x" "$cli" attach "${id}rx" --default-pps "$q" >/dev/null &&
		in_ns "$x" "$cli" quota set default --burst "$((q / 10))" --iface "${id}rx" >/dev/null ;;
	nftables) in_ns "$x" "$bench" xdp "${id}rx" pass && nft_meter "$x" "$q/second" ;;
	hashlimit) in_ns "$x" "$bench" xdp "${id}rx" pass && hashlimit "$x" "$q/sec" ;;
	esac || { say "accuracy: $tool setup failed"; kill "$rp"; wait "$rp"; return; }
	for _ in $(seq 1 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
	[ -e "$tmp/ready" ] ||
		{ say "accuracy: the receiver did not start within 5 s"; kill "$rp"; wait "$rp"; return; }
	in_ns "$tx" "$gen" --dev "${id}tx" --dst-mac "$mac" --cpu "$cpu" \
		--src 198.18.0.1 --sources "$nsrc" --rate "$rate" --duration "$acc_secs" \
		--json >"$tmp/gen.json" || say "accuracy: generator failed"
	sleep 0.2
	kill -TERM "$rp"
	wait "$rp"
	j=$(cat "$tmp/recv.json")
	[ -n "$j" ] && jq -c --arg t "$tool" --argjson s "$nsrc" --argjson q "$q" \
		--argjson m "$mult" --argjson rate "$rate" --slurpfile g "$tmp/gen.json" \
		'. + {tool: $t, population: $s, quota_pps: $q, multiple: $m,
		      offered_pps: $rate, sent: $g[0].sent}' <<<"$j" >>"$tmp/accuracy.jsonl"
	case $tool in
	xdp-ratelimit*) in_ns "$x" "$cli" detach "${id}rx" >/dev/null ;;
	*) ip -n "$x" link set dev "${id}rx" xdp off
	   in_ns "$x" nft flush ruleset ;;
	esac
}

for pop in $acc_pops; do
	q=1000
	[ "$pop" != 1 ] && q=100
	for mult in $acc_rates; do
		for tool in xdp-ratelimit xdp-ratelimit-burst nftables hashlimit; do
			acc_run "$tool" "$pop" "$q" "$mult"
		done
	done
done

phase accuracy

[ -n "$groups" ] && say "throughput ($(elapsed)s) ..."
rx_start $recv_cases
for c in $recv_cases; do
	n=${id}-$c
	case $c in
	a) in_ns "$n" "$bench" xdp "${id}r$c" drop ;;
	m) in_ns "$n" "$bench" xdp "${id}r$c" minimal ;;
	M) in_ns "$n" "$bench" xdp "${id}r$c" minimal 1048576 60 ;;
	[bcfghsBC]) ;;
	d) in_ns "$n" "$bench" xdp "${id}r$c" pass && nft_meter "$n" 1/second ;;
	e) in_ns "$n" "$bench" xdp "${id}r$c" pass && hashlimit "$n" 1/sec ;;
	t) in_ns "$n" "$bench" xdp "${id}r$c" pass &&
	   match4="ip protocol tcp tcp flags & (syn | ack) == syn" \
	   match6="ip6 nexthdr tcp tcp flags & (syn | ack) == syn" nft_meter "$n" 1/second ;;
	u) in_ns "$n" "$bench" xdp "${id}r$c" pass && hl_match="-p tcp --syn" hashlimit "$n" 1/sec ;;
	D) in_ns "$n" "$bench" xdp "${id}r$c" pass && nft_meter "$n" 1/minute 1 ;;
	E) in_ns "$n" "$bench" xdp "${id}r$c" pass && hashlimit "$n" 1/min 1 120000 ;;
	esac || die "setting up receiver $c failed"
done
for p in "${setups[@]}"; do
	wait "${p%%:*}" || die "setting up receiver ${p#*:} failed"
done
if [ "$mem_from_rx" = 1 ]; then
	for c in f B; do
		[[ " $recv_cases " = *" $c "* ]] || continue
		mem_row "${id}r$c" "$([ "$c" = B ] && echo 1048576 || echo 65536)"
	done
fi

group_cases() {
	case $1 in
	v4_1|v4_1024) echo "a m b c d e s t u" ;;
	v6_1) echo "a b d" ;;
	v6_1m) echo "a M B $([ "$big_dry_run" = 1 ] && echo C) D E" ;;
	v6_1m_shuf) echo "a M B D" ;;
	spoof) echo "a f g h d" ;;
	esac
}
group_traffic() {
	case $1 in
	v4_1) echo "--src 198.18.0.1" ;;
	v4_1024) echo "--src 198.18.0.1 --sources 1024" ;;
	v6_1) echo "--src 2001:db8::1" ;;
	v6_1m) echo "--src 2001:db8::1 --sources 1000000" ;;
	# the same sources, each once a pass, in an order that is not the
	# addresses' (trafficgen --shuffle)
	v6_1m_shuf) echo "--src 2001:db8::1 --sources 1000000 --shuffle" ;;
	spoof) echo "--src 2001:db8::1 --sources 1000000 --random" ;;
	esac
}

# One run; a line of throughput.jsonl (report.py works out Mpps and the
# passed fraction). TRAFFIC: the group whose traffic is sent (default GROUP).
tp_run() {	# GROUP CASE SECONDS REP [TRAFFIC]
	local c=$2 n=/run/netns/${id}-$2 t r0 p0 d0 r1 p1 d1 lim
	lim=(--duration "$3")
	[ "$4" = warm ] && lim=(--count "$3")
	# frames received, and xdp-ratelimit's passed and dropped (0 0 for
	# the others), in one process: not to count the runs' overhead twice
	read -r r0 p0 d0 < <("$bench" counters "$n" "${id}r$c") || r0=
	# shellcheck disable=SC2046
	t=$(in_ns "$tx" "$gen" --dev "${id}t$c" --cpu "$cpu" "${lim[@]}" --json \
		$(group_traffic "${5:-$1}") $(case $c in [stu]) echo --tcp-syn ;; esac)) || { say "throughput: generator failed ($1 $c)"; return; }
	read -r r1 p1 d1 < <("$bench" counters "$n" "${id}r$c") || r1=
	[ -n "$r0" ] && [ -n "$r1" ] || { say "throughput: counters of $c unreadable"; return; }
	[ "$4" = warm ] && return
	echo "{\"group\": \"$1\", \"case\": \"$c\", \"rep\": $4," \
		"\"received\": $((r1 - r0)), \"passed\": $((p1 - p0))," \
		"\"dropped\": $((d1 - d0)), \"generator\": $t}" >>"$tmp/throughput.jsonl"
}

# when each 1,000,000-source receiver was last warmed (seconds)
declare -A warmed=()
: >"$tmp/throughput.jsonl"
for r in $(seq 1 "$tp_reps"); do
	[ -n "$groups" ] || break
	say "throughput: repeat $r/$tp_reps ($(elapsed)s)"
	for g in $groups; do for c in $(group_cases "$g"); do
		# 1,000,000 sources: one pass over them first, not recorded, so
		# that each limiter holds them all and each has used its 1 frame
		# of the minute: the measured run then drops, as it should. Again
		# each repeat, unless a pass under 30 s ago still holds: each
		# remembers a source's frame for a minute (xdp-ratelimit's window,
		# the nftables meter whose entries never expire, hashlimit with
		# --hashlimit-htable-expire 2 minutes)
		if [ "${g%_shuf}" = v6_1m ] && [ "$c" != a ]; then
			now=$(date +%s)
			[ $((now - ${warmed[$c]:-0})) -lt 30 ] ||
				{ tp_run "$g" "$c" 1000000 warm; warmed[$c]=$now; }
		fi
		tp_run "$g" "$c" "$tp_secs" "$r"
	done; done
done
phase throughput

# The spoofed floods against the single-source rate, (f), (g) and (h) of
# the spoof group over (b) of v6_1: each repeat runs the four back to back
# (the order rotating), so that load from elsewhere hits them alike.
if [ "$pair_reps" -gt 0 ] && [[ " $groups " = *" spoof "* ]]; then
	say "spoofed floods against the single-source rate: $pair_reps x 4 runs ($(elapsed)s)"
	for r in $(seq 1 "$pair_reps"); do
		order="b f g h"
		case $((r % 4)) in 2) order="f g h b" ;; 3) order="g h b f" ;; 0) order="h b f g" ;; esac
		for c in $order; do
			traffic=spoof
			[ "$c" = b ] && traffic=v6_1
			tp_run pairs "$c" "$pair_secs" "$r" "$traffic"
		done
	done
	phase pairs
fi
# the throughput receivers (1.5 GB of tables among them) go now
for c in $recv_cases; do
	n=${id}-$c
	case $c in [bcBCfgh]) in_ns "$n" "$cli" detach "${id}r$c" >/dev/null ;; esac
	ip netns del "$n"
done

# ======================================================================
# 4b. table size: Mpps against the number of sources, each limiter with a
#     table for all of them (--max-sources N, the minimal limiter sized as
#     the program's table, the meter twice N) and 1 frame per source per
#     minute, after a pass that fills it: every measured frame is looked
#     up and dropped. The sources in the generator's order. One size at a
#     time: its receivers go before the next size's tables are allocated;
#     a size whose tables would take more than half the memory available
#     now is skipped (said).
# ======================================================================
[ -n "$sweep_sizes" ] && say "table size sweep: $sweep_sizes ($(elapsed)s) ..."
: >"$tmp/sweep.jsonl"
sweep_cases="a m p n"
sweep_fits() {	# N: the tables of size N fit in half the available memory
	local avail need
	avail=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo)
	# the program's table (sources, source_index and source_keys:
	# ratelimit-bench sizes) and its other maps --max-sources sizes (about
	# three times the table in all on 2 CPUs), the minimal limiter's (a
	# third of the table) and the meter's (~200 B a source)
	need=$("$bench" sizes "$1" "$(nproc --all)" |
		jq '(.sources_bytes + .index_bytes + .keys_bytes) * 4 + 200 * .max_sources')
	awk -v a="$avail" -v n="$need" 'BEGIN { exit !(n < a / 2) }'
}
sweep_run() {	# N CASE REP|warm
	local n=/run/netns/${id}-w$2 r0 r1 t lim=(--duration "$sweep_secs")
	[ "$3" = warm ] && lim=(--count "$1")
	read -r r0 _ < <("$bench" counters "$n" "${id}rw$2") || r0=
	t=$(in_ns "$tx" "$gen" --dev "${id}tw$2" --cpu "$cpu" "${lim[@]}" --json \
		--src 2001:db8::1 --sources "$1") || { say "sweep: generator failed ($1 $2)"; return; }
	read -r r1 _ < <("$bench" counters "$n" "${id}rw$2") || r1=
	[ -n "$r0" ] && [ -n "$r1" ] || { say "sweep: counters of $2 unreadable"; return; }
	[ "$3" = warm ] && return
	echo "{\"size\": $1, \"case\": \"$2\", \"rep\": $3, \"received\": $((r1 - r0))," \
		"\"generator\": $t}" >>"$tmp/sweep.jsonl"
}
for size in $sweep_sizes; do
	sweep_fits "$size" || { say "sweep: $size sources skipped: not enough memory"; continue; }
	ok=1
	for c in $sweep_cases; do
		n=${id}-w$c
		newns "$n" && pair "$n" "${id}tw$c" "${id}rw$c" || { ok=0; break; }
		case $c in
		a) in_ns "$n" "$bench" xdp "${id}rw$c" drop ;;
		m) in_ns "$n" "$bench" xdp "${id}rw$c" minimal "$size" 60 ;;
		p) in_ns "$n" "$cli" attach "${id}rw$c" --window 1m --default-bps 2 \
			--max-sources "$size" >/dev/null ;;
		n) in_ns "$n" "$bench" xdp "${id}rw$c" pass &&
		   meter_size=$((size * 2 > 65536 ? size * 2 : 65536)) nft_meter "$n" 1/minute 1 ;;
		esac || { say "sweep: setting up $c for $size sources failed"; ok=0; break; }
	done
	if [ "$ok" = 1 ]; then
		for c in m p n; do sweep_run "$size" "$c" warm; done
		for r in $(seq 1 "$sweep_reps"); do
			for c in $sweep_cases; do sweep_run "$size" "$c" "$r"; done
		done
	fi
	for c in $sweep_cases; do
		n=${id}-w$c
		[ -e "/run/netns/$n" ] || continue
		[ "$c" = p ] && in_ns "$n" "$cli" detach "${id}rw$c" >/dev/null
		# the pair goes now, both ends: a deleted namespace takes its
		# end in the background, and the next size's pair has its names
		ip -n "$tx" link del "${id}tw$c" 2>/dev/null
		ip netns del "$n"
	done
done
phase sweep

# ======================================================================
# 5. established sources and a spoofed flood in the same rule:
#    256 IPv6 sources at 100 pps each (one CPU), established for 1.5 s,
#    then 1,000,000 random sources at full speed (another CPU) against
#    --pps 1k --new-pps 10k on 2001:db8::/32. The receiver has two queues,
#    so that the flood does not crowd the paced frames out before XDP.
# ======================================================================
case $mode in full) est_secs=3 ;; quick) est_secs=1 ;; *) est_secs=0.3 ;; esac
n=${id}-i est_cpu=$(( cpu == 0 ? 1 % ncpus : 0 ))
: >"$tmp/established.jsonl"
want established && say "established sources and a spoofed flood ($(elapsed)s) ..."
if ! want established; then
	:
elif newns "$n" &&
	ip link add "${id}ti" netns "$tx" numtxqueues 2 numrxqueues 2 type veth \
		peer name "${id}ri" netns "$n" numtxqueues 2 numrxqueues 2 &&
	ip -n "$tx" link set "${id}ti" up && ip -n "$n" link set "${id}ri" up &&
	in_ns "$n" "$cli" attach "${id}ri" --default-pps 1 >/dev/null &&
	in_ns "$n" "$cli" quota set 2001:db8::/32 --pps 1k --new-pps 10k \
		--iface "${id}ri" >/dev/null; then
	mac=$(ip -n "$n" -j link show "${id}ri" | jq -r '.[0].address')
	# the established sources' handshakes (the host's SYN-ACKs out of
	# the receiver, through the egress hook, and their ACKs): verified,
	# never judged by the newcomer budget. Their passed and dropped frames
	# are read before and after the flood: only what they lose during the
	# flood is measured.
	in_ns "$n" python3 "$here/../tests/gen/answers.py" "${id}ri" 2001:db8:1::1 \
		2001:db8:ffff:: 256 &&
		in_ns "$tx" python3 "$here/../tests/gen/answers.py" --peer-acks "${id}ti" \
			"$mac" 2001:db8:1::1 2001:db8:ffff:: 256 ||
		say "established: cannot send the handshakes"
	est_sum() {
		in_ns "$n" "$cli" stats --iface "${id}ri" --json --top 0 | jq -c '
			[.interfaces[0].sources[] | select(.address | startswith("2001:db8:ffff:"))] |
			{n: length, p: ([.[].passed_packets] | add // 0),
			 d: ([.[].dropped_packets] | add // 0)}'
	}
	in_ns "$tx" "$gen" --dev "${id}ti" --dst-mac "$mac" --cpu "$est_cpu" \
		--src 2001:db8:ffff:: --sources 256 --rate 25600 \
		--duration "$(calc "$est_secs + 2")" --json >"$tmp/est_gen.json" &
	est=$!
	bg+=("$est")
	sleep 1.5
	e0=$(est_sum)
	read -r r0 p0 d0 < <("$bench" counters "/run/netns/$n" "${id}ri")
	t=$(in_ns "$tx" "$gen" --dev "${id}ti" --dst-mac "$mac" --cpu "$cpu" \
		--duration "$est_secs" --json $(group_traffic spoof))
	read -r r1 p1 d1 < <("$bench" counters "/run/netns/$n" "${id}ri")
	e1=$(est_sum)
	wait "$est"
	sleep 0.2
	tracked=$(in_ns "$n" "$cli" stats --iface "${id}ri" --json --top 0 |
		jq .interfaces[0].tracked_sources)
	jq -nc --argjson g "$t" --slurpfile e "$tmp/est_gen.json" --argjson a "$e0" \
		--argjson b "$e1" --argjson rx "$((r1 - r0))" --argjson fp "$((p1 - p0))" \
		--argjson tr "${tracked:-0}" '
		{established_sources: $b.n, established_sent_all: $e[0].sent,
		 established_passed: ($b.p - $a.p), established_dropped: ($b.d - $a.d),
		 flood_generator: $g, received: $rx, passed: $fp, tracked: $tr}' \
		>>"$tmp/established.jsonl" || say "established: cannot read the sources"
	in_ns "$n" "$cli" detach "${id}ri" >/dev/null
else
	say "established: setup failed"
fi
ip netns del "$n" 2>/dev/null
phase established


# ======================================================================
# 6. under libxdp's dispatcher: in Debian 12's own kernel in qemu (where
#    the dispatcher works; this machine's kernel may refuse its freplace
#    programs). Without KVM the CPU is emulated: ratios within the run.
# ======================================================================
: >"$tmp/dispatcher.jsonl"
want dispatcher && say "under libxdp's dispatcher, Debian 12's kernel in qemu ($(elapsed)s) ..."
if ! want dispatcher; then
	:
elif command -v qemu-system-x86_64 >/dev/null; then
	VM_APPEND="rlbench=$mode" VM_CONSOLE="$tmp/vm-console" VM_TIMEOUT=600 \
		"$here/../tests/vm/run.sh" "$out" "cloud:$here/vm-dispatcher.sh" \
		>"$res/vm-dispatcher.log" 2>&1 ||
		say "dispatcher: the VM run failed (see $res/vm-dispatcher.log)"
	vm_retries dispatcher "$res/vm-dispatcher.log"
	[ -e "$tmp/vm-console" ] && sed -n 's/^bench-json: //p' "$tmp/vm-console" \
		>"$tmp/dispatcher.jsonl"
else
	say "dispatcher: skipped: no qemu-system-x86_64 (scripts/install-deps.sh installs it)"
fi
phase dispatcher

# ======================================================================
# 6b. the CPU count: Debian 12's kernel in qemu booted with 2, 16 and 64
#     possible CPUs (2 present), the same measurement in each
#     (bench/vm-cpus.sh: ratelimit-bench cpus). Without KVM the CPU is
#     emulated: ratios within the run. --smoke: this machine only.
# ======================================================================
: >"$tmp/cpus.jsonl"
if ! want cpus; then
	:
elif [ "$mode" = smoke ]; then
	say "cpus: here only, on this machine's possible CPUs (--smoke boots no guest: three boots take minutes) ..."
	if "$bench" cpus --rounds 2 --ms 1 --cpu "$cpu" >"$tmp/cpus-here.json"; then
		jq -c '{kind: "cpus", asked: null, here: true} + .' \
			"$tmp/cpus-here.json" >>"$tmp/cpus.jsonl"
	else
		say "cpus: ratelimit-bench cpus failed"
	fi
elif command -v qemu-system-x86_64 >/dev/null; then
	for n in 2 16 64; do
		say "cpus: Debian 12's kernel in qemu, possible_cpus=$n ($(elapsed)s) ..."
		rm -f "$tmp/vm-console"
		VM_APPEND="rlbench=$mode possible_cpus=$n" VM_CONSOLE="$tmp/vm-console" \
			VM_TIMEOUT=600 "$here/../tests/vm/run.sh" "$out" "cloud:$here/vm-cpus.sh" \
			>"$res/vm-cpus-$n.log" 2>&1 ||
			say "cpus: the VM run with possible_cpus=$n failed (see $res/vm-cpus-$n.log)"
		vm_retries "cpus: possible_cpus=$n" "$res/vm-cpus-$n.log"
		[ -e "$tmp/vm-console" ] && sed -n 's/^bench-json: //p' "$tmp/vm-console" \
			>>"$tmp/cpus.jsonl"
	done
else
	say "cpus: skipped: no qemu-system-x86_64 (scripts/install-deps.sh installs it)"
fi
phase cpus

# ======================================================================
# 7. the fleet sync agent (bench/sync.sh: its own namespaces and Redis)
# ======================================================================
if [ "$mode" != smoke ] && want sync; then
	say "fleet sync agent ($(elapsed)s) ..."
	"$here/sync.sh" "$out" "$mode" || say "sync: failed (see above)"
	phase sync
fi

# ======================================================================
# report
# ======================================================================
say "measured in $(elapsed)s"
# the system's python3 when there is one (a version manager's shim in
# front of it can take seconds to start)
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" "$here/report.py" --mode "$mode" --tmp "$tmp" --out "$res/results.json" \
	--ncpus "$ncpus" --cpu "$cpu" --seconds "$(elapsed)" --phases "${phases[*]}"
st=$?
# a full run's plot and its data go beside PERFORMANCE.md, as the tables
# of its results go into it
if [ "$mode" = full ] && want sweep && [ -s "$res/sweep.png" ]; then
	cp "$res/sweep.png" "$res/sweep.dat" "$here/" && say "wrote $here/sweep.png"
fi
phase report
t=
for p in "${phases[@]}"; do t+="${t:+, }${p%%=*} ${p#*=} s"; done
echo "bench: finished in $(elapsed) s ($mode mode: $t)"
exit "$st"
