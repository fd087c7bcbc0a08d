#!/bin/bash
# End to end (issue 4): the CLI on veth pairs between two namespaces of
# this run, real traffic from tests/gen/trafficgen, and assertions on what
# the receiver gets and on `stats --json`.
#
# What XDP passed is counted independently of xdp-ratelimit by nftables on
# the receiver's netdev ingress hook, which runs after XDP: per IPv4/IPv6
# source (dynamic sets with counters), every frame, and non-IP frames. The
# interface's own rx counters are no use: a veth counts frames before XDP.
# Usage: tests/e2e/run.sh BUILD_DIR
set -u
suite=e2e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
lib_init "${1:-build}" rle

vtx2=${id}c vrx2=${id}d			# second pair, for several interfaces
dummy=${id}e				# a bridge: no native XDP, auto falls back
dot=${id}f.5				# a name with a dot, as eth0.100
rx_ifaces+=("$vrx2" "$dummy" "$dot")
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
for f in "$cli" "$gen"; do
	[ -x "$f" ] || lib_abort setup "$f is missing: build with make OUTPUT=$1"
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

now() { date +%s.%N; }

# ---- exact quota; other sources untouched --------------------------------
t_exact_quota() {
	fresh && quota 198.18.1.0/24 --pps 25 || { result exact_quota 1 "attach"; return; }
	# 4 limited sources interleaved, 100 frames each, then 2 others
	local n1 n2 bad=() a p d f0
	f0=$(rx_count frames)
	n1=$(send --src 198.18.1.1 --sources 4 --count 400)
	n2=$(send --src 198.18.2.1 --sources 2 --count 200)
	for a in 198.18.1.{1..4}; do
		p=$(src_stat "$a" passed_packets) d=$(src_stat "$a" dropped_packets)
		[ "$(seen "$a")" = 25 ] && [ "$p" = 25 ] && [ "$d" = 75 ] &&
			[ "$(src_stat "$a" passed_bytes)" = $((25 * 60)) ] ||
			bad+=("$a: received $(seen "$a"), stats $p passed $d dropped")
	done
	check exact_quota "n1 == 400 && ${#bad[@]} == 0" "quota 25 of 100: ${bad[*]}"
	bad=()
	for a in 198.18.2.1 198.18.2.2; do
		p=$(src_stat "$a" passed_packets) d=$(src_stat "$a" dropped_packets)
		[ "$(seen "$a")" = 100 ] && [ "$p" = 100 ] && [ "$d" = 0 ] ||
			bad+=("$a: received $(seen "$a"), stats $p passed $d dropped")
	done
	check other_sources_untouched "n2 == 200 && ${#bad[@]} == 0" "${bad[*]}"
	p=$(total passed_packets) d=$(total dropped_packets)
	f0=$(( $(rx_count frames) - f0 ))
	check totals_count_every_frame "p == 300 && d == 300 && f0 == 300" \
		"totals: $p passed, $d dropped; receiver got $f0 (want 300, 300, 300)"
}

# ---- CIDR rules, longest prefix wins -------------------------------------
t_cidr_lpm() {
	fresh && quota default --pps 2 && quota 198.18.4.0/22 --pps 5 &&
		quota 198.18.5.0/24 --pps 20 && quota 198.18.5.7 --pps 50 ||
		{ result cidr_longest_prefix 1 "attach or quota set"; return; }
	local bad=() a want rule r
	for a in 198.18.4.1:5:198.18.4.0/22 198.18.5.1:20:198.18.5.0/24 \
		198.18.5.7:50:198.18.5.7/32 198.18.7.200:5:198.18.4.0/22 \
		198.18.40.1:2:0.0.0.0/0; do
		IFS=: read -r a want rule <<<"$a"
		send --src "$a" --count 100 >/dev/null
		r=$(stats_json | jq -r --arg a "$a" '.interfaces[0].sources[] | select(.address == $a) | .rule')
		[ "$(seen "$a")" = "$want" ] && [ "$(src_stat "$a" passed_packets)" = "$want" ] &&
			[ "$r" = "$rule" ] ||
			bad+=("$a: received $(seen "$a"), passed $(src_stat "$a" passed_packets) by rule '$r', want $want by $rule")
	done
	check cidr_longest_prefix "${#bad[@]} == 0" "${bad[*]}"
}

# ---- blocking and allow-listing ------------------------------------------
t_block_allow() {
	fresh && quota default --pps 5 && quota 198.18.8.0/24 --pps 0 &&
		quota 198.18.9.0/24 --pps 1 && quota 198.18.9.9 --pps unlimited ||
		{ result block 1 "attach or quota set"; return; }
	local n r d p
	n=$(send --src 198.18.8.1 --sources 3 --count 300)
	r=$(( $(seen 198.18.8.1) + $(seen 198.18.8.2) + $(seen 198.18.8.3) ))
	d=$(total dropped_packets)
	# refused on their first packet, they take no entry but keep their drops
	local ds=$(( $(src_stat 198.18.8.1 dropped_packets) +
		$(src_stat 198.18.8.2 dropped_packets) + $(src_stat 198.18.8.3 dropped_packets) ))
	local tr
	tr=$(stats_json "$vrx" | jq -c '[.interfaces[0].sources[] |
		select(.address | startswith("198.18.8.")) | .tracked] | unique')
	check block "n == 300 && r == 0 && d == 300 && ds == 300" \
		"--pps 0: $r of $n received, stats dropped $d, per source $ds"
	result block_sources_shown "$([ "$tr" = "[false]" ] && echo 0 || echo 1)" \
		"blocked sources shown untracked: tracked $tr"
	# paced, so that the veth ring never overflows before XDP
	n=$(send --src 198.18.9.9 --rate 10000 --duration 1)
	r=$(seen 198.18.9.9) p=$(src_stat 198.18.9.9 passed_packets)
	d=$(src_stat 198.18.9.9 dropped_packets)
	check allow_list_zero_loss "n >= 5000 && r == n && p == n && d == 0" \
		"unlimited inside a 1 pps /24: sent $n, received $r, stats $p passed $d dropped"
	send --src 198.18.9.10 --count 10 >/dev/null
	r=$(seen 198.18.9.10)
	check allow_list_is_one_address "r == 1" "198.18.9.10 (1 pps) received $r of 10"
}

