#!/bin/bash
# Rule scope against real clients and against the tools operators come
# from. nginx serves in one namespace; in the other, curl downloads and
# hping3 opens connections, queries port 53 and pings.
#  - download: a curl download at thousands of packets a second passes
#    untouched under `--proto tcp --syn --pps 20` on the client's end,
#    while hping3 opening new connections to it at 200/s from one source
#    is held to 20/s (SYNs that get through, counted by nftables on the
#    netdev ingress hook, after XDP).
#  - translate_*: each row of the README's "Coming from iptables or
#    nftables" table, the same traffic through the iptables hashlimit
#    rule, the nftables meter rule and the xdp-ratelimit rule in turn, on
#    the same veth: what each passes agrees within the difference of a
#    token bucket and a sliding window (burst + one second of the rate).
# Addresses: server 198.19.1.1 (and .4, hping3's), clients 198.19.1.2 and .3.
# Usage: tests/scope/run.sh BUILD_DIR
set -u
suite=scope
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
lib_init "${1:-build}" rls

ncpus=$(nproc --all)
nginx_dir=/tmp/$id.nginx

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
for t in nginx curl hping3 iptables nft jq; do
	command -v "$t" >/dev/null || lib_abort setup "$t is missing: run scripts/install-deps.sh"
done
[ -x "$cli" ] || lib_abort setup "build first: make OUTPUT=$1"

lib_setup_ns && setup_server_link &&
	ip -n "$rx" addr add 198.19.1.4/24 dev "$vrx" ||
	lib_abort setup "cannot create namespaces and links"

mkdir -p "$nginx_dir/www" && head -c 50M /dev/zero >"$nginx_dir/www/big" &&
	start_nginx "$nginx_dir" "root $nginx_dir/www;" || lib_abort setup "nginx"
