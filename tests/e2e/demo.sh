# shellcheck shell=bash
# e2e area: `make demo` (scripts/demo.sh) as its reader sees it: it runs
# through, every line it prints itself fits 80 columns and so does every
# line of the CLI's output (kept apart), the path of the pinned counters is
# a line of its own under `bpftool map dump pinned \`, ready to copy, and
# nothing of its namespace stays under /sys/fs/bpf (its cleanup runs detach
# once more).
# Sourced by tests/e2e/run.sh; `tests/e2e/run.sh BUILD_DIR NAME` runs one.

test_demo() {
	local d why=() rc path
	d=$(mktemp -d /tmp/rl-demo.XXXXXX) && tmpdirs+=("$d") && mkdir "$d/bin" ||
		{ result demo 1 "a directory for the demo's build"; return; }
	# The demo's build directory: trafficgen, and the CLI with its standard
	# output kept in a file of its own, or passed on for --json (which the
	# demo pipes into jq): what the demo prints is its own text alone.
	ln -s "$gen" "$d/bin/trafficgen"
	cat >"$d/bin/xdp-ratelimit" <<-SH
	#!/bin/bash
	case " \$* " in *" --json "*) exec "$cli" "\$@";; esac
	exec "$cli" "\$@" >>"$d/cli.out"
	SH
	chmod +x "$d/bin/xdp-ratelimit"
	DEMO_SECONDS=2 timeout 120 "$repo/scripts/demo.sh" "$d/bin" >"$d/out" 2>"$d/err"
	rc=$?
	[ "$rc" = 0 ] && [ ! -s "$d/err" ] ||
		why+=("exit $rc, standard error: $(cat "$d/err")")
	grep -q "^attached to " "$d/cli.out" 2>/dev/null ||
		why+=("the CLI's output was not kept apart: $(cat "$d/cli.out" 2>&1)")
	# its own lines, without the bold of its headings
	sed 's/\x1b\[[0-9;]*m//g' "$d/out" >"$d/text"
	[ "$(awk 'length > 80' "$d/text")" = "" ] ||
		why+=("lines over 80 columns: $(awk 'length > 80' "$d/text")")
	# and the CLI's lines too (a message longer goes on in lines of its own)
	[ "$(awk 'length > 80' "$d/cli.out" 2>/dev/null)" = "" ] ||
		why+=("the CLI's lines over 80 columns: $(awk 'length > 80' "$d/cli.out")")
	path=$(awk -v re='^ */sys/fs/bpf/xdp-ratelimit/netns:[0-9]+:[0-9]+/rldemo[0-9]+b/counters$' \
		'prev ~ /^ *bpftool map dump pinned \\$/ && $0 ~ re { print $1 } { prev = $0 }' "$d/text")
	[ -n "$path" ] || why+=("no 'bpftool map dump pinned \\' with the path on the next line: $(cat "$d/text")")
	[ -z "$path" ] || [ ! -e "${path%/*/*}" ] ||
		why+=("${path%/*/*} left after the demo: $(ls -A "${path%/*/*}")")
	result demo "${#why[@]}" "${why[*]}"
}
