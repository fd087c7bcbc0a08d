# Shell helpers shared by the privileged suites (tests/e2e/run.sh,
# tests/stress/faults.sh): result lines, a sender and a receiver network
# namespace joined by veth pairs, the CLI run in the receiver's namespace,
# stats --json readers, and cleanup on exit whatever happens.
#
# Usage: suite=NAME; . "$(dirname "$0")/../lib.sh"; lib_init BUILD_DIR TAG
# (or lib_args TAG "$@" for a suite that runs tests by name)
# Then: lib_setup_ns && setup_link || lib_abort setup "why"; ...; lib_finish
#
# Sourcing sets repo (the repository's top folder, absolute).
# lib_init sets: here (the running suite's folder), out cli gen (absolute
# paths), id (TAG plus the shell's PID:
# unique to the run), tx rx (namespaces), vtx vrx (the first veth pair's ends),
# pins; passed failed (result counts); bg (PIDs to kill at exit), tmpfiles,
# tmpdirs (removed at exit), extra_ns (namespaces deleted at exit, with
# their pins).
# shellcheck shell=bash

lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$lib_dir/.." && pwd)

lib_init() {	# BUILD_DIR TAG
	here=$(cd "$(dirname "$0")" && pwd)
	out=$(cd "${1:-build}" && pwd) || exit 1
	cli=$out/xdp-ratelimit
	gen=$out/trafficgen
	id=$2$$
	tx=${id}t rx=${id}r
	vtx=${id}a vrx=${id}b
	pins=	# the receiver's namespace's pin directory (lib_setup_ns)
	passed=0 failed=0
	bg=() tmpfiles=() tmpdirs=() extra_ns=()
	rx_ifaces=("$vrx")	# receiving ends whose pins cleanup removes
	trap lib_cleanup EXIT
	trap 'exit 130' INT TERM
}