trap 'lib_cleanup; rm -rf "$nginx_dir"' EXIT
up() { in_tx curl -s -o /dev/null -m 1 -r 0-0 http://198.19.1.1:8080/big; }
within 50 up || lib_abort setup "nginx did not come up"

# What reached the stack after XDP, by nftables on netdev ingress: one
# counter, of the packets matching MATCH (an nft expression).
count_after_xdp() {	# MATCH
	in_rx nft -f - <<EOF
table netdev a_$id {
	counter c {}
	chain in {
		type filter hook ingress device "$vrx" priority 0; policy accept;
		$1 counter name c
	}
}
EOF
}
read_after_xdp() {
	in_rx nft -j list counter netdev "a_$id" c | jq '.nftables[] | select(.counter) | .counter.packets'
}
drop_after_xdp() { in_rx nft delete table netdev "a_$id"; }

# ---- a download and a SYN flood under one SYN rule ----------------------
# The protected host is the client's end ($vtx): the download's segments
# arrive there at thousands a second, none of them a SYN, while hping3
# opens connections to it from another source (198.19.1.4, the server's
# side) at 200 a second.
t_download() {
	local out bytes secs dropped sent pps t0 t1 ms syns bound hp
	local cl="in_tx $cli" st
	$cl attach "$vtx" >/dev/null &&
		$cl quota set default --proto tcp --syn --pps 20 --iface "$vtx" >/dev/null ||
		{ result download_setup 1 "attach or quota set"; return; }
	in_tx nft -f - <<EOF || { result download_setup 1 "nftables"; return; }
table netdev d_$id {
	counter syns {}
	chain in {
		type filter hook ingress device "$vtx" priority 0; policy accept;
		ip saddr 198.19.1.4 ip protocol tcp tcp flags & (syn | ack) == syn counter name syns
	}
}
EOF
	t0=$(date +%s%N)
	in_rx timeout 20 hping3 -S -a 198.19.1.4 -p 8080 -i u5000 -c 1000 198.19.1.2 \
		>/dev/null 2>&1 &
	hp=$!
	out=$(in_tx curl -s -o /dev/null -m 30 --interface 198.19.1.2 \
		-w '%{size_download} %{time_total}' http://198.19.1.1:8080/big)
	wait "$hp"
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	read -r bytes secs <<<"${out:-0 1}"
	syns=$(in_tx nft -j list counter netdev "d_$id" syns |
		jq '.nftables[] | select(.counter) | .counter.packets')
	st=$($cl stats --iface "$vtx" --json --top 0)
	sent=$(jq '[.interfaces[0].sources[] | select(.address == "198.19.1.1") | .passed_packets] | add // 0' <<<"$st")
	dropped=$(jq '[.interfaces[0].sources[] | select(.address == "198.19.1.1") | .dropped_packets] | add // 0' <<<"$st")
	pps=$(awk -v p="$sent" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? p / s : 0) }')
	echo "  download: $bytes bytes in $secs s, the server's packets: $sent passed ($pps a second), $dropped dropped; hping3 SYNs that got through: $syns in $ms ms"
	check download_whole "bytes == 52428800 && dropped == 0" \
		"curl got $bytes of 52428800 bytes, the server's packets: $sent passed, $dropped dropped"
	check download_thousands_a_second "pps >= 2000" \
		"the download's $sent packets in $secs s: $pps a second, all under the SYN rule"
	# 20 a second over the run, + one window, + ncpus - 1
	bound=$(( 20 * (ms + 999) / 1000 + 20 + ncpus ))
	check download_syn_flood_held "syns <= bound && syns >= 20 * (ms / 1000 - 1)" \
		"hping3's 200 SYNs/s for $ms ms: $syns got through, at most $bound"
	in_tx nft delete table netdev "d_$id"
	$cl detach "$vtx" >/dev/null
}

# ---- the translation table ---------------------------------------------
# One row: the same hping3 traffic (its arguments; 100 packets a second
# for 3 s, from .2 and, with TWO, from .3 too) through
#   iptables: MATCH -m hashlimit HASHLIMIT -j DROP, then MATCH -j ACCEPT,
#   nftables: MATCH meter ... NFT drop, then MATCH counter accept,
#   xdp-ratelimit: quota set XDP,
# counting what passes each (iptables and nftables: their accept rule;
# xdp-ratelimit: nftables on netdev ingress, after XDP).
send_row() {	# TWO HPING3_ARGS...
	local two=$1 pids=()
	shift
	in_tx timeout 20 hping3 "$@" -a 198.19.1.2 -i u10000 -c 300 198.19.1.1 >/dev/null 2>&1 &
	pids+=($!)
	if [ "$two" = 1 ]; then
		in_tx timeout 20 hping3 "$@" -a 198.19.1.3 -i u10000 -c 300 198.19.1.1 >/dev/null 2>&1 &
		pids+=($!)
	fi
	wait "${pids[@]}"
}
row() {	# NAME RATE BURST TWO "IPT_MATCH" "HASHLIMIT" "NFT_MATCH" "NFT_METER" "XDP" HPING3_ARGS...
	local name=$1 rate=$2 burst=$3 two=$4 ipt=$5 hl=$6 nm=$7 meter=$8 xdp=$9
	local a b c d1 d2 slack
	shift 9
	# iptables hashlimit
	in_rx iptables -A INPUT $ipt -m hashlimit $hl --hashlimit-name "h$name$$" -j DROP &&
		in_rx iptables -A INPUT $ipt -j ACCEPT ||
		{ result "translate_${name}" 1 "iptables rule"; return; }
	send_row "$two" "$@"
	a=$(in_rx iptables -L INPUT -v -x -n | awk 'NR == 4 { print $1 }')
	in_rx iptables -F INPUT
	# nftables meter
	in_rx nft -f - <<EOF || { result "translate_${name}" 1 "nftables rule"; return; }
table inet t_$id {
	counter c {}
	chain in {
		type filter hook input priority 0; policy accept;
		$nm meter m_$id { $meter } drop
		$nm counter name c
	}
}
EOF
	send_row "$two" "$@"
	b=$(in_rx nft -j list counter inet "t_$id" c | jq '.nftables[] | select(.counter) | .counter.packets')
	in_rx nft delete table inet "t_$id"
	# xdp-ratelimit
	rl attach "$vrx" >/dev/null && rl quota set $xdp --iface "$vrx" >/dev/null &&
		count_after_xdp "$nm" ||
		{ result "translate_${name}" 1 "attach or quota set"; return; }
	send_row "$two" "$@"
	c=$(read_after_xdp)
	drop_after_xdp
	rl detach "$vrx" >/dev/null
	a=${a:-0} b=${b:-0} c=${c:-0}
	d1=$((c > a ? c - a : a - c)) d2=$((c > b ? c - b : b - c))
	slack=$((burst + rate + ncpus))
	echo "  $name: hashlimit passed $a, nftables $b, xdp-ratelimit $c (of $((two == 1 ? 600 : 300)))"
	check "translate_${name}" "a > 0 && b > 0 && c > 0 && d1 <= slack && d2 <= slack && c <= rate * 4 + ncpus" \
		"hashlimit $a, nftables $b, xdp-ratelimit $c: within $slack of each other, xdp-ratelimit at most $((rate * 4 + ncpus)) in 3 s"
}

t_translate() {
	row syn 20 20 0 "-p tcp --syn" \
		"--hashlimit-mode srcip --hashlimit-above 20/sec --hashlimit-burst 20" \
		"ip protocol tcp tcp flags & (syn | ack) == syn" "ip saddr limit rate over 20/second burst 20 packets" \
		"default --proto tcp --syn --pps 20" \
		-S -p 8080
	row dns 30 30 0 "-p udp --dport 53" \
		"--hashlimit-mode srcip --hashlimit-above 30/sec --hashlimit-burst 30" \
		"ip protocol udp udp dport 53" "ip saddr limit rate over 30/second burst 30 packets" \
		"default --proto udp --dport 53 --pps 30" \
		--udp -p 53
	row icmp 10 10 0 "-p icmp" \
		"--hashlimit-mode srcip --hashlimit-above 10/sec --hashlimit-burst 10" \
		"ip protocol icmp" "ip saddr limit rate over 10/second burst 10 packets" \
		"default --proto icmp --pps 10" \
		--icmp
	# srcmask: one bucket for the /24, two senders in it
	row srcmask 40 40 1 "-p udp --dport 9" \
		"--hashlimit-mode srcip --hashlimit-srcmask 24 --hashlimit-above 40/sec --hashlimit-burst 40" \
		"ip protocol udp udp dport 9" "ip saddr & 255.255.255.0 limit rate over 40/second burst 40 packets" \
		"198.19.1.0/24 --proto udp --dport 9 --aggregate-pps 40" \
		--udp -p 9
	# burst: 5 back to back, 10 a second
	row burst 10 5 0 "-p udp --dport 7" \
		"--hashlimit-mode srcip --hashlimit-above 10/sec --hashlimit-burst 5" \
		"ip protocol udp udp dport 7" "ip saddr limit rate over 10/second burst 5 packets" \
		"default --proto udp --dport 7 --pps 10 --burst 5" \
		--udp -p 7
}

t_download
t_translate
lib_finish