# ---- byte budgets ----------------------------------------------------------
t_bytes() {
	fresh && quota 198.18.10.0/24 --bps 6000 && quota 198.18.10.3 --pps 40 --bps 6000 ||
		{ result byte_budget 1 "attach or quota set"; return; }
	local bad=() a size want b
	# 100-byte frames: 60 fit 6000 B; 1000-byte: 6; 60-byte under 40 pps: 40
	for a in 198.18.10.1:100:60 198.18.10.2:1000:6 198.18.10.3:60:40; do
		IFS=: read -r a size want <<<"$a"
		send --src "$a" --size "$size" --count 200 >/dev/null
		b=$(src_stat "$a" passed_bytes)
		[ "$(seen "$a")" = "$want" ] && [ "$(src_stat "$a" passed_packets)" = "$want" ] &&
			[ "$b" = $((want * size)) ] ||
			bad+=("$a ($size B): received $(seen "$a"), passed $(src_stat "$a" passed_packets) / $b B, want $want")
	done
	check byte_budget "${#bad[@]} == 0" "${bad[*]}"
}

# ---- IPv6 sources grouped per /64 ----------------------------------------
t_ipv6() {
	fresh && quota 2001:db8:1::/48 --pps 10 || { result ipv6_per_64 1 "attach"; return; }
	local r1 r2 r3 s1 s2
	# ::1 and ::2 share a /64, interleaved; 2001:db8:1:1::1 is another /64
	send --src 2001:db8:1::1 --ipv6-step-bits 128 --sources 2 --count 100 >/dev/null
	send --src 2001:db8:1:1::1 --count 50 >/dev/null
	r1=$(seen 2001:db8:1::1) r2=$(seen 2001:db8:1::2) r3=$(seen 2001:db8:1:1::1)
	s1=$(src_stat 2001:db8:1::/64 passed_packets)/$(src_stat 2001:db8:1::/64 dropped_packets)
	s2=$(src_stat 2001:db8:1:1::/64 passed_packets)/$(src_stat 2001:db8:1:1::/64 dropped_packets)
	check ipv6_per_64 "r1 + r2 == 10 && r1 > 0 && r2 > 0 && r3 == 10" \
		"received ::1 $r1 + ::2 $r2 (one /64, want 10 together), other /64 $r3 (want 10)"
	[[ $s1 == 10/90 && $s2 == 10/40 ]]
	result ipv6_stats_per_64 $? \
		"stats passed/dropped: 2001:db8:1::/64 $s1 (want 10/90), 2001:db8:1:1::/64 $s2 (want 10/40)"
}

# ---- VLAN tags ---------------------------------------------------------------
t_vlan() {
	fresh && quota 198.18.11.0/24 --pps 10 || { result vlan 1 "attach"; return; }
	local f0 f1 r1 s1 s2
	send --src 198.18.11.1 --vlan 100 --count 50 >/dev/null
	r1=$(seen 198.18.11.1)
	# double-tagged frames reach the stack with the inner tag left on:
	# count them as frames
	f0=$(rx_count frames)
	send --src 198.18.11.2 --vlan 100 --vlan 200 --count 50 >/dev/null
	f1=$(rx_count frames)
	s1=$(src_stat 198.18.11.1 passed_packets)/$(src_stat 198.18.11.1 dropped_packets)
	s2=$(src_stat 198.18.11.2 passed_packets)/$(src_stat 198.18.11.2 dropped_packets)
	[ "$r1/$s1" = 10/10/40 ]
	result vlan_802_1q $? \
		"one tag: received $r1, stats passed/dropped $s1 (want 10, 10/40)"
	[ "$((f1 - f0))/$s2" = 10/10/40 ]
	result vlan_802_1ad_qinq $? \
		"two tags: received $((f1 - f0)), stats passed/dropped $s2 (want 10, 10/40)"
}

# ---- non-IP and malformed frames -------------------------------------------
eth="$mac 02:00:00:00:00:01"	# destination, source (hex frames)
arp="$eth 08 06 0001 0800 06 04 0001 02:00:00:00:00:01 c6 12 c8 01 000000000000 c6 12 c8 02"
lldp="01:80:c2:00:00:0e 02:00:00:00:00:01 88 cc 0207 04 020000000001 0403 05 6531 0602 0078 0000"
qinq3="$eth 88a8 0064 8100 00c8 8100 012c 0800 4500 001c 0000 0000 4011 0000 c612 fa03 c612 0101"
malformed=(
	"$eth 0800 4300 001c 0000 0000 4011 0000 c612 fa01 c612 0101 0000 0000"	# IHL 3
	"$eth 0800 4700 001c 0000 0000 4011 0000 c612 fa01 c612 0101 0000 0000"	# IHL 7 > frame
	"$eth 0800 6000 001c 0000 0000 4011 0000 c612 fa02 c612 0101 0000 0000"	# version 6 in IPv4
	"$eth 86dd 6000 0000 0008 1140 2001 0db8"					# IPv6 cut short
	"$eth 8100 00"									# VLAN cut short
	"$eth 0800 4500 001c 0000"							# IPv4 cut short
)
send_malformed() {	# each 10 times; prints frames sent
	local f n=0
	for f in "${malformed[@]}"; do
		n=$((n + $(send_hex "$f" 10)))
	done
	echo "$n"
}
t_frames() {
	fresh --default-pps 1 || { result non_ip 1 "attach"; return; }
	local f0 n0 n a q m p d r
	f0=$(rx_count frames) n0=$(rx_count nonip)
	a=$(send_hex "$arp" 20)
	a=$((a + $(send_hex "$lldp" 20)))
	q=$(send_hex "$qinq3" 20)
	n=$(total non_ip_packets) p=$(total passed_packets)
	r=$(( $(rx_count nonip) - n0 ))
	check non_ip_pass "a == 40 && q == 20 && n == 60 && p == 60 && r == 60" \
		"ARP+LLDP $a, 3 VLAN tags $q sent; non_ip $n, passed $p, received $r (want 60 each)"
	f0=$(rx_count frames)
	m=$(send_malformed)
	p=$(total malformed_packets) d=$(total dropped_packets) r=$(( $(rx_count frames) - f0 ))
	check malformed_dropped "m == 60 && p == 60 && d == 60 && r == 0" \
		"sent $m; malformed $p, dropped $d, received $r (want 60, 60, 0)"
	fresh --pass-malformed --default-pps 1 || { result malformed_passed 1 "attach"; return; }
	f0=$(rx_count frames)
	m=$(send_malformed)
	p=$(total malformed_packets) d=$(total passed_packets) r=$(( $(rx_count frames) - f0 ))
	# the kernel's VLAN untagging frees the frame cut short in its tag
	# before any hook or tap: 50 of the 60 can be seen arriving
	check malformed_passed "m == 60 && p == 60 && d == 60 && r == 50" \
		"--pass-malformed: sent $m; malformed $p, passed $d (want 60), received $r (want 50)"
}

