# shellcheck shell=bash
# e2e area: reload: the running program swapped for this binary's on the
# pinned maps (bpf_link update) under paced traffic, with nothing passed
# above the quota and nothing dropped below it across the swaps; settings
# that may change take effect, rules, bans and verified sources stay;
# settings that size the maps (--window, --max-sources, --ipv6-prefix)
# and pins of layout 8 (a fixture built from the last layout-8 commit) go
# to new maps with rules, bans and verified sources carried; what reload
# cannot carry or bad input is refused with nothing changed.
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# What a reload must keep: the rules, the bans, the verified sources.
reload_state() {
	rl quota list --iface "$vrx" --json | jq -c .
	rl ban list --iface "$vrx" --json | jq -c '[.interfaces[0].bans[] | .address + " " + .rule]'
	stats_json | jq -c '.interfaces[0] | [.verified_sources, .sources_tracked // 0]'
}

sleep_until() {	# T0 SECONDS: until SECONDS after T0 (from now)
	sleep "$(awk -v t="$1" -v s="$2" -v n="$(now)" 'BEGIN { d = t + s - n; printf "%.3f", (d > 0 ? d : 0) }')"
}

# 2000 pps from one source for 3 s against --pps 1000 in a 1 s window of
# 10 buckets, reloaded twice while packets pass (about 1.1 s and 2.1 s in:
# at twice the quota, the first half of each second passes and the second
# drops). What passed in all is the quota per second of sending within two
# buckets; sampled 0.5, 1.5 and 2.5 s in, each of those seconds passed the
# quota within three buckets (the samples' timing); what the receiver got
# is what passed, and every frame was judged (passed + dropped = sent):
# nothing passed above the quota and nothing dropped below it.
test_reload_under_traffic() {
	local a=198.18.50.1 f=/tmp/$id.reload rf=/tmp/$id.reloads q=1000 b=100 n p d r t0
	local i why=() id0 id1 dp ps=() ts=() rcs lo hi reloader
	tmpfiles+=("$rf")
	fresh --window 1s --buckets 10 && quota "$a" --pps "$q" ||
		{ result reload_under_traffic 1 "attach"; return; }
	id0=$(xdp_prog_id "$vrx")
	send_bg "$f" --src "$a" --rate 2000 --duration 3
	t0=$(now)
	(
		sleep_until "$t0" 1.1
		rl reload "$vrx" --verified-ttl 5m >/dev/null; echo -n "$? "
		sleep_until "$t0" 2.1
		rl reload "$vrx" >/dev/null; echo "$?"
	) >"$rf" &
	reloader=$!
	for i in 0.5 1.5 2.5; do
		sleep_until "$t0" "$i"
		ps+=("$(src_stat "$a" passed_packets)")
		ts+=("$(awk -v t="$t0" -v n="$(now)" 'BEGIN { printf "%.3f", n - t }')")
	done
	wait "$reloader"
	wait "${bg[-1]}"
	rcs=$(cat "$rf")
	n=$(jq -r .sent "$f")
	settled 30 seen "$a" >/dev/null
	p=$(src_stat "$a" passed_packets) d=$(src_stat "$a" dropped_packets)
	r=$(seen "$a")
	id1=$(xdp_prog_id "$vrx")
	[ "$rcs" = "0 0" ] || why+=("reloads exited $rcs")
	[ -n "$id1" ] && [ "$id1" != "$id0" ] || why+=("program id $id0 -> $id1: not swapped")
	[ "$((p + d))" = "$n" ] || why+=("passed $p + dropped $d != sent $n")
	[ "$r" = "$p" ] || why+=("receiver got $r, stats passed $p (totals: $(stats_json "$vrx" 0 | jq -c .interfaces[0].totals))")
	lo=$(( q * 3 - 2 * b )) hi=$(( q * 3 + 2 * b ))
	[ "$p" -ge "$lo" ] && [ "$p" -le "$hi" ] || why+=("passed $p in 3 s, want $lo..$hi")
	# each second between samples passed the quota within three buckets
	# when the samples were taken on time (at 2000 pps the first half of
	# each second passes); a sample a loaded machine took late spans more
	# than a second, whose passes are q per second it spans within half a
	# second's and three buckets (a window the reload lost would add q)
	for i in 1 2; do
		dp=$(( ${ps[i]} - ${ps[i - 1]} ))
		read -r lo hi < <(awk -v a="${ts[i - 1]}" -v z="${ts[i]}" -v i="$i" -v q="$q" -v b="$b" 'BEGIN {
			late = (a - (i - 0.5)) ^ 2 > 0.0025 || (z - (i + 0.5)) ^ 2 > 0.0025
			d = z - a; slack = late ? q / 2 + 3 * b : 3 * b
			printf "%d %d\n", q * d - slack, q * d + slack }')
		[ "$dp" -ge "$lo" ] && [ "$dp" -le "$hi" ] ||
			why+=("$dp passed between ${ts[i - 1]} and ${ts[i]} s, want $lo..$hi")
	done
	result reload_under_traffic "${#why[@]}" \
		"${why[*]}; passed at ${ts[*]} s: ${ps[*]} (sent $n, passed $p, dropped $d)"
}

