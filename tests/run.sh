#!/bin/bash
# Run every test suite and end with the overall "N passed, N failed".
# Usage: tests/run.sh BUILD_DIR [stress]
set -u
out=${1:-build}
mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
total_pass=0
total_fail=0

run_suite() {
	local log
	log=$(mktemp)
	"$@" 2>&1 | tee "$log"
	local line
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL suite '$*' printed no result line"
		total_fail=$((total_fail + 1))
	else
		local p f
		p=$(grep -oE "[0-9]+ passed" <<<"$line" | grep -oE "[0-9]+")
		f=$(grep -oE "[0-9]+ failed" <<<"$line" | grep -oE "[0-9]+")
		total_pass=$((total_pass + p))
		total_fail=$((total_fail + f))
	fi
	rm -f "$log"
}

if [ "$mode" = stress ]; then
	for s in "$here"/stress/*.sh; do
		[ -e "$s" ] && run_suite "$s" "$out"
	done
else
	run_suite "$out/test_unit"
	run_suite "$out/test_prog"
	run_suite "$here/vm/run.sh" "$out"
	run_suite "$here/fuzz/run.sh" "$out"
	run_suite "$here/e2e/run.sh" "$out"
	run_suite "$here/ops/run.sh" "$out"
	run_suite "$here/doc/run.sh" "$out"
	run_suite "$here/flood/run.sh" "$out"
	run_suite "$here/cookies/run.sh" "$out"
	run_suite "$here/scope/run.sh" "$out"
	run_suite "$here/sync/run.sh" "$out"
	run_suite "$here/sync/cluster.sh" "$out"
	run_suite "$here/../bench/run.sh" "$out" --smoke
	run_suite "$here/../bench/sync.sh" "$out" smoke
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
