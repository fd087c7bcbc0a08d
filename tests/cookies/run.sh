#!/bin/bash
# SYN cookies at the driver (quota set --syn-cookies on) with real clients:
# nginx in one namespace behind the program; in the other, a tcpreplay
# flood of spoofed SYNs from 81,920 addresses at 100 times the newcomer
# budget, and 20 curl clients from addresses the server has never seen,
# which must get in within 5 s each (18 of 20 at least) while what reaches
# the server's stack of the flood stays within the newcomer budget and an
# established client loses nothing. Then the TCP options a cookie carries
# (a download through window scaling, a client without timestamps), IPv6,
# after reload, under libxdp's dispatcher, and the host's SYNPROXY table
# removed by detach (VLAN-tagged frames: the prog tests, as this kernel
# may lack 802.1Q links). Not an e2e area: it needs the
# flood suite's topology, and its own time (about a minute).
#
# Addresses as tests/flood/run.sh: the flood from 198.18.0.0/16 and random
# /64s of 2001:db8::/33 (blackholed on the server), the server 198.19.1.1,
# the established client 198.19.1.2, the new ones 198.19.1.10-.29 and
# 2001:db8:ffff::10. The client's end of
# the veth runs an XDP_PASS program: a veth delivers what its peer sends
# with XDP_TX only then (a NIC needs nothing of the kind).
# Usage: tests/cookies/run.sh BUILD_DIR (COOKIE_TESTS="flood options
# dispatcher", or some of them)
set -u
suite=cookies
. "$(dirname "$0")/../lib.sh"
lib_init "${1:-build}" rlc

new_pps=200				# the newcomer budget
flood_pps=$((new_pps * 100))
ncpus=$(nproc --all)
tmpfiles+=("/tmp/$id.replay" "/tmp/$id.est" "/tmp/$id.big")

lib_require nginx curl tcpreplay python3 nft jq ss
[ -x "$cli" ] && [ -f "$out/baselines.bpf.o" ] || lib_abort setup "build first: make OUTPUT=$1"

setup_flood_topology &&
	ip -n "$rx" link set lo up &&
	ip netns exec "$tx" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
		net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf."$vtx".disable_ipv6=0 &&
	ip -n "$tx" addr add 2001:db8:ffff::10/64 dev "$vtx" nodad &&
	ip -n "$tx" link set dev "$vtx" xdp obj "$out/baselines.bpf.o" sec xdp program xdp_pass ||
	lib_abort setup "cannot create namespaces and links"
for i in $(seq 10 29); do
	ip -n "$tx" addr add "198.19.1.$i/24" dev "$vtx" || lib_abort setup "client addresses"
done
mac=$(mac_of "$vrx")
# neighbours fixed: with --new-pps 0 an unverified client's neighbour
# discovery would be refused like its other packets
ip -n "$tx" neigh replace 2001:db8:ffff::1 lladdr "$mac" dev "$vtx" nud permanent &&
	ip -n "$rx" neigh replace 2001:db8:ffff::10 lladdr "$(ip -n "$tx" link show "$vtx" | awk '/ether/ { print $2 }')" \
		dev "$vrx" nud permanent || lib_abort setup "neighbours"
