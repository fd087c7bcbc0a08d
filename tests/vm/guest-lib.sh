# Shared by the guest scripts of tests/vm (busybox sh, as the VM's init):
# mounts, module loading, result lines, and the end of the run.
# shellcheck shell=sh
PATH=/rl:/sbin:/bin
export PATH
passed=0 failed=0

guest_init() {
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	mount -t tmpfs tmp /tmp
	mount -t tmpfs run /run
	mount -t bpf bpf /sys/fs/bpf
	for m in $(cat /modules/order); do
		insmod "/modules/$m" 2>/dev/null
	done
	iproute2 link set lo up
	echo "guest: $(cat /proc/version)"
}

result() {	# NAME STATUS [why]
	if [ "$2" = 0 ]; then
		echo "ok   $1"; passed=$((passed + 1))
	else
		echo "FAIL $1${3:+: $3}"; failed=$((failed + 1))
	fi
}

# Run test_prog's tests NAME... and take its counts as ours.
prog_tests() {	# NAME...
	local log=/tmp/prog.log line p f
	test_prog "$@" >"$log" 2>&1
	grep -E '^(ok  |FAIL)' "$log"
	grep -E '^FAIL|^    ' "$log" | head -n 40 | sed 's/^/  /'
	line=$(grep -E 'passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		result prog/run 1 "test_prog printed no result"
		tail -n 20 "$log" | sed 's/^/  /'
		return
	fi
	p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	passed=$((passed + p)) failed=$((failed + f))
}

guest_finish() {
	echo "guest: $passed passed, $failed failed"
	sync
	poweroff -f
}