# A suite's arguments, [BUILD_DIR] [NAME...] (BUILD_DIR when the first is a
# folder, else build): lib_init BUILD_DIR TAG; build (its absolute path)
# and only (the NAMEs: the tests to run, all when none is given).
lib_args() {	# TAG ARGS...
	local tag=$1 dir=build
	shift
	if [ $# -gt 0 ] && [ -d "$1" ]; then
		dir=$1
		shift
	fi
	only=("$@")
	lib_init "$dir" "$tag"
	build=$out
}

# The suite's test names ($tests) against those asked for ($only): an
# unknown one is bad usage (exit 2), never an empty pass.
check_test_names() {
	local n
	for n in "${only[@]}"; do
		[[ " ${tests[*]} " == *" $n "* ]] ||
			{ echo "$suite: no test named '$n' (${tests[*]})" >&2; exit 2; }
	done
}
want() {	# NAME: is test NAME selected?
	[ ${#only[@]} = 0 ] && return 0
	[[ " ${only[*]} " == *" $1 "* ]]
}

# Each test of $tests that $only selects, as the function PREFIX+NAME, in
# order, then the time they took.
run_tests() {	# PREFIX
	local t start
	start=$(date +%s)
	for t in "${tests[@]}"; do
		if want "$t"; then
			"$1$t"
		fi
	done
	echo "  $suite took $(( $(date +%s) - start )) s"
}

# A privileged suite's first checks: root (without it the suite fails,
# never skips), then each TOOL on the PATH.
lib_require() {	# TOOL...
	local t
	if [ "$(id -u)" != 0 ]; then
		result setup 1 "needs root"; lib_finish; exit 1
	fi
	for t in "$@"; do
		command -v "$t" >/dev/null || lib_abort setup "$t is missing: run scripts/install-deps.sh"
	done
}

lib_cleanup() {
	local p i
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for i in "${rx_ifaces[@]}"; do
		[ -n "$pins" ] && [ -e "$(pin_dir "$i")" ] && [ -e "/run/netns/$rx" ] &&
			rl detach "$i" >/dev/null 2>&1
	done
	for p in "${extra_ns[@]}"; do	# with whatever is attached there
		i=$(ns_pins "$p")
		ip netns del "$p" 2>/dev/null
		[ -z "$i" ] || rm -rf "${i:?}"
	done
	ip netns del "$tx" 2>/dev/null
	ip netns del "$rx" 2>/dev/null
	if [ -n "$pins" ]; then
		for i in "${rx_ifaces[@]}"; do
			i=$(pin_dir "$i")
			rm -rf "${i:?}" "$i "* 2>/dev/null
		done
		rmdir "$pins" 2>/dev/null
	fi
	[ ${#tmpfiles[@]} -eq 0 ] || rm -f "${tmpfiles[@]}"
	[ ${#tmpdirs[@]} -eq 0 ] || rm -rf "${tmpdirs[@]}"
}

result() {	# NAME STATUS [why]: STATUS 0 is a pass
	if [ "$2" = 0 ]; then
		echo "ok   $suite/$1"; passed=$((passed + 1))
	else
		echo "FAIL $suite/$1${3:+: $3}"; failed=$((failed + 1))
	fi
}
check() {	# NAME CONDITION WHY: CONDITION is an arithmetic expression
	result "$1" "$( (( $2 )) && echo 0 || echo 1)" "$3"
}
lib_finish() {
	echo "$suite: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
lib_abort() {	# NAME WHY: setup failed, nothing else can run
	result "$1" 1 "$2"
	lib_finish
	exit 1
}

# The pin directory of network namespace NS (default: the receiver's): each
# namespace has its own (xdp-ratelimit(8), PINS), which status --json names.
ns_pins() {	# [NS]
	nsenter --net="/run/netns/${1:-$rx}" "$cli" status --json 2>/dev/null |
		jq -r ".pin_dir // empty" 2>/dev/null
}

# The pin directory of IFACE (in namespace NS, default the receiver's): a
# dot in its name is a ':' there.
pin_dir() {	# IFACE [NS]
	local root=$pins
	[ -z "${2:-}" ] || root=$(ns_pins "$2")
	echo "${root:?}/${1//./:}"
}

in_rx() { nsenter --net="/run/netns/$rx" "$@"; }
in_tx() { nsenter --net="/run/netns/$tx" "$@"; }
rl() { in_rx "$cli" "$@"; }

# Two namespaces; the sender's IPv6 is off so that the kernel sends no
# ND/MLD frames of its own: the receiver sees only what a test sends.
lib_setup_ns() {
	ip netns add "$tx" && ip netns add "$rx" &&
		ip netns exec "$tx" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 &&
		pins=$(ns_pins) && [ -n "$pins" ]
}

# A veth pair TXDEV (in tx) - RXDEV (in rx), up, with 198.18.NET.1/24 on
# the sender and .2 on the receiver. Defaults: $vtx $vrx, net 200.
setup_link() {	# [TXDEV RXDEV NET]
	local a=${1:-$vtx} b=${2:-$vrx} net=${3:-200}
	ip link add "$a" netns "$tx" type veth peer name "$b" netns "$rx" || return 1
	ip -n "$tx" link set "$a" up && ip -n "$rx" link set "$b" up &&
		ip -n "$tx" addr add "198.18.$net.1/24" dev "$a" &&
		ip -n "$rx" addr add "198.18.$net.2/24" dev "$b"
}

# The veth pair of a server suite ($vtx - $vrx, up): the server on
# 198.19.1.1 in rx, its clients 198.19.1.2 and .3 in tx.
setup_server_link() {
	ip link add "$vtx" netns "$tx" type veth peer name "$vrx" netns "$rx" &&
		ip -n "$tx" link set "$vtx" up && ip -n "$rx" link set "$vrx" up &&
		ip -n "$tx" addr add 198.19.1.2/24 dev "$vtx" &&
		ip -n "$tx" addr add 198.19.1.3/24 dev "$vtx" &&
		ip -n "$rx" addr add 198.19.1.1/24 dev "$vrx"
}

# True when grep FLAGS finds each PATTERN in TEXT: -xF, each is a whole
# line as given; -E, each extended regular expression matches a line.
has_each() {	# FLAGS TEXT PATTERN...
	local flags=$1 text=$2 p
	shift 2
	for p in "$@"; do
		grep -q "$flags" -- "$p" <<<"$text" || return 1
	done
}

# The topology of the suites under a spoofed flood (tests/flood,
# tests/cookies): namespaces, the server link (setup_server_link) with the
# server's 2001:db8:ffff::1, and blackhole routes on the server for the
# flood's ranges, 198.18.0.0/16 and 2001:db8::/33, so that no reply to a
# spoofed source leaves its namespace. Sets pcap (the flood's frames) and
# nginx_dir (the server's), both removed at exit.
setup_flood_topology() {
	pcap=/tmp/$id.pcap nginx_dir=/tmp/$id.nginx
	tmpfiles+=("$pcap") tmpdirs+=("$nginx_dir")
	lib_setup_ns && setup_server_link &&
		ip -n "$rx" addr add 2001:db8:ffff::1/64 dev "$vrx" nodad &&
		ip -n "$rx" route add blackhole 198.18.0.0/16 &&
		ip -n "$rx" route add blackhole 2001:db8::/33
}

mac_of() {	# RXDEV: its MAC address
	ip -n "$rx" -j link show "$1" | jq -r '.[0].address'
}

# What a terminal of 80 columns would show wrong in TEXT, one a line:
# each PATTERN (a whole line, grep -x) that no line of it is, and each line
# over 80 columns; nothing when every line fits and every PATTERN is there.
width_problems() {	# TEXT PATTERN...
	local text=$1 want
	shift
	for want; do
		grep -qx -- "$want" <<<"$text" || echo "no line '$want'"
	done
	awk 'length > 80 { print "over 80 columns: " $0 }' <<<"$text"
}

# True once CMD succeeds, run every 0.1 s at most TRIES times: the bounded
# wait on an agent, a server or the kernel (never a bare sleep).
within() {	# TRIES CMD...
	local i n=$1
	shift
	for ((i = 1; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# True once the number CMD prints is the same in two polls 0.1 s apart, at
# most TRIES polls: the frames still on their way through the kernel
# after a sender stopped have arrived.
settled() {	# TRIES CMD...
	local i a b n=$1
	shift
	a=$("$@")
	for ((i = 1; i < n; i++)); do
		sleep 0.1
		b=$("$@")
		[ "$a" = "$b" ] && return 0
		a=$b
	done
	return 1
}

# True once bpftool no longer finds KIND (prog|map) ID, polling every
# 0.1 s at most TRIES times: the kernel frees objects after a grace
# period, maps later than programs, so a check must wait, with a bound.
gone_within() {	# TRIES KIND ID
	local i
	for ((i = 0; i < $1; i++)); do
		bpftool "$2" show id "$3" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	! bpftool "$2" show id "$3" >/dev/null 2>&1
}

# COUNT segments of ADDRESS, sent from $vtx to MAC, on a TCP connection
# the receiver established: its SYN-ACK (out of $vrx, through the egress
# hook) first, then the segments, the first of which acknowledges it (the
# proof), all within the receiver's window, so that they are the source's
# own, which may ban it (tests/gen/answers.py). Prints the frames sent.
send_answered_to() {	# MAC ADDRESS COUNT
	local host=198.19.0.1
	[[ $2 == *:* ]] && host=2001:db8:ffff::1
	in_rx python3 "$lib_dir/gen/answers.py" "$vrx" "$host" "$2" 1 &&
		in_tx "$gen" --dev "$vtx" --json --count "$3" --hex \
			"$(python3 "$lib_dir/gen/answers.py" --peer-frame "$1" "$2" "$host")" |
		jq -r .sent
}

# ID of the XDP program on RXDEV, empty when there is none.
xdp_prog_id() {	# RXDEV
	ip -n "$rx" -j -d link show "$1" | jq -r '.[0].xdp.prog.id // empty'
}

stats_json() {	# [IFACE [TOP]]
	rl stats --iface "${1:-$vrx}" --json --top "${2:-1000}"
}
total() {	# FIELD [IFACE]: an interface total from stats --json
	stats_json "${2:-$vrx}" 0 | jq -r ".interfaces[0].totals.$1"
}
# A source's FIELD from stats --json (0 if it is not listed).
src_stat() {	# ADDRESS FIELD [IFACE]
	stats_json "${3:-$vrx}" |
		jq -r --arg a "$1" "[.interfaces[0].sources[] | select(.address == \$a) | .$2][0] // 0"
}

# The byte offset of FIELD in struct rl_config, from the object's BTF.
config_offset() {	# FIELD
	bpftool btf dump file "$out/ratelimit.bpf.o" format raw |
		awk -v f="'$1'" '/STRUCT .rl_config./ { in_cfg = 1; next }
			in_cfg && index($0, f) { sub(/.*bits_offset=/, ""); print $0 / 8; exit }'
}
# The config pin of IFACE as bytes ("0x01 0x00 ..."), and written back.
config_bytes() { bpftool -j map dump pinned "$pins/$1/config" | jq -r '.[0].value | join(" ")'; }
config_write() {	# IFACE BYTES
	# shellcheck disable=SC2086
	bpftool map update pinned "$pins/$1/config" key 0 0 0 0 value $2
}
# Make IFACE's config say another layout version wrote it (0x63 in the
# low byte of its layout field): prints the bytes written.
config_bump_layout() { config_set_layout "$1" 99; }	# IFACE
config_set_layout() {	# IFACE LAYOUT (< 256): the layout field, by hand
	local off bumped
	off=$(config_offset layout)
	[ -n "$off" ] || return 1
	bumped=$(awk -v o="$off" -v l="$(printf '0x%02x' "$2")" '{ $(o + 1) = l; print }' <<<"$(config_bytes "$1")")
	config_write "$1" "$bumped" && echo "$bumped"
}

# Whether ROW lines up under HEADER (a line of column names, as a human
# table prints them): each of its first fields starts where its column name
# starts (left-aligned) or ends where it ends (right-aligned).
aligned() {	# HEADER ROW
	awk -v h="$1" -v r="$2" '
		function spans(s, first, last,   n, p) {
			for (p = 1; match(substr(s, p), /[^ ]+/); p = last[n] + 1) {
				first[++n] = p + RSTART - 1
				last[n] = first[n] + RLENGTH - 1
			}
			return n
		}
		BEGIN {
			n = spans(h, hf, hl)
			if (spans(r, rf, rl) < n)
				exit 1
			for (i = 1; i <= n; i++)
				if (rf[i] != hf[i] && rl[i] != hl[i])
					exit 1
		}'
}
# The row of TABLE that starts with KEY, with the spaces between its fields
# folded, if it lines up under the line that starts with HEADING; else fails.
table_row() {	# TABLE HEADING KEY
	local hdr row
	hdr=$(awk -v k="$2 " 'index($0, k) == 1 { print; exit }' <<<"$1")
	row=$(awk -v k="$3 " 'index($0, k) == 1 { print; exit }' <<<"$1")
	[ -n "$hdr" ] && [ -n "$row" ] && aligned "$hdr" "$row" &&
		awk '{ $1 = $1; print }' <<<"$row"
}

# nginx in the receiver's namespace on 198.19.1.1:8080, in the foreground of
# its own process (in bg, ended by lib_cleanup), its files in DIR; SERVE is
# the server block's content line, e.g. 'root DIR/www;'.
start_nginx() {	# DIR SERVE
	mkdir -p "$1" && cat >"$1/nginx.conf" <<EOF || return 1
daemon off;
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $1;
	server {
		listen 198.19.1.1:8080 backlog=4096;
		$2
	}
}
EOF
	nsenter --net="/run/netns/$rx" nginx -c "$1/nginx.conf" -p "$1" &
	bg+=($!)
}
