#!/bin/bash
# make bench: xdp-ratelimit against bare XDP, nftables and iptables, in one
# run on this machine (issue 5). Prints one table and writes
# BUILD_DIR/bench/results.json.
#
# Usage: bench/run.sh BUILD_DIR [--smoke]
#   BENCH_QUICK=1   every part, shorter and fewer repeats (under a minute)
#   --smoke         a tiny version of each part; checks that each produced
#                   sane numbers (not speed targets); ends "bench: N passed,
#                   N failed"
#   BENCH_CPU=N     the CPU the generator, its receiver and the cost runs
#                   use (default: the last one)
#
# Parts:
#   cost        per-packet cost, BPF_PROG_TEST_RUN (ratelimit-bench cost)
#   memory      the sources map as the kernel charges it (bpftool memlock)
#   throughput  trafficgen at full speed over a veth pair into (a) bare
#               XDP_DROP, (b) xdp-ratelimit dropping, (c) its dry run,
#               (d) an nftables meter, (e) iptables hashlimit, and the
#               minimal per-source limiter (the floor of any)
#   accuracy    paced traffic at 1.5x, 2x and 10x the quota: packets passed
#               per window, xdp-ratelimit, nftables and hashlimit
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

big_dry_run=1	# (c) with 1,000,000 sources: another 800 MB table to fill
case $mode in
full)	cost_args=(--rounds 15 --ms 20)
	tp_reps=5 tp_secs=1.5
	groups="v4_1 v4_1024 v6_1 v6_1m spoof"
	mem_sizes="65536 1000000" mem_reps=2
	acc_secs=4 acc_rates="1.5 2 10" acc_pops="1 1000" ;;
quick)	cost_args=(--rounds 5 --ms 4)
	tp_reps=2 tp_secs=0.25
	groups="v4_1 v4_1024 v6_1 v6_1m spoof" big_dry_run=0
	mem_sizes="65536 1000000" mem_reps=1
	acc_secs=1.3 acc_rates="2" acc_pops="1 1000" ;;
smoke)	cost_args=(--rounds 2 --ms 1)
	tp_reps=1 tp_secs=0.3
	groups="v4_1"
	mem_sizes="65536" mem_reps=1
	acc_secs=1.3 acc_rates="2" acc_pops="1" ;;
esac

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

cleanup() {
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in "${nss[@]}"; do
		# CLI pins are per interface name, in the machine's bpffs
		for d in "$pins/${id}"*; do
			[ -e "$d" ] && nsenter --net="/run/netns/$n" "$cli" detach \
				"$(basename "$d")" >/dev/null 2>&1
		done
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$pins/${id}"* 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || die "needs root (XDP, namespaces, bpffs)"
for b in "$cli" "$gen" "$bench"; do
	[ -x "$b" ] || die "$b is missing: run 'make' first"
done
for t in nft iptables ip6tables bpftool jq python3; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh)"
done
mkdir -p "$res" || exit 1

in_ns() { local n=$1; shift; nsenter --net="/run/netns/$n" "$@"; }
rxp() {	# NS DEV: frames the device received (veth: what its XDP hook ran on)
	ip -n "$1" -s -j link show "$2" | jq '.[0].stats64.rx.packets'
}
newns() { ip netns add "$1" && nss+=("$1"); }
elapsed() { echo $(( $(date +%s) - started )); }

# A veth pair: $tx end T in the generator's namespace, R in namespace N.
pair() {	# N T R
	ip link add "$2" netns "$tx" type veth peer name "$3" netns "$1" &&
	ip -n "$tx" link set "$2" up && ip -n "$1" link set "$3" up
}

