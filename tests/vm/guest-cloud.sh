#!/bin/sh
# The guest of tests/vm on Debian 12's stock cloud kernel (6.1): the
# program loads there (a representative set of the prog tests: every
# test would take ten minutes under TCG), the CLI attaches to a veth
# pair and enforces a quota on real frames between two namespaces, and
# shares a veth with xdp-filter under libxdp's dispatcher (multi.sh).
. /guest-lib.sh
guest_init

# The verifier's work and stack in this kernel, in the log (CONTRIBUTING
# quotes them: they must not grow unnoticed)
RL_VERIFIER_STATS=1 test_prog quota_exact_at_edge 2>&1 |
	grep -E '^stack depth|^processed' | sed 's/^/    verifier: /'
# Which prog tests: the verdict, the cross-CPU lease and history, fleet
# sync's remote share (what 6.1 refused), bans (and that forged copies
# never ban), events, newcomers and verified sources (the egress hook,
# a tc program, records SYN-ACKs; the proof by the peer's ACK of the
# ISN; bans counting only the host's window), refused sources, the
# parser, rule scope (its first entry and its bpf_loop inside a global
# function), burst, and the stub that tail-calls the program under
# libxdp's dispatcher.
prog_tests quota_exact_at_edge window_slides_bucket_by_bucket cross_cpu_quota \
	past_buckets_of_every_cpu_count history_evicted_fails_closed \
	remote_share_counts_as_another_cpu ban_seen_on_every_cpu \
	events_limited_then_released newcomer_refusals_take_no_entry \
	cpus_joined_by_the_cpus_that_write \
	ban_never_by_forged_copies proof_is_the_ack_of_the_isn proof_not_through_v4_mapped \
	ban_counts_only_the_window newcomer_verified_on_every_cpu \
	refused_sources_keep_their_drops vlan_tags ipv6_extension_headers_and_prefix \
	aggregate_budget_caps_a_prefix scope_composes_with_allow_and_block \
	scope_ipv6_ext_headers_and_fragments scope_walk_every_entry burst_caps_each_bucket \
	slot_stub_tail_calls_the_program

# Two namespaces joined by a veth pair; the receiver's end is attached.
# Its MAC is set here: /sys/class/net shows the namespace /sys was
# mounted in, not the one nsenter enters.
tx=/run/netns/vmtx rx=/run/netns/vmrx mac=02:00:00:00:00:02
iproute2 netns add vmtx && iproute2 netns add vmrx &&
	iproute2 link add vmtxa address 02:00:00:00:00:01 type veth \
		peer name vmrxb address "$mac" &&
	iproute2 link set vmtxa netns vmtx && iproute2 link set vmrxb netns vmrx &&
	nsenter --net=$tx iproute2 link set vmtxa up &&
	nsenter --net=$rx iproute2 link set vmrxb up
result veth/setup $?
in_rx() { nsenter --net=$rx "$@"; }

in_rx xdp-ratelimit attach vmrxb --mode native --window 10s >/tmp/attach.log 2>&1
st=$?
result attach/native $st "$(cat /tmp/attach.log)"
# the egress hook (a tc clsact filter) sits on the interface
in_rx xdp-ratelimit status --json >/tmp/status.json 2>&1
hook=$(jqjson -r '.interfaces[0].egress_hooks[0].prog_id' /tmp/status.json)
result egress/hook "$([ "$hook" -gt 0 ] 2>/dev/null && echo 0 || echo 1)" \
	"status --json: $(cat /tmp/status.json)"
in_rx xdp-ratelimit quota set default --pps 10 >/tmp/quota.log 2>&1
result quota/set $? "$(cat /tmp/quota.log)"

# An nftables counter after XDP: what of 198.18.0.1 really reached the stack
in_rx nftables -f - >/tmp/nft.log 2>&1 <<NFT
table netdev vm {
	counter frames {}
	chain in {
		type filter hook ingress device "vmrxb" priority 0; policy accept;
		ip saddr 198.18.0.1 counter name frames
	}
}
NFT
result nft/counter $? "$(cat /tmp/nft.log)"