# ---- dry run -----------------------------------------------------------------
t_dry_run() {
	fresh --dry-run --default-pps 10 || { result dry_run 1 "attach"; return; }
	local n r p d j
	n=$(send --src 198.18.12.1 --count 100)
	r=$(seen 198.18.12.1)
	p=$(src_stat 198.18.12.1 passed_packets) d=$(src_stat 198.18.12.1 dropped_packets)
	j=$(stats_json | jq .interfaces[0].dry_run)
	check dry_run "n == 100 && r == 100 && d == 90 && p + d == 100 && $(total dropped_packets) == 90" \
		"sent $n, received $r; stats passed $p, would drop $d (want 100, 10, 90)"
	[ "$j" = true ]
	result dry_run_reported $? "stats dry_run: $j"
}

# ---- live quota change under traffic -----------------------------------------
t_live_change() {
	fresh && quota 198.18.13.0/24 --pps 10 || { result live_quota_change 1 "attach"; return; }
	local f=/tmp/$id.live p1 d1 p2 d2 n r st pps
	send_bg "$f" --src 198.18.13.1 --rate 100 --burst 1 --duration 3
	local g=$!
	sleep 1.5
	p1=$(src_stat 198.18.13.1 passed_packets) d1=$(src_stat 198.18.13.1 dropped_packets)
	quota 198.18.13.0/24 --pps 50; st=$?
	wait "$g"
	n=$(jq .sent "$f" 2>/dev/null || echo 0)
	p2=$(src_stat 198.18.13.1 passed_packets) d2=$(src_stat 198.18.13.1 dropped_packets)
	r=$(seen 198.18.13.1)
	pps=$(rl quota list --iface "$vrx" --json |
		jq '.interfaces[0].rules[] | select(.prefix == "198.18.13.0/24") | .pps')
	check live_quota_change "st == 0 && pps == 50 && p1 >= 10 && p1 <= 20 && p2 - p1 >= 50 && p2 - p1 <= 50 * 3" \
		"10 pps for 1.5 s passed $p1, then 50 pps for 1.5 s passed $((p2 - p1)) (rule pps $pps)"
	check live_change_keeps_counters "d1 > 0 && p2 >= p1 && d2 >= d1 && p2 + d2 == n && r == p2" \
		"before the change $p1 passed, $d1 dropped; after $p2, $d2; sent $n, received $r"
}

# ---- sliding window, paced over several seconds ------------------------------
# 20 pps (window 1 s, 10 buckets). 1.5 s at 10 pps: all pass, about one per
# bucket. Then 2.5 s at 100 pps: about 10 pass at once, then about one per
# bucket as the oldest bucket leaves the window, never a fresh quota at a
# window edge. A fixed window would pass nothing for most of each second
# after its budget is gone, then 20 at once.
t_sliding() {
	fresh --window 1s --buckets 10 && quota 198.18.14.0/24 --pps 20 ||
		{ result sliding_window 1 "attach"; return; }
	local cap=/tmp/$id.cap ready=/tmp/$id.ready t2 t3 n1 n2 c s
	tmpfiles+=("$cap" "$ready")
	rm -f "$ready"
	nsenter --net="/run/netns/$rx" /usr/bin/python3 "$here/capture.py" \
		"$vrx" 198.18.14.1 5 "$ready" >"$cap" &
	c=$!
	bg+=("$c")
	for _ in $(seq 50); do [ -e "$ready" ] && break; sleep 0.05; done
	n1=$(send --src 198.18.14.1 --rate 10 --burst 1 --duration 1.5)
	t2=$(now)
	n2=$(send --src 198.18.14.1 --rate 100 --burst 1 --duration 2.5)
	t3=$(now)
	wait "$c"
	# max passes in any 0.85 s span (a span within W - W/B lies within the
	# B buckets a verdict looks at); passes in phase 1, in phase 2, in the
	# 0.15 s from phase 2's first pass, and the longest gap (ms) after that
	read -r s p1 p2 first gap <<<"$(awk -v t2="$t2" -v t3="$t3" '
		{ t[NR] = $1 }
		END {
			max = 0; j = 1; gap = 0; start = 0
			for (i = 1; i <= NR; i++) {
				while (t[i] - t[j] >= 0.85) j++
				if (i - j + 1 > max) max = i - j + 1
				if (t[i] < t2) { p1++; continue }
				if (!p2++) start = last = t[i]
				if (t[i] < start + 0.15) { first++; last = t[i]; continue }
				if (t[i] - last > gap) gap = t[i] - last
				last = t[i]
			}
			if (t3 - last > gap) gap = t3 - last
			printf "%d %d %d %d %d\n", max, p1, p2, first, gap * 1000
		}' "$cap")"
	local p d
	p=$(src_stat 198.18.14.1 passed_packets) d=$(src_stat 198.18.14.1 dropped_packets)
	echo "  sliding: phase 1 $p1 of $n1 passed; phase 2 $p2 of $n2, $first in its first 0.15 s, then longest gap $gap ms; most in 0.85 s: $s"
	check sliding_window_never_over "s > 0 && s <= 20" \
		"$s passes within 0.85 s (quota 20 per 1 s)"
	check sliding_window_continuous "p1 == n1 && first >= 5 && first <= 15 && gap < 350" \
		"phase 1 passed $p1 of $n1; phase 2: $first at once (the rest of the window, ~10), then longest gap $gap ms (a bucket leaves every 100 ms)"
	check sliding_window_rate "p2 >= 40 && p2 <= 60 && p1 + p2 == p && p + d == n1 + n2" \
		"phase 2 passed $p2 in 2.5 s at 20 pps; receiver $((p1 + p2)), stats $p passed $d dropped of $((n1 + n2))"
}