# ---- receivers --------------------------------------------------------
# nftables: per-source meter with `limit rate over` in the prerouting hook
# at raw priority (the earliest IP hook), IPv4 and IPv6.
nft_meter() {	# NS RATE [BURST]: RATE as nft writes it, e.g. 1/second
	local burst=${3:+ burst $3 packets}
	in_ns "$1" nft -f - <<EOF
table ip rlb {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		meter m4 size 2097152 { ip saddr limit rate over $2$burst } drop
	}
}
table ip6 rlb {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		meter m6 size 2097152 { ip6 saddr limit rate over $2$burst } drop
	}
}
EOF
}
# iptables hashlimit per source in raw PREROUTING (its earliest hook)
# (a new table name each time: a rule reuses an existing table of its name)
hl_n=0
hashlimit() {	# NS RATE [BURST]: RATE as iptables writes it, e.g. 1/sec
	local t
	hl_n=$((hl_n + 1))
	for t in iptables ip6tables; do
		in_ns "$1" "$t" -t raw -A PREROUTING -m hashlimit --hashlimit-mode srcip \
			--hashlimit-above "$2" ${3:+--hashlimit-burst "$3"} \
			--hashlimit-name "rlb${t:0:3}$hl_n" \
			--hashlimit-htable-size 1048576 --hashlimit-htable-max 1048576 \
			-j DROP || return 1
	done
}

# ======================================================================
# 1. per-packet cost
# ======================================================================
say "per-packet cost (BPF_PROG_TEST_RUN on CPU $cpu) ..."
"$bench" cost "${cost_args[@]}" --cpu "$cpu" >"$tmp/cost.json" ||
	say "cost: failed"

# ======================================================================
# 2. memory
# ======================================================================
say "memory ($(elapsed)s) ..."
m=${id}-mem
newns "$m" && ip -n "$m" link add "${id}ma" type veth peer name "${id}mb" || die "namespaces"
: >"$tmp/memory.jsonl"
for n in $mem_sizes; do
	for r in $(seq 1 "$mem_reps"); do
		in_ns "$m" "$cli" attach "${id}ma" --max-sources "$n" >/dev/null || {
			say "memory: attach --max-sources $n failed"; continue; }
		tot=0
		for map in config counters sources rules rules_v4 rules_v6 aggregates; do
			j=$(bpftool map show pinned "$pins/${id}ma/$map" -j) || continue
			tot=$((tot + $(jq .bytes_memlock <<<"$j")))
			[ "$map" = sources ] && src=$j
		done
		jq -c --argjson n "$n" --argjson tot "$tot" \
			'{max_sources: $n, entries: .max_entries, value_size: .bytes_value,
			  memlock: .bytes_memlock, program_total: $tot}' <<<"$src" \
			>>"$tmp/memory.jsonl"
		in_ns "$m" "$cli" detach "${id}ma" >/dev/null
	done
	"$bench" sizes "$n" 64 >>"$tmp/sizes64.jsonl"
done

# ======================================================================
# 3. throughput on a veth pair
# ======================================================================
say "throughput ($(elapsed)s) ..."
newns "$tx" || die "namespaces"
# receivers: one namespace each, set up once
#   a bare XDP_DROP            b xdp-ratelimit, 1 pps per source
#   m the minimal per-source limiter (IPv4, 1 packet per second)
#   c the same, --dry-run      d nftables meter      e iptables hashlimit
#   B, C, D, E: b, c, d, e for the 1,000,000-source runs: a table above
#      the population (--max-sources 1,048,576) and 1 frame per source per
#      minute: at 1 pps each of a million sources would pass 1 Mpps into
#      the stack, and the figure would measure the stack, not the lookups.
#      xdp-ratelimit: --window 1m --default-bps 2 (a 120-byte budget holds
#      one 62-byte frame); nftables and hashlimit: 1/minute, burst 1.
#   f: b with a small table (65,536) against 1,000,000 spoofed sources
#   g: f with an aggregate budget on the rule the flood matches
recv_cases="a m b c d e"
case " $groups " in *" v6_1m "*)
	recv_cases="$recv_cases B D E"
	[ "$big_dry_run" = 1 ] && recv_cases="$recv_cases C" ;;
