#!/bin/bash
# The README's recipes, run. Each block marked `<!-- recipe: NAME [attached] -->`
# is a console transcript: a line `# COMMAND` is run, the lines under it are
# the output the README shows for it. Each recipe runs in namespaces of its
# own, joined by a veth whose receiving end stands for `eth0`, while 4
# sources (198.18.7.1-4) send it pulses of 500 frames/s each for 1 s in
# every 2.5 s ("attached": attached with --default-pps 1000 first).
# Each command must exit 0 and print the lines the README shows, in order,
# in their shape (digits stand for any number, blanks for any blanks; the
# program may print more lines between them; `...` says some are left out).
# A command whose output ends in `^C` is stopped with SIGINT after a few
# seconds; one ending in ` &` runs in the background until the recipe ends,
# its output checked then. A command that succeeds but prints another shape
# is run again until it fits (for at most 10 s), since its output may wait
# for the next pulse. Commands run with COLUMNS=80, as the README shows
# them.
# What a recipe cannot do inside a namespace is done by stand-ins in front
# of PATH: `systemctl enable --now|reload|disable --now xdp-ratelimit@IFACE`
# runs the unit's own ExecStart, ExecReload or ExecStop lines (systemd/; none
# is no error);
# `systemd-cat -t TAG` and `journalctl -t TAG -o cat` keep the journal in
# a file (journald need not run on the test machine). /etc/xdp-ratelimit
# is a directory of the run.
# RECIPES_SHOW=1 prints each command's output too (how the README's are made).
# Usage: tests/doc/recipes.sh BUILD_DIR [NAME...]   (root)
set -u
suite=recipes
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
readme=$root/README.md
. "$here/../lib.sh"
lib_init "${1:-build}" rcp
shift
tmp=$(mktemp -d /tmp/recipes.XXXXXX)
trap 'lib_cleanup; rm -rf "$tmp"' EXIT

# The recipes as files: $tmp/r/NAME/{flags,N.cmd,N.out}
split_recipes() {
	awk -v dir="$tmp/r" '
	/^<!-- recipe: / { name = $3; flags = ($4 == "-->") ? "" : $4; want = 1; next }
	want && /^```/ { want = 0; inblock = 1; n = 0; r = dir "/" name
		system("mkdir -p " r); print flags > (r "/flags"); close(r "/flags"); next }
	inblock && /^```/ { inblock = 0; next }
	inblock && /^# / { n++; f = sprintf("%s/%02d", r, n)
		print substr($0, 3) > (f ".cmd"); close(f ".cmd")
		printf "" > (f ".out"); close(f ".out"); next }
	inblock && n { print >> (sprintf("%s/%02d.out", r, n)) }
	' "$readme"
}

# Stand-ins and the CLI, first in PATH.
make_bin() {
	local b=$tmp/bin
	mkdir -p "$b" "$tmp/etc" "$tmp/journal"
	ln -sf "$cli" "$b/xdp-ratelimit"
	cat >"$b/systemctl" <<EOF
#!/bin/bash
# systemctl VERB [--now] xdp-ratelimit@IFACE: the unit's own lines
set -e
verb=\$1; shift; [ "\$1" = --now ] && shift
unit=\$1; inst=\${unit#*@}; tmpl=$root/systemd/\${unit%@*}@.service
case \$verb in enable) keys=ExecStart ;; reload) keys=ExecReload ;;
	disable|stop) keys=ExecStop ;; *) echo "stand-in: no \$verb" >&2; exit 2 ;; esac
grep "^\$keys=" "\$tmpl" | sed -e "s/^\$keys=//" -e "s|@SBINDIR@/||g" \\
	-e "s|@CONFDIR@|$tmp/etc|g" -e "s|/etc/xdp-ratelimit|$tmp/etc|g" -e "s/%[iI]/\$inst/g" |
while read -r line; do \$line >/dev/null; done
EOF
	cat >"$b/systemd-cat" <<EOF
#!/bin/bash
[ "\$1" = -t ] || exit 2
exec cat >>"$tmp/journal/\$2"
EOF
	cat >"$b/journalctl" <<EOF
