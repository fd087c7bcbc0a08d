#!/bin/bash
# End to end: the CLI on veth pairs between two namespaces of
# this run, real traffic from tests/gen/trafficgen, and assertions on what
# the receiver gets and on `stats --json`.
#
# What XDP passed is counted independently of xdp-ratelimit by nftables on
# the receiver's netdev ingress hook, which runs after XDP: per IPv4/IPv6
# source (dynamic sets with counters), every frame, and non-IP frames. The
# interface's own rx counters are no use: a veth counts frames before XDP.
#
# Usage: tests/e2e/run.sh [BUILD_DIR] [NAME...]
#        tests/e2e/run.sh --list
# Every test, or only those NAMEd: a test (quota_live) or an area (quota,
# all of its tests). An unknown NAME is an error (exit 2).
#
# This file sets up the namespaces and links and holds the helpers; the
# tests live in area files, tests/e2e/AREA.sh (every .sh here but this
# one), each a function test_NAME. A new area file needs no change here:
# its tests run after those of the areas before it by name, in the order
# they are written. Each test makes what it needs (`fresh` attaches anew)
# and reports with `result`/`check` (tests/lib.sh), as many results as it
# checks.
set -u
suite=e2e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

# ---- the tests: area files, and the ones asked for ------------------------
declare -A area_of=()
areas=() all=()
for f in "$here"/*.sh; do
	[ "$f" = "$here/run.sh" ] && continue
	a=${f##*/} a=${a%.sh}
	areas+=("$a")
	. "$f"
	for t in $(sed -n 's/^test_\([a-z0-9_]*\)() {.*/\1/p' "$f"); do
		if [ -n "${area_of[$t]:-}" ]; then
			echo "e2e: test $t is in both $a.sh and ${area_of[$t]}.sh" >&2
			exit 2
		fi
		area_of[$t]=$a
		all+=("$t")
	done
done
if [ "${1:-}" = --list ]; then
	for a in "${areas[@]}"; do
		printf '%s:' "$a"
		for t in "${all[@]}"; do
			[ "${area_of[$t]}" = "$a" ] && printf ' %s' "$t"
		done
		echo
	done
	exit 0