# --dry-run and --verified-ttl change on reload and take effect; rules,
# bans and verified sources are the same before and after.
test_reload_settings() {
	local a=198.18.42.7 rule=198.18.42.0/24 before after st out why=()
	fresh --default-pps 10 && quota "$rule" --pps 20 --ban 1m ||
		{ result reload_settings 1 "attach"; return; }
	send_answered "$a" 50 >/dev/null	# verified by the answer, then banned
	before=$(reload_state)
	out=$(rl reload "$vrx" --dry-run --verified-ttl 5m); st=$?
	after=$(reload_state)
	[ "$st" = 0 ] && [[ $out == "reloaded $vrx ("*", dry run" ]] || why+=("exit $st, printed: $out")
	[ "$before" = "$after" ] || why+=("state before: $before; after: $after")
	grep -q "$a $rule" <<<"$before" || why+=("no ban to keep: $before")
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.dry_run, .verified_ttl_ms, .state]')
	[ "$out" = '[true,300000,"ok"]' ] || why+=("status after --dry-run: $out")
	# dry run: 30 from a fresh source all reach the receiver
	send --src 198.18.43.1 --count 30 >/dev/null
	settled 20 seen 198.18.43.1 >/dev/null
	[ "$(seen 198.18.43.1)" = 30 ] || why+=("dry run: $(seen 198.18.43.1) of 30 received")
	out=$(rl reload "$vrx" --no-dry-run); st=$?
	[ "$st" = 0 ] && [[ $out != *"dry run"* ]] || why+=("--no-dry-run: exit $st, printed: $out")
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.dry_run, .verified_ttl_ms]')
	[ "$out" = '[false,300000]' ] || why+=("status after --no-dry-run: $out")
	send --src 198.18.44.1 --count 30 >/dev/null
	[ "$(src_stat 198.18.44.1 passed_packets)" = 10 ] ||
		why+=("after --no-dry-run: $(src_stat 198.18.44.1 passed_packets) of 30 passed, quota 10")
	[ "$(reload_state | head -2)" = "$(head -2 <<<"$before")" ] || why+=("rules or bans changed")
	result reload_settings "${#why[@]}" "${why[*]}"
}

# --default-pps/--default-bps set the default rule's rates as quota set
# default does, in place and onto new maps, and nothing else.
default_rates() {	# the default rule's halves: "PREFIX PPS BPS" each
	rl quota list --iface "$vrx" --json |
		jq -r '.interfaces[0].rules[] | select(.prefix | endswith("/0")) | "\(.prefix) \(.pps) \(.bps)"' | tr '\n' ' '
}
test_reload_default_rule() {
	local why=() out
	fresh --default-pps 10 && quota 198.18.48.0/24 --pps 5 || { result reload_default_rule 1 "attach"; return; }
	out=$(rl reload "$vrx" --default-pps 20 2>&1) || why+=("in place: $out")
	[ "$(default_rates)" = "0.0.0.0/0 20 null ::/0 20 null " ] || why+=("in place: $(default_rates)")
	out=$(rl reload "$vrx" --window 2s --default-bps 1M 2>&1) || why+=("new maps: $out")
	[ "$(default_rates)" = "0.0.0.0/0 20 1000000 ::/0 20 1000000 " ] || why+=("new maps: $(default_rates)")
	rl quota list --iface "$vrx" --json | jq -e '.interfaces[0].rules[] | select(.prefix == "198.18.48.0/24" and .pps == 5)' >/dev/null ||
		why+=("the other rule changed")
	result reload_default_rule "${#why[@]}" "${why[*]}"
}

# --replies-via moves the egress hook: the filter of $vrx goes from $vrx
# to the interfaces named, running the new program, and back; none is
# left behind where it no longer belongs.
reload_hooks() {	# the egress hooks of $vrx in status: "IFACE:running ..."
	rl status --json | jq -r --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.egress_hooks[] | .ifname + ":" + (if .prog_id then "running" else "none" end)] | join(" ")'
}
filters_on() {	# RXDEV: egress filters of rl_egress on it
	ip netns exec "$rx" tc filter show dev "$1" egress 2>/dev/null | grep -c rl_egress
}
test_reload_replies_via() {
	local why=() out st
	fresh --default-pps 10 || { result reload_replies_via 1 "attach"; return; }
	[ "$(reload_hooks)" = "$vrx:running" ] || why+=("before: $(reload_hooks)")
	out=$(rl reload "$vrx" --replies-via "$vrx2,$dummy" 2>&1); st=$?
	[ "$st" = 0 ] || why+=("--replies-via $vrx2,$dummy: exit $st: $out")
	[ "$(reload_hooks)" = "$vrx2:running $dummy:running" ] || why+=("moved: $(reload_hooks)")
	[ "$(filters_on "$vrx")" = 0 ] && [ "$(filters_on "$vrx2")" = 1 ] &&
		[ "$(filters_on "$dummy")" = 1 ] ||
		why+=("filters on $vrx, $vrx2, $dummy: $(filters_on "$vrx") $(filters_on "$vrx2") $(filters_on "$dummy")")
	out=$(rl reload "$vrx" --replies-via "$vrx" 2>&1); st=$?
	[ "$st" = 0 ] && [ "$(reload_hooks)" = "$vrx:running" ] || why+=("back: exit $st, $(reload_hooks)")
	[ "$(filters_on "$vrx")" = 1 ] && [ "$(filters_on "$vrx2")" = 0 ] &&
		[ "$(filters_on "$dummy")" = 0 ] ||
		why+=("filters back on $vrx, $vrx2, $dummy: $(filters_on "$vrx") $(filters_on "$vrx2") $(filters_on "$dummy")")
	[[ $(rl save --iface "$vrx") != *--replies-via* ]] || why+=("save still names --replies-via")
	rl detach "$vrx" >/dev/null
	[ "$(filters_on "$vrx")" = 0 ] || why+=("detach left a filter")
	result reload_replies_via "${#why[@]}" "${why[*]}"
}

