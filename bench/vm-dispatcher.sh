#!/bin/sh
# shellcheck shell=sh
# The guest of bench/run.sh's dispatcher part: tests/vm/run.sh boots it
# as init in Debian 12's own kernel (6.1), where libxdp's dispatcher
# works (it does not on kernels that refuse its freplace programs).
# Prints its figures as "bench-json: {...}" lines on the console:
#   progs       per-packet cost (ratelimit-bench progs): the whole path
#               of a frame under the dispatcher (dispatcher, its freplace
#               entry, the stub, the tail call, the program) against the
#               program run directly; a source under its quota and one over
#   throughput  trafficgen over veth pairs into xdp-ratelimit under the
#               dispatcher (case "dispatcher", veth rA), the same attached
#               directly ("direct", rB: a bpf_link of its own,
#               LIBXDP_SKIP_DISPATCHER=1), (a) bare XDP_DROP,
#               (m) the minimal per-source limiter, (d) an nftables meter;
#               1 source at --default-pps 1 (all but one frame a second
#               dropped), the cases in turn in each repeat
# The kernel command line's rlbench=full|quick|smoke sets how long.
# Under qemu without KVM (TCG) the CPU is emulated: the figures are
# slow, and only ratios within one run mean anything.
. /guest-lib.sh
guest_init

mode=smoke
for a in $(cat /proc/cmdline); do
	case $a in rlbench=*) mode=${a#rlbench=} ;; esac
done
case $mode in
full)	reps=5 secs=1.5 rounds=11 ms=20 ;;
quick)	reps=2 secs=0.5 rounds=5 ms=10 ;;
*)	reps=1 secs=0.3 rounds=2 ms=5 ;;
esac
echo "guest: bench mode $mode"
echo "bench-json: {\"kind\": \"kernel\", \"release\": \"$(uname -r)\", \"cpus\": $(nproc)}"

tx=/run/netns/vbtx rx=/run/netns/vbrx
in_tx() { nsenter --net=$tx "$@"; }
in_rx() { nsenter --net=$rx "$@"; }
iproute2 netns add vbtx && iproute2 netns add vbrx
result bench/netns $?
# a veth pair per case: tC in the generator's namespace, rC in the receiver's
for c in A B a m d; do
	iproute2 link add "t$c" type veth peer name "r$c" &&
		iproute2 link set "t$c" netns vbtx && iproute2 link set "r$c" netns vbrx &&
		in_tx iproute2 link set "t$c" up && in_rx iproute2 link set "r$c" up ||
		result "bench/veth_$c" 1
done

in_rx xdp-ratelimit attach rA --default-pps 1 >/tmp/a.log 2>&1 &&
	grep -q 'libxdp dispatcher' /tmp/a.log
result bench/attach_dispatcher $? "$(cat /tmp/a.log)"
LIBXDP_SKIP_DISPATCHER=1 in_rx xdp-ratelimit attach rB --default-pps 1 >/tmp/b.log 2>&1 &&
	! grep -q 'dispatcher' /tmp/b.log
result bench/attach_direct $? "$(cat /tmp/b.log)"
# the per-packet runs' source under its quota (the program's path to a
# pass, the dispatcher's on to its next entries)
for d in rA rB; do
	in_rx xdp-ratelimit quota set 198.18.100.0/24 --pps 1000000000 --iface $d \
		>/tmp/q.log 2>&1 || result bench/quota_$d 1 "$(cat /tmp/q.log)"
done
in_rx ratelimit-bench xdp ra drop && in_rx ratelimit-bench xdp rm minimal
result bench/attach_baselines $?
in_rx ratelimit-bench xdp rd pass && in_rx nftables -f - <<NFT
table ip rlb {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		meter m4 size 65536 { ip saddr limit rate over 1/second } drop
	}
}
NFT
result bench/nft_meter $?

# the XDP program of an interface, as the kernel lists it
xdp_id() { in_rx bpftool -j net show dev "$1" | jqjson '.[0].xdp[0].id'; }
disp=$(xdp_id rA) direct=$(xdp_id rB)
in_rx bpftool -j prog show id "$disp" >/tmp/p.json 2>&1
name=$(jqjson -r .name /tmp/p.json)
[ "$name" = xdp_dispatcher ]
result bench/dispatcher_runs $? "rA runs $name ($(cat /tmp/p.json))"

for src in 198.18.100.1 198.18.0.1; do
	in_rx ratelimit-bench progs --rounds $rounds --ms $ms --cpu 1 --src $src \
		direct="$direct" dispatcher="$disp" >/tmp/progs.json 2>/tmp/progs.err
	st=$?
	[ $st = 0 ] && echo "bench-json: $(jqjson -c '{kind: "progs"} + .' /tmp/progs.json)"
	result "bench/progs_$src" $st "$(cat /tmp/progs.err)"
done

# one run: frames received (rx_packets) and xdp-ratelimit's counters,
# before and after
tp_run() {	# CASE REP NAME
	local r0 p0 d0 r1 p1 d1 g
	read -r r0 p0 d0 <<EOT
$(ratelimit-bench counters $rx "r$1")
EOT
	g=$(in_tx trafficgen --dev "t$1" --cpu 1 --duration $secs --json --src 198.18.0.1) ||
		{ result "bench/trafficgen_$1" 1; return; }
	read -r r1 p1 d1 <<EOT
$(ratelimit-bench counters $rx "r$1")
EOT
	echo "bench-json: {\"kind\": \"throughput\", \"group\": \"dispatcher\", \"case\": \"$3\"," \
		"\"rep\": $2, \"received\": $((r1 - r0)), \"passed\": $((p1 - p0))," \
		"\"dropped\": $((d1 - d0)), \"generator\": $g}"
}
r=1
while [ $r -le $reps ]; do
	tp_run A $r dispatcher
	tp_run B $r direct
	for c in a m d; do tp_run $c $r $c; done
	r=$((r + 1))
done
result bench/throughput 0

in_rx xdp-ratelimit detach rA >/dev/null 2>&1 && in_rx xdp-ratelimit detach rB >/dev/null 2>&1
result bench/detach $?
guest_finish
