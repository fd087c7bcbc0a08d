#!/bin/bash
# A blind forger against the flood defence, on a real TCP stack: the
# attacks that would make xdp-ratelimit verify addresses nobody proved, or
# ban a real client, each asserted through stats --json, ban list --json
# and what reaches the server's stack (nftables after XDP).
#
# Topology (every namespace and link made and removed here):
#   server ($rx: nginx on 198.19.1.1 and 2001:db8:ffff::1, port 8080;
#     xdp-ratelimit on $vrx) -- router -- client ($tx: 198.19.2.1,
#     2001:db8:fffe::1; curl; nftables drops what it did not ask for, as
#     NAT and CPE boxes do, so it never answers a SYN-ACK with a RST)
#                                 \-- attacker (raw frames, forge.py; it
#     never reads a socket)
# The router forwards only to the client's networks: the server's replies
# to forged addresses (198.18.0.0/16, 2001:db8:1::/48) are dropped there,
# one hop later, as the internet would.
# Usage: tests/attack/run.sh BUILD_DIR
set -u
suite=attack
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
lib_init "${1:-build}" rla

rt=${id}o at=${id}k			# router, attacker
rs=${id}c rc=${id}d ra=${id}e va=${id}f	# router's ends; the attacker's
nginx_dir=/tmp/$id.nginx
new_pps=20
tmpdirs+=("$nginx_dir")

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
for t in nginx curl nft python3 tc; do
	command -v "$t" >/dev/null || lib_abort setup "$t is missing: run scripts/install-deps.sh"
done
[ -x "$cli" ] || lib_abort setup "build first: make OUTPUT=$1"

in_rt() { nsenter --net="/run/netns/$rt" "$@"; }
in_at() { nsenter --net="/run/netns/$at" "$@"; }
cleanup() {
	local d
	# the router's namespace has a pin directory of its own
	d=$([ -e "/run/netns/$rt" ] && pin_dir "$rc" "$rt" 2>/dev/null)
	[ -n "$d" ] && [ -e "$d" ] && in_rt "$cli" detach "$rc" >/dev/null 2>&1
	lib_cleanup
	ip netns del "$rt" 2>/dev/null
	ip netns del "$at" 2>/dev/null
	[ -z "$d" ] || rm -rf "$d" "${d%/*}" 2>/dev/null
}
trap cleanup EXIT