# The egress pin names the program the egress filters run after each
# reload (in place, onto new maps, --replies-via), status says so, and a
# reload finishes what one that died before its rename left as egress_next.
egress_pin_follows() {	# WHAT RXDEV...: each filter runs the pinned program
	local what=$1 d pin st
	shift
	pin=$(egress_pin_id)
	[ -n "$pin" ] || { why+=("$what: no egress pin"); return; }
	for d in "$@"; do
		[ "$(egress_filter_ids "$d")" = "$pin" ] ||
			why+=("$what: egress pins $pin, the filter on $d runs '$(egress_filter_ids "$d")'")
	done
	[ -e "$pins/$vrx/egress_next" ] && why+=("$what: egress_next left")
	st=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.egress_pin_prog_id, ([.egress_hooks[].pinned] | all)]')
	[ "$st" = "[$pin,true]" ] || why+=("$what: status says $st")
	[ "$what" = first ] || [ "$pin" != "$last" ] || why+=("$what: still program $pin")
	last=$pin
}
test_reload_egress_pin() {
	local why=() last out
	fresh --default-pps 10 || { result reload_egress_pin 1 "attach"; return; }
	egress_pin_follows first "$vrx"
	rl reload "$vrx" >/dev/null || why+=("reload in place failed")
	egress_pin_follows "in place" "$vrx"
	rl reload "$vrx" --window 2s >/dev/null || why+=("reload onto new maps failed")
	egress_pin_follows "new maps" "$vrx"
	rl reload "$vrx" --replies-via "$vrx2,$dummy" >/dev/null || why+=("--replies-via failed")
	egress_pin_follows "--replies-via" "$vrx2" "$dummy"
	[ -z "$(egress_filter_ids "$vrx")" ] || why+=("--replies-via: a filter left on $vrx")
	# killed after its filters, before its rename: what they run is
	# egress_next too; the next reload moves them back to $vrx
	bpftool prog pin id "$last" "$pins/$vrx/egress_next" || why+=("pin egress_next")
	rl reload "$vrx" --replies-via "$vrx" >/dev/null || why+=("reload back failed")
	egress_pin_follows "after egress_next" "$vrx"
	[ -z "$(egress_filter_ids "$vrx2")$(egress_filter_ids "$dummy")" ] ||
		why+=("back: filters left on $vrx2 or $dummy")
	# attached by a version that pinned none: status says so, reload pins it
	rm -f "$pins/$vrx/egress"
	out=$(rl status --wide | grep "^$vrx ")
	[[ $out == *"$vrx(unpinned)"* ]] || why+=("status without a pin: $out")
	[ "$(rl status --json | jq --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		.egress_pin_prog_id, .egress_hooks[0].pinned' | tr '\n' ' ')" = "null false " ] ||
		why+=("status --json without a pin")
	rl reload "$vrx" >/dev/null || why+=("reload without a pin failed")
	egress_pin_follows "no pin before" "$vrx"
	result reload_egress_pin "${#why[@]}" "${why[*]}"
}

