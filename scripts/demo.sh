#!/bin/bash
# The main job, shown. Usage: scripts/demo.sh BUILD_DIR [IFACE]
#
# Without IFACE (`make demo`): a throw-away pair of network namespaces joined
# by a veth, xdp-ratelimit attached natively to the receiving end, a few
# sources flooding it for DEMO_SECONDS (default 8) while `stats --watch`
# shows limiting happen; then everything is removed again.
#
# With IFACE (`IFACE=eth1 make run`): attach to that interface with
# --default-pps RATE (default 1000), watch `stats` until Ctrl-C, then detach
# (KEEP=1 leaves it attached). No traffic is generated on a real NIC.
set -u
out=$(cd "${1:-build}" && pwd)
iface=${2:-}
cli=$out/xdp-ratelimit
gen=$out/trafficgen
seconds=${DEMO_SECONDS:-8}

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (XDP and bpffs): run it as root"
[ -x "$cli" ] || die "$cli is missing: run 'make' first"

# ---- a real NIC -----------------------------------------------------------
if [ -n "$iface" ]; then
	rate=${RATE:-1000}
	"$cli" attach "$iface" --default-pps "$rate" || exit
	if [ "${KEEP:-0}" != 1 ]; then
		trap '"$cli" detach "$iface"' EXIT
		echo "(Ctrl-C stops watching and detaches; KEEP=1 leaves it attached)"
	fi
	"$cli" stats --iface "$iface" --watch
	exit 0
fi

# ---- the veth demo --------------------------------------------------------
[ -x "$gen" ] || die "$gen is missing: run 'make' first"
id=rldemo$$
tx=${id}-tx rx=${id}-rx		# namespaces
vtx=${id}a vrx=${id}b		# veth ends (the receiver is what we protect)
bg=()

cleanup() {
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -e "/run/netns/$rx" ] &&
		nsenter --net="/run/netns/$rx" "$cli" detach "$vrx" >/dev/null 2>&1
	ip netns del "$tx" 2>/dev/null
	ip netns del "$rx" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The CLI pins to the machine's bpffs, so it enters only the network
# namespace (nsenter), never `ip netns exec` (which hides /sys/fs/bpf).
rl() { nsenter --net="/run/netns/$rx" "$cli" "$@"; }
send() { nsenter --net="/run/netns/$tx" "$gen" --dev "$vtx" "$@" >/dev/null & bg+=($!); }

ip netns add "$tx" && ip netns add "$rx" &&
	ip link add "$vtx" netns "$tx" type veth peer name "$vrx" netns "$rx" &&
	ip -n "$tx" link set "$vtx" up && ip -n "$rx" link set "$vrx" up &&
	ip -n "$rx" addr add 198.18.1.1/24 dev "$vrx" ||
	die "cannot create the namespaces $tx and $rx"

say "attach: every source may send 1000 packets/s"
rl attach "$vrx" --default-pps 1k || exit
say "quota: 198.18.64.0/24 gets 200 pps per source and 500 pps for the whole /24"
rl quota set 198.18.64.0/24 --pps 200 --aggregate-pps 500 || exit
say "quota: 198.18.0.9 is allow-listed"
rl quota set 198.18.0.9 --pps unlimited || exit
rl quota list

say "traffic for ${seconds}s from a separate namespace"
cat <<EOF
  198.18.0.1-4     4 sources, 5000 pps each -> each held to 1000 pps
  198.18.64.1-16  16 sources,  250 pps each -> 200 each, 500 for the /24
  198.18.0.9       1 source,  5000 pps      -> allow-listed: all pass
EOF
sleep 2
mac=$(ip -n "$rx" -br link show "$vrx" | awk '{print $3}')
send --dst-mac "$mac" --src 198.18.0.1 --sources 4 --rate 20000 --duration "$seconds"
send --dst-mac "$mac" --src 198.18.64.1 --sources 16 --rate 4000 --duration "$seconds"
send --dst-mac "$mac" --src 198.18.0.9 --rate 5000 --duration "$seconds"

# the live view, redrawn every second while the flood lasts
timeout --foreground -s INT "$seconds" \
	nsenter --net="/run/netns/$rx" "$cli" stats --iface "$vrx" --watch 1
for p in "${bg[@]}"; do wait "$p"; done
bg=()

say "final counters"
rl stats --iface "$vrx" --top 25
pin_dir=$(rl status --json | jq -r .pin_dir)
# Every line printed here fits 80 columns: the pin path, as long as the
# namespace's directory makes it, has a line of its own, ready to copy.
cat <<EOF

Each of 198.18.0.1-4 passed about 1000 packets per second, and the /24
about 500 per second in all, however many of its sources sent;
198.18.0.9 lost nothing. Dropped frames never reached the kernel's
network stack. The same counters are in the pinned maps, under the
network namespace's directory ('xdp-ratelimit status --json' names it
as pin_dir), until the detach below:

  bpftool map dump pinned \\
  $pin_dir/$vrx/counters
EOF
say "detach and clean up"
rl detach "$vrx"
