#!/bin/bash
# A spoofed SYN flood against a real server: nginx in one
# namespace, a legitimate client (curl, a fresh TCP connection every 50 ms)
# and tcpreplay, replaying spoofed SYNs at top speed, in the other. With a
# newcomer budget on the default rule, every request of the established
# client succeeds during the flood, and what reaches the server's stack of
# the flood (counted by nftables on the netdev ingress hook, after XDP) stays
# within the budget, IPv4 and IPv6 together. (Bans, their bad input and
# old pins are e2e tests: tests/e2e/ban.sh, cli.sh, attach.sh.) Not an e2e
# area: it needs a server, a client and a flood tool in a topology of its
# own.
#
# Addresses: the flood comes from 198.18.0.0/16 (all 65,536) and random /64s
# of 2001:db8::/33, one SYN each; server and client are 198.19.1.1 and .2
# (2001:db8:ffff::/64). Blackhole routes on the server for both flood
# ranges: no reply to a spoofed source leaves the namespace.
# Usage: tests/flood/run.sh BUILD_DIR
set -u
suite=flood
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
lib_init "${1:-build}" rlx

new_pps=200				# the newcomer budget
ncpus=$(nproc --all)
pcap=/tmp/$id.pcap nginx_dir=/tmp/$id.nginx
tmpfiles+=("$pcap" "/tmp/$id.curl" "/tmp/$id.replay" "/tmp/$id.err")

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
for t in nginx curl tcpreplay python3; do
	command -v "$t" >/dev/null || lib_abort setup "$t is missing: run scripts/install-deps.sh"
done
[ -x "$cli" ] && [ -x "$gen" ] || lib_abort setup "build first: make OUTPUT=$1"

lib_setup_ns &&
	ip link add "$vtx" netns "$tx" type veth peer name "$vrx" netns "$rx" &&
	ip -n "$tx" link set "$vtx" up && ip -n "$rx" link set "$vrx" up &&
	ip -n "$tx" addr add 198.19.1.2/24 dev "$vtx" &&
	ip -n "$rx" addr add 198.19.1.1/24 dev "$vrx" &&
	ip -n "$rx" addr add 2001:db8:ffff::1/64 dev "$vrx" nodad &&
	ip -n "$rx" route add blackhole 198.18.0.0/16 &&
	ip -n "$rx" route add blackhole 2001:db8::/33 ||
	lib_abort setup "cannot create namespaces and links"
mac=$(mac_of "$vrx")

# nginx on the server, in the foreground of its own process ($! is nginx)
mkdir -p "$nginx_dir" && cat >"$nginx_dir/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $nginx_dir;
	server {
		listen 198.19.1.1:8080 backlog=4096;
		location / { return 200 "ok\n"; }
	}
}
EOF
nsenter --net="/run/netns/$rx" nginx -c "$nginx_dir/nginx.conf" -p "$nginx_dir" &
bg+=($!)
trap 'lib_cleanup; rm -rf "$nginx_dir"' EXIT