# Refused: exit 1 (not attached, a map size, another layout, another
# mode), 2 (bad values); the running program and its pins untouched.
reload_refused() {	# NAME WANT WORD ARGS...
	local name=$1 want=$2 word=$3 err rc why=() id0 cfg0
	shift 3
	id0=$(xdp_prog_id "$vrx")
	cfg0=$(bpftool -j map dump pinned "$pins/$vrx/config" 2>/dev/null)
	err=$(rl reload "$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" = "$want" ] || why+=("exit $rc, want $want")
	[[ $err == "xdp-ratelimit: reload: "* ]] || why+=("stderr not 'xdp-ratelimit: reload: ...'")
	[[ $err == *"$word"* ]] || why+=("does not say '$word'")
	[ "$(xdp_prog_id "$vrx")" = "$id0" ] || why+=("program swapped")
	[ "$(bpftool -j map dump pinned "$pins/$vrx/config" 2>/dev/null)" = "$cfg0" ] ||
		why+=("config changed")
	result "reload_refused_$name" "${#why[@]}" "${why[*]}: $err"
}
test_reload_refusals() {
	fresh --default-pps 10 --window 1s --max-sources 4096 && quota 198.18.45.0/24 --pps 5 ||
		{ result reload_refusals 1 "attach"; return; }
	reload_refused not_attached 1 "not attached" "$vrx2"
	reload_refused no_such_iface 1 "no interface named" nosuch0
	reload_refused not_attached_bad_value 2 "1s to 24h" "$vrx2" --verified-ttl 500ms
	reload_refused no_iface 2 "name the interface"
	reload_refused ttl_short 2 "1s to 24h" "$vrx" --verified-ttl 500ms
	reload_refused buckets_range 2 "1 to 16" "$vrx" --buckets 17
	reload_refused bad_mode 2 "auto, native or generic" "$vrx" --mode fast
	reload_refused window_short 2 "at least 1ms" "$vrx" --buckets 16 --window 10ms
	reload_refused contradiction 2 "contradict" "$vrx" --dry-run --no-dry-run
	reload_refused mode 1 "keeps the mode" "$vrx" --mode generic
	reload_refused default_budget 2 "--default-pps" "$vrx" --window 60s --default-pps 100M
	# a rule the new settings cannot take: its IPv6 prefix, its budget
	quota 2001:db8:45::/56 --pps 5
	reload_refused rule_v6_prefix 1 "2001:db8:45::/56" "$vrx" --ipv6-prefix 48
	rl quota del 2001:db8:45::/56 --iface "$vrx" >/dev/null
	quota 198.18.46.0/24 --pps 3G
	reload_refused rule_budget 1 "198.18.46.0/24" "$vrx" --window 2s
	rl quota del 198.18.46.0/24 --iface "$vrx" >/dev/null
	# pins of another layout: newer, or older than reload carries
	config_bump_layout "$vrx" >/dev/null
	reload_refused newer_layout 1 "newer version" "$vrx"
	config_set_layout "$vrx" 6 >/dev/null
	reload_refused old_layout 1 "too old to carry" "$vrx"
	rl detach "$vrx" >/dev/null
	# more sources active in the window than a smaller --max-sources keeps
	fresh --window 10s --max-sources 4096 || { result reload_refusals 1 "attach"; return; }
	send --src 198.18.47.1 --sources 40 --count 40 >/dev/null
	reload_refused max_sources_active 1 "40 sources were active" "$vrx" --max-sources 16
	rl detach "$vrx" >/dev/null
}