setup() {
	local n
	for n in "$tx" "$rx" "$rt" "$at"; do ip netns add "$n" || return 1; done
	pins=$(ns_pins) && [ -n "$pins" ] || return 1	# for lib_cleanup
	ip link add "$vrx" netns "$rx" type veth peer name "$rs" netns "$rt" &&
		ip link add "$vtx" netns "$tx" type veth peer name "$rc" netns "$rt" &&
		ip link add "$va" netns "$at" type veth peer name "$ra" netns "$rt" || return 1
	in_rt sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 || return 1
	for n in "$rs" "$rc" "$ra"; do
		in_rt sysctl -qw "net.ipv4.conf.$n.rp_filter=0" && ip -n "$rt" link set "$n" up || return 1
	done
	ip -n "$rx" link set "$vrx" up && ip -n "$tx" link set "$vtx" up &&
		ip -n "$at" link set "$va" up && ip -n "$rx" link set lo up &&
		ip -n "$rx" addr add 198.19.1.1/24 dev "$vrx" &&
		ip -n "$rx" addr add 2001:db8:ffff::1/64 dev "$vrx" nodad &&
		ip -n "$rx" route add default via 198.19.1.254 &&
		ip -n "$rx" route add default via 2001:db8:ffff::fe &&
		ip -n "$rt" addr add 198.19.1.254/24 dev "$rs" &&
		ip -n "$rt" addr add 2001:db8:ffff::fe/64 dev "$rs" nodad &&
		ip -n "$rt" addr add 198.19.2.254/24 dev "$rc" &&
		ip -n "$rt" addr add 2001:db8:fffe::fe/64 dev "$rc" nodad &&
		ip -n "$rt" route add blackhole 198.18.0.0/16 &&
		ip -n "$rt" route add blackhole 2001:db8:1::/48 &&
		ip -n "$tx" addr add 198.19.2.1/24 dev "$vtx" &&
		ip -n "$tx" addr add 2001:db8:fffe::1/64 dev "$vtx" nodad &&
		ip -n "$tx" route add default via 198.19.2.254 &&
		ip -n "$tx" route add default via 2001:db8:fffe::fe || return 1
	# the client's stateful firewall: what it did not ask for is dropped
	in_tx nft -f - <<-NFT || return 1
	table inet fw {
		chain in {
			type filter hook input priority 0; policy accept;
			ct state established,related accept
			ct state invalid drop
			tcp flags & (syn | ack) != syn drop
		}
	}
	NFT
	# what reaches the server's stack after XDP, forged sources by protocol
	in_rx nft -f - <<-NFT
	table netdev c_$vrx {
		counter dgrams {}
		counter syns {}
		chain in {
			type filter hook ingress device "$vrx" priority 0; policy accept;
			ip saddr 198.18.0.0/16 udp dport 9999 counter name dgrams
			ip6 saddr 2001:db8:1::/48 udp dport 9999 counter name dgrams
			ip saddr 198.18.0.0/16 tcp flags syn counter name syns
			ip6 saddr 2001:db8:1::/48 tcp flags syn counter name syns
		}
	}
	NFT
}
setup || lib_abort setup "cannot create namespaces, links and firewalls"
start_nginx "$nginx_dir" 'listen [2001:db8:ffff::1]:8080; keepalive_timeout 60s; location / { return 200 "ok\n"; }' ||
	lib_abort setup "nginx"
mac=$(ip -n "$rt" -j link show "$ra" | jq -r '.[0].address')
count() { in_rx nft -j list counter netdev "c_$vrx" "$1" |
	jq '.nftables[] | select(.counter) | .counter.packets'; }
forge() { in_at python3 "$here/forge.py" "$va" "$mac" "$@"; }
get() {	# URL-HOST: 200 when served
	in_tx curl -s -o /dev/null -m 2 -w '%{http_code}' "http://$1:8080/"
}
served() {	# HOST N: of N requests, how many answered 200
	local i ok=0
	for ((i = 0; i < $2; i++)); do [ "$(get "$1")" = 200 ] && ok=$((ok + 1)); done
	echo "$ok"
}
nginx_up() { [ "$(get 198.19.1.1)" = 200 ]; }
within 100 nginx_up || lib_abort setup "nginx does not answer through the router"

verified_sources() { stats_json "$vrx" 0 | jq .interfaces[0].verified_sources; }
verified_total() { stats_json "$vrx" 0 | jq ".interfaces[0].totals.verified_new // 0"; }
bans() { rl ban list --iface "$vrx" --json | jq '.interfaces[0].bans | length'; }
srcs4() { local i; for ((i = 1; i <= $1; i++)); do echo "198.18.$2.$i"; done; }
srcs6() { local i; for ((i = 1; i <= $1; i++)); do printf '2001:db8:1:%x%02x::1\n' "$2" "$i"; done; }

rl attach "$vrx" --default-pps 100 >/dev/null &&
	rl quota set default --new-pps "$new_pps" --ban 1m --iface "$vrx" >/dev/null ||
	lib_abort setup "attach"
# the real client, on both families: each one handshake, so verified
# (a request a loaded machine did not answer within curl's 2 s is asked again)
served_ok() { [ "$(get "$1")" = 200 ]; }
ok=0
within 5 served_ok 198.19.1.1 && ok=$((ok + 1))
within 5 served_ok '[2001:db8:ffff::1]' && ok=$((ok + 1))
two() { [ "$(verified_sources)" = 2 ]; }
within 30 two
check real_client_verified "ok == 2 && $(verified_sources) == 2" \
	"a real client's handshakes verify it, IPv4 and IPv6: $(verified_sources) verified (want 2), $ok of 2 served"

