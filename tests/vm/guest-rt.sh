#!/bin/sh
# The guest of tests/vm on Debian 12's PREEMPT_RT kernel: attach refuses
# with the RT reason (exit 1), before loading anything, and pins nothing.
. /guest-lib.sh
guest_init

result realtime_file "$([ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] && echo 0 || echo 1)" \
	"/sys/kernel/realtime: '$(cat /sys/kernel/realtime 2>&1)'"
iproute2 link add vmrta type veth peer name vmrtb && iproute2 link set vmrta up
xdp-ratelimit attach vmrta >/tmp/attach.log 2>&1
st=$?
result attach_refused "$([ $st = 1 ] && echo 0 || echo 1)" "exit $st, want 1"
grep -q 'PREEMPT_RT' /tmp/attach.log
result says_why $? "$(cat /tmp/attach.log)"
grep -qi 'verifier\|permission denied' /tmp/attach.log
result no_verifier_error "$([ $? = 1 ] && echo 0 || echo 1)" "$(cat /tmp/attach.log)"
[ -z "$(ls -d /sys/fs/bpf/xdp-ratelimit/vmrta /sys/fs/bpf/xdp-ratelimit/*/vmrta 2>/dev/null)" ]
result nothing_pinned $?
guest_finish