# What the new maps hold after a reload that builds them: the rules and
# their budgets for the new window, bans, verified sources (and the bloom
# filter rebuilt from them: a verified source stays exempt from a newcomer
# budget), the counters; per-source windows only while the bucket grid
# and --ipv6-prefix are the same.
rule_budget() {	# PREFIX-ADDRESS: pkt_budget of that rule in the pinned rules
	bpftool -j map dump pinned "$pins/$vrx/rules" |
		jq -r --arg a "$1" '[.[] | .formatted.value | select(.flags % 2 == 1) |
			select((.addr[0:4] | map(tostring) | join(".")) == $a) | .pkt_budget][0]'
}
test_reload_new_maps() {
	local a=198.18.52.7 rule=198.18.52.0/24 v=198.18.53.9 before after out st why=() id0 tot0
	fresh --default-pps 10 --window 1s && quota "$rule" --pps 20 --ban 1m &&
		quota 198.18.53.0/24 --pps 1000 --new-pps 1 ||
		{ result reload_new_maps 1 "attach"; return; }
	send_answered "$a" 50 >/dev/null	# verified by the answer, then banned
	send_answered "$v" 1 >/dev/null	# verified: not a newcomer
	before=$(reload_state)
	id0=$(xdp_prog_id "$vrx") tot0=$(total passed_packets)
	[ "$(rule_budget 198.18.52.0)" = 20 ] || why+=("budget before: $(rule_budget 198.18.52.0)")
	# a window longer than the test's steps take on a loaded machine: the
	# carried window below must not slide away under them
	out=$(rl reload "$vrx" --window 20s --max-sources 2048 2>&1); st=$?
	after=$(reload_state)
	[ "$st" = 0 ] && [[ $out == *"new maps: carried 4 rules, 1 bans, 2 verified sources,"$'\n'"  not the sources' windows"* ]] ||
		why+=("exit $st, printed: $out")
	[ "$(xdp_prog_id "$vrx")" != "$id0" ] || why+=("program not swapped")
	[ "$(head -2 <<<"$before")" = "$(head -2 <<<"$after")" ] || why+=("rules or bans: $before -> $after")
	[[ $(tail -1 <<<"$after") == "[2,"* ]] || why+=("verified after: $(tail -1 <<<"$after")")
	[ "$(rule_budget 198.18.52.0)" = 400 ] || why+=("budget for 20s: $(rule_budget 198.18.52.0), want 400")
	[ "$(total passed_packets)" -ge "$tot0" ] || why+=("totals went back: $tot0 -> $(total passed_packets)")
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.window_ms, .max_sources, .state]')
	[ "$out" = '[20000,2048,"ok"]' ] || why+=("status: $out")
	# the ban holds, a verified source is no newcomer (1 pps), a new one is
	send --src "$a" --count 5 >/dev/null
	send --src "$v" --count 20 >/dev/null
	send --src 198.18.53.10 --count 40 >/dev/null
	[ "$(src_stat "$a" passed_packets)" = 0 ] || why+=("banned source passed $(src_stat "$a" passed_packets)")
	[ "$(src_stat "$v" passed_packets)" = 20 ] || why+=("verified source passed $(src_stat "$v" passed_packets) of 20")
	[ "$(src_stat 198.18.53.10 passed_packets)" = 20 ] ||
		why+=("newcomer passed $(src_stat 198.18.53.10 passed_packets) of 40, want 20 (--new-pps 1 in 20 s)")
	# --max-sources alone keeps the sources' windows: 200 of 200 used
	send --src 198.18.54.1 --count 400 >/dev/null
	out=$(rl reload "$vrx" --max-sources 4096 2>&1); st=$?
	[ "$st" = 0 ] && [[ $out == *$'\n'"  the sources' windows and counters"$'\n'* ]] ||
		why+=("--max-sources: exit $st, $out")
	[ "$(src_stat 198.18.54.1 passed_packets)" = 200 ] ||
		why+=("source's counters after --max-sources: passed $(src_stat 198.18.54.1 passed_packets), want 200")
	send --src 198.18.54.1 --count 10 >/dev/null
	[ "$(src_stat 198.18.54.1 passed_packets)" = 200 ] ||
		why+=("source's window not carried: passed $(src_stat 198.18.54.1 passed_packets) after 10 more")
	# a shorter --ipv6-prefix re-keys the IPv6 ban
	quota 2001:db8:52::/48 --pps 20 --ban 1m
	send_answered 2001:db8:52:1::7 500 >/dev/null	# over 400 in 20 s
	out=$(rl reload "$vrx" --ipv6-prefix 48 2>&1); st=$?
	[ "$st" = 0 ] || why+=("--ipv6-prefix 48: exit $st, $out")
	rl ban list --iface "$vrx" --json | jq -e '.interfaces[0].bans[] | select(.address == "2001:db8:52::/48")' >/dev/null ||
		why+=("IPv6 ban not re-keyed to /48: $(rl ban list --iface "$vrx" --json | jq -c .interfaces[0].bans)")
	result reload_new_maps "${#why[@]}" "${why[*]}"
	rl detach "$vrx" >/dev/null
}

# COUNT IPv4 sources from FIRST verified by the handshakes of
# tests/gen/answers.py (the host's SYN-ACKs, the peers' ACKs).
verify_sources() {	# FIRST COUNT
	in_rx python3 "$here/../gen/answers.py" "$vrx" 198.19.0.1 "$1" "$2" &&
		in_tx python3 "$here/../gen/answers.py" --peer-acks "$vtx" "$mac" \
			198.19.0.1 "$1" "$2"
}
verified_are() { [ "$(stats_json "$vrx" 0 | jq -r .interfaces[0].verified_sources)" = "$1" ]; }
# The attachment as a refused reload must leave it: the program, every
# pin (map ids, no staging directory left), rules, bans, verified sources.
attachment_state() {
	local f
	xdp_prog_id "$vrx"
	ls "$pins"
	for f in "$pins/$vrx"/*; do
		echo "${f##*/} $(bpftool -j map show pinned "$f" 2>/dev/null | jq -r .id)"
	done
	reload_state
}