# ---- every pin readable with bpftool, with BTF names -------------------------
t_bpftool() {
	fresh --default-pps 10 && quota 2001:db8:2::/48 --pps 5 --aggregate-pps 100 ||
		{ result bpftool_maps_btf 1 "attach"; return; }
	send --src 198.18.16.1 --count 20 >/dev/null
	send --src 2001:db8:2::1 --count 20 >/dev/null
	quota 198.18.17.0/24 --pps 0 && send --src 198.18.17.1 --count 3 >/dev/null
	local bad=() m field n names perms
	for m in config:rules_gen counters:passed_pkts sources:passed_pkts \
		rules:pkt_budget rules_v4:prefixlen rules_v6:prefixlen aggregates:allow_pkts \
		refused:dropped_pkts; do
		IFS=: read -r m field <<<"$m"
		bpftool map dump pinned "$pins/$vrx/$m" 2>&1 | grep -q "\"$field\": " ||
			bad+=("$m has no field $field")
	done
	bpftool link show pinned "$pins/$vrx/link" 2>&1 | grep -q "xdp" || bad+=("link")
	n=$(bpftool -j map dump pinned "$pins/$vrx/counters" |
		jq '[.[0].formatted.values[].value.passed_pkts] | add')
	[ "$n" = 15 ] && [ "$n" = "$(total passed_packets)" ] ||
		bad+=("counters passed_pkts summed over CPUs $n, stats $(total passed_packets), want 15")
	names=$(ls "$pins/$vrx" | sort | tr '\n' ' ')
	[ "$names" = "aggregates bans config counters link refused rules rules_v4 rules_v6 sources " ] ||
		bad+=("pins: $names")
	perms=$(stat -c %a "$pins/$vrx" "$pins/$vrx"/* | sort -u | tr '\n' ' ')
	[ "$perms" = "600 700 " ] || bad+=("modes $perms, want 700 dir, 600 pins")
	check bpftool_maps_btf "${#bad[@]} == 0" "${bad[*]}"
}

# ---- stats --watch: redraws in place, with rates ----------------------------------
t_watch() {
	fresh --default-pps 10 || { result stats_watch 1 "attach"; return; }
	local f=/tmp/$id.watch o=/tmp/$id.watchout rc frames rates g p d
	tmpfiles+=("$o")
	send_bg "$f" --src 198.18.20.1 --rate 100 --burst 1 --duration 3
	g=$!
	sleep 0.3
	# on a terminal (script gives one), stopped with Ctrl-C after 2.5 s
	script -qec "timeout --preserve-status -s INT 2.5 nsenter --net=/run/netns/$rx $cli stats --iface $vrx --watch 1" \
		/dev/null >"$o"; rc=$?
	frames=$(grep -c $'\e\[H' "$o")
	# packets/s of the last complete redraw: passed ~10, dropped ~90
	rates=$(tr -d '\r' <"$o" | awk '$1 == "passed" && $4 != "-" { p = $4 }
		$1 == "dropped" && $4 != "-" { d = $4 } END { print p + 0, d + 0 }')
	wait "$g"
	read -r p d <<<"$rates"
	check stats_watch "rc == 0 && frames >= 2 && p >= 5 && p <= 15 && d >= 70 && d <= 100" \
		"exit $rc after Ctrl-C, $frames redraws, rates passed $p/s dropped $d/s (want 10, 90)"
}

# ---- help, version, status ------------------------------------------------------
t_help() {
	local bad=() c out err=/tmp/$id.err rc
	tmpfiles+=("$err")
	for c in "" attach detach quota stats status; do
		out=$(rl $c --help 2>"$err"); rc=$?
		[ "$rc" = 0 ] && [[ $out == Usage:* ]] && [ ! -s "$err" ] ||
			bad+=("'$c --help': exit $rc")
	done
	[[ $(rl --version) == "xdp-ratelimit "[0-9]* ]] || bad+=("--version")
	# no command, no subcommand: an error first, then the usage
	err=$(rl 2>&1 >/dev/null); rc=$?
	[ "$rc" = 2 ] && [[ $err == "xdp-ratelimit: missing command"*Usage:* ]] ||
		bad+=("no command: exit $rc, said '${err%%$'\n'*}'")
	err=$(rl quota 2>&1 >/dev/null); rc=$?
	[ "$rc" = 2 ] && [[ $err == "xdp-ratelimit: quota: missing subcommand"*Usage:* ]] ||
		bad+=("quota without set/del/list: exit $rc, said '${err%%$'\n'*}'")
	check help_and_version "${#bad[@]} == 0" "${bad[*]}"
	fresh --window 500ms --buckets 5 --max-sources 100 --ipv6-prefix 56 ||
		{ result status_json 1 "attach"; return; }
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.mode, .window_ms, .buckets, .max_sources, .ipv6_prefix, .state]')
	[ "$out" = '["native",500,5,100,56,"ok"]' ]
	result status_json $? "status --json: $out"
	# the human table: every value in its header's column
	out=$(rl status)
	[[ $out == "IFACE "*" MODE "*" WINDOW "*" BUCKETS "*" MAX_SRC "*" IPV6_PFX "*" RULES "*" STATE"$'\n'* ]] &&
		[ "$(table_row "$out" IFACE "$vrx")" = "$vrx native 500ms 5 100 /56 0 ok" ]
	result status_table $? "status printed:"$'\n'"$out"
}

# ---- detach leaves nothing behind ----------------------------------------------
t_detach() {
	fresh --default-pps 10 && quota 198.18.17.0/24 --pps 5 || { result detach 1 "attach"; return; }
	send --src 198.18.17.1 --count 20 >/dev/null
	local prog maps rc left=() m i
	prog=$(xdp_prog_id "$vrx")
	maps=$(for m in "$pins/$vrx"/*; do
		[ "${m##*/}" = link ] || bpftool -j map show pinned "$m" | jq .id; done)
	rl detach "$vrx" >/dev/null; rc=$?
	[ -e "$pins/$vrx" ] && left+=("pin dir")
	ls "$pins" 2>/dev/null | grep -q "^$vrx " && left+=("staging dir")
	[ -n "$(xdp_prog_id "$vrx")" ] && left+=("xdp program on the link")
	# The kernel frees the program after an RCU grace period and each map
	# later still, from a deferred work item: wait for each, bounded (10 s).
	gone_within 100 prog "$prog" || left+=("program $prog")
	for m in $maps; do
		gone_within 100 map "$m" || left+=("map $m")
	done
	rl stats --iface "$vrx" --json >/dev/null 2>&1 && left+=("stats still answers")
	check detach_leaves_nothing "rc == 0 && ${prog:-0} > 0 && ${#left[@]} == 0" \
		"detach rc $rc (prog ${prog:-none}); left: ${left[*]}"
}