esac
case " $groups " in *" spoof "*) recv_cases="$recv_cases f g" ;; esac
for c in $recv_cases; do
	n=${id}-$c
	newns "$n" && pair "$n" "${id}t$c" "${id}r$c" || die "cannot create namespace $n"
	case $c in
	a) in_ns "$n" "$bench" xdp "${id}r$c" drop ;;
	m) in_ns "$n" "$bench" xdp "${id}r$c" minimal ;;
	b|f) in_ns "$n" "$cli" attach "${id}r$c" --default-pps 1 >/dev/null ;;
	c) in_ns "$n" "$cli" attach "${id}r$c" --default-pps 1 --dry-run >/dev/null ;;
	B) in_ns "$n" "$cli" attach "${id}r$c" --window 1m --default-bps 2 \
		--max-sources 1048576 >/dev/null ;;
	C) in_ns "$n" "$cli" attach "${id}r$c" --window 1m --default-bps 2 \
		--max-sources 1048576 --dry-run >/dev/null ;;
	g) in_ns "$n" "$cli" attach "${id}r$c" --default-pps 1 >/dev/null &&
	   in_ns "$n" "$cli" quota set 2001:db8::/32 --pps 1 --aggregate-pps 10k \
		--iface "${id}r$c" >/dev/null ;;
	d) in_ns "$n" "$bench" xdp "${id}r$c" pass && nft_meter "$n" 1/second ;;
	e) in_ns "$n" "$bench" xdp "${id}r$c" pass && hashlimit "$n" 1/sec ;;
	D) in_ns "$n" "$bench" xdp "${id}r$c" pass && nft_meter "$n" 1/minute 1 ;;
	E) in_ns "$n" "$bench" xdp "${id}r$c" pass && hashlimit "$n" 1/min 1 ;;
	esac || die "setting up receiver $c failed"
done

group_cases() {
	case $1 in
	v4_1|v4_1024) echo "a m b c d e" ;;
	v6_1) echo "a b d" ;;
	v6_1m) echo "a B $([ "$big_dry_run" = 1 ] && echo C) D E" ;;
	spoof) echo "a f g d" ;;
	esac
}
group_traffic() {
	case $1 in
	v4_1) echo "--src 198.18.0.1" ;;
	v4_1024) echo "--src 198.18.0.1 --sources 1024" ;;
	v6_1) echo "--src 2001:db8::1" ;;
	v6_1m) echo "--src 2001:db8::1 --sources 1000000" ;;
	spoof) echo "--src 2001:db8::1 --sources 1000000 --random" ;;
	esac
}
totals() {	# DEV: passed dropped, from the pinned per-CPU counters (not
		# `stats`, which also walks a million-entry sources table)
	bpftool map dump pinned "$pins/$1/counters" -j | jq -r \
		'[.[0].formatted.values[].value] |
		 "\(map(.passed_pkts) | add) \(map(.dropped_pkts) | add)"'
}

tp_run() {	# GROUP CASE SECONDS REP
	local c=$2 n=${id}-$2 before after t p0=0 d0=0 p1=0 d1=0 lim
	lim=(--duration "$3")
	[ "$4" = warm ] && lim=(--count "$3")
	before=$(rxp "$n" "${id}r$c")
	case $c in [bcBCfg]) read -r p0 d0 < <(totals "${id}r$c") ;; esac
	# shellcheck disable=SC2046
	t=$(in_ns "$tx" "$gen" --dev "${id}t$c" --cpu "$cpu" "${lim[@]}" --json \
		$(group_traffic "$1")) || { say "throughput: generator failed ($1 $c)"; return; }
	after=$(rxp "$n" "${id}r$c")
	case $c in [bcBCfg]) read -r p1 d1 < <(totals "${id}r$c") ;; esac
	[ "$4" = warm ] && return
	jq -c --arg g "$1" --arg c "$c" --argjson rep "$4" --argjson rx "$((after - before))" \
		--argjson p "$((p1 - p0))" --argjson d "$((d1 - d0))" \
		'{group: $g, case: $c, rep: $rep, received: $rx, seconds: .seconds,
		  sent_pps: .pps, mpps: ($rx / .seconds / 1e6),
		  passed_fraction: (if $p + $d > 0 then $p / ($p + $d) else null end)}' \
		<<<"$t" >>"$tmp/throughput.jsonl"
}