# A reload onto new maps that would lose a ban in force or a verification
# that holds is refused, exit 1, naming how many and how to go on, with
# nothing changed: IPv6 keys under a longer --ipv6-prefix, more verified
# sources than a smaller --max-sources keeps. A shorter prefix merges
# them and carries.
test_reload_refuses_loss() {
	local b6=2001:db8:58:1::7 v6=2001:db8:58:2::9 before out st why=()
	fresh --window 20s --max-sources 64 &&
		quota 2001:db8:58::/48 --pps 20 --ban 1m &&
		quota 198.18.58.0/24 --pps 1000 ||
		{ result reload_refuses_loss 1 "attach"; return; }
	send_answered "$b6" 500 >/dev/null	# verified, then over 400 in 20 s: banned
	send_answered "$v6" 1 >/dev/null	# verified
	verify_sources 198.18.58.1 18 || why+=("cannot send the handshakes")
	within 30 verified_are 20 || why+=("verified before: $(reload_state | tail -1), want 20")
	rl ban list --iface "$vrx" --json | jq -e --arg a "2001:db8:58:1::/64" \
		'.interfaces[0].bans[] | select(.address == $a)' >/dev/null ||
		why+=("$b6 not banned: $(rl ban list --iface "$vrx" --json | jq -c .interfaces[0].bans)")
	before=$(attachment_state)
	out=$(rl reload "$vrx" --ipv6-prefix 128 2>&1 >/dev/null); st=$?
	[ "$st" = 1 ] || why+=("--ipv6-prefix 128: exit $st, want 1")
	[[ $out == "xdp-ratelimit: reload: a longer --ipv6-prefix (/128, from /64) would lose 1 IPv6 bans and 2 verified IPv6 sources"*"; nothing changed" ]] ||
		why+=("--ipv6-prefix 128 said: $out")
	[[ $out == *"xdp-ratelimit detach $vrx"* ]] || why+=("no way out named: $out")
	[ "$(attachment_state)" = "$before" ] ||
		why+=("--ipv6-prefix 128 changed: $before -> $(attachment_state)")
	# 20 verified, 16 kept: refused before the active sources are weighed
	out=$(rl reload "$vrx" --max-sources 16 2>&1 >/dev/null); st=$?
	[ "$st" = 1 ] || why+=("--max-sources 16: exit $st, want 1")
	[[ $out == *"20 sources are verified, more than --max-sources 16 would keep: give --max-sources 20 or more"* ]] ||
		why+=("--max-sources 16 said: $out")
	[ "$(attachment_state)" = "$before" ] ||
		why+=("--max-sources 16 changed: $before -> $(attachment_state)")
	# a shorter prefix merges the two IPv6 sources into one /48, the ban on it
	out=$(rl reload "$vrx" --ipv6-prefix 48 2>&1); st=$?
	[ "$st" = 0 ] && [[ $out == *"carried 2 rules, 1 bans, 19 verified sources"* ]] ||
		why+=("--ipv6-prefix 48: exit $st, $out")
	rl ban list --iface "$vrx" --json | jq -e '.interfaces[0].bans[] | select(.address == "2001:db8:58::/48")' >/dev/null ||
		why+=("IPv6 ban not re-keyed to /48: $(rl ban list --iface "$vrx" --json | jq -c .interfaces[0].bans)")
	verified_are 19 || why+=("verified after /48: $(reload_state | tail -1), want 19")
	result reload_refuses_loss "${#why[@]}" "${why[*]}"
	rl detach "$vrx" >/dev/null
}

# A source whose `verified` entry is gone (evicted, or not carried: a
# reload keeps the most recently answered up to --max-sources) while its
# entry, carried, still holds the verification it read (until the TTL):
# the new bloom filter is told of it, so that a full newcomer budget,
# refusing before the source is looked up (xdp-ratelimit(8), "Newcomer
# budget"), does not refuse it: judged as before the reload, verified.
test_reload_carried_verification() {
	local a=198.18.57.1 out st why=()
	fresh --window 20s --buckets 1 --max-sources 64 &&
		quota 198.18.57.0/24 --pps 1000 --new-pps 1 ||
		{ result reload_carried_verification 1 "attach"; return; }
	send_answered "$a" 1 >/dev/null
	# its entry reads the verification on CPU 0, which the packets after
	# the reload come in on too (a CPU's copy: another reads `verified`)
	send --src "$a" --count 2 --cpu 0 >/dev/null
	bpftool map delete pinned "$pins/$vrx/verified" \
		key hex 00 00 00 00 00 00 00 00 00 00 ff ff c6 12 39 01 ||
		why+=("cannot delete the verified entry")
	out=$(rl reload "$vrx" --max-sources 32 2>&1); st=$?
	[ "$st" = 0 ] && [[ $out == *" 0 verified sources,"$'\n'"  the sources' windows and counters"$'\n'* ]] ||
		why+=("exit $st, printed: $out")
	# --new-pps 1 in 20 s: 20 newcomer packets, the budget then known full
	# on CPU 0
	[ "$(send --src 198.18.57.200 --count 30 --cpu 0)" = 30 ] || why+=("newcomer flood not sent")
	[ "$(src_stat 198.18.57.200 dropped_packets)" = 10 ] ||
		why+=("newcomer budget: dropped $(src_stat 198.18.57.200 dropped_packets) of 30, want 10")
	send --src "$a" --count 5 --cpu 0 >/dev/null
	[ "$(src_stat "$a" passed_packets)" = 8 ] ||
		why+=("the carried verified source passed $(src_stat "$a" passed_packets) of 8")
	result reload_carried_verification "${#why[@]}" "${why[*]}"
	rl detach "$vrx" >/dev/null
}