# ---- several interfaces at once ------------------------------------------------
t_multi() {
	fresh --default-pps 10 && rl attach "$vrx2" --default-pps 20 >/dev/null ||
		{ result several_interfaces 1 "attach"; return; }
	local r1 r2 t1 t2 err rc rules1
	send --src 198.18.18.1 --count 100 >/dev/null
	send_dev "$vtx2" "$mac2" --src 198.18.18.1 --count 100 >/dev/null
	r1=$(seen 198.18.18.1 "$vrx") r2=$(seen 198.18.18.1 "$vrx2")
	t1=$(rl stats --json | jq --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | .totals.passed_packets')
	t2=$(rl stats --json | jq --arg i "$vrx2" '.interfaces[] | select(.ifname == $i) | .totals.passed_packets')
	check several_interfaces "r1 == 10 && r2 == 20 && t1 == 10 && t2 == 20" \
		"received $r1 / $r2, stats $t1 / $t2 (want 10 / 20)"
	# a change to one leaves the other alone; without --iface it is refused
	rules1=$(rl quota list --iface "$vrx" --json)
	rl quota set 198.18.18.0/24 --pps 1 --iface "$vrx2" >/dev/null; rc=$?
	[ "$rules1" = "$(rl quota list --iface "$vrx" --json)" ] && [ "$rc" = 0 ]
	result quota_per_interface $? \
		"quota set --iface $vrx2 rc $rc, or it changed $vrx's rules"
	err=$(rl quota set 198.18.18.0/24 --pps 1 2>&1 >/dev/null); rc=$?
	check iface_required_when_several "rc == 1" "rc $rc: $err"
	rl detach "$vrx2" >/dev/null
	[ -z "$(xdp_prog_id "$vrx2")" ] && [ -n "$(xdp_prog_id "$vrx")" ] &&
		[ -e "$pins/$vrx/link" ]
	result detach_one_of_several $? "detaching $vrx2 touched $vrx, or left its program"
}

# ---- generic mode, and auto falling back ----------------------------------------
# Live frames (XDP_TX into a veth) reach the peer only through its NAPI,
# which a veth runs only for a native XDP program (or GRO): so generic mode
# gets kernel-stack traffic, UDP from the sender's address.
t_generic() {
	fresh --mode generic --default-pps 10 || { result generic_mode 1 "attach"; return; }
	local m link r p d out
	m=$(stats_json | jq -r .interfaces[0].mode)
	link=$(ip -n "$rx" -d link show "$vrx" | grep -c "xdpgeneric")
	ip -n "$tx" neigh replace 198.18.200.2 lladdr "$mac" dev "$vtx" nud permanent
	ip netns exec "$tx" bash -c 'for i in $(seq 100); do echo x >/dev/udp/198.18.200.2/9; done' 2>/dev/null
	r=$(seen 198.18.200.1)
	p=$(src_stat 198.18.200.1 passed_packets) d=$(src_stat 198.18.200.1 dropped_packets)
	[ "$m" = generic ] && (( link == 1 && r == 10 && p == 10 && d == 90 ))
	result generic_mode $? \
		"mode $m (xdpgeneric on link: $link); 100 UDP datagrams: received $r, stats $p passed $d dropped"
	rl detach "$vrx" >/dev/null
	out=$(rl attach "$dummy" 2>&1)
	m=$(rl status --json | jq -r --arg i "$dummy" '.interfaces[] | select(.ifname == $i) | .mode')
	grep -q "falling back to generic" <<<"$out" && [ "$m" = generic ]
	result auto_falls_back_to_generic $? \
		"mode $m; said: $out"
	rl detach "$dummy" >/dev/null
}

# ---- stats: the busiest sources, by dropped then passed packets ---------------------
t_top() {
	fresh && quota 198.18.22.0/24 --pps 3 && quota 198.18.22.2 --pps 6 &&
		quota 198.18.22.10 --pps 6 && quota 198.18.22.12 --pps unlimited ||
		{ result stats_top_default_10 1 "attach or quota set"; return; }
	# LAST:SENT from 198.18.22.LAST, each source at once: .2 and .10 pass 6,
	# .12 everything, the others 3. Dropped: .1 and .2 20, .3 to .9 18 to 12,
	# .10 and .11 11 (.10 ranks first: it passed more), .12 and .13 none.
	local a got want out
	for a in 1:23 2:26 3:21 4:20 5:19 6:18 7:17 8:16 9:15 10:17 11:14 12:50 13:3; do
		send --src "198.18.22.${a%:*}" --count "${a#*:}" >/dev/null
	done
	want=$(printf '198.18.22.%s ' 2 1 3 4 5 6 7 8 9 10)
	got=$(rl stats --iface "$vrx" --json |
		jq -r '[.interfaces[0].sources[].address] | join(" ")')
	[ "$got" = "${want% }" ]
	result stats_top_default_10 $? "stats without --top listed $got (want $want)"
	got=$(rl stats --iface "$vrx" --json --top 3 | jq -c '[.interfaces[0].sources[] |
		[.address, .passed_packets, .dropped_packets]]')
	[ "$got" = '[["198.18.22.2",6,20],["198.18.22.1",3,20],["198.18.22.3",3,18]]' ]
	result stats_top_3 $? "stats --top 3: $got"
	# the human table: totals, then the sources under aligned headers
	out=$(rl stats --iface "$vrx")
	[[ $out == "$vrx (ifindex "* ]] && grep -Eq '^ +PACKETS +BYTES$' <<<"$out" &&
		grep -Eq '^passed +92 +5520$' <<<"$out" && grep -Eq '^dropped +167 +10020$' <<<"$out" &&
		grep -Eq '^ADDRESS +RULE +PASSED\(pkts\) +PASSED\(bytes\) +DROPPED\(pkts\) +DROPPED\(bytes\) ' <<<"$out" &&
		[ "$(grep -c '^198\.18\.22\.' <<<"$out")" = 10 ] &&
		[ "$(table_row "$out" ADDRESS 198.18.22.2 | cut -d ' ' -f 1-6)" = "198.18.22.2 198.18.22.2/32 6 360 20 1200" ]
	result stats_table $? "stats printed:"$'\n'"$out"
}

# ---- quota del: the source falls to the next rule, counters kept -------------------
t_quota_del() {
	# in a window of 1m the /32 passes 60 frames, the /24 120, the default 60
	fresh --window 1m --default-pps 1 && quota 198.18.23.0/24 --pps 2 &&
		quota 198.18.23.5 --pps 1 || { result quota_del 1 "attach or quota set"; return; }
	local a=198.18.23.5 out rc1 rc2 rules s1 s2 s3 r
	# the human list: its header, a row per rule
	out=$(rl quota list --iface "$vrx")
	[[ $out == "$vrx: 4 rules"$'\n'"PREFIX "*" PPS "*" BPS "*" AGGREGATE_PPS "*" AGGREGATE_BPS "*" NEW_PPS "*" NEW_BPS "*" BAN"$'\n'* ]] &&
		[ "$(table_row "$out" PREFIX "$a/32")" = "$a/32 1 - - - - - -" ] &&
		[ "$(table_row "$out" PREFIX 198.18.23.0/24)" = "198.18.23.0/24 2 - - - - - -" ] &&
		[ "$(table_row "$out" PREFIX 0.0.0.0/0)" = "0.0.0.0/0 1 - - - - - -" ] &&
		[ "$(table_row "$out" PREFIX ::/0)" = "::/0 1 - - - - - -" ]
	result quota_list_table $? "quota list printed:"$'\n'"$out"
	# source: passed/dropped/rule
	src_pdr() { stats_json | jq -r --arg a "$a" '.interfaces[0].sources[] |
		select(.address == $a) | "\(.passed_packets)/\(.dropped_packets)/\(.rule)"'; }
	send --src "$a" --count 100 >/dev/null		# its own rule: 60 pass
	s1=$(src_pdr)
	rl quota del "$a" --iface "$vrx" >/dev/null; rc1=$?
	rules=$(rl quota list --iface "$vrx" --json | jq -c '[.interfaces[0].rules[].prefix] | sort')
	send --src "$a" --count 100 >/dev/null		# the /24: 60 more fit in its 120
	s2=$(src_pdr)
	rl quota del 198.18.23.0/24 --iface "$vrx" >/dev/null; rc2=$?
	send --src "$a" --count 100 >/dev/null		# default: 120 passed is over its 60
	s3=$(src_pdr) r=$(seen "$a")
	[ "$rc1/$rules" = '0/["0.0.0.0/0","198.18.23.0/24","::/0"]' ]
	result quota_del_removes_rule $? "quota del $a: exit $rc1, rules left $rules"
	[ "$s1 $s2 $rc2 $s3 $r" = "60/40/$a/32 120/80/198.18.23.0/24 0 120/180/0.0.0.0/0 120" ]
	result quota_del_next_rule_keeps_counters $? \
		"passed/dropped/rule: $s1 (want 60/40), after del $s2 (want 120/80 by the /24), after del of the /24 (exit $rc2) $s3 (want 120/180 by the default); received $r"
}

# ---- no bpffs mounted: the CLI mounts one ---------------------------------------------
# A shell in a mount namespace of its own (private: nothing it mounts or
# unmounts reaches the host's) unmounts /sys/fs/bpf, attaches $vrx2, checks
# and detaches. It has its own PID namespace and /proc too, so that its mount
# namespace is PID 1's, as on a host: the CLI refuses to pin from any other
# (the pins would vanish with it, as they do here when the shell exits).
bpffs_missing_sh='
cli=$1 gen=$2 rx=$3 tx=$4 dev=$5 txdev=$6 mac=$7
rl() { nsenter --net="/run/netns/$rx" "$cli" "$@"; }
[ "$(findmnt -no PROPAGATION /sys/fs/bpf)" = private ] || { echo "not private"; exit 1; }
while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 1; done
rl attach "$dev" --default-pps 10 >/dev/null
echo "attach=$?"
echo "mount=$(findmnt -no FSTYPE /sys/fs/bpf) $(findmnt -no OPTIONS /sys/fs/bpf)"
p=/sys/fs/bpf/xdp-ratelimit
echo "modes=$(stat -c %a /sys/fs/bpf) $(stat -c %a $p $p/* $p/*/* | sort -u | paste -sd " ")"
echo "ls=$(ls /sys/fs/bpf/xdp-ratelimit)"
echo "status=$(rl status --json | jq -c "[.interfaces[] | .ifname, .state]")"
nsenter --net="/run/netns/$tx" "$gen" --dev "$txdev" --dst-mac "$mac" --src 198.18.24.1 \
	--count 30 --json >/dev/null
echo "stats=$(rl stats --json | jq -c ".interfaces[0].totals | [.passed_packets, .dropped_packets]")"
rl detach "$dev" >/dev/null
echo "detach=$?"
echo "empty=$(rl stats --json) $(rl stats) rc=$?"
'
t_bpffs_missing() {
	fresh --default-pps 10 && quota 198.18.24.0/24 --pps 5 ||
		{ result bpffs_mounted_when_missing 1 "attach"; return; }
	local o=/tmp/$id.bpffs mnt0 rules0 prog0 got want
	tmpfiles+=("$o")
	mnt0=$(awk '$5 == "/sys/fs/bpf"' /proc/self/mountinfo)
	rules0=$(rl quota list --iface "$vrx" --json) prog0=$(xdp_prog_id "$vrx")
	unshare --mount --propagation private --pid --fork --mount-proc \
		bash -c "$bpffs_missing_sh" - "$cli" "$gen" "$rx" "$tx" "$vrx2" "$vtx2" "$mac2" \
		>"$o" 2>&1
	got=$(cat "$o")
	want="attach=0
mount=bpf rw,relatime,mode=700
modes=1700 600 700
ls=$vrx2
status=[\"$vrx2\",\"ok\"]
stats=[10,20]
detach=0
empty={\"interfaces\": []} no interface is attached rc=0"
	[ "$got" = "$want" ]
	result bpffs_mounted_when_missing $? "in a mount namespace without bpffs:"$'\n'"$got"
	# the host's bpffs and the pins in it are untouched; $vrx2 is detached
	[ "$(awk '$5 == "/sys/fs/bpf"' /proc/self/mountinfo)" = "$mnt0" ] &&
		[ -n "$mnt0" ] && [ -e "$pins/$vrx/link" ] &&
		[ "$(rl quota list --iface "$vrx" --json)" = "$rules0" ] &&
		[ "$(xdp_prog_id "$vrx")" = "$prog0" ] && [ -z "$(xdp_prog_id "$vrx2")" ]
	result bpffs_host_untouched $? "host bpffs was '$mnt0', now '$(awk '$5 == "/sys/fs/bpf"' /proc/self/mountinfo)'; $vrx program $prog0 now $(xdp_prog_id "$vrx"); $vrx2 program '$(xdp_prog_id "$vrx2")'"
}

# ---- bad input: refused, exit status, nothing changed -----------------------------
# What a refused command must leave as it was: rules and totals of $vrx,
# the programs on every link, and the pin directories.
state() {
	rl quota list --iface "$vrx" --json
	stats_json | jq -c '.interfaces[0].totals'
	xdp_prog_id "$vrx"
	echo "/$(xdp_prog_id "$vrx2")/$(xdp_prog_id "$dummy")/$(xdp_prog_id "$dot")"
	ls "$pins" | grep "^$id"
}
# bad NAME STATUS WORD CMD...: CMD fails with exit STATUS and a message on
# stderr starting "xdp-ratelimit: " that names WORD, and changes nothing.
bad() {
	local name=$1 want=$2 word=$3 err rc why=()
	shift 3
	err=$("$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" = "$want" ] || why+=("exit $rc, want $want")
	[[ $err == "xdp-ratelimit: "* ]] || why+=("stderr not 'xdp-ratelimit: ...'")
	[[ $err == *"$word"* ]] || why+=("does not say '$word'")
	[ "$(state)" = "$state0" ] || why+=("state changed")
	result "bad_$name" "${#why[@]}" "${why[*]}: $err"
}
t_bad_input() {
	fresh --default-pps 10 && quota 198.18.19.0/24 --pps 5 &&
		rl attach "$dot" >/dev/null ||
		{ result bad_input 1 "attach"; return; }
	send --src 198.18.19.1 --count 20 >/dev/null
	local q=(quota set) i=(--iface "$vrx") rc
	# a name with a dot is pinned with ':' in its place
	[ -d "$(pin_dir "$dot")" ] && [ -n "$(xdp_prog_id "$dot")" ] &&
		rl status --json | jq -e --arg i "$dot" \
			'.interfaces[] | select(.ifname == $i and .state == "ok")' >/dev/null
	result iface_name_with_dot $? "attach $dot: pins $(ls -d "$(pin_dir "$dot")" 2>&1)"
	state0=$(state)
	bad address 2 "198.18.300.1" rl "${q[@]}" 198.18.300.1 --pps 5 "${i[@]}"
	bad address_v6 2 "2001:db8::g" rl "${q[@]}" 2001:db8::g/64 --pps 5 "${i[@]}"
	bad prefix_length 2 "/33" rl "${q[@]}" 198.18.0.0/33 --pps 5 "${i[@]}"
	bad prefix_length_v6 2 "/129" rl "${q[@]}" 2001:db8::/129 --pps 5 "${i[@]}"
	bad host_bits 2 "198.18.19.0/24" rl "${q[@]}" 198.18.19.1/24 --pps 5 "${i[@]}"
	bad rate 2 "5x" rl "${q[@]}" 198.18.19.0/24 --pps 5x "${i[@]}"
	bad rate_negative 2 "-1" rl "${q[@]}" 198.18.19.0/24 --bps -1 "${i[@]}"
	bad rate_too_large 2 "too large" rl "${q[@]}" 198.18.19.0/24 --pps 99999999999999999999 "${i[@]}"
	bad no_limit 2 "--pps" rl "${q[@]}" 198.18.19.0/24 "${i[@]}"
	bad missing_value 2 "--pps" rl "${q[@]}" 198.18.19.0/24 "${i[@]}" --pps
	bad ipv6_longer_than_tracked 1 "/64" rl "${q[@]}" 2001:db8::/96 --pps 5 "${i[@]}"
	bad duration 2 "5x" rl attach "$vrx2" --window 5x
	bad duration_too_long 2 "1m" rl attach "$vrx2" --window 2m
	bad buckets 2 "16" rl attach "$vrx2" --buckets 17
	bad mode 2 "turbo" rl attach "$vrx2" --mode turbo
	bad unknown_interface 1 "nosuch$$" rl attach "nosuch$$"
	bad attach_twice 1 "already attached" rl attach "$vrx"
	bad quota_not_attached 1 "$vrx2" rl "${q[@]}" 198.18.19.0/24 --pps 5 --iface "$vrx2"
	bad quota_unknown_interface 1 "nosuch$$" rl "${q[@]}" 198.18.19.0/24 --pps 5 --iface "nosuch$$"
	bad detach_not_attached 1 "$vrx2" rl detach "$vrx2"
	bad quota_del_no_rule 1 "198.18.19.7" rl quota del 198.18.19.7 "${i[@]}"
	# what the kernel would refuse as an interface name (dev_valid_name):
	# with '' or '/' the pin path would be the root or another's directory,
	# and ':' names the pins of an interface whose name has a '.'
	bad iface_empty 2 "empty" rl detach ""
	bad iface_empty_attach 2 "empty" rl attach ""
	bad iface_empty_quota 2 "empty" rl "${q[@]}" 198.18.19.0/24 --pps 1 --iface ""
	bad iface_empty_stats 2 "empty" rl stats --iface ""
	bad iface_dot 2 "'.'" rl detach .
	bad iface_dot_dot 2 "'..'" rl quota list --iface ..
	bad iface_slash 2 "'/'" rl detach "$vrx/"
	bad iface_slash_quota 2 "'/'" rl "${q[@]}" 198.18.19.0/24 --pps 1 --iface "$vrx/"
	bad iface_colon 2 "':'" rl detach "${dot//./:}"
	bad iface_whitespace 2 "whitespace" rl detach "$vrx "
	bad iface_too_long 2 "15 characters" rl detach "${vrx}xxxxxxxxxxxxxxx"
	bad stats_not_attached 1 "$vrx2" rl stats --iface "$vrx2"
	bad unknown_command 2 "frobnicate" rl frobnicate
	bad unknown_subcommand 2 "frob" rl quota frob 198.18.19.0/24
	bad unknown_flag 2 "--ppz" rl "${q[@]}" 198.18.19.0/24 --ppz 5 "${i[@]}"
	bad unknown_flag_attach 2 "--bogus" rl attach "$vrx2" --bogus
	bad native_unsupported 1 "generic" rl attach "$dummy" --mode native
	bad not_root_quota 1 "root" in_rx "${nobody[@]}" "$cli" "${q[@]}" 198.18.19.0/24 --pps 1 "${i[@]}"
	bad not_root_attach 1 "root" in_rx "${nobody[@]}" "$cli" attach "$vrx2"
	bad not_root_detach 1 "root" in_rx "${nobody[@]}" "$cli" detach "$vrx"
	bad ip_netns_exec_attach 1 "nsenter --net=" ip netns exec "$rx" "$cli" attach "$vrx2"
	bad ip_netns_exec_quota 1 "nsenter --net=" ip netns exec "$rx" "$cli" "${q[@]}" 198.18.19.0/24 --pps 1 "${i[@]}"
	bad ip_netns_exec_detach 1 "nsenter --net=" ip netns exec "$rx" "$cli" detach "$vrx"
	bad ip_netns_exec_stats 1 "nsenter --net=" ip netns exec "$rx" "$cli" stats --iface "$vrx"
	# the rule and the counters still work after all that
	send --src 198.18.19.1 --count 20 >/dev/null
	local p d
	p=$(src_stat 198.18.19.1 passed_packets) d=$(src_stat 198.18.19.1 dropped_packets)
	check still_enforces_after_bad_input "p >= 5 && p <= 10 && p + d == 40" \
		"198.18.19.1 at 5 pps: $p passed, $d dropped of 2 x 20"
	rl detach "$dot" >/dev/null; rc=$?
	[ "$rc" = 0 ] && [ ! -e "$(pin_dir "$dot")" ] && [ -z "$(xdp_prog_id "$dot")" ]
	result detach_iface_name_with_dot $? "detach $dot: exit $rc"
}

start=$(date +%s)
t_bad_input
t_exact_quota
t_cidr_lpm
t_block_allow
t_bytes
t_ipv6
t_vlan
t_frames
t_dry_run
t_bpftool
t_help
t_watch
t_live_change
t_sliding
t_top
t_quota_del
t_multi
t_bpffs_missing
t_detach
t_generic
echo "  e2e took $(( $(date +%s) - start )) s"
lib_finish
