#!/bin/bash
# The unit suite and CLI commands under valgrind (memcheck, full leak check):
# no invalid access, no uninitialised use, no leak. Usage: tests/valgrind.sh BUILD_DIR
# (a build without SANITIZE). CLI commands that read pins run against an empty bpffs
# in a private mount namespace (root), so the result does not depend on what else
# is attached. Ends with "valgrind: N passed, N failed".
set -u
out=${1:-build}
cli=$out/xdp-ratelimit
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# the CLI's own failures exit 1 or 2: valgrind's errors get a code of their own
VG_ERR=99
vg=(valgrind -q --error-exitcode=$VG_ERR --leak-check=full
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes)

result() {	# NAME OK
	if [ "$2" = 1 ]; then
		echo "ok   valgrind/$1"
		passed=$((passed + 1))
	else
		sed 's/^/    /' "$log" | tail -n 40
		echo "FAIL valgrind/$1"
		failed=$((failed + 1))
	fi
}

# run_cli NAME WANT_STATUS [--empty-bpffs] ARGS...
run_cli() {
	local name=$1 want=$2 st
	shift 2
	if [ "${1:-}" = --empty-bpffs ]; then
		shift
		if [ "$(id -u)" -ne 0 ]; then
			echo "    (not root: $name runs against the real bpffs)"
			"${vg[@]}" "$cli" "$@" >"$log" 2>&1
		else
			unshare -m sh -c 'mount -t bpf bpf /sys/fs/bpf && exec "$@"' sh \
				"${vg[@]}" "$cli" "$@" >"$log" 2>&1
		fi
	else
		"${vg[@]}" "$cli" "$@" >"$log" 2>&1
	fi
	st=$?
	[ "$st" = "$want" ] || echo "exit status $st, want $want (valgrind errors: $VG_ERR)" >>"$log"
	result "$name" "$([ "$st" = "$want" ] && echo 1)"
}

if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed (scripts/install-deps.sh)"
	echo "valgrind: 0 passed, 1 failed"
	exit 1
fi

valgrind -q --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect,possible "$out/test_unit" >"$log" 2>&1
result unit_suite "$([ $? = 0 ] && echo 1)"

run_cli help 0 --help
run_cli version 0 --version
for c in attach detach quota stats status; do
	run_cli "${c}_help" 0 "$c" --help
done
run_cli no_command 2
run_cli unknown_command 2 bogus
run_cli unknown_option 2 status --bogus
run_cli attach_no_iface 2 attach
run_cli attach_bad_window 2 attach lo --window 5h
run_cli attach_bad_buckets 2 attach lo --buckets 17
run_cli attach_bad_rate 2 attach lo --default-pps 1.5k
run_cli attach_bad_mode 2 attach lo --mode turbo
run_cli quota_bad_prefix 2 quota set 198.18.0.1/15 --pps 1
run_cli quota_mapped_prefix 2 quota set ::ffff:198.18.0.7 --pps 1
run_cli quota_bad_rate 2 quota set 198.18.0.0/15 --pps -1
run_cli quota_no_limit 2 quota set 198.18.0.0/15
run_cli stats_bad_top 2 stats --top x
run_cli stats_bad_watch 2 stats --watch 1h
run_cli status_nothing_attached 0 --empty-bpffs status
run_cli status_json_nothing_attached 0 --empty-bpffs status --json
run_cli stats_nothing_attached 0 --empty-bpffs stats
run_cli quota_list_nothing_attached 0 --empty-bpffs quota list --json
run_cli quota_set_nothing_attached 1 --empty-bpffs quota set 198.18.0.0/15 --pps 1
run_cli detach_not_attached 1 --empty-bpffs detach rlvg0

echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