fi
# BUILD_DIR may be left out (build/): a first operand that is not a
# directory is a test name
build=build
if [ $# -gt 0 ] && [ -d "$1" ]; then
	build=$1
	shift
fi
selected=()
for n in "$@"; do
	found=0
	for t in "${all[@]}"; do
		[ "$t" = "$n" ] || [ "${area_of[$t]}" = "$n" ] || continue
		found=1
		[[ " ${selected[*]} " == *" $t "* ]] || selected+=("$t")
	done
	if [ "$found" = 0 ]; then
		echo "e2e: no test or area named '$n' (tests/e2e/run.sh --list lists them)" >&2
		exit 2
	fi
done
[ ${#selected[@]} -gt 0 ] || selected=("${all[@]}")

# ---- setup -------------------------------------------------------------------
lib_init "$build" rle
bench=$out/ratelimit-bench
vtx2=${id}c vrx2=${id}d			# second pair, for several interfaces
dummy=${id}e				# a bridge: no native XDP, auto falls back
dot=${id}f.5				# a name with a dot, as eth0.100
rx_ifaces+=("$vrx2" "$dummy" "$dot")

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
for f in "$cli" "$gen" "$bench"; do
	[ -x "$f" ] || lib_abort setup "$f is missing: build with make OUTPUT=$build"
done
lib_setup_ns && setup_link && setup_link "$vtx2" "$vrx2" 201 &&
	ip -n "$rx" link add "$dummy" type bridge && ip -n "$rx" link set "$dummy" up &&
	ip -n "$rx" link add "$dot" type bridge &&
	ip -n "$rx" link set "$dot" up ||
	lib_abort setup "cannot create namespaces and links"
mac=$(mac_of "$vrx") mac2=$(mac_of "$vrx2")

# nftables counters on the ingress of RXDEV (table c_RXDEV)
rx_counters() {	# RXDEV
	ip netns exec "$rx" nft -f - <<EOF
table netdev c_$1 {
	set s4 { type ipv4_addr; size 65535; flags dynamic; counter; }
	set s6 { type ipv6_addr; size 65535; flags dynamic; counter; }
	counter frames {}
	counter nonip {}
	chain in {
		type filter hook ingress device "$1" priority 0; policy accept;
		counter name frames
		ip saddr 198.18.0.0/15 add @s4 { ip saddr }
		ip6 saddr 2001:db8::/32 add @s6 { ip6 saddr }
		meta protocol != { ip, ip6 } counter name nonip
	}
}
EOF
}
rx_counters "$vrx" && rx_counters "$vrx2" || lib_abort setup "nftables"

# Packets from ADDRESS that reached RXDEV's stack.
seen() {	# ADDRESS [RXDEV]
	local set=s4
	[[ $1 == *:* ]] && set=s6
	ip netns exec "$rx" nft -j list set netdev "c_${2:-$vrx}" "$set" |
		jq --arg a "$1" '[.nftables[] | select(.set) | .set.elem[]? | .elem |
			select(.val == $a) | .counter.packets][0] // 0'
}
# An nft counter (frames, nonip) of RXDEV.
rx_count() {	# NAME [RXDEV]
	ip netns exec "$rx" nft -j list counter netdev "c_${2:-$vrx}" "$1" |
		jq '.nftables[] | select(.counter) | .counter.packets'
}

# Send with trafficgen from TXDEV to the MAC of its peer; prints frames sent.
send_dev() {	# TXDEV MAC ARGS...
	local d=$1 m=$2
	shift 2
	in_tx "$gen" --dev "$d" --dst-mac "$m" --json "$@" | jq -r .sent
}
send() { send_dev "$vtx" "$mac" "$@"; }
send_answered() { send_answered_to "$mac" "$@"; }	# ADDRESS COUNT (lib.sh)
send_hex() {	# FRAME COUNT: a raw frame (it names its own MAC addresses)
	in_tx "$gen" --dev "$vtx" --json --hex "$1" --count "$2" | jq -r .sent
}
# The same in the background, $! being trafficgen itself; JSON to FILE.
send_bg() {	# FILE ARGS...
	local f=$1
	shift
	tmpfiles+=("$f")
	nsenter --net="/run/netns/$tx" "$gen" --dev "$vtx" --dst-mac "$mac" \
		--json "$@" >"$f" 2>&1 &
	bg+=($!)
}

# A fresh attachment of $vrx with ARGS (detaching what a test left).
fresh() {	# ARGS...
	[ -e "$pins/$vrx" ] && rl detach "$vrx" >/dev/null
	rl attach "$vrx" "$@" >/dev/null
}
quota() { rl quota set "$@" --iface "$vrx" >/dev/null; }

# The egress hook's program: the one pinned as PIN (egress) in IFACE's
# directory, and those the tc filters of $vrx's hook run on RXDEV.
egress_pin_id() {	# [IFACE [PIN]]
	bpftool -j prog show pinned "$(pin_dir "${1:-$vrx}")/${2:-egress}" 2>/dev/null |
		jq -r '.id // empty'
}
egress_filter_ids() {	# RXDEV
	ip netns exec "$rx" tc -j filter show dev "$1" egress 2>/dev/null |
		jq -r '[.[] | .options.prog.id? // empty] | map(tostring) | join(" ")'
}

now() { date +%s.%N; }

# ---- run ---------------------------------------------------------------------
start=$(date +%s)
for t in "${selected[@]}"; do
	n=$((passed + failed))
	"test_$t"
	# a test that reports nothing has checked nothing
	[ $((passed + failed)) -gt "$n" ] || result "$t" 1 "test_$t reported no result"
done
echo "  e2e took $(( $(date +%s) - start )) s"
lib_finish
