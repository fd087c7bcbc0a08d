# shellcheck shell=sh
# Sourced by a guest script of tests/vm (after guest_init): xdp-ratelimit
# beside Debian's xdp-filter on one veth under libxdp's dispatcher, in both
# attach orders. Both enforce (a port xdp-filter blocks stays blocked, a
# source over its quota is limited), detaching either leaves the other
# working, and `xdp-loader status` and `xdp-ratelimit status` list the
# same programs; reload swaps xdp-ratelimit's program under paced traffic,
# in place and onto new maps, and completes or undoes a killed one. Every
# wait is bounded and checked.

mtx=/run/netns/vmmtx mrx=/run/netns/vmmrx mdev=vmmrxb mmac=02:00:00:00:00:12
mrx_() { nsenter --net=$mrx "$@"; }
# The pin directory of $mrx's namespace (xdp-ratelimit(8), PINS)
P=/sys/fs/bpf/xdp-ratelimit
pins_here() { mrx_ xdp-ratelimit status --json 2>/dev/null | jqjson -r .pin_dir; }
mtx_() { nsenter --net=$mtx "$@"; }

multi_cleanup() {
	mrx_ xdp-ratelimit detach $mdev >/dev/null 2>&1
	mrx_ xdp-filter unload $mdev >/dev/null 2>&1
	iproute2 netns del vmmtx 2>/dev/null
	iproute2 netns del vmmrx 2>/dev/null
}
trap multi_cleanup EXIT

# A UDP frame from 198.18.0.SRC to 198.18.1.1 port DPORT (60 bytes, its
# IPv4 checksum computed): trafficgen sends only to port 9 otherwise.
frame() {	# SRC DPORT
	local s
	s=$((0x4500 + 0x002e + 0x4011 + 0xc612 + $1 + 0xc612 + 0x0101))
	s=$(((s & 0xffff) + (s >> 16)))
	s=$(((s & 0xffff) + (s >> 16)))
	printf '0200000000120200000000110800'
	printf '4500002e00000000' && printf '4011%04x' $((~s & 0xffff))
	printf 'c61200%02xc6120101' "$1"
	printf '2328%04x001a0000' "$2"
	printf '%036d\n' 0
}

send() {	# SRC COUNT [DPORT]: frames from 198.18.0.SRC
	if [ -n "${3:-}" ]; then
		mtx_ trafficgen --dev vmmtxa --hex "$(frame "$1" "$3")" --count "$2" >/dev/null 2>&1
	else
		mtx_ trafficgen --dev vmmtxa --dst-mac $mmac --src "198.18.0.$1" \
			--count "$2" >/dev/null 2>&1
	fi
}

# Frames of 198.18.0.N that reached the stack after XDP (nftables).
seen() {	# N
	mrx_ nftables -j list counter netdev vmm "c$1" 2>/dev/null |
		jqjson '.nftables[] | select(.counter) | .counter.packets'
}

# Waits, at most 10 s, until seen N is WANT; prints what it is then.
seen_is() {	# N WANT
	local i=0 v
	while :; do
		v=$(seen "$1")
		[ "$v" = "$2" ] || [ $i -ge 100 ] && break
		i=$((i + 1))
		sleep 0.1
	done
	echo "$v"
}

# seen N once it stops moving (at most 10 s).
settled_seen() {	# N
	local i=0 v w
	v=$(seen "$1")
	while [ $i -lt 20 ]; do
		sleep 0.5
		w=$(seen "$1")
		[ "$w" = "$v" ] && break
		v=$w i=$((i + 1))
	done
	echo "$v"
}

# The programs on the veth as "PRIO NAME ID ACTIONS" lines, sorted, by
# xdp-loader and by xdp-ratelimit status --json.
loader_progs() {
	mrx_ xdp-loader status $mdev 2>/dev/null |
		awk '$1 == "=>" { print $2, $3, $4, $6 }' | sort
}
rl_progs() {
	mrx_ xdp-ratelimit status --json 2>/dev/null | jqjson -r \
		".interfaces[] | select(.ifname == \"$mdev\") | .programs[] |
		 \"\(.priority) \(.name) \(.id) \(.chain_actions | join(\",\"))\"" | sort
}

# TAG NAMES: both tools list the same programs, of these names.
agree() {	# TAG NAME...
	local tag=$1 l r names
	shift
	l=$(loader_progs) r=$(rl_progs)
	names=$(echo "$l" | awk '{ print $2 }' | sort | tr '\n' ' ')
	[ -n "$l" ] && [ "$l" = "$r" ] &&
		[ "$names" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ]
	result "multi/$tag/status_agree" $? "xdp-loader: [$l] xdp-ratelimit: [$r]"
}

rl_attach() {	# TAG
	mrx_ xdp-ratelimit attach $mdev --window 10s >/tmp/m.log 2>&1 &&
		mrx_ xdp-ratelimit quota set default --pps 10 >>/tmp/m.log 2>&1 &&
		grep -q "libxdp dispatcher, priority 20" /tmp/m.log
	result "multi/$1/ratelimit_attach" $? "$(cat /tmp/m.log)"
}