# 1,000 frames from one source within a window (10 s: however slow the
# emulated CPU, the send fits): 100 pass, 900 dropped. From one CPU: the
# receiving XDP hook runs on the sender's, and a source that hops CPUs may
# fall short by an idle CPU's lease (doc/design/cpus.md "Idle leases")
sent=$(nsenter --net=$tx trafficgen --dev vmtxa --dst-mac "$mac" --count 1000 \
	--cpu 1 --json 2>/tmp/gen.log | jqjson -r .sent)
result traffic/sent "$([ "$sent" = 1000 ] && echo 0 || echo 1)" \
	"sent '$sent': $(cat /tmp/gen.log)"
# the source's own counts (the kernel's own IPv6 frames count apart),
# once the veth has handed the receiver every frame: at most 10 s
sel='.interfaces[0].sources[] | select(.address == "198.18.0.1")'
for i in $(seq 100); do
	in_rx xdp-ratelimit stats --json >/tmp/stats.json 2>&1
	[ "$(jqjson "$sel | .passed_packets + .dropped_packets" /tmp/stats.json)" = 1000 ] && break
	sleep 0.1
done
passed_pkts=$(jqjson "$sel | .passed_packets" /tmp/stats.json)
dropped_pkts=$(jqjson "$sel | .dropped_packets" /tmp/stats.json)
result stats/enforced "$([ "$passed_pkts" = 100 ] && [ "$dropped_pkts" = 900 ] && echo 0 || echo 1)" \
	"198.18.0.1 passed $passed_pkts dropped $dropped_pkts, want 100 and 900"
for i in $(seq 50); do	# the stack's count settles just after XDP's
	seen=$(in_rx nftables -j list counter netdev vm frames |
		jqjson '.nftables[] | select(.counter) | .counter.packets')
	[ "$seen" -ge 100 ] 2>/dev/null && break
	sleep 0.1
done
result nft/reached_stack "$([ "$seen" = 100 ] && echo 0 || echo 1)" \
	"$seen frames of 198.18.0.1 reached the stack, want 100"

in_rx xdp-ratelimit detach vmrxb >/tmp/detach.log 2>&1
result detach $? "$(cat /tmp/detach.log)"

# SYN cookies, the whole path: busybox httpd behind the program, every
# newcomer refused (--new-pps 0) but its SYN answered with a cookie at the
# driver, the ACK passed to SYNPROXY (the CLI's nft table), an HTTP
# request by nc served (busybox's wget crashes in this guest).
# The client's end runs an XDP_PASS program: a veth delivers its peer's
# XDP_TX only then.
mkdir -p /tmp/www && echo served >/tmp/www/index.html
in_rx iproute2 link set lo up && in_rx iproute2 addr add 198.18.5.1/24 dev vmrxb &&
	nsenter --net=$tx iproute2 addr add 198.18.5.2/24 dev vmtxa &&
	nsenter --net=$tx iproute2 link set dev vmtxa xdp obj /rl/baselines.bpf.o \
		sec xdp program xdp_pass &&
	in_rx httpd -p 198.18.5.1:8080 -h /tmp/www &&
	in_rx xdp-ratelimit attach vmrxb --mode native >/tmp/ck.log 2>&1 &&
	in_rx xdp-ratelimit quota set default --new-pps 0 --syn-cookies on >>/tmp/ck.log 2>&1
result cookies/setup $? "$(cat /tmp/ck.log)"
got=$(printf 'GET /index.html HTTP/1.0\r\n\r\n' |
	nsenter --net=$tx nc -w 8 198.18.5.1 8080 2>&1 | tail -n 1)
in_rx xdp-ratelimit stats --json >/tmp/stats.json 2>&1
valid=$(jqjson '.interfaces[0].totals.syn_cookies_valid' /tmp/stats.json)
[ "$got" = served ] && [ "$valid" -ge 1 ] 2>/dev/null
result cookies/served $? "nc got '$got'; $(jqjson -c '.interfaces[0].totals' /tmp/stats.json); $(in_rx cat /proc/net/stat/synproxy | tr '\n' ' ')"
in_rx xdp-ratelimit detach vmrxb >/tmp/detach.log 2>&1 &&
	! in_rx nftables list table inet xdp_ratelimit_vmrxb >/dev/null 2>&1
result cookies/detach $? "$(cat /tmp/detach.log)"

# beside xdp-filter under libxdp's dispatcher
. /multi.sh
guest_finish
