#!/bin/bash
# The documentation against the build: the man page is clean under
# mandoc's lint and names every command and option that the CLI's --help
# shows; README, CONTRIBUTING and the man page point at nothing outside the
# repository; bench/PERFORMANCE.md quotes only figures that its own tables
# (bench/report.py --markdown) hold; the README is at most 330 lines. No
# root needed. (tests/doc/recipes.sh, as root, runs the README's recipes.)
# Usage: tests/doc/run.sh BUILD_DIR [NAME...]
set -u
suite=doc
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(cd "${1:-build}" && pwd) || exit 1
shift
cli=$out/xdp-ratelimit
man=$root/doc/xdp-ratelimit.8
passed=0 failed=0

result() {	# NAME STATUS [why]: STATUS 0 is a pass
	if [ "$2" = 0 ]; then
		echo "ok   $suite/$1"; passed=$((passed + 1))
	else
		echo "FAIL $suite/$1${3:+: $3}"; failed=$((failed + 1))
	fi
}

# Clean at STYLE level but for the cross-references, which depend on the
# manuals installed on this machine.
test_man_lint() {
	local out
	out=$(mandoc -T lint -W style "$man" 2>&1 |
		grep -v -e 'referenced manual not found' -e 'mandoc\.db')
	[ -z "$out" ]
	result man_lint $? "$out"
}

# Every command of `xdp-ratelimit --help` is a .Cm in the man page, and
# every --option of each command's --help (quota's subcommands too) a .Fl.
test_man_covers_help() {
	local missing=() c o cmds
	cmds=$("$cli" --help | awk '/^Commands:/ { on = 1; next } on && NF == 0 { exit }
		on { print $1 }')
	[ -n "$cmds" ] || missing+=("(no commands in --help)")
	for c in $cmds; do
		grep -q "^\.\(It \)\?Cm $c\b" "$man" || missing+=("command $c")
		# (--aggregate-* stands for two options, each in the usage)
		for o in $("$cli" "$c" --help | sed 's/--[a-z-]*-\*//g' | grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u); do
			grep -qE -- "Fl -${o#--}( |$)" "$man" || missing+=("$c $o")
		done
	done
	for o in $("$cli" --help | grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u); do
		grep -qE -- "Fl -${o#--}( |$)" "$man" || missing+=("$o")
	done
	[ ${#missing[@]} = 0 ]
	result man_covers_help $? "not in doc/xdp-ratelimit.8: ${missing[*]}"
}

# Users get the repository, not the workspace around it (its SPEC.md, its
# issue tracker).
test_no_outside_references() {
	local hits
	hits=$(cd "$root" && grep -rnwE '\.\./shared|SPEC|issue [0-9]+' README.md CONTRIBUTING.md \
		doc bench tests scripts bpf include 2>/dev/null | grep -v '^tests/doc/run.sh:')
	[ -z "$hits" ]
	result no_outside_references $? "$hits"
}

# Every "median [min-max]" figure PERFORMANCE.md's prose quotes is one of
# its tables' (bench/report.py --markdown output, between the report.py
# markers), so the prose cannot drift from the run it explains.
test_performance_quotes_tables() {
	local f bad=() perf=$root/bench/PERFORMANCE.md tables prose
	tables=$(sed -n '/^<!-- report.py --markdown: begin -->$/,/^<!-- report.py --markdown: end -->$/p' "$perf")
	prose=$(sed '/^<!-- report.py --markdown: begin -->$/,/^<!-- report.py --markdown: end -->$/d' "$perf")
	[ -n "$tables" ] || bad+=("(no report.py markers)")
	while read -r f; do
		grep -qF -- "$f" <<<"$tables" || bad+=("$f")
	done < <(grep -oE '[0-9]+(\.[0-9]+)? (ns )?\[[0-9.]+-[0-9.]+\]' <<<"$prose" | sort -u)
	[ ${#bad[@]} = 0 ]
	result performance_quotes_tables $? "not in PERFORMANCE.md's tables: ${bad[*]}"
}

# The README stays a README: at most 330 lines (the manual is the man page,
# the design notes doc/design/, the figures bench/PERFORMANCE.md).
test_readme_short() {
	local n
	n=$(wc -l <"$root/README.md")
	[ "$n" -le 330 ]
	result readme_short $? "README.md has $n lines (at most 330)"
}

# The README names every pinned map (RL_MAPS in include/ratelimit.h) and
# shows the bpftool line that reads one.
test_readme_names_maps() {
	local missing
	missing=$(python3 - "$root/include/ratelimit.h" "$root/README.md" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
block = h[h.index('#define RL_MAPS(X)'):]
block = block[:block.index('\n\n')]
names = re.findall(r'X\((\w+),', block)
readme = open(sys.argv[2]).read()
if len(names) < 20:
    print('RL_MAPS not read')
for n in names:
    if '`' + n + '`' not in readme:
        print(n)
if 'bpftool map dump pinned' not in readme:
    print('(no bpftool line)')
PY
)
	[ -z "$missing" ]
	result readme_names_maps $? "README.md does not name: $missing"
}

# user/lib never includes a user/cli header, and no modules include each
# other in a loop, and only tests/cli includes a CLI header (tree.py).
test_tree() {
	local breaches
	breaches=$(python3 "$root/tests/doc/tree.py" "$root")
	[ -z "$breaches" ]
	result tree_lib_below_cli_no_loops $? "$breaches"
}

# Every shown counter of RL_COUNTERS (include/ratelimit.h): its JSON name
# and its Prometheus family are in the man page.
test_counters_documented() {
	local missing
	missing=$(python3 - "$root/include/ratelimit.h" "$man" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
block = h[h.index('#define RL_COUNTERS(X)'):h.index('#define RL_COUNTER_FIELD')]
man = open(sys.argv[2]).read()
rows = re.findall(r'X\((\w+), (NULL|"[^"]*"), (NULL|"[^"]*")', block)
if len(rows) < 10:
    print('RL_COUNTERS not read')
for field, json, prom in rows:
    names = [json.strip('"')] if json != 'NULL' else []
    names += ['xdp_ratelimit_' + prom.strip('"')] if prom != 'NULL' else []
    for n in names:
        if not re.search(r'(^|[^a-z_])' + re.escape(n) + r'([^a-z_]|$)', man, re.M):
            print(field + ': ' + n)
PY
)
	[ -z "$missing" ]
	result counters_documented $? "not in the man page: $missing"
}

tests=(man_lint man_covers_help no_outside_references performance_quotes_tables readme_short
	readme_names_maps tree counters_documented)
for t in "${@:-${tests[@]}}"; do
	if [[ " ${tests[*]} " != *" $t "* ]]; then
		echo "doc: no test named '$t' (${tests[*]})" >&2
		exit 2
	fi
	"test_$t"
done
echo "$suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