: >"$tmp/throughput.jsonl"
for r in $(seq 1 "$tp_reps"); do
	say "throughput: repeat $r/$tp_reps ($(elapsed)s)"
	for g in $groups; do for c in $(group_cases "$g"); do
		# 1,000,000 sources: one pass over them first, not recorded, so
		# that each limiter holds them all and each has used its 1 frame
		# of the minute: the measured run then drops, as it should
		[ "$g" = v6_1m ] && tp_run "$g" "$c" 1000000 warm
		tp_run "$g" "$c" "$tp_secs" "$r"
	done; done
done
# the throughput receivers (1.5 GB of tables among them) go now
for c in $recv_cases; do
	n=${id}-$c
	case $c in [bcBCfg]) in_ns "$n" "$cli" detach "${id}r$c" >/dev/null ;; esac
	ip netns del "$n"
done

# ======================================================================
# 4. accuracy
# ======================================================================
say "accuracy ($(elapsed)s) ..."
x=${id}-x
newns "$x" && pair "$x" "${id}tx" "${id}rx" &&
	ip -n "$x" addr add 198.18.1.1/24 dev "${id}rx" || die "namespaces"
mac=$(ip -n "$x" -j link show "${id}rx" | jq -r '.[0].address')
: >"$tmp/accuracy.jsonl"

acc_run() {	# TOOL SOURCES QUOTA MULT
	local tool=$1 nsrc=$2 q=$3 mult=$4 rate j
	rate=$(python3 -c "print(int(round($q * $nsrc * $mult)))")
	case $tool in
	xdp-ratelimit) in_ns "$x" "$cli" attach "${id}rx" --default-pps "$q" >/dev/null ;;
	nftables) in_ns "$x" "$bench" xdp "${id}rx" pass && nft_meter "$x" "$q/second" ;;
	hashlimit) in_ns "$x" "$bench" xdp "${id}rx" pass && hashlimit "$x" "$q/sec" ;;
	esac || { say "accuracy: $tool setup failed"; return; }
	rm -f "$tmp/ready"
	in_ns "$x" "$bench" recv --duration "$(python3 -c "print($acc_secs + 0.3)")" \
		--budget "$q" --window-ms 1000 --buckets 10 --ready "$tmp/ready" \
		>"$tmp/recv.json" &
	local rp=$!
	bg+=("$rp")
	for _ in $(seq 1 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
	in_ns "$tx" "$gen" --dev "${id}tx" --dst-mac "$mac" --cpu "$cpu" \
		--src 198.18.0.1 --sources "$nsrc" --rate "$rate" --duration "$acc_secs" \
		--json >"$tmp/gen.json" || say "accuracy: generator failed"
	wait "$rp"
	j=$(cat "$tmp/recv.json")
	[ -n "$j" ] && jq -c --arg t "$tool" --argjson s "$nsrc" --argjson q "$q" \
		--argjson m "$mult" --argjson rate "$rate" --slurpfile g "$tmp/gen.json" \
		'. + {tool: $t, population: $s, quota_pps: $q, multiple: $m,
		      offered_pps: $rate, sent: $g[0].sent}' <<<"$j" >>"$tmp/accuracy.jsonl"
	case $tool in
	xdp-ratelimit) in_ns "$x" "$cli" detach "${id}rx" >/dev/null ;;
	*) ip -n "$x" link set dev "${id}rx" xdp off
	   in_ns "$x" nft flush ruleset ;;
	esac
}

for pop in $acc_pops; do
	q=1000
	[ "$pop" != 1 ] && q=100
	for mult in $acc_rates; do
		for tool in xdp-ratelimit nftables hashlimit; do
			acc_run "$tool" "$pop" "$q" "$mult"
		done
	done
done

# ======================================================================
# report
# ======================================================================
say "done in $(elapsed)s"
python3 "$here/report.py" --mode "$mode" --tmp "$tmp" --out "$res/results.json" \
	--ncpus "$ncpus" --cpu "$cpu" --seconds "$(elapsed)"
