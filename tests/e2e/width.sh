# shellcheck shell=bash
# e2e area: output width. What the commands print fits 80 columns with the
# longest names (xdp-ratelimit(8), OUTPUT WIDTH): an interface name of 15
# characters (the kernel's longest), IPv6 rules and sources written out in
# full, the longest scope, every limit; each name and rule printed whole.
# attach and reload: attach.sh (attach_output_width); sync:
# tests/sync (output_width). Sourced by tests/e2e/run.sh; `tests/e2e/run.sh
# BUILD_DIR NAME` runs one.

# $long: a name of 15 characters for TAG, which cleanup detaches.
long_name() {	# TAG
	long=$(printf '%.15s' "${id}$1wwwwwwwwwwwwwww")
	rx_ifaces+=("$long")
}

# quota set and del of a scoped IPv6 rule (the scope under the prefix),
# a short one (one line), restore's changes (limits wrapped between
# options), quota list.
test_quota_output_width() {
	local long p=2001:db8:1234:5678:9abc:def0::/96 s=(--proto tcp --dport 10000-65535 --syn)
	local f=/tmp/$id.width.rules out rc problems
	long_name q
	tmpfiles+=("$f")
	ip -n "$rx" link add "$long" type bridge && ip -n "$rx" link set "$long" up &&
		rl attach "$long" --ipv6-prefix 96 >/dev/null ||
		{ result quota_output_width 1 "setup"; return; }
	out=$(rl quota set "$p" "${s[@]}" --pps 1 --ban 1h --iface "$long" 2>&1 &&
		rl quota set "$p" --proto udp --dport 10000-65535 --pps 2 --bps 2M --aggregate-pps 10k \
			--aggregate-bps 100M --new-pps 1000 --new-bps 1M --ban 23h --burst 100 --iface "$long" 2>&1 &&
		rl quota set default --proto tcp --dport 443 --syn --pps 20 --iface "$long" 2>&1 &&
		rl save --iface "$long" 2>&1 >"$f" &&
		sed -i 's/--pps 1 /--pps 4 /; s/--pps 2 /--pps 7 /' "$f" &&
		rl restore --test "$f" 2>&1 && rl restore "$f" 2>&1 &&
		rl quota list --iface "$long" 2>&1 && rl quota list -v --iface "$long" 2>&1 &&
		rl quota del "$p" "${s[@]}" --iface "$long" 2>&1); rc=$?
	problems=$(width_problems "$out" "$long: rule $p" "  tcp dport 10000-65535 syn set" \
		"  udp dport 10000-65535 set" "$long: rule default tcp dport 443 syn set" \
		"  ~ $p tcp dport 10000-65535 syn --pps 4 --ban 1h" "    (was --pps 1 --ban 1h)" \
		"  ~ $p udp dport 10000-65535 --pps 7" "  tcp dport 10000-65535 syn deleted")
	rl detach "$long" >/dev/null
	ip -n "$rx" link del "$long"
	[ "$rc" = 0 ] && [ -z "$problems" ]
	result quota_output_width $? "exit $rc; $problems; printed: $out"
}

# events of an IPv6 source written out in full and of an IPv4 one: a field
# that would pass 80 columns goes on under the row, indented four; the
# notice of new maps in two lines.
test_events_output_width() {
	local long a=2001:db8:1234:5678:9abc:def0:1234:5678 f=/tmp/$id.width.ev p m problems
	long_name e
	tmpfiles+=("$f" "$f.err")
	setup_link "${id}g" "$long" 202 && m=$(mac_of "$long") &&
		rl attach "$long" --ipv6-prefix 128 >/dev/null && rl quota set "$a/128" --pps 5 --iface "$long" >/dev/null &&
		rl quota set 198.18.0.0/15 --pps 5 --iface "$long" >/dev/null ||
		{ result events_output_width 1 "setup"; return; }
	# not a terminal, no COLUMNS: 80
	nsenter --net="/run/netns/$rx" env -u COLUMNS "$cli" events --iface "$long" >"$f" 2>"$f.err" &
	p=$!
	bg+=("$p")
	within 50 grep -qs "^following $long" "$f.err" &&
		send_dev "${id}g" "$m" --src "$a" --count 50 >/dev/null &&
		send_dev "${id}g" "$m" --src 198.18.202.7 --count 50 >/dev/null &&
		within 50 grep -q "^    198.18.0.0/15$" "$f" &&
		rl reload "$long" --max-sources 70000 >/dev/null &&
		within 50 grep -q "^  (a reload or an attach): following them$" "$f.err"
	rl detach "$long" >/dev/null
	within 30 eval '! kill -0 "$p" 2>/dev/null'
	problems=$(width_problems "$(cat "$f" "$f.err")" "[0-9-]* [0-9:.]*  $long  limited" "    $a" "    $a/128" \
		"[0-9-]* [0-9:.]*  $long  limited   198.18.202.7" "    198.18.0.0/15" \
		"xdp-ratelimit: events: $long runs on new maps" "  (a reload or an attach): following them")
	ip -n "$tx" link del "${id}g"
	[ -z "$problems" ]
	result events_output_width $? "$problems; printed: $(cat "$f" "$f.err")"
}

# status: the names of another namespace's attachments wrap onto lines of
# their own.
test_status_output_width() {
	local ns2=${id}y out problems names=() n k
	ip netns add "$ns2" && extra_ns+=("$ns2") || { result status_output_width 1 "namespace"; return; }
	for k in 1 2 3 4; do
		n=$(printf '%.15s' "${id}x${k}wwwwwwwwwwwwwww")
		names+=("$n")
		ip -n "$ns2" link add "$n" type bridge && ip -n "$ns2" link set "$n" up &&
			nsenter --net="/run/netns/$ns2" "$cli" attach "$n" >/dev/null ||
			{ result status_output_width 1 "attach $n there"; return; }
	done
	out=$(env -u COLUMNS nsenter --net="/run/netns/$rx" "$cli" status 2>&1)
	problems=$(width_problems "$out" "in network namespace net:\[[0-9]*\] (not this one): ${names[0]}" \
		"  ${names[1]} ${names[2]} ${names[3]}")
	for n in "${names[@]}"; do nsenter --net="/run/netns/$ns2" "$cli" detach "$n" >/dev/null; done
	[ -z "$problems" ]
	result status_output_width $? "$problems; printed: $out"
}

# An earlier release's pins (the flat layout, /sys/fs/bpf/xdp-ratelimit/IFACE):
# status names them, detach moves them into this namespace's directory,
# saying so in two lines, and detaches.
test_detach_flat_output_width() {
	local long top=/sys/fs/bpf/xdp-ratelimit out rc problems
	long_name l
	tmpdirs+=("$top/$long")	# removed at exit if the test stops short
	ip -n "$rx" link add "$long" type bridge && ip -n "$rx" link set "$long" up &&
		rl attach "$long" >/dev/null && mv "$(pin_dir "$long")" "$top/$long" ||
		{ result detach_flat_output_width 1 "setup"; return; }
	out=$(env -u COLUMNS nsenter --net="/run/netns/$rx" "$cli" status 2>&1 && rl detach "$long" 2>&1); rc=$?
	problems=$(width_problems "$out" "pins of an earlier release ($top/IFACE): $long" \
		"moved the pins of $long from $top" "  into $pins" "detached from $long")
	[ -e "$top/$long" ] && rm -rf "${top:?}/$long"	# not carried: removed
	ip -n "$rx" link del "$long"
	[ "$rc" = 0 ] && [ -z "$problems" ]
	result detach_flat_output_width $? "exit $rc; $problems; printed: $out"
}