filter_load() {	# TAG
	mrx_ xdp-filter load $mdev -m native >/tmp/m.log 2>&1 &&
		mrx_ xdp-filter port 7777 >>/tmp/m.log 2>&1
	result "multi/$1/filter_load" $? "$(cat /tmp/m.log)"
}

# TAG Q B C: source Q sends 300 frames (100 within its quota), B 20 to
# the blocked port 7777, then C 5 to port 9 (all within quota; the veth
# delivers in order, so once C's have reached the stack, B's have been
# judged).
both_enforce() {	# TAG Q B C
	local q b c
	send "$2" 300 && send "$3" 20 7777 && send "$4" 5
	result "multi/$1/sent" $? "trafficgen failed"
	q=$(seen_is "$2" 100) c=$(seen_is "$4" 5) b=$(seen "$3")
	[ "$q" = 100 ]
	result "multi/$1/quota_limits" $? "198.18.0.$2 sent 300, $q reached the stack, want 100"
	[ "$c" = 5 ] && [ "$b" = 0 ]
	result "multi/$1/port_blocked" $? "to port 7777: $b of 20 reached the stack (want 0); to port 9: $c of 5 (want 5)"
}

# TAG FIRST SECOND Q B C: attach with FIRST, then SECOND; both listed
# alike, both enforce (both_enforce Q B C).
both_attached() {
	$2 "$1"
	$3 "$1"
	agree "$1" xdp_ratelimit xdpfilt_alw_all
	both_enforce "$1" "$4" "$5" "$6"
}

iproute2 netns add vmmtx && iproute2 netns add vmmrx &&
	iproute2 link add vmmtxa address 02:00:00:00:00:11 type veth \
		peer name $mdev address $mmac &&
	iproute2 link set vmmtxa netns vmmtx && iproute2 link set $mdev netns vmmrx &&
	mtx_ iproute2 link set vmmtxa up && mrx_ iproute2 link set $mdev up &&
	mrx_ nftables -f - >/tmp/m.log 2>&1 <<NFT
table netdev vmm {
	counter c1 {}
	counter c2 {}
	counter c3 {}
	counter c4 {}
	counter c5 {}
	counter c6 {}
	counter c7 {}
	counter c8 {}
	counter c9 {}
	counter c10 {}
	counter c11 {}
	counter c12 {}
	counter c13 {}
	counter c14 {}
	counter c15 {}
	counter c16 {}
	counter c17 {}
	counter c18 {}
	counter c19 {}
	counter c20 {}
	counter c21 {}
	counter c22 {}
	counter c23 {}
	counter c24 {}
	chain in {
		type filter hook ingress device "$mdev" priority 0; policy accept;
		ip saddr vmap { 198.18.0.1 : jump n1, 198.18.0.2 : jump n2,
			198.18.0.3 : jump n3, 198.18.0.4 : jump n4, 198.18.0.5 : jump n5,
			198.18.0.6 : jump n6, 198.18.0.7 : jump n7, 198.18.0.8 : jump n8,
			198.18.0.9 : jump n9, 198.18.0.10 : jump n10,
			198.18.0.11 : jump n11, 198.18.0.12 : jump n12,
			198.18.0.13 : jump n13, 198.18.0.14 : jump n14,
			198.18.0.15 : jump n15, 198.18.0.16 : jump n16,
			198.18.0.17 : jump n17, 198.18.0.18 : jump n18,
			198.18.0.19 : jump n19, 198.18.0.20 : jump n20,
			198.18.0.21 : jump n21, 198.18.0.22 : jump n22,
			198.18.0.23 : jump n23, 198.18.0.24 : jump n24 }
	}
	chain n1 { counter name c1; }
	chain n2 { counter name c2; }
	chain n3 { counter name c3; }
	chain n4 { counter name c4; }
	chain n5 { counter name c5; }
	chain n6 { counter name c6; }
	chain n7 { counter name c7; }
	chain n8 { counter name c8; }
	chain n9 { counter name c9; }
	chain n10 { counter name c10; }
	chain n11 { counter name c11; }
	chain n12 { counter name c12; }
	chain n13 { counter name c13; }
	chain n14 { counter name c14; }
	chain n15 { counter name c15; }
	chain n16 { counter name c16; }
	chain n17 { counter name c17; }
	chain n18 { counter name c18; }
	chain n19 { counter name c19; }
	chain n20 { counter name c20; }
	chain n21 { counter name c21; }
	chain n22 { counter name c22; }
	chain n23 { counter name c23; }
	chain n24 { counter name c24; }
}
NFT
result multi/setup $? "$(cat /tmp/m.log)"