# A new --window under paced traffic: 2000 pps from one source against
# --pps 1000 in a 1 s window of 10 buckets, reloaded about 1.1 s in to a
# 2 s window, the sender stopped 0.6 s after the reload returned (however
# long it took). The source starts a fresh window in the new maps (its
# budget now 2000 per 2 s): of what the new program judged it passed up
# to 2000 (within two of its buckets) and dropped the rest; the old one
# passed its quota per second of what it judged (at twice the quota, the
# first half of each second, within two buckets); the receiver got
# exactly what both passed, and every frame was judged by one of them.
# The rule and a ban made before stay.
test_reload_window_under_traffic() {
	local a=198.18.55.1 ban=198.18.56.7 f=/tmp/$id.rwindow rf=/tmp/$id.rwindow.rc
	local q=1000 b1=100 b2=200 why=() t0 rules0 n r p d pold jold want out
	tmpfiles+=("$rf")
	fresh --window 1s --buckets 10 && quota "$a" --pps "$q" &&
		quota 198.18.56.0/24 --pps 10 --ban 1m ||
		{ result reload_window_under_traffic 1 "attach"; return; }
	send_answered "$ban" 30 >/dev/null
	rules0=$(reload_state | head -2)
	# the sender runs until 0.6 s after the reload returned, however long
	# the reload takes on a loaded machine (the duration is a backstop)
	send_bg "$f" --src "$a" --rate 2000 --duration 30
	t0=$(now)
	sleep_until "$t0" 1.1
	rl reload "$vrx" --window 2s >/dev/null 2>&1; echo "$?" >"$rf"
	sleep_until "$(now)" 0.6
	kill -TERM "${bg[-1]}"
	wait "${bg[-1]}"
	n=$(jq -r .sent "$f")
	settled 30 seen "$a" >/dev/null
	r=$(seen "$a") p=$(src_stat "$a" passed_packets) d=$(src_stat "$a" dropped_packets)
	pold=$((r - p)) jold=$((n - p - d))
	[ "$(cat "$rf")" = 0 ] || why+=("reload exited $(cat "$rf")")
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | [.window_ms, .state]')
	[ "$out" = '[2000,"ok"]' ] || why+=("status: $out")
	[ "$(reload_state | head -2)" = "$rules0" ] || why+=("rules or bans: $rules0 -> $(reload_state | head -2)")
	grep -q "$ban 198.18.56.0/24" <<<"$rules0" || why+=("no ban to keep: $rules0")
	want=$(( p + d < 2 * q ? p + d : 2 * q ))
	[ "$p" -ge $((want - 2 * b2)) ] && [ "$p" -le $((want + 2 * b2)) ] ||
		why+=("the new program passed $p of $((p + d)), want $((want - 2 * b2))..$((want + 2 * b2))")
	# beyond its budget it drops (a slow reload, as under the sanitizers,
	# may leave it less than that to judge)
	[ "$((p + d))" -gt 0 ] || why+=("the new program judged nothing before the sender ended")
	[ "$((p + d))" -le $((2 * q + 2 * b2)) ] || [ "$d" -gt 0 ] || why+=("the new program dropped nothing")
	# the old one: q per started second of what it judged at 2000 pps
	want=$(( (jold + 1999) / 2000 * q ))
	[ "$jold" -ge 1000 ] && [ "$pold" -ge $((q - b1)) ] && [ "$pold" -le $((want + 2 * b1)) ] ||
		why+=("the old program passed $pold of $jold judged, want $((q - b1))..$((want + 2 * b1))")
	result reload_window_under_traffic "${#why[@]}" \
		"${why[*]} (sent $n, received $r, new program passed $p dropped $d)"
}