# What reached the server's stack (after XDP), by kind of source.
in_rx nft -f - <<EOF || lib_abort setup "nftables"
table netdev c_$vrx {
	counter frames {}
	counter flood4 {}
	counter flood6 {}
	counter client {}
	chain in {
		type filter hook ingress device "$vrx" priority 0; policy accept;
		counter name frames
		ip saddr 198.18.0.0/16 counter name flood4
		ip6 saddr 2001:db8::/33 counter name flood6
		ip saddr 198.19.1.2 counter name client
	}
}
EOF
count() { in_rx nft -j list counter netdev "c_$vrx" "$1" |
	jq '.nftables[] | select(.counter) | .counter.packets'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The client: a fresh connection every 50 ms until FILE exists; prints the
# requests made and those answered 200 (each with a 2 s timeout).
client() {	# STOPFILE
	local n=0 ok=0
	while [ ! -e "$1" ]; do
		n=$((n + 1))
		[ "$(in_tx curl -s -o /dev/null -m 2 -w '%{http_code}' http://198.19.1.1:8080/)" = 200 ] &&
			ok=$((ok + 1))
		sleep 0.05
	done
	echo "$n $ok"
}
for i in $(seq 50); do	# nginx up?
	in_tx curl -s -o /dev/null -m 1 http://198.19.1.1:8080/ && break
	sleep 0.1
done

# ---- the flood --------------------------------------------------------
t_flood() {
	local stop=/tmp/$id.stop base n ok f0 f4 f6 t0 t1 ms bound tracked frames npassed sent
	tmpfiles+=("$stop")
	python3 "$here/spoofed_syns.py" "$pcap" "$mac" 65536 250000 ||
		{ result flood_setup 1 "cannot write the pcap"; return; }
	base=$(count frames)	# before attach: nginx's start-up check
	rl attach "$vrx" --default-pps 1000 >/dev/null &&
		rl quota set default --new-pps "$new_pps" --iface "$vrx" >/dev/null ||
		{ result flood_setup 1 "attach"; return; }
	# the client becomes established: tracked for one whole window (1 s)
	client "$stop" >"/tmp/$id.curl" &
	sleep 1.5
	touch "$stop"; wait $!
	read -r n ok <"/tmp/$id.curl"
	check flood_client_before "n >= 5 && ok == n" "before the flood: $ok of $n requests answered"
	rm -f "$stop"
	f4=$(count flood4) f6=$(count flood6)
	client "$stop" >"/tmp/$id.curl" &
	t0=$(now_ms)
	in_tx tcpreplay -q --topspeed -i "$vtx" "$pcap" >"/tmp/$id.replay" 2>&1
	t1=$(now_ms)
	sleep 0.3
	touch "$stop"; wait $!
	read -r n ok <"/tmp/$id.curl"
	sent=$(grep -oE 'Actual: [0-9]+ packets' "/tmp/$id.replay" | grep -oE '[0-9]+')
	f4=$(($(count flood4) - f4)) f6=$(($(count flood6) - f6)) ms=$((t1 - t0))
	echo "  flood: tcpreplay sent ${sent:-?} spoofed SYNs in $ms ms; reached the stack: $f4 IPv4, $f6 IPv6; client: $ok of $n"
	check flood_client_all_served "n >= 5 && ok == n" \
		"during the flood the established client got $ok of $n requests answered"
	# one newcomer budget for both families: per second of flooding, plus
	# the window in progress, plus ncpus - 1 (README "One quota across CPUs")
	bound=$(( new_pps * (ms + 1999) / 1000 + ncpus ))
	check flood_held_to_newcomer_budget "${sent:-0} >= 200000 && f4 + f6 <= bound && f4 + f6 >= new_pps / 2" \
		"the flood reached the stack with $((f4 + f6)) SYNs ($f4 IPv4 + $f6 IPv6), budget $new_pps/s over $ms ms: at most $bound"
	check flood_both_families_one_budget "f4 > 0 && f6 > 0" \
		"both families passed some ($f4 IPv4, $f6 IPv6) within the one budget"
	tracked=$(stats_json "$vrx" 0 | jq .interfaces[0].tracked_sources)
	check flood_refusals_take_no_entry "tracked <= f4 + f6 + 2" \
		"$tracked sources tracked; $((f4 + f6)) flood SYNs passed"
	# stragglers (the client's last teardown) may still arrive: the
	# count XDP passed lies between two nftables readings around it
	f0=$(($(count frames) - base)) npassed=$(total passed_packets)
	frames=$(($(count frames) - base))
	check flood_counted_once "f0 <= npassed && npassed <= frames && frames - f0 <= 20" \
		"nftables saw $f0 then $frames frames after XDP, stats says $npassed passed in between"
	rl detach "$vrx" >/dev/null
}

t_flood
lib_finish