# (a) a SYN, then a segment out of the half-open connection's window, a
# second SYN, a guessed ACK: Linux answers from the request socket
t_request_socket_ack() {
	local v0 t0 u0 u
	v0=$(verified_total)
	forge trick 198.19.1.1 8080 $(srcs4 50 1) &&
		forge trick 2001:db8:ffff::1 8080 $(srcs6 50 1) ||
		{ result request_socket_ack 1 "forge.py failed"; return; }
	settled 20 verified_total >/dev/null
	check request_socket_ack_verifies_nobody "$(verified_total) == v0 && $(verified_sources) == 2" \
		"after the request-socket trick from 100 forged sources: $(verified_sources) verified, $(( $(verified_total) - v0 )) proofs (want 0)"
	# those sources' UDP: newcomers still, so within the newcomer budget
	u0=$(count dgrams) t0=$(date +%s%N)
	forge udp 198.19.1.1 15 $(srcs4 50 1) &&
		forge udp 2001:db8:ffff::1 15 $(srcs6 50 1)
	u=$(( $(count dgrams) - u0 )) t0=$(( ($(date +%s%N) - t0) / 1000000 ))
	check request_socket_ack_budget_holds "u <= new_pps * (t0 / 1000 + 2) + $(nproc)" \
		"1,500 UDP datagrams from the 100 forged sources in $t0 ms: $u reached the stack, the newcomer budget ($new_pps/s) allows $((new_pps * (t0 / 1000 + 2)))"
}

# (b) forged ACKs with the real client's exact 4-tuple: it is not banned
# and is served all through (5 of 5 once the forgery stops)
t_aimed_ban() {
	local stop=/tmp/$id.hold pid ok n
	tmpfiles+=("$stop")
	# the client holds a connection from port 40000 (a request answered)
	in_tx python3 - "$stop" <<-'PY' &
	import os, socket, sys, time
	s = socket.create_connection(('198.19.1.1', 8080), source_address=('198.19.2.1', 40000))
	s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
	s.recv(4096)
	for _ in range(300):
	    if os.path.exists(sys.argv[1]):
	        break
	    time.sleep(0.1)
	PY
	pid=$!
	bg+=("$pid")
	held() { in_tx ss -Htn state established '( sport = :40000 )' | grep -q .; }
	within 50 held || { result aimed_ban 1 "the client's connection did not open"; touch "$stop"; return; }
	forge acks 198.19.2.1 40000 198.19.1.1 8080 3000
	n=$(bans)
	touch "$stop"; wait "$pid" 2>/dev/null
	check aimed_ban_bans_nobody "n == 0" \
		"3,000 forged ACKs on the client's own connection (198.19.2.1:40000): $n bans (want 0)"
	sleep 1.1	# a window: the forgery's share of its quota is gone
	ok=$(served 198.19.1.1 5)
	check aimed_ban_client_served "ok == 5" "after the forged ACKs: $ok of 5 served"
}

# (c) RSTs (an ACK with no connection, a SYN to a closed port), and a SYN
# on the client's established connection (a challenge ACK to the client)
t_rst_and_challenge() {
	local v0
	v0=$(verified_total)
	forge rst 198.19.1.1 $(srcs4 30 2) && forge rst 2001:db8:ffff::1 $(srcs6 30 2) &&
		forge syn 198.19.2.1 40001 198.19.1.1 8080 ||
		{ result rst_and_challenge 1 "forge.py failed"; return; }
	settled 20 verified_total >/dev/null
	check rst_and_challenge_verify_nobody "$(verified_total) == v0 && $(verified_sources) == 2" \
		"after RSTs to 60 forged sources: $(( $(verified_total) - v0 )) proofs, $(verified_sources) verified"
}

# (e) IPv6 from ::ffff:a.b.c.d proves nothing for IPv4 a.b.c.d
t_v4_mapped() {
	local v0
	v0=$(verified_total)
	forge trick 2001:db8:ffff::1 8080 ::ffff:198.18.3.1 ::ffff:198.18.3.2
	settled 20 verified_total >/dev/null
	check v4_mapped_verifies_nothing "$(verified_total) == v0" \
		"IPv6 segments from ::ffff:198.18.3.x: $(( $(verified_total) - v0 )) proofs"
}

