#!/bin/bash
# Run every test suite and end with the overall "N passed, N failed".
# Usage: tests/run.sh BUILD_DIR [stress]
set -u
out=${1:-build}
mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
total_pass=0
total_fail=0
took=()		# "SUITE N s" of each suite, and the whole run's
run_start=$(date +%s)

run_suite() {
	local log start name
	log=$(mktemp)
	start=$(date +%s)
	"$@" 2>&1 | tee "$log"
	case $1 in	# test_unit, test_cli, vm (vm/run.sh), sync/cluster (sync/cluster.sh)
	*/run.sh) name=$(basename "$(dirname "$1")") ;;
	*.sh) name=$(basename "$(dirname "$1")")/$(basename "$1" .sh) ;;
	*) name=$(basename "$1") ;;
	esac
	took+=("$name $(( $(date +%s) - start )) s")
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
	run_suite "$out/test_cli"
	run_suite "$out/test_prog"
	run_suite "$here/vm/run.sh" "$out"
	run_suite "$here/fuzz/run.sh" "$out"
	run_suite "$here/e2e/run.sh" "$out"
	run_suite "$here/ops/run.sh" "$out"
	run_suite "$here/monitoring/run.sh" "$out"
	# the package is built from the plain build whatever OUTPUT is: once
	# is enough (not again under make SANITIZE=1 test)
	case $out in
	*/sanitize) ;;
	*) run_suite "$here/package/run.sh" "$out" ;;
	esac
	run_suite "$here/doc/run.sh" "$out"
	run_suite "$here/doc/recipes.sh" "$out"
	run_suite "$here/flood/run.sh" "$out"
	run_suite "$here/cookies/run.sh" "$out"
	run_suite "$here/attack/run.sh" "$out"
	run_suite "$here/scope/run.sh" "$out"
	run_suite "$here/sync/run.sh" "$out"
	run_suite "$here/sync/cluster.sh" "$out"
	run_suite "$here/../bench/run.sh" "$out" --smoke
	run_suite "$here/../bench/sync.sh" "$out" smoke
fi
elapsed=$(( $(date +%s) - run_start ))
printf 'took: %s; in all %d min %d s\n' "$(IFS=,; echo "${took[*]}" | sed 's/,/, /g')" \
	$((elapsed / 60)) $((elapsed % 60))
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
