#!/bin/bash
# Run the libFuzzer harnesses tests/fuzz/fuzz_NAME.c (built as BUILD_DIR/fuzz_NAME)
# from their seed corpora tests/fuzz/corpus/NAME/.
#   tests/fuzz/run.sh BUILD_DIR         short, for make test: replay every seed, then
#                                       FUZZ_RUNS inputs (default 300000) with a fixed
#                                       seed (FUZZ_SEED); new inputs are thrown away
#   tests/fuzz/run.sh BUILD_DIR long    make fuzz: FUZZ_TIME seconds (default 600) per
#                                       harness, random seed, the grown corpus kept in
#                                       BUILD_DIR/fuzz-corpus/NAME
# A crash is kept as BUILD_DIR/fuzz-crashes/NAME-*; replay it with BUILD_DIR/fuzz_NAME FILE.
# Prints a line per check and ends with "fuzz: N passed, N failed".
set -u
out=${1:-build}
mode=${2:-short}
here=$(cd "$(dirname "$0")" && pwd)
runs=${FUZZ_RUNS:-300000}
seed=${FUZZ_SEED:-1}
secs=${FUZZ_TIME:-600}
passed=0
failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

result() {	# NAME LOG STATUS
	if [ "$3" -eq 0 ]; then
		echo "ok   fuzz/$1"
		passed=$((passed + 1))
		return
	fi
	tail -n 25 "$2" | sed 's/^/    /'
	mkdir -p "$out/fuzz-crashes"
	for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$a" ] || continue
		cp "$a" "$out/fuzz-crashes/${1%%_*}-$(basename "$a")"
		echo "    kept $out/fuzz-crashes/${1%%_*}-$(basename "$a")"
	done
	echo "FAIL fuzz/$1"
	failed=$((failed + 1))
}

for src in "$here"/fuzz_*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c)
	name=${name#fuzz_}
	bin=$out/fuzz_$name
	seeds=$here/corpus/$name
	log=$work/$name.log
	opts=(-artifact_prefix="$work/" -print_final_stats=1)
	[ -f "$here/$name.dict" ] && opts+=(-dict="$here/$name.dict")
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "    $bin or $seeds missing (make OUTPUT=$out builds the harness)"
		result "${name}_seeds" /dev/null 1
		continue
	fi
	# every seed once: they are the regression inputs
	"$bin" "${opts[@]}" "$seeds"/* >"$log" 2>&1
	result "${name}_seeds" "$log" $?
	if [ "$mode" = long ]; then
		mkdir -p "$out/fuzz-corpus/$name"
		echo "    fuzzing $name for ${secs}s, corpus $out/fuzz-corpus/$name"
		"$bin" "${opts[@]}" -max_total_time="$secs" "$out/fuzz-corpus/$name" "$seeds" \
			>"$log" 2>&1
		result "${name}_${secs}s" "$log" $?
	else
		mkdir -p "$work/$name"
		"$bin" "${opts[@]}" -seed="$seed" -runs="$runs" "$work/$name" "$seeds" \
			>"$log" 2>&1
		result "${name}_${runs}_runs_seed_$seed" "$log" $?
	fi
	grep -E '^(Done|stat::number_of_executed_units)' "$log" | sed 's/^/    /'
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