# (f) a flood tool: addresses repeated, each time a fresh sequence number
# and a guessed ACK; none verified, the SYNs held to the newcomer budget
t_repeating_flood() {
	local v0 s0 t0 s
	v0=$(verified_total) s0=$(count syns) t0=$(date +%s%N)
	forge flood 198.19.1.1 8080 20 $(srcs4 100 4) &&
		forge flood 2001:db8:ffff::1 8080 20 $(srcs6 100 4) ||
		{ result repeating_flood 1 "forge.py failed"; return; }
	s=$(( $(count syns) - s0 )) t0=$(( ($(date +%s%N) - t0) / 1000000 ))
	settled 20 verified_total >/dev/null
	check repeating_flood_verifies_nobody "$(verified_total) == v0 && $(verified_sources) == 2" \
		"4,000 SYNs and guessed ACKs from 200 repeating sources: $(( $(verified_total) - v0 )) proofs, $(verified_sources) verified"
	check repeating_flood_budget_holds "s <= new_pps * (t0 / 1000 + 2) + $(nproc)" \
		"its SYNs that reached the stack: $s in $t0 ms (budget $new_pps/s)"
	ok=$(served 198.19.1.1 5)
	check repeating_flood_client_served "ok == 5" "the real client: $ok of 5 served"
}

# (d) a host that forwards: xdp-ratelimit on the router's link to the
# client sees the server's SYN-ACKs pass by (forwarded: no socket), and
# verifies nobody however many handshakes cross it
t_forwarded() {
	local v n
	in_rt "$cli" attach "$rc" >/dev/null &&
		in_rt "$cli" quota set default --new-pps 1000 --iface "$rc" >/dev/null ||
		{ result forwarded 1 "attach on the router"; return; }
	n=$(( $(served 198.19.1.1 3) + $(served '[2001:db8:ffff::1]' 3) ))
	v=$(in_rt "$cli" stats --iface "$rc" --json --top 0 |
		jq '.interfaces[0] | .verified_sources + .totals.verified')
	check forwarded_verifies_nobody "n == 6 && v == 0" \
		"6 handshakes forwarded across the router's attachment ($n served): $v verified there (want 0)"
	in_rt "$cli" detach "$rc" >/dev/null
}

# The egress hook lets the clsact chain go on: a filter of lower
# precedence on the same hook (u32 mirroring each segment to a spare
# veth: the action counts them) still sees the server's segments.
t_egress_chain() {
	local pk m=${id}m n=${id}n
	ip -n "$rx" link add "$m" type veth peer name "$n" && ip -n "$rx" link set "$m" up &&
		ip -n "$rx" link set "$n" up &&
		in_rx tc filter add dev "$vrx" egress prio 60000 protocol all \
			u32 match u32 0 0 action mirred egress mirror dev "$m" ||
		{ result egress_chain_goes_on 1 "tc filter"; return; }
	served 198.19.1.1 2 >/dev/null
	pk=$(in_rx tc -s -j filter show dev "$vrx" egress prio 60000 |
		jq '[.[] | .options.actions[]?.stats.packets // 0] | add // 0')
	check egress_chain_goes_on "pk > 0" \
		"a u32 filter after the egress hook counted $pk packets (want > 0)"
	in_rx tc filter del dev "$vrx" egress prio 60000
	ip -n "$rx" link del "$m"
}