# The program our stub tail-calls (status --json), and the stub's id.
slot_id() {	# [CLI]: the program's id and its slot's, as CLI's status says
	mrx_ "${1:-xdp-ratelimit}" status --json 2>/dev/null | jqjson -r \
		".interfaces[] | select(.ifname == \"$mdev\") | .programs[] |
		 select(.name == \"xdp_ratelimit\") | \"\(.id) \(.tail_call_id)\""
}

# ---- xdp-ratelimit first, then xdp-filter joins -------------------------------------
both_attached rl_first rl_attach filter_load 1 2 3

# ---- reload under the dispatcher: the slot's program swapped, nothing else -----------
# the stub stays (same id, same place), the program behind it is new; a
# source sending across the swap gets its quota, no more, and its window
# carries over (more frames right after are still over quota: 10 s
# window); xdp-filter still blocks
ids0=$(slot_id) progs0=$(loader_progs)
send 11 300 & sender=$!
mrx_ xdp-ratelimit reload $mdev --verified-ttl 2m >/tmp/m.log 2>&1; rc=$?
wait $sender
ids1=$(slot_id)
[ $rc = 0 ] && [ "${ids0%% *}" = "${ids1%% *}" ] && [ "${ids0#* }" != "${ids1#* }" ] &&
	[ "${ids1#* }" != null ] && [ "$(loader_progs)" = "$progs0" ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].verified_ttl_ms')" = 120000 ]
result multi/reload/swapped $? "exit $rc: $(cat /tmp/m.log); stub and slot ids [$ids0] -> [$ids1]; xdp-loader [$progs0] -> [$(loader_progs)]"
agree reload xdp_ratelimit xdpfilt_alw_all
n11=$(seen_is 11 100)
send 11 50 && send 12 20 7777 && send 13 5
n13=$(seen_is 13 5) n11b=$(seen 11) n12=$(seen 12)
[ "$n11" = 100 ] && [ "$n11b" = 100 ]
result multi/reload/quota_carried $? "198.18.0.11 sent 300 across the swap: $n11 reached (want 100); 50 more after it: $n11b in all (want 100)"
[ "$n12" = 0 ] && [ "$n13" = 5 ]
result multi/reload/port_still_blocked $? "to port 7777: $n12 of 20 reached (want 0); to port 9: $n13 of 5 (want 5)"
# paced senders across a reload: 198.18.0.15 at 5 pps (below its 10)
# loses nothing, 198.18.0.16 at 40 pps for 5 s (200 frames, within one
# 10 s window) gets exactly its 100; the reload runs once both are seen
# A paced sender stays on CPU 1: the receiving XDP hook runs on the
# sending CPU, and a source that hops CPUs may fall short of its budget by
# an idle CPU's lease (doc/design/cpus.md "Idle leases"), which is not what these
# tests count.
paced() {	# SRC PPS SECONDS
	mtx_ trafficgen --dev vmmtxa --dst-mac $mmac --src "198.18.0.$1" \
		--rate "$2" --duration "$3" --cpu 1 >/dev/null 2>&1
}
paced 15 5 6 & p15=$!
paced 16 40 5 & p16=$!
i=0
while { [ "$(seen 15)" -lt 3 ] 2>/dev/null || [ "$(seen 16)" -lt 20 ] 2>/dev/null; } && [ $i -lt 100 ]; do
	i=$((i + 1)); sleep 0.1
done
mrx_ xdp-ratelimit reload $mdev >/tmp/m.log 2>&1; rc=$?
mid15=$(seen 15) mid16=$(seen 16)
wait $p15 $p16
n15=$(settled_seen 15) n16=$(settled_seen 16)
[ $rc = 0 ] && [ "$n15" = 30 ]
result multi/reload/paced_below_quota $? "exit $rc $(cat /tmp/m.log); 198.18.0.15 sent 30 at 5 pps, $mid15 seen at the reload, $n15 in all (want 30)"
[ $rc = 0 ] && [ "$n16" = 100 ]
result multi/reload/paced_above_quota $? "198.18.0.16 sent 200 at 40 pps, $mid16 seen at the reload, $n16 in all (want 100)"
# a dry run by reload: 198.18.0.1 (over quota, or within a slid window)
# passes all
mrx_ xdp-ratelimit reload $mdev --dry-run >/tmp/m.log 2>&1; rc=$?
send 1 50
n1=$(seen_is 1 150)
[ $rc = 0 ] && [ "$n1" = 150 ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].dry_run')" = true ]
result multi/reload/dry_run $? "exit $rc: $(cat /tmp/m.log); 198.18.0.1: $n1 reached (want 150)"
mrx_ xdp-ratelimit reload $mdev --no-dry-run >/tmp/m.log 2>&1 && send 14 300 &&
	[ "$(seen_is 14 100)" = 100 ]
result multi/reload/no_dry_run $? "$(cat /tmp/m.log); 198.18.0.14 sent 300: $(seen 14) reached (want 100)"
# ---- reload onto new maps under the dispatcher (a new --window) ---------------------
# The program on new maps goes in the same slot: the stub keeps its id and
# place, xdp-filter is untouched, the rules and a ban are carried, and the
# staged directory took the interface's (the slot and the stub, no link).
# The ban first, over a real TCP connection (only packets of connections
# the host answered can ban): the host streams to 198.18.0.20, whose rule
# allows 10 per 10 s; its ACKs past those are dropped, and ban it.
banned() {
	mrx_ xdp-ratelimit ban list --json 2>/dev/null |
		jqjson -r '.interfaces[0].bans[] | .address + " " + .rule'
}
listening() { mrx_ cat /proc/net/tcp | grep -q ' 00000000:0050 00000000:0000 0A '; }
mtx_ iproute2 addr add 198.18.0.20/15 dev vmmtxa &&
	mrx_ iproute2 addr add 198.19.0.1/15 dev $mdev &&
	mrx_ xdp-ratelimit quota set 198.18.0.20/32 --pps 1 --ban 1m >/tmp/m.log 2>&1 &&
	mrx_ xdp-ratelimit quota set 198.18.0.17/32 --pps 1 >>/tmp/m.log 2>&1
result multi/new_maps/setup $? "$(cat /tmp/m.log)"
i=0
while [ -z "$(banned)" ] && [ $i -lt 3 ]; do
	mrx_ sh -c 'dd if=/dev/zero bs=1000 count=300 2>/dev/null |
		timeout 10 nc -l -p 80' >/dev/null 2>&1 & srv=$!
	j=0
	while ! listening && [ $j -lt 50 ]; do j=$((j + 1)); sleep 0.1; done
	mtx_ sh -c 'sleep 5 | timeout 5 nc 198.19.0.1 80' >/dev/null 2>&1
	wait $srv
	i=$((i + 1))
done
b0=$(banned)
[ "$b0" = "198.18.0.20 198.18.0.20/32" ]
result multi/new_maps/banned $? "ban list: [$b0] after $i connections"
# 198.18.0.18 at 60 pps, the reload once the old program has passed its
# 100 (10 pps, 10 s window): the new --window 20s starts every source with
# a fresh window (200). The sender runs until the new program has judged
# some of it. Every frame is judged by one program: the new one by its own
# counters (new maps), the old one the rest; each passed exactly its quota
# of what it judged (the old one, were its part longer than its window
# on a loaded machine: 100 a window it spanned).
q0=$(mrx_ xdp-ratelimit quota list --json | jqjson -c .)
ids0=$(slot_id) progs0=$(loader_progs)
uptime_cs() { tr -d . </proc/uptime | cut -d' ' -f1; }
t0=$(uptime_cs)
# (nsenter execs it: $! is the sender, whose SIGTERM ends it with its JSON)
nsenter --net=$mtx trafficgen --dev vmmtxa --dst-mac $mmac --src 198.18.0.18 --rate 60 \
	--duration 120 --cpu 1 --json >/tmp/p18.json 2>&1 & p18=$!	# one CPU, as paced()
i=0
while [ "$(seen 18)" -lt 100 ] 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
mrx_ xdp-ratelimit reload $mdev --window 20s >/tmp/m.log 2>&1; rc=$?
t1=$(uptime_cs)
sel='.interfaces[0].sources[] | select(.address == "198.18.0.18")'
judged_new() {
	mrx_ xdp-ratelimit stats --json 2>/dev/null |
		jqjson "[$sel | .passed_packets + .dropped_packets] | add // 0"
}
i=0
while [ "$(judged_new)" -lt 1 ] 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
kill $p18; wait $p18
sent=$(jqjson -r .sent /tmp/p18.json) n18=$(settled_seen 18)
mrx_ xdp-ratelimit stats --json >/tmp/stats.json 2>&1
p=$(jqjson "$sel | .passed_packets" /tmp/stats.json) p=${p:-0}
d=$(jqjson "$sel | .dropped_packets" /tmp/stats.json) d=${d:-0}
jnew=$((p + d)) jold=$((sent - p - d))
old_windows=$(((t1 - t0) / 1000 + 1))
want_new=$((jnew < 200 ? jnew : 200)) want_old=$((jold < 100 ? jold : 100))
ids1=$(slot_id)
[ $rc = 0 ] && grep -q "new maps: carried .* 1 bans" /tmp/m.log &&
	[ "${ids0%% *}" = "${ids1%% *}" ] && [ "${ids0#* }" != "${ids1#* }" ] &&
	[ "$(loader_progs)" = "$progs0" ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0] | .window + " " + .state')" = "20s ok" ]
result multi/new_maps/swapped $? "exit $rc: $(cat /tmp/m.log); stub and slot ids [$ids0] -> [$ids1]; xdp-loader [$progs0] -> [$(loader_progs)]; status $(mrx_ xdp-ratelimit status 2>&1 | head -n 3)"
ph=$(pins_here)
[ "$(ls $ph)" = "$mdev" ] &&
	[ -e $ph/$mdev/prog ] && [ -e $ph/$mdev/slot ] &&
	[ ! -e $ph/$mdev/link ]
result multi/new_maps/pins $? "pins: $(ls $ph) [$(ls $ph/$mdev | tr '\n' ' ')]"
[ "$(mrx_ xdp-ratelimit quota list --json | jqjson -c .)" = "$q0" ] && [ "$(banned)" = "$b0" ]
result multi/new_maps/rules_bans_carried $? "rules $q0 -> $(mrx_ xdp-ratelimit quota list --json | jqjson -c .); bans [$b0] -> [$(banned)]"
old_ok() {	# the old program's passes
	if [ $old_windows = 1 ]; then
		[ "$1" = "$want_old" ]
	else
		[ "$1" -ge "$want_old" ] && [ "$1" -le $((100 * old_windows)) ]
	fi
}
[ "$sent" -gt 0 ] && [ "$jold" -ge 100 ] && [ "$jnew" -gt 0 ] && [ "$p" = "$want_new" ] && old_ok $((n18 - p))
result multi/new_maps/paced_quota_exact $? "198.18.0.18 sent $sent, $n18 reached: the old program judged $jold in $((t1 - t0))0 ms, passed $((n18 - p)) (want $want_old$([ $old_windows = 1 ] || echo " to $((100 * old_windows))")); the new one judged $jnew, passed $p (want $want_new)"
agree new_maps xdp_ratelimit xdpfilt_alw_all
# the carried rule in the new window (1 pps: 20 per 20 s), xdp-filter's
# port still blocked (its frames go before 198.18.0.17's)
send 19 20 7777 && send 17 50
n17=$(seen_is 17 20) n19=$(seen 19)
[ "$(settled_seen 17)" = 20 ] && [ "$n19" = 0 ]
result multi/new_maps/enforce $? "198.18.0.17 (1 pps) sent 50: $(seen 17) reached (want 20); to port 7777: $n19 of 20 (want 0)"
# CMD... in the receiver: its exit status is the result NAME, its output why
mrx_result() {	# NAME CMD...
	local name=$1
	shift
	mrx_ "$@" >/tmp/m.log 2>&1
	result "$name" $? "$(cat /tmp/m.log)"
}
# xdp-ratelimit leaves; xdp-filter still blocks, and nothing limits now
mrx_result multi/rl_first/ratelimit_detach xdp-ratelimit detach $mdev
l=$(loader_progs)
[ "$(echo "$l" | awk '{ print $2 }')" = xdpfilt_alw_all ] && [ -z "$(rl_progs)" ]
result multi/rl_first/filter_left_alone $? "xdp-loader lists [$l]"
send 4 20 7777 && send 5 200
n5=$(seen_is 5 200) n4=$(seen 4)
[ "$n5" = 200 ] && [ "$n4" = 0 ]
result multi/rl_first/filter_alone_enforces $? "after detach: port 7777 $n4 of 20 reached (want 0), 198.18.0.5 $n5 of 200 (want 200, no quota now)"
mrx_result multi/rl_first/filter_unload xdp-filter unload $mdev

# ---- xdp-filter first, then xdp-ratelimit joins -------------------------------------
both_attached filter_first filter_load rl_attach 6 7 8
# xdp-filter leaves; xdp-ratelimit still limits, and port 7777 is open
mrx_result multi/filter_first/filter_unload xdp-filter unload $mdev
agree filter_first_unloaded xdp_ratelimit
st=$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].state')
send 9 300 && send 10 20 7777
n9=$(seen_is 9 100) n10=$(seen_is 10 20)
[ "$st" = ok ] && [ "$n9" = 100 ] && [ "$n10" = 20 ]
result multi/filter_first/ratelimit_alone_enforces $? "after unload: state $st, 198.18.0.9 $n9 of 300 reached (want 100), port 7777 $n10 of 20 (want 20)"
mrx_ xdp-ratelimit detach $mdev >/tmp/m.log 2>&1 &&
	mrx_ xdp-loader status $mdev | grep -q "No XDP program loaded"