#!/bin/bash
[ "\$1" = -t ] || exit 2
cat "$tmp/journal/\$2"
EOF
	chmod +x "$b"/*
}

# One line's shape: numbers (with a fraction or a k/M/G) as N, blanks as one.
shape() {
	sed -E -e 's/[0-9]+(\.[0-9]+)?[kMG]?/N/g' -e 's/[[:space:]]+/ /g' \
		-e 's/^ //' -e 's/ $//'
}

# The shown lines of OUT (expected) appear in ACTUAL in order: the first
# one missing, or nothing.
missing_line() {	# EXPECTED_FILE ACTUAL_FILE
	python3 - "$1" "$2" <<'EOF'
import sys
want = [l for l in open(sys.argv[1]).read().split('\n') if l not in ('', '...', '^C')]
have = open(sys.argv[2]).read().split('\n')
i = 0
for w in want:
    while i < len(have) and have[i] != w:
        i += 1
    if i == len(have):
        print(w); break
    i += 1
EOF
}

# eth0 and /etc/xdp-ratelimit of the README as this run's, and back.
localize() { sed -e "s/\beth0\b/$vrx/g" -e "s|/etc/xdp-ratelimit|$tmp/etc|g"; }
unlocalize() { sed -e "s/$vrx/eth0/g" -e "s|$tmp/etc|/etc/xdp-ratelimit|g"; }

# Run CMD in the receiver's namespace: its exit status in rc, its output in
# $got, the first line of $want it lacks in miss (empty: none). A command
# whose output ends in ^C is stopped with SIGINT after 6 s.
run_checked() {	# CMD [nonempty: its output must not be empty either]
	local stop=()
	tail -n 1 "$want" | grep -qxF '^C' && stop=(timeout --preserve-status -s INT 6)
	in_rx env COLUMNS=80 PATH="$tmp/bin:$PATH" "${stop[@]}" bash -c "cd $tmp && $1" >"$got" 2>&1
	rc=$?
	shape <"$got" >"$got.s"
	miss=$(missing_line "$want" "$got.s")
	[ "$rc" = 0 ] && [ -z "$miss" ] && { [ -z "${2:-}" ] || [ -s "$got" ]; }
}

pulses() {	# 4 sources, 500 frames/s each for 1 s in every 2.5 s
	local m
	m=$(mac_of "$vrx")
	trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
	while :; do
		in_tx "$gen" --dev "$vtx" --src 198.18.7.1 --sources 4 --rate 2000 \
			--duration 1 --dst-mac "$m" >/dev/null 2>&1 &
		wait $!
		sleep 1.5 & wait $!	# the pause between pulses, not a wait on anything
	done
}

run_recipe() {	# NAME
	local r=$tmp/r/$1 c cmd why= bgpids=() bgouts=() bgwant=() i pid after_bg=
	lib_setup_ns && setup_link && ip -n "$rx" link set lo up ||
		{ result "$1" 1 "cannot create namespaces"; return; }
	if grep -qw attached "$r/flags"; then
		rl attach "$vrx" --default-pps 1000 >/dev/null || { result "$1" 1 "attach"; return; }
	fi
	pulses & bg+=($!)
	for c in "$r"/*.cmd; do
		cmd=$(localize <"$c")
		want=$tmp/want got=$tmp/got rc= miss=
		localize <"${c%.cmd}.out" | shape >"$want"
		if [[ $cmd == *' &' ]]; then
			i=${#bgpids[@]}
			setsid nsenter --net="/run/netns/$rx" env COLUMNS=80 PATH="$tmp/bin:$PATH" \
				bash -c "cd $tmp && ${cmd% &}" >"$got.$i" 2>&1 &
			bgpids+=($!) bgouts+=("$got.$i")
			cp "$want" "$want.$i"; bgwant+=("$want.$i")
			after_bg=1
			continue
		fi
		# What a command awaits may not be there yet (a background
		# command's server, the next pulse of traffic): a command that
		# succeeds with output of another shape is polled until it fits.
		if [ -n "$after_bg" ]; then
			within 200 run_checked "$cmd" nonempty || true
		elif ! run_checked "$cmd" && [ "$rc" = 0 ]; then
			within 100 run_checked "$cmd" || true
		fi
		[ -z "${RECIPES_SHOW:-}" ] || { echo "# $cmd"; cat "$got"; } | unlocalize
		[ "$rc" = 0 ] || { why="'$cmd' exited $rc: $(head -c 300 "$got")"; break; }
		[ -z "$miss" ] || { why="'$cmd' did not print a line like '$miss'; it printed: $(head -c 400 "$got")"; break; }
		after_bg=
	done
	for i in "${!bgpids[@]}"; do
		pid=${bgpids[$i]}
		kill -INT -- "-$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		[ -z "${RECIPES_SHOW:-}" ] || { echo "(background $i)"; cat "${bgouts[$i]}"; } | unlocalize
		[ -n "$why" ] && continue
		shape <"${bgouts[$i]}" >"$tmp/got.s"
		c=$(missing_line "${bgwant[$i]}" "$tmp/got.s")
		[ -z "$c" ] || why="a background command did not print a line like '$c'"
	done
	result "$1" "$([ -z "$why" ] && echo 0 || echo 1)" "$why"
	lib_cleanup
	bg=() extra_ns=()
}

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
[ -x "$cli" ] && [ -x "$gen" ] || lib_abort setup "build first: make"
split_recipes
make_bin
names=$(ls "$tmp/r" 2>/dev/null)
[ -n "$names" ] || lib_abort setup "no <!-- recipe: NAME --> blocks in README.md"
for n in "$@"; do
	grep -qx -- "$n" <<<"$names" || { echo "recipes: no recipe named '$n' ($(echo $names))" >&2; exit 2; }
done
for n in ${*:-$names}; do
	run_recipe "$n"
done
lib_finish