# (g) the kernel's own SYN cookies (net.ipv4.tcp_syncookies=2: every SYN
# answered with one, from no socket, as a listener whose queue overflows
# does): a real client that completes such a handshake is verified, on
# both families (new addresses: IPv6 in a /64 of its own); a blind forger's flood of SYNs and guessed ACKs, answered
# with cookies it never reads, verifies nobody
t_kernel_cookies() {
	local v0 s0 n ok=0
	in_rx sysctl -qw net.ipv4.tcp_syncookies=2 &&
		ip -n "$tx" addr add 198.19.2.2/24 dev "$vtx" &&
		ip -n "$tx" addr add 2001:db8:fffd::2/64 dev "$vtx" nodad &&
		ip -n "$rt" route add 2001:db8:fffd::/64 dev "$rc" ||
		{ result kernel_cookies 1 "sysctl or addresses"; return; }
	v0=$(verified_total) s0=$(verified_sources)
	forge flood 198.19.1.1 8080 20 $(srcs4 50 5) &&
		forge flood 2001:db8:ffff::1 8080 20 $(srcs6 50 5) ||
		{ result kernel_cookies 1 "forge.py failed"; return; }
	settled 20 verified_total >/dev/null
	check kernel_cookies_forger_verifies_nobody "$(verified_total) == v0" \
		"2,000 SYNs answered with the kernel's cookies and guessed ACKs: $(( $(verified_total) - v0 )) proofs (want 0)"
	from() { [ "$(in_tx curl -s -o /dev/null -m 2 -w '%{http_code}' --interface "$1" "http://$2:8080/")" = 200 ]; }
	within 5 from 198.19.2.2 198.19.1.1 && ok=$((ok + 1))
	within 5 from 2001:db8:fffd::2 '[2001:db8:ffff::1]' && ok=$((ok + 1))
	more() { [ "$(verified_sources)" -ge $((s0 + 2)) ]; }
	within 30 more
	n=$(( $(verified_sources) - s0 ))
	check kernel_cookies_verify_the_client "ok == 2 && n == 2" \
		"a client's handshakes on the kernel's cookies, IPv4 and IPv6: $ok of 2 served, $n verified (want 2)"
	in_rx sysctl -qw net.ipv4.tcp_syncookies=1
}

# (i) --ban counts a client's own packets on a connection the kernel's
# cookie opened as on any other: a client uploading past its quota at
# full speed is banned, on a cookie's connection as on a recorded
# SYN-ACK's (the control)
t_kernel_cookie_ban() {
	local got
	upload() {	# SRC: 4 s of upload at full speed on one connection
		in_tx timeout 15 python3 - "$1" <<-'PY'
		import socket, sys, time
		s = socket.create_connection(('198.19.1.1', 8080), timeout=5,
		                             source_address=(sys.argv[1], 0))
		s.settimeout(1)
		s.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n')
		end, buf = time.time() + 4, b'x' * 65536
		try:
		    while time.time() < end:
		        s.send(buf)
		except OSError:
		    pass
		PY
	}
	banned() { rl ban list --iface "$vrx" --json |
		jq -e --arg a "$1" '.interfaces[0].bans[] | select(.address == $a)' >/dev/null; }
	ip -n "$tx" addr add 198.19.2.3/24 dev "$vtx" &&
		ip -n "$tx" addr add 198.19.2.4/24 dev "$vtx" ||
		{ result kernel_cookie_ban 1 "addresses"; return; }
	upload 198.19.2.4
	within 5 banned 198.19.2.4; got=$?
	check kernel_cookie_ban_control "got == 0" \
		"a client uploading past its quota on a recorded SYN-ACK's connection: banned (exit $got, want 0)"
	in_rx sysctl -qw net.ipv4.tcp_syncookies=2 ||
		{ result kernel_cookie_ban 1 "sysctl"; return; }
	upload 198.19.2.3
	within 5 banned 198.19.2.3; got=$?
	in_rx sysctl -qw net.ipv4.tcp_syncookies=1
	check kernel_cookie_ban_bans "got == 0" \
		"a client uploading past its quota on a kernel cookie's connection: banned (exit $got, want 0); verified: $(stats_json "$vrx" 0 | jq -c '[.interfaces[0].sources[] | select(.address == "198.19.2.3") | .verified]')"
}

t_request_socket_ack
t_aimed_ban
t_rst_and_challenge
t_v4_mapped
t_repeating_flood
t_forwarded
t_egress_chain
t_kernel_cookies
t_kernel_cookie_ban
lib_finish
