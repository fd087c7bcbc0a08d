# shellcheck shell=bash
# e2e area: what the program makes of each kind of frame: IPv6 per /64,
# VLAN tags, non-IP and malformed frames.
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# ---- IPv6 sources grouped per /64 ----------------------------------------
test_frames_ipv6() {
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
test_frames_vlan() {
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
# The raw frames (trafficgen --hex) name $mac, known once the links exist.
hex_frames() {
	eth="$mac 02:00:00:00:00:01"	# destination, source
	arp="$eth 08 06 0001 0800 06 04 0001 02:00:00:00:00:01 c6 12 c8 01 000000000000 c6 12 c8 02"
	lldp="01:80:c2:00:00:0e 02:00:00:00:00:01 88 cc 0207 04 020000000001 0403 05 6531 0602 0078 0000"
	# encapsulations not read: a third tag, MPLS, a PPPoE session
	encap=(
		"$eth 88a8 0064 8100 00c8 8100 012c 0800 4500 001c 0000 0000 4011 0000 c612 fa03 c612 0101"
		"$eth 8847 00064140 4500 001c 0000 0000 4011 0000 c612 fa04 c612 0101 0000 0000"
		"$eth 8864 1100 0001 001e 0021 4500 001c 0000 0000 4011 0000 c612 fa05 c612 0101"
	)
	malformed=(
		"$eth 0800 4300 001c 0000 0000 4011 0000 c612 fa01 c612 0101 0000 0000"	# IHL 3
		"$eth 0800 4700 001c 0000 0000 4011 0000 c612 fa01 c612 0101 0000 0000"	# IHL 7 > frame
		"$eth 0800 6000 001c 0000 0000 4011 0000 c612 fa02 c612 0101 0000 0000"	# version 6 in IPv4
		"$eth 86dd 6000 0000 0008 1140 2001 0db8"					# IPv6 cut short
		"$eth 8100 00"									# VLAN cut short
		"$eth 0800 4500 001c 0000"							# IPv4 cut short
	)
}
send_each() {	# FRAME...: each 10 times; prints frames sent
	local f n=0
	for f in "$@"; do
		n=$((n + $(send_hex "$f" 10)))
	done
	echo "$n"
}
test_frames_non_ip() {
	hex_frames
	fresh --default-pps 1 || { result non_ip 1 "attach"; return; }
	local f0 n0 n a q m p d r e
	f0=$(rx_count frames) n0=$(rx_count nonip)
	a=$(send_hex "$arp" 20)
	a=$((a + $(send_hex "$lldp" 20)))
	n=$(total non_ip_packets) p=$(total passed_packets)
	r=$(( $(rx_count nonip) - n0 ))
	check non_ip_pass "a == 40 && n == 40 && p == 40 && r == 40" \
		"ARP+LLDP $a sent; non_ip $n, passed $p, received $r (want 40 each)"
	f0=$(rx_count frames)
	q=$(send_each "${encap[@]}")
	e=$(total encap_packets) d=$(total dropped_packets) n=$(total non_ip_packets)
	r=$(( $(rx_count frames) - f0 ))
	check encap_dropped "q == 30 && e == 30 && d == 30 && n == 40 && r == 0" \
		"3 tags, MPLS, PPPoE: sent $q; encap $e, dropped $d, non_ip $n, received $r (want 30, 30, 30, 40, 0)"
	f0=$(rx_count frames)
	m=$(send_each "${malformed[@]}")
	p=$(total malformed_packets) d=$(total dropped_packets) r=$(( $(rx_count frames) - f0 ))
	check malformed_dropped "m == 60 && p == 60 && d == 90 && r == 0" \
		"sent $m; malformed $p, dropped $d (30 encapsulated before), received $r (want 60, 90, 0)"
	fresh --pass-malformed --default-pps 1 || { result malformed_passed 1 "attach"; return; }
	f0=$(rx_count frames)
	m=$(send_each "${malformed[@]}")
	p=$(total malformed_packets) d=$(total passed_packets) r=$(( $(rx_count frames) - f0 ))
	# the kernel's VLAN untagging frees the frame cut short in its tag
	# before any hook or tap: 50 of the 60 can be seen arriving
	check malformed_passed "m == 60 && p == 60 && d == 60 && r == 50" \
		"--pass-malformed: sent $m; malformed $p, passed $d (want 60), received $r (want 50)"
	q=$(send_each "${encap[@]}")
	e=$(total encap_packets) d=$(total passed_packets)
	check encap_passed "q == 30 && e == 30 && d == 90" \
		"--pass-malformed: 3 tags, MPLS, PPPoE: sent $q; encap $e, passed $d (want 30, 90)"
}
