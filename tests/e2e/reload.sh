# shellcheck shell=bash
# e2e area: reload: the running program swapped for this binary's on the
# pinned maps (bpf_link update) under paced traffic, with nothing passed
# above the quota and nothing dropped below it across the swaps; settings
# that may change take effect, rules, bans and verified sources stay;
# what reload cannot carry (map sizes, another layout) or bad input is
# refused with nothing changed.
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
	local i why=() id0 id1 dp ps=() rcs lo hi reloader
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
	for i in 1 2; do
		dp=$(( ${ps[i]} - ${ps[i - 1]} ))
		[ "$dp" -ge $(( q - 3 * b )) ] && [ "$dp" -le $(( q + 3 * b )) ] ||
			why+=("$dp passed in second $i, want $(( q - 3 * b ))..$(( q + 3 * b ))")
	done
	result reload_under_traffic "${#why[@]}" \
		"${why[*]}; passed at 0.5, 1.5, 2.5 s: ${ps[*]} (sent $n, passed $p, dropped $d)"
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
	reload_refused window 1 "detach" "$vrx" --window 2s
	reload_refused buckets 1 "--buckets" "$vrx" --buckets 5
	reload_refused max_sources 1 "save --iface $vrx" "$vrx" --max-sources 65536
	reload_refused ipv6_prefix 1 "--ipv6-prefix" "$vrx" --ipv6-prefix 56
	reload_refused mode 1 "keeps the mode" "$vrx" --mode generic
	# pins of another layout
	config_bump_layout "$vrx" >/dev/null
	reload_refused old_layout 1 "another map layout" "$vrx"
	rl detach "$vrx" >/dev/null
}