head -c 32000000 /dev/urandom >"/tmp/$id.big"
start_nginx "$nginx_dir" "listen [2001:db8:ffff::1]:8080;
	location = /big { alias /tmp/$id.big; }
	location / { return 200 \"ok\\n\"; }" || lib_abort setup "nginx"

# What reached the server's stack (after XDP) from the flood's sources.
in_rx nft -f - <<EOF || lib_abort setup "nftables"
table netdev c_$vrx {
	counter flood {}
	chain in {
		type filter hook ingress device "$vrx" priority 0; policy accept;
		ip saddr 198.18.0.0/16 counter name flood
		ip6 saddr 2001:db8::/33 counter name flood
	}
}
EOF
flood_count() { in_rx nft -j list counter netdev "c_$vrx" flood |
	jq '.nftables[] | select(.counter) | .counter.packets'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
served() {	# ADDRESS [URL]: answered 200 within 5 s?
	[ "$(in_tx curl -s -o /dev/null -m 5 --interface "$1" -w '%{http_code}' \
		"${2:-http://198.19.1.1:8080/}")" = 200 ]
}
by_cookie() {	# ADDRESS [URL]: served, through a cookie SYNPROXY completed
	local v0
	v0=$(cookie_total valid)
	served "$@" && [ "$(cookie_total valid)" -gt "$v0" ]
}
up() { in_tx curl -s -o /dev/null -m 1 http://198.19.1.1:8080/; }
within 50 up || lib_abort setup "nginx does not answer"
cookie_total() { total "syn_cookies_$1" "$vrx"; }
table=xdp_ratelimit_$vrx
attach_cookies() {	# [ATTACH ARGS]: attached, a newcomer budget with cookies
	rl attach "$vrx" --default-pps 1000 "$@" >/dev/null &&
		rl quota set default --new-pps "$new_pps" --syn-cookies on --iface "$vrx" >/dev/null
}

# ---- new clients during a flood ------------------------------------------
flood_on() { [ "$(cookie_total sent)" -ge "$flood_pps" ]; }
one_verified() { [ "$(stats_json "$vrx" 0 | jq .interfaces[0].verified_sources)" = 1 ]; }
t_flood() {
	local stop=/tmp/$id.stop est n ok sent t0 t1 ms f0 f bound i pids=() ok20=0 fails=""
	tmpfiles+=("$stop")
	python3 "$here/../flood/spoofed_syns.py" "$pcap" "$mac" 65536 16384 ||
		{ result flood_setup 1 "cannot write the pcap"; return; }
	attach_cookies || { result flood_setup 1 "attach"; return; }
	# an established client: verified by the answers it gets
	( n=0 ok=0; while [ ! -e "$stop" ]; do n=$((n + 1))
		served 198.19.1.2 && ok=$((ok + 1)); sleep 0.05; done
	  echo "$n $ok" >"/tmp/$id.est" ) &
	est=$!
	within 50 one_verified
	f0=$(flood_count) t0=$(now_ms)
	in_tx tcpreplay -q --pps="$flood_pps" --loop=1000 --duration=12 -i "$vtx" "$pcap" \
		>"/tmp/$id.replay" 2>&1 &
	pids+=($!)
	# the flood is on: its SYNs spend the budget and get cookies
	within 100 flood_on
	for i in $(seq 10 29); do
		( served "198.19.1.$i" || { echo "client .$i failed"; exit 1; } ) &
		pids+=($!)
	done
	for i in "${pids[@]:1}"; do
		if wait "$i"; then ok20=$((ok20 + 1)); else fails+=" $i"; fi
	done
	wait "${pids[0]}"
	t1=$(now_ms)
	touch "$stop"; wait "$est"
	read -r n ok <"/tmp/$id.est"
	sent=$(grep -oE 'Actual: [0-9]+ packets' "/tmp/$id.replay" | grep -oE '[0-9]+')
	f=$(($(flood_count) - f0)) ms=$((t1 - t0))
	echo "  flood: ${sent:-?} spoofed SYNs in $ms ms, $f reached the stack; new clients served: $ok20 of 20; cookies sent $(cookie_total sent), valid $(cookie_total valid), bad $(cookie_total bad)"
	check cookies_new_clients_in "ok20 >= 18" \
		"during a flood at ${flood_pps}/s (100x --new-pps $new_pps), $ok20 of 20 clients the server never saw were served within 5 s"
	bound=$(( new_pps * ms * 115 / 100000 + ncpus ))
	check cookies_flood_within_budget "${sent:-0} >= flood_pps * 8 && f <= bound" \
		"the flood reached the stack with $f SYNs over $ms ms: at most $bound (--new-pps $new_pps)"
	check cookies_established_lose_nothing "n >= 20 && ok == n" \
		"the established client: $ok of $n requests answered during the flood"
	# a client's ACK may fall within the budget the flood spends (about 1
	# in 100): then it passes as any newcomer's, with no cookie checked
	check cookies_counted "$(cookie_total valid) * 4 >= ok20 * 3 && $(cookie_total sent) >= ok20 + flood_pps" \
		"syn_cookies_sent $(cookie_total sent), syn_cookies_valid $(cookie_total valid) for $ok20 clients"
	rl detach "$vrx" >/dev/null
}

# ---- options, families, links -------------------------------------------
downloading() {
	in_tx ss -tni dst 198.19.1.1 src 198.19.1.10 | tr -s ' \t\n' ' ' >"/tmp/$id.ss"
	in_rx ss -tni src 198.19.1.1 dst 198.19.1.10 | tr -s ' \t\n' ' ' >"/tmp/$id.ss2"
	grep -q 'wscale:' "/tmp/$id.ss" && grep -q 'wscale:' "/tmp/$id.ss2"
}
# A download of 32 MB at 4 MB/s through a cookie connection (more than
# both ends buffer, so that the server still sends when ss looks): both
# ends use the window scales the other announced (the client's from the
# cookie SYN-ACK, the server's from SYNPROXY's handshake), and the bytes
# arrive intact.
t_options() {
	local c s c1 c2 s1 s2 got want pid v0
	attach_cookies || { result options_setup 1 "attach"; return; }
	rl quota set default --new-pps 0 --iface "$vrx" >/dev/null	# every SYN a cookie
	# listed and saved with the rule; a restore of the saved rules keeps it
	local saved
	saved=$(rl save --iface "$vrx")
	[[ $saved == *"--new-pps 0 --syn-cookies on"* ]] &&
		[ "$(rl quota list --iface "$vrx" --json | jq '[.interfaces[0].rules[].syn_cookies] | all')" = true ] &&
		rl quota set default --syn-cookies off --iface "$vrx" >/dev/null &&
		echo "$saved" | rl restore - >/dev/null &&
		[ "$(rl quota list --iface "$vrx" --json | jq '[.interfaces[0].rules[].syn_cookies] | all')" = true ]
	result cookies_saved_restored $? "save: $(grep syn-cookies <<<"$saved")"
	v0=$(cookie_total valid)
	in_tx curl -s -m 30 --limit-rate 4M --interface 198.19.1.10 -o "/tmp/$id.dl" \
		http://198.19.1.1:8080/big &
	pid=$!
	tmpfiles+=("/tmp/$id.dl" "/tmp/$id.ss" "/tmp/$id.ss2")
	within 100 downloading
	wait "$pid"
	c=$(grep -oE 'wscale:[0-9]+,[0-9]+' "/tmp/$id.ss") s=$(grep -oE 'wscale:[0-9]+,[0-9]+' "/tmp/$id.ss2")
	IFS=, read -r c1 c2 <<<"${c#wscale:}"
	IFS=, read -r s1 s2 <<<"${s#wscale:}"
	got=$(md5sum <"/tmp/$id.dl") want=$(md5sum <"/tmp/$id.big")
	[ -n "$c1" ] && [ "$c1" = "$s2" ] && [ "$c2" = "$s1" ] && [ "$got" = "$want" ] &&
		[ "$(cookie_total valid)" -gt "$v0" ]
	result cookies_options_kept $? "client $c, server $s (each sends with the other's); 32 MB: $([ "$got" = "$want" ] && echo intact || echo damaged); cookies valid $v0 -> $(cookie_total valid)"
	# no timestamps: the cookie keeps the MSS alone
	in_tx sysctl -qw net.ipv4.tcp_timestamps=0
	by_cookie 198.19.1.11
	result cookies_without_timestamps $? "a client without timestamps: served? (cookies valid $(cookie_total valid))"
	in_tx sysctl -qw net.ipv4.tcp_timestamps=1
	by_cookie 2001:db8:ffff::10 "http://[2001:db8:ffff::1]:8080/"
	result cookies_ipv6 $? "an IPv6 client never seen: served through a cookie (valid $(cookie_total valid))"
	rl reload "$vrx" >/dev/null && by_cookie 198.19.1.12
	result cookies_after_reload $? "after reload, a new client: served (valid $(cookie_total valid))"
	in_rx nft list table inet "$table" >/dev/null 2>&1 && rl detach "$vrx" >/dev/null &&
		! in_rx nft list table inet "$table" >/dev/null 2>&1
	result cookies_detach_removes_table $? "detach removed nft table inet $table"
}

# ---- under libxdp's dispatcher --------------------------------------------
t_dispatcher() {
	local disp
	in_rx xdp-filter load "$vrx" -m native >/dev/null 2>&1 ||
		{ result dispatcher_setup 1 "xdp-filter load failed"; return; }
	disp=$(in_rx xdp-loader status "$vrx" | grep -c xdp_dispatcher)
	if (( disp )) && attach_cookies && rl quota set default --new-pps 0 --iface "$vrx" >/dev/null; then
		by_cookie 198.19.1.13
		result cookies_under_dispatcher $? "beside xdp-filter under libxdp's dispatcher, a new client: served (valid $(cookie_total valid))"
		rl detach "$vrx" >/dev/null
	else
		result cookies_under_dispatcher 0 "this kernel runs no dispatcher: nothing to check"
	fi
	in_rx xdp-filter unload "$vrx" >/dev/null 2>&1
}

for t in ${COOKIE_TESTS:-flood options dispatcher}; do "t_$t"; done
lib_finish