# Pins written by the previous layout (8): a fixture CLI built from the
# last layout-8 commit attaches and sets rules and bans; this one's reload
# migrates them in place (nothing detached): rules, bans and verified
# sources are kept, the sources' windows too (same settings), and the
# program enforces on, counting per rule from then on (layout 8 had no
# rule counters).
layout8_commit=81f05e8
test_reload_from_layout8() {
	local t old a=198.18.57.7 rule=198.18.57.0/24 w=198.18.58.1 why=() out st rules0 bans0 id0 pa
	t=$(mktemp -d "/tmp/$id.layout8.XXXXXX") || { result reload_from_layout8 1 "mktemp"; return; }
	tmpdirs+=("$t")
	# the fixture's own plain build, whatever `make SANITIZE=1 test`
	# passes down to sub-makes
	if ! git -C "$here/../.." archive "$layout8_commit" 2>/dev/null | tar -x -C "$t" ||
		! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u SANITIZE -u OUTPUT \
			make -C "$t" -j2 build/xdp-ratelimit >"$t/make.log" 2>&1; then
		result reload_from_layout8 1 "cannot build the layout-8 fixture from $layout8_commit (the clone needs that commit: a full clone): $(tail -3 "$t/make.log" 2>/dev/null)"
		return
	fi
	old=$t/build/xdp-ratelimit
	[ -e "$pins/$vrx" ] && rl detach "$vrx" >/dev/null
	# a 60 s window: longer than the test's steps take on a loaded machine
	in_rx "$old" attach "$vrx" --default-pps 1 --window 60s >/dev/null &&
		in_rx "$old" quota set "$rule" --pps 1 --ban 1m --iface "$vrx" >/dev/null ||
		{ result reload_from_layout8 1 "the layout-8 CLI did not attach"; return; }
	# the host's ACK: what layout 8 took as proof
	in_rx python3 "$here/../gen/answers.py" --old-proof "$vrx" 198.19.0.1 "$a" 1 &&
		send_answered "$a" 100 >/dev/null
	send --src "$w" --count 90 >/dev/null		# its window: 60 of 60 used (1 pps in 60 s)
	rules0=$(in_rx "$old" quota list --iface "$vrx" --json | jq -c .interfaces[0].rules)
	bans0=$(in_rx "$old" ban list --iface "$vrx" --json | jq -c '[.interfaces[0].bans[] | .address + " " + .rule]')
	id0=$(xdp_prog_id "$vrx")
	out=$(rl quota list --iface "$vrx" 2>&1) && why+=("this CLI read layout-8 pins")
	[[ $out == *"'xdp-ratelimit reload $vrx' carries it over"* ]] || why+=("quota list does not point to reload: $out")
	out=$(rl reload "$vrx" 2>&1); st=$?
	[ "$st" = 0 ] && [[ $out == *"pins of layout 8 migrated to layout 15"* ]] || why+=("exit $st, printed: $out")
	# layout 8 kept no CPUs that wrote windows: every possible one is read
	out=$(bpftool -j map dump pinned "$pins/$vrx/cpus" | jq -c '.[0].formatted.value.seen')
	local possible last
	possible=$(cat /sys/devices/system/cpu/possible)
	last=${possible##*[-,]}
	[ "$last" -ge 63 ] || [ "$out" = "[$(( (1 << (last + 1)) - 1 )),0,0,0]" ] ||
		why+=("cpus after a migration: $out, want every possible CPU ($possible)")
	[ "$(xdp_prog_id "$vrx")" != "$id0" ] || why+=("program not swapped")
	# the rules as layout 8 had them, layout 12's syn_cookies off; layout
	# 9's counters start at 0
	now_rules() { rl quota list --iface "$vrx" --json |
		jq -c '.interfaces[0].rules | map(with_entries(select(.key != "syn_cookies")))'; }
	[ "$(now_rules)" = "$rules0" ] &&
		[ "$(rl quota list --iface "$vrx" --json |
			jq '[.interfaces[0].rules[] | .syn_cookies | select(. != false)] | length')" = 0 ] &&
		[ "$(rl quota list -v --iface "$vrx" --json |
			jq '[.interfaces[0].rules[] | .passed_packets, .dropped_packets] | add')" = 0 ] ||
		why+=("rules: $rules0 -> $(rl quota list --iface "$vrx" --json | jq -c .interfaces[0].rules)")
	[ "$(rl ban list --iface "$vrx" --json | jq -c '[.interfaces[0].bans[] | .address + " " + .rule]')" = "$bans0" ] &&
		[[ $bans0 == *"$a $rule"* ]] || why+=("bans: $bans0 -> $(rl ban list --iface "$vrx" --json | jq -c .interfaces[0].bans)")
	[ "$(stats_json | jq '.interfaces[0].verified_sources')" -ge 1 ] || why+=("no verified source carried")
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | [.window_ms, .state]')
	[ "$out" = '[60000,"ok"]' ] || why+=("status: $out")
	# enforcement goes on, with the windows and counters carried: no more
	# for $w (60 passed of its 90 before), 60 for a new source, nothing
	# for the banned one
	pa=$(src_stat "$a" passed_packets)
	[ "$(src_stat "$w" passed_packets)" = 60 ] || why+=("$w: passed $(src_stat "$w" passed_packets) before, want 60 (counters carried)")
	send --src "$w" --count 10 >/dev/null
	send --src 198.18.58.2 --count 90 >/dev/null
	send --src "$a" --count 10 >/dev/null
	[ "$(src_stat "$w" passed_packets)" = 60 ] || why+=("$w passed $(src_stat "$w" passed_packets), want 60 (window carried)")
	[ "$(src_stat 198.18.58.2 passed_packets)" = 60 ] || why+=("new source passed $(src_stat 198.18.58.2 passed_packets) of 90")
	[ "$(src_stat "$a" passed_packets)" = "$pa" ] || why+=("banned source passed $(src_stat "$a" passed_packets), $pa before")
	# per rule: the default judged $w's 10 (dropped) and the new source's
	# 90 (60 passed); the banned source's drops are the ban's
	out=$(rl quota list -v --iface "$vrx" --json | jq -c '[.interfaces[0].rules[] |
		[.prefix, .passed_packets, .dropped_packets]]')
	[ "$out" = '[["0.0.0.0/0",60,40],["'"$rule"'",0,0],["::/0",0,0]]' ] ||
		why+=("rule counters after the migration: $out")
	rl quota set "$rule" --pps 30 --iface "$vrx" >/dev/null || why+=("quota set after the migration failed")
	result reload_from_layout8 "${#why[@]}" "${why[*]}"
	rl detach "$vrx" >/dev/null
}
