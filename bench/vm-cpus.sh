#!/bin/sh
# shellcheck shell=sh
# The guest of bench/run.sh's cpus part: tests/vm/run.sh boots it as init
# in Debian 12's own kernel (6.1) with possible_cpus=N on the kernel
# command line (qemu keeps 2 vCPUs present; only the possible CPUs
# change). Checks that the kernel, libbpf (libbpf_num_possible_cpus()) and
# the loader's settings.ncpus all say N, then prints, as "bench-json: {...}"
# lines on the console, what ratelimit-bench cpus measured: the per-packet
# cost of one source under quota, of a light source (every packet a new
# bucket: a roll and a refresh) and of a refresh.
# The kernel command line's rlbench=full|quick|smoke sets how long.
# Under qemu without KVM (TCG) the CPU is emulated: the figures are slow,
# and only ratios within one run (of guests booted by it) mean anything.
. /guest-lib.sh
guest_init

mode=smoke asked=
for a in $(cat /proc/cmdline); do
	case $a in
	rlbench=*) mode=${a#rlbench=} ;;
	possible_cpus=*) asked=${a#possible_cpus=} ;;
	esac
done
case $mode in
full)	rounds=11 ms=20 ;;
quick)	rounds=5 ms=10 ;;
*)	rounds=2 ms=5 ;;
esac
echo "guest: bench mode $mode, possible_cpus=${asked:-unset}"
possible=$(cat /sys/devices/system/cpu/possible)
echo "bench-json: {\"kind\": \"kernel\", \"release\": \"$(uname -r)\", \"asked\": ${asked:-null}," \
	"\"possible\": \"$possible\", \"present\": \"$(cat /sys/devices/system/cpu/present)\"," \
	"\"online\": \"$(cat /sys/devices/system/cpu/online)\"," \
	"\"bpf_jit_enable\": $(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo null)}"
if [ "$asked" = 1 ]; then want=0; else want="0-$((${asked:-0} - 1))"; fi
[ -n "$asked" ] && [ "$possible" = "$want" ]
result "cpus/possible_$asked" $? "asked for possible_cpus=$asked, the kernel says $possible"

# ratelimit-bench holds its programs in the XDP dispatcher on veths it
# makes with `ip`: iproute2's, not busybox's applet
mkdir -p /tmp/bin && ln -sf /sbin/iproute2 /tmp/bin/ip
PATH=/tmp/bin:$PATH ratelimit-bench cpus --rounds $rounds --ms $ms --cpu 1 \
	>/tmp/cpus.json 2>/tmp/cpus.err
st=$?
result cpus/measured $st "$(cat /tmp/cpus.err)"
# what it said (a program not held in the XDP dispatcher, say)
[ $st = 0 ] && sed 's/^/  /' /tmp/cpus.err
if [ $st = 0 ]; then
	echo "bench-json: $(jqjson -c --argjson n "${asked:-null}" '{kind: "cpus", asked: $n} + .' /tmp/cpus.json)"
	# libbpf and the loader follow the kernel's possible CPUs
	[ "$(jqjson .possible_cpus /tmp/cpus.json)" = "$asked" ] &&
		[ "$(jqjson .settings_ncpus /tmp/cpus.json)" = "$asked" ]
	result cpus/ncpus_$asked $? "libbpf and settings.ncpus: $(jqjson -c \
		'{possible_cpus, settings_ncpus}' /tmp/cpus.json)"
	[ "$(jqjson '[.cases[].wrong_verdicts] | add' /tmp/cpus.json)" = 0 ]
	result cpus/verdicts $? "a case's packet was not passed: $(jqjson -c \
		'[.cases[] | {name, wrong_verdicts}]' /tmp/cpus.json)"
fi
guest_finish