result multi/filter_first/nothing_left $? "$(cat /tmp/m.log; mrx_ xdp-loader status $mdev)"

# ---- an attachment of the previous build (its stub held every map) -----------------
# Its pins are of the previous layout, in an earlier release's flat
# directory: this build names them as such, and refuses the reload (only
# new maps carry a previous layout, and the old maps would stay allocated
# under that stub) with nothing changed: the pins where they were, the
# previous build's program enforcing on. It detaches it, leaving xdp-filter.
prev=/rl/xdp-ratelimit-prev
filter_load prev_build
[ -x $prev ] && mrx_ $prev attach $mdev --window 10s >/tmp/m.log 2>&1 &&
	mrx_ $prev quota set default --pps 10 >>/tmp/m.log 2>&1
result multi/prev_build/attach $? "$([ -x $prev ] || echo "no $prev: tests/vm/run.sh could not build it;") $(cat /tmp/m.log)"
# this build names its pins as an earlier release's
[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.earlier_release_pins[]')" = "$mdev" ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson '.interfaces | length')" = 0 ]
result multi/prev_build/status_names_earlier_pins $? "$(mrx_ xdp-ratelimit status)"
ids0=$(slot_id $prev)	# its pins are where that build put them
out=$(mrx_ xdp-ratelimit reload $mdev --verified-ttl 2m 2>&1); rc=$?
send 23 300
n23=$(seen_is 23 100)
[ $rc = 1 ] && echo "$out" | grep -q "whose stub holds the maps.*nothing changed" &&
	[ "$(slot_id $prev)" = "$ids0" ] && [ -e "$P/$mdev/config" ] &&
	[ -z "$(ls "$(pins_here)" 2>/dev/null)" ] && [ "$n23" = 100 ]
result multi/prev_build/new_maps_refused $? "exit $rc, said: $out; ids [$ids0] -> [$(slot_id $prev)]; 198.18.0.23 sent 300: $n23 reached (want 100); pins: $(ls -R $P)"
mrx_ xdp-ratelimit detach $mdev >/tmp/m.log 2>&1; rc=$?
[ $rc = 0 ] && [ -z "$(ls /sys/fs/bpf/xdp-ratelimit/ 2>/dev/null)" ] &&
	[ "$(loader_progs | awk '{ print $2 }')" = xdpfilt_alw_all ]
result multi/prev_build/detach $? "exit $rc: $(cat /tmp/m.log); pins: $(ls /sys/fs/bpf/xdp-ratelimit/); programs: $(loader_progs | tr '\n' ';')"
mrx_ xdp-filter unload $mdev >/dev/null 2>&1

# ---- refusals: nothing pinned, the others untouched ------------------------------------
# refused NAME WORDS CMD...: CMD exits 1 saying WORDS (a grep pattern),
# leaves no pins and the programs on the veth as they were
refused() {
	local name=$1 words=$2 before out rc
	shift 2
	before=$(loader_progs; mrx_ xdp-loader status $mdev | grep -c "$mdev")
	out=$("$@" 2>&1); rc=$?
	[ $rc = 1 ] && echo "$out" | grep -q "$words" &&
		[ -z "$(ls -d $P/$mdev $P/*/$mdev 2>/dev/null)" ] &&
		[ "$(loader_progs; mrx_ xdp-loader status $mdev | grep -c "$mdev")" = "$before" ]
	result "multi/refused/$name" $? "exit $rc, said: $out"
}

# a program attached without libxdp's dispatcher: today's message
mrx_result multi/refused/foreign_setup env LIBXDP_SKIP_DISPATCHER=1 xdp-filter load $mdev -m native
refused foreign "already has an XDP program attached by another tool: remove it first" \
	mrx_ xdp-ratelimit attach $mdev
mrx_ xdp-filter unload $mdev >/dev/null 2>&1

# without the dispatcher (libxdp's switch), a busy interface is refused
# saying why
mrx_ xdp-filter load $mdev -m native >/dev/null 2>&1
refused no_dispatcher "already has an XDP program attached by another tool.*one XDP program per interface" \
	mrx_ env LIBXDP_SKIP_DISPATCHER=1 xdp-ratelimit attach $mdev
mrx_ xdp-filter unload $mdev >/dev/null 2>&1

# a dispatcher in generic mode: --mode native is refused, auto joins it
# in generic mode at the priority asked, and save writes that priority
mrx_result multi/generic/filter_load xdp-filter load $mdev -m skb
refused mode_mismatch "runs its XDP programs in generic mode" \
	mrx_ xdp-ratelimit attach $mdev --mode native
out=$(mrx_ xdp-ratelimit attach $mdev --priority 70 2>&1)
echo "$out" | grep -q "generic mode, libxdp dispatcher, priority 70" &&
	[ "$(rl_progs | tr '\n' ';')" = "10 xdpfilt_alw_all $(loader_progs | awk '$1 == 10 { print $3 }') XDP_PASS;70 xdp_ratelimit $(loader_progs | awk '$1 == 70 { print $3 }') XDP_PASS;" ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].mode')" = generic ] &&
	mrx_ xdp-ratelimit save | grep -q "^attach $mdev --mode generic .*--priority 70"
result multi/generic/joins_at_priority $? "said: $out; programs: $(rl_progs | tr '\n' ';'); save: $(mrx_ xdp-ratelimit save 2>&1 | head -n 1)"
mrx_ xdp-ratelimit detach $mdev >/tmp/m.log 2>&1 &&
	[ "$(loader_progs | awk '{ print $2 }')" = xdpfilt_alw_all ]
result multi/generic/detach_leaves_filter $? "$(cat /tmp/m.log; loader_progs)"
mrx_ xdp-filter unload $mdev >/dev/null 2>&1

# a dispatcher that holds libxdp's most, 10 programs
i=1
while [ $i -le 10 ]; do
	mrx_ xdp-loader load -m native -P $((30 + i)) $mdev \
		/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o >/tmp/m.log 2>&1 || break
	i=$((i + 1))
done
[ "$(loader_progs | wc -l)" = 10 ]
result multi/refused/slots_setup $? "$(cat /tmp/m.log; loader_progs)"
refused dispatcher_full "already runs 10 XDP programs under libxdp's dispatcher, the most it holds" \
	mrx_ xdp-ratelimit attach $mdev
mrx_ xdp-loader unload --all $mdev >/dev/null 2>&1

# ---- attach killed after libxdp attached, before the commit point -------------------
# strace kills the CLI on entering a syscall: the first rename (staging
# directory to IFACE) or the last BPF_OBJ_PIN (the program, the commit
# point). Either way libxdp's pins keep the program in the dispatcher,
# beside xdp-filter: status flags the leftovers, detach takes the program
# out of the dispatcher and unpins, xdp-filter keeps running; and an
# attach after a kill at the rename reaps the staging directory and its
# program itself.
mrx_ xdp-filter load $mdev -m native >/dev/null 2>&1
# LeakSanitizer cannot run under ptrace (SANITIZE=1 builds): without this,
# a traced attach that worked would exit 1 at its leak check
export ASAN_OPTIONS=detect_leaks=0
mrx_ strace -f -qq -o /tmp/m.trace -e trace=bpf xdp-ratelimit attach $mdev >/dev/null 2>&1 &&
	mrx_ xdp-ratelimit detach $mdev >/dev/null 2>&1
lastpin=$(awk '/bpf\(/ { n++ } /BPF_OBJ_PIN/ { last = n } END { print last }' /tmp/m.trace)
killed() {	# SYSCALL N
	mrx_ strace -f -qq -o /dev/null -e trace="$1" -e inject="$1:signal=SIGKILL:when=$2" \
		xdp-ratelimit attach $mdev >/dev/null 2>&1
}
for at in "rename 1" "bpf $lastpin"; do
	set -- $at
	killed "$1" "$2"
	tag=killed_at_$1
	# the killed attach is a staging directory once its process is gone
	# (strace reaps it: a zombie still counts as a running attach), at
	# most 5 s
	for i in $(seq 50); do
		n=$(loader_progs | grep -c xdp_ratelimit)
		st=$(mrx_ xdp-ratelimit status 2>&1)
		[ "$n" = 1 ] && echo "$st" | grep -q "^$mdev .*BROKEN" &&
			{ [ "$1" != rename ] || echo "$st" | grep -q "program still attached"; }
		ok=$?
		[ "$ok" = 0 ] && break
		sleep 0.1
	done
	result "multi/$tag/flagged" $ok "xdp_ratelimit programs on the veth: $n; status:"
	[ "$ok" = 0 ] || echo "$st" | sed 's/^/  | /'
	mrx_ xdp-ratelimit detach $mdev >/tmp/m.log 2>&1 &&
		[ "$(loader_progs | awk '{ print $2 }')" = xdpfilt_alw_all ] &&
		[ -z "$(ls /sys/fs/bpf/xdp-ratelimit/ 2>/dev/null)" ]
	result "multi/$tag/detach_repairs" $? "$(cat /tmp/m.log); left: $(loader_progs | tr '\n' ';') pins: $(ls /sys/fs/bpf/xdp-ratelimit/)"
done
killed rename 1
mrx_ xdp-ratelimit attach $mdev >/tmp/m.log 2>&1 &&
	[ "$(loader_progs | grep -c xdp_ratelimit)" = 1 ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].state')" = ok ]
result multi/killed_then_attach_reaps $? "$(cat /tmp/m.log); programs: $(loader_progs | tr '\n' ';')"

# ---- reload killed at its commit point (the slot's update) and just after ----------
# killed on entering the update, the old program keeps enforcing with its
# state and settings; killed after it, the new one runs, and the same
# reload run again completes it (the config map gets --dry-run)
mrx_ xdp-ratelimit quota set default --pps 10 >/dev/null 2>&1
# killed_at at|after ARGS...: the CLI killed on entering, or on leaving, its
# update of the slot (kill_at_swap.so: a count of bpf() calls from an
# earlier run can miss it, as many calls as the entries a reload carries);
# its exit status (137: SIGKILL) is what it says
killed_at() {
	local when=$1
	shift
	LD_PRELOAD=/rl/kill_at_swap.so ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
		RL_KILL=$when mrx_ xdp-ratelimit "$@" >/dev/null 2>&1
}
dry() { mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].dry_run'; }
ids0=$(slot_id)
killed_at at reload $mdev --dry-run; swap=$?
# (1 s window here: 10 of a burst of 300 pass, a few more if it spans two)
send 3 300
n3=$(($(settled_seen 3) - 5))
[ "$swap" = 137 ] && [ "$(slot_id)" = "$ids0" ] && [ "$(dry)" = false ] &&
	[ "$n3" -ge 10 ] && [ "$n3" -le 30 ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].state')" = ok ]
result multi/reload_killed_at_swap/old_enforces $? "killed at the swap: exit $swap; ids [$ids0] -> [$(slot_id)], dry_run $(dry); 198.18.0.3 sent 300: $n3 passed (want 10 to 30: limited)"
killed_at after reload $mdev --dry-run; after=$?
ids1=$(slot_id) d1=$(dry)
mrx_ xdp-ratelimit reload $mdev --dry-run >/tmp/m.log 2>&1; rc=$?
[ "$after" = 137 ] && [ "${ids1#* }" != "${ids0#* }" ] && [ "${ids1%% *}" = "${ids0%% *}" ] &&
	[ "$d1" = false ] && [ $rc = 0 ] && [ "$(dry)" = true ]
result multi/reload_killed_after_swap/rerun_completes $? "killed after the swap: exit $after; ids [$ids0] -> [$ids1] (dry_run $d1) -> [$(slot_id)] (dry_run $(dry)); rerun exit $rc: $(cat /tmp/m.log)"

# ---- a reload onto new maps killed at the slot's update, and just after it ----------
# (the first reload here ends the dry run above) The slot's update is the last bpf() call before the exchange of the pin
# directories (renameat2). Killed on entering it, the old program on the
# old maps enforces with its settings and the next reload removes the
# staging directory; killed on entering the exchange (committed), the
# new program runs on the staged maps, status says BROKEN, and the next
# reload (or detach) completes the exchange.
win() { mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].window'; }
stages() { ls "$(pins_here)" | grep -c ' reloading '; }
mrx_ xdp-ratelimit reload $mdev --window 2s --no-dry-run >/dev/null 2>&1
ids0=$(slot_id)
killed_at at reload $mdev --window 3s; swap=$?
# (2 s window, 10 pps: 20 of a burst of 300 pass, a few more if it spans two)
send 21 300
n21=$(settled_seen 21)
[ "$swap" = 137 ] && [ "$(slot_id)" = "$ids0" ] && [ "$(win)" = 2s ] &&
	[ "$(stages)" = 1 ] && [ -e "$(pins_here)/$mdev reloading "*/prog ] &&
	[ "$n21" -ge 20 ] && [ "$n21" -le 45 ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].state')" = ok ]
result multi/new_maps_killed_at_swap/old_enforces $? "killed at the swap: exit $swap; ids [$ids0] -> [$(slot_id)], window $(win), staging directories $(stages) [$(ls "$(pins_here)"/*reloading*/ 2>&1 | tr '\n' ' ')]; state: $(mrx_ xdp-ratelimit status --json | jqjson -c '.interfaces[0] | [.state, .problem]'); 198.18.0.21 sent 300: $n21 passed (want 20 to 45)"
mrx_ xdp-ratelimit reload $mdev >/tmp/m.log 2>&1; rc=$?
[ $rc = 0 ] && [ "$(stages)" = 0 ] && [ "$(win)" = 2s ] && [ "$(slot_id)" != "$ids0" ]
result multi/new_maps_killed_at_swap/reload_removes_stage $? "exit $rc: $(cat /tmp/m.log); staging directories $(stages), window $(win)"
killed_after() {	# WINDOW: reload onto new maps killed entering the exchange
	mrx_ strace -f -qq -o /dev/null -e trace=renameat2 \
		-e inject="renameat2:signal=SIGKILL:when=1" \
		xdp-ratelimit reload $mdev --window "$1" >/dev/null 2>&1
}
ids0=$(slot_id)
killed_after 3s
ids1=$(slot_id) st=$(mrx_ xdp-ratelimit status 2>&1)
[ "${ids1%% *}" = "${ids0%% *}" ] && [ "${ids1#* }" != "${ids0#* }" ] &&
	[ "$(stages)" = 1 ] && echo "$st" | grep -q "^$mdev .*BROKEN"
result multi/new_maps_killed_after_swap/new_runs $? "ids [$ids0] -> [$ids1], staging directories $(stages); status:
$st"
mrx_ xdp-ratelimit reload $mdev >/tmp/m.log 2>&1; rc=$?
send 22 300
n22=$(settled_seen 22)
[ $rc = 0 ] && [ "$(stages)" = 0 ] && [ "$(win)" = 3s ] &&
	[ "$(mrx_ xdp-ratelimit status --json | jqjson -r '.interfaces[0].state')" = ok ] &&
	[ "$n22" -ge 30 ] && [ "$n22" -le 65 ]
result multi/new_maps_killed_after_swap/reload_completes $? "exit $rc: $(cat /tmp/m.log); staging directories $(stages), window $(win); 198.18.0.22 sent 300: $n22 passed (want 30 to 65: 3 s window)"
agree new_maps_repaired xdp_ratelimit xdpfilt_alw_all
# once more, then detach completes it and takes ours out, xdp-filter stays
killed_after 4s
mrx_ xdp-ratelimit detach $mdev >/tmp/m.log 2>&1; rc=$?
[ $rc = 0 ] && [ -z "$(ls /sys/fs/bpf/xdp-ratelimit/ 2>/dev/null)" ] &&
	[ "$(loader_progs | awk '{ print $2 }')" = xdpfilt_alw_all ]
result multi/new_maps_killed_after_swap/detach_repairs $? "exit $rc: $(cat /tmp/m.log); pins: $(ls /sys/fs/bpf/xdp-ratelimit/); programs: $(loader_progs | tr '\n' ';')"
mrx_ xdp-filter unload $mdev >/dev/null 2>&1
unset ASAN_OPTIONS

multi_cleanup
trap - EXIT
