# shellcheck shell=bash
# e2e area: attach and detach: the pins as bpftool reads them, bpffs mounted
# when missing, several interfaces, detach, generic mode.
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# ---- every pin readable with bpftool, with BTF names -------------------------
test_attach_pins_bpftool() {
	fresh --default-pps 10 && quota 2001:db8:2::/48 --pps 5 --aggregate-pps 100 ||
		{ result bpftool_maps_btf 1 "attach"; return; }
	send --src 198.18.16.1 --count 20 >/dev/null
	send --src 2001:db8:2::1 --count 20 >/dev/null
	quota 198.18.17.0/24 --pps 0 && send --src 198.18.17.1 --count 3 >/dev/null
	local bad=() m field n names perms want commit
	for m in config:rules_gen counters:passed_pkts sources:passed_pkts \
		rules:pkt_budget rules_v4:prefixlen rules_v6:prefixlen aggregates:allow_pkts \
		refused:dropped_pkts agg_history:newest sync:pid rule_counters:dropped_pkts \
		cpus:seen source_index:way source_index:slot source_keys:addr source_pool:handed; do
		IFS=: read -r m field <<<"$m"
		bpftool map dump pinned "$pins/$vrx/$m" 2>&1 | grep -q "\"$field\": " ||
			bad+=("$m has no field $field")
	done
	# the attachment: a bpf_link, or the program under libxdp's dispatcher
	commit=link
	[ -e "$pins/$vrx/prog" ] && commit=prog
	bpftool "$commit" show pinned "$pins/$vrx/$commit" 2>&1 | grep -q "xdp" || bad+=("$commit")
	# the egress hook's program: the one its tc filter runs
	bpftool prog show pinned "$pins/$vrx/egress" 2>&1 | grep -q "sched_cls.*name rl_egress" ||
		bad+=("egress is no rl_egress program")
	[ -n "$(egress_pin_id)" ] && [ "$(egress_pin_id)" = "$(egress_filter_ids "$vrx")" ] ||
		bad+=("egress pins program $(egress_pin_id), the filter runs $(egress_filter_ids "$vrx")")
	n=$(bpftool -j map dump pinned "$pins/$vrx/counters" |
		jq '[.[0].formatted.values[].value.passed_pkts] | add')
	[ "$n" = 15 ] && [ "$n" = "$(total passed_packets)" ] ||
		bad+=("counters passed_pkts summed over CPUs $n, stats $(total passed_packets), want 15")
	# `history` has entries only once a CPU rolled out of a bucket still in
	# the window (tests/prog: past_buckets_of_every_cpu_count): its type
	bpftool btf dump map pinned "$pins/$vrx/history" value 2>&1 |
		grep -q "STRUCT 'rl_history'.*" || bad+=("history has no BTF value type rl_history")
	names=$(ls "$pins/$vrx" | sort | tr '\n' ' ')
	want=$(printf '%s\n' agg_history aggregates answered bans config counters cpus events \
		egress history "$commit" new_history newcomers refused remote rule_counters rules rules_v4 \
		rules_v6 scoped_v4 scoped_v6 scopes source_index source_keys source_pool sources \
		synacks sync verified verified_bloom | sort | tr '\n' ' ')
	[ "$names" = "$want" ] || bad+=("pins: $names")
	perms=$(stat -c %a "$pins/$vrx" "$pins/$vrx"/* | sort -u | tr '\n' ' ')
	[ "$perms" = "600 700 " ] || bad+=("modes $perms, want 700 dir, 600 pins")
	check bpftool_maps_btf "${#bad[@]} == 0" "${bad[*]}"
}

# ---- no bpffs mounted: the CLI mounts one ---------------------------------------------
# A shell in a mount namespace of its own (private: nothing it mounts or
# unmounts reaches the host's) unmounts /sys/fs/bpf, attaches $vrx2, checks
# and detaches. It has its own PID namespace and /proc too, so that its mount
# namespace is PID 1's, as on a host: the CLI refuses to pin from any other
# (the pins would vanish with it, as they do here when the shell exits).
bpffs_missing_sh='
cli=$1 gen=$2 rx=$3 tx=$4 dev=$5 txdev=$6 mac=$7
rl() { nsenter --net="/run/netns/$rx" "$cli" "$@"; }
[ "$(findmnt -no PROPAGATION /sys/fs/bpf)" = private ] || { echo "not private"; exit 1; }
while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 1; done
rl attach "$dev" --default-pps 10 >/dev/null
echo "attach=$?"
echo "mount=$(findmnt -no FSTYPE /sys/fs/bpf) $(findmnt -no OPTIONS /sys/fs/bpf)"
p=/sys/fs/bpf/xdp-ratelimit
echo "modes=$(stat -c %a /sys/fs/bpf) $(stat -c %a $p $p/* $p/*/* $p/*/*/* | sort -u | paste -sd " ")"
echo "ls=$(ls /sys/fs/bpf/xdp-ratelimit/netns:*)"
echo "status=$(rl status --json | jq -c "[.interfaces[] | .ifname, .state]")"
nsenter --net="/run/netns/$tx" "$gen" --dev "$txdev" --dst-mac "$mac" --src 198.18.24.1 \
	--count 30 --json >/dev/null
echo "stats=$(rl stats --json | jq -c ".interfaces[0].totals | [.passed_packets, .dropped_packets]")"
rl detach "$dev" >/dev/null
echo "detach=$?"
echo "empty=$(rl stats --json) $(rl stats) rc=$?"
'
test_attach_bpffs_missing() {
	fresh --default-pps 10 && quota 198.18.24.0/24 --pps 5 ||
		{ result bpffs_mounted_when_missing 1 "attach"; return; }
	local o=/tmp/$id.bpffs mnt0 rules0 prog0 got want
	tmpfiles+=("$o")
	mnt0=$(awk '$5 == "/sys/fs/bpf"' /proc/self/mountinfo)
	rules0=$(rl quota list --iface "$vrx" --json) prog0=$(xdp_prog_id "$vrx")
	unshare --mount --propagation private --pid --fork --mount-proc \
		bash -c "$bpffs_missing_sh" - "$cli" "$gen" "$rx" "$tx" "$vrx2" "$vtx2" "$mac2" \
		>"$o" 2>&1
	got=$(cat "$o")
	want="attach=0
mount=bpf rw,relatime,mode=700
modes=1700 600 700
ls=$vrx2
status=[\"$vrx2\",\"ok\"]
stats=[10,20]
detach=0
empty={\"interfaces\": []} no interface is attached rc=0"
	[ "$got" = "$want" ]
	result bpffs_mounted_when_missing $? "in a mount namespace without bpffs:"$'\n'"$got"
	# the host's bpffs and the pins in it are untouched; $vrx2 is detached
	[ "$(awk '$5 == "/sys/fs/bpf"' /proc/self/mountinfo)" = "$mnt0" ] &&
		[ -n "$mnt0" ] && [ -e "$pins/$vrx/link" ] &&
		[ "$(rl quota list --iface "$vrx" --json)" = "$rules0" ] &&
		[ "$(xdp_prog_id "$vrx")" = "$prog0" ] && [ -z "$(xdp_prog_id "$vrx2")" ]
	result bpffs_host_untouched $? "host bpffs was '$mnt0', now '$(awk '$5 == "/sys/fs/bpf"' /proc/self/mountinfo)'; $vrx program $prog0 now $(xdp_prog_id "$vrx"); $vrx2 program '$(xdp_prog_id "$vrx2")'"
}

# ---- several interfaces at once ------------------------------------------------
test_attach_several() {
	fresh --default-pps 10 && rl attach "$vrx2" --default-pps 20 >/dev/null ||
		{ result several_interfaces 1 "attach"; return; }
	local r1 r2 t1 t2 err rc rules1
	send --src 198.18.18.1 --count 100 >/dev/null
	send_dev "$vtx2" "$mac2" --src 198.18.18.1 --count 100 >/dev/null
	r1=$(seen 198.18.18.1 "$vrx") r2=$(seen 198.18.18.1 "$vrx2")
	t1=$(rl stats --json | jq --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | .totals.passed_packets')
	t2=$(rl stats --json | jq --arg i "$vrx2" '.interfaces[] | select(.ifname == $i) | .totals.passed_packets')
	check several_interfaces "r1 == 10 && r2 == 20 && t1 == 10 && t2 == 20" \
		"received $r1 / $r2, stats $t1 / $t2 (want 10 / 20)"
	# a change to one leaves the other alone; without --iface it is refused
	rules1=$(rl quota list --iface "$vrx" --json)
	rl quota set 198.18.18.0/24 --pps 1 --iface "$vrx2" >/dev/null; rc=$?
	[ "$rules1" = "$(rl quota list --iface "$vrx" --json)" ] && [ "$rc" = 0 ]
	result quota_per_interface $? \
		"quota set --iface $vrx2 rc $rc, or it changed $vrx's rules"
	err=$(rl quota set 198.18.18.0/24 --pps 1 2>&1 >/dev/null); rc=$?
	check iface_required_when_several "rc == 1" "rc $rc: $err"
	rl detach "$vrx2" >/dev/null
	[ -z "$(xdp_prog_id "$vrx2")" ] && [ -n "$(xdp_prog_id "$vrx")" ] &&
		[ -e "$pins/$vrx/link" ]
	result detach_one_of_several $? "detaching $vrx2 touched $vrx, or left its program"
}

# ---- detach leaves nothing behind ----------------------------------------------
test_attach_detach() {
	fresh --default-pps 10 && quota 198.18.17.0/24 --pps 5 || { result detach 1 "attach"; return; }
	send --src 198.18.17.1 --count 20 >/dev/null
	local prog egress maps rc left=() m i
	prog=$(xdp_prog_id "$vrx") egress=$(egress_pin_id)
	maps=$(for m in "$pins/$vrx"/*; do
		[[ ${m##*/} =~ ^(link|prog|egress)$ ]] || bpftool -j map show pinned "$m" | jq .id; done)
	rl detach "$vrx" >/dev/null; rc=$?
	[ -e "$pins/$vrx" ] && left+=("pin dir")
	ls "$pins" 2>/dev/null | grep -q "^$vrx " && left+=("staging dir")
	[ -n "$(xdp_prog_id "$vrx")" ] && left+=("xdp program on the link")
	# The kernel frees the program after an RCU grace period and each map
	# later still, from a deferred work item: wait for each, bounded (10 s).
	gone_within 100 prog "$prog" || left+=("program $prog")
	[ -n "$(egress_filter_ids "$vrx")" ] && left+=("egress filter")
	gone_within 100 prog "$egress" || left+=("egress program $egress")
	for m in $maps; do
		gone_within 100 map "$m" || left+=("map $m")
	done
	rl stats --iface "$vrx" --json >/dev/null 2>&1 && left+=("stats still answers")
	check detach_leaves_nothing "rc == 0 && ${prog:-0} > 0 && ${egress:-0} > 0 && ${#left[@]} == 0" \
		"detach rc $rc (prog ${prog:-none}); left: ${left[*]}"
}

# An attach that fails after its egress hook was added (native XDP on a
# bridge) takes back the filter and the egress pin it made before it.
test_attach_failed_no_egress() {
	local trace=/tmp/$id.attach_failed.trace out rc left=()
	tmpfiles+=("$trace")
	[ -e "$(pin_dir "$dummy")" ] && rl detach "$dummy" >/dev/null
	out=$(in_rx strace -f -qq -o "$trace" -e trace=bpf "$cli" attach "$dummy" --mode native 2>&1); rc=$?
	grep -q "BPF_OBJ_PIN.*attaching [0-9]*/egress\"" "$trace" || left+=("the attempt pinned no egress")
	[ -e "$(pin_dir "$dummy")" ] && left+=("pin dir")
	ls "$pins" 2>/dev/null | grep -qF "$dummy attaching " && left+=("staging dir")
	[ -n "$(egress_filter_ids "$dummy")" ] && left+=("egress filter")
	check attach_failed_no_egress "rc == 1 && ${#left[@]} == 0" "exit $rc ($out); ${left[*]}"
}

# ---- generic mode, and auto falling back ----------------------------------------
# Live frames (XDP_TX into a veth) reach the peer only through its NAPI,
# which a veth runs only for a native XDP program (or GRO): so generic mode
# gets kernel-stack traffic, UDP from the sender's address.
test_attach_generic() {
	fresh --mode generic --default-pps 10 || { result generic_mode 1 "attach"; return; }
	local m link r p d out
	m=$(stats_json | jq -r .interfaces[0].mode)
	link=$(ip -n "$rx" -d link show "$vrx" | grep -c "xdpgeneric")
	ip -n "$tx" neigh replace 198.18.200.2 lladdr "$mac" dev "$vtx" nud permanent
	ip netns exec "$tx" bash -c 'for i in $(seq 100); do echo x >/dev/udp/198.18.200.2/9; done' 2>/dev/null
	r=$(seen 198.18.200.1)
	p=$(src_stat 198.18.200.1 passed_packets) d=$(src_stat 198.18.200.1 dropped_packets)
	[ "$m" = generic ] && (( link == 1 && r == 10 && p == 10 && d == 90 ))
	result generic_mode $? \
		"mode $m (xdpgeneric on link: $link); 100 UDP datagrams: received $r, stats $p passed $d dropped"
	rl detach "$vrx" >/dev/null
	out=$(rl attach "$dummy" 2>&1)
	m=$(rl status --json | jq -r --arg i "$dummy" '.interfaces[] | select(.ifname == $i) | .mode')
	grep -q "falling back to generic" <<<"$out" && [ "$m" = generic ]
	result auto_falls_back_to_generic $? \
		"mode $m; said: $out"
	rl detach "$dummy" >/dev/null
}

# Pins of an older layout (a config map of layout 2's size, 80 bytes,
# `layout` at byte 68) under a pin directory of their own: every command
# refuses them, saying to detach and attach again.
test_attach_old_layout_refused() {
	local old=${id}o dir val out rc
	rx_ifaces+=("$old")
	dir=$(pin_dir "$old")
	val=$(for i in $(seq 0 79); do [ "$i" = 68 ] && printf '2 ' || printf '0 '; done)
	# the namespace's directory goes with its last detach
	{ [ -d "$pins" ] || mkdir -m 0700 "$pins"; } && mkdir -m 0700 "$dir" &&
		bpftool map create "$dir/config" type array key 4 value 80 entries 1 name config &&
		# shellcheck disable=SC2086
		bpftool map update pinned "$dir/config" key 0 0 0 0 value $val ||
		{ result old_layout_refused 1 "cannot pin a layout 2 config"; return; }
	out=$(rl quota list --iface "$old" 2>&1); rc=$?
	[ "$rc" = 1 ] && [[ $out == *"layout 2"*"detach and attach it again"* ]]
	result old_layout_refused $? "exit $rc, said: $out"
	rm -rf "${dir:?}"
}

# ---- beside xdp-filter (libxdp) ---------------------------------------------------
# Where the kernel runs libxdp's dispatcher, attach joins xdp-filter and
# detach leaves it running (tests/vm/multi.sh checks both enforce); where
# it refuses freplace (libxdp then runs one program per interface), attach
# refuses, saying why, and changes nothing. Either way status --json
# "programs" lists what xdp-loader lists.
loader_progs() {	# IFACE: "NAME ID" per program, as xdp-loader lists them
	in_rx xdp-loader status "$1" | awk -v i="$1" '
		$1 == "=>" { print $3, $4 } $1 == i && $2 != "<No" && $2 != "xdp_dispatcher" { print $2, $4 }' | sort
}
rl_progs() {	# IFACE: the same from status --json
	rl status --json | jq -r --arg i "$1" \
		'.interfaces[] | select(.ifname == $i) | .programs[] | "\(.name) \(.id)"' | sort
}
test_attach_beside_xdp_filter() {
	local out rc disp prog0 lp rp
	in_rx xdp-filter load "$vrx2" -m native >/dev/null 2>&1 ||
		{ result beside_xdp_filter 1 "xdp-filter load failed"; return; }
	disp=$(in_rx xdp-loader status "$vrx2" | grep -c xdp_dispatcher)
	prog0=$(xdp_prog_id "$vrx2")
	out=$(rl attach "$vrx2" 2>&1); rc=$?
	if (( disp )); then
		lp=$(loader_progs "$vrx2") rp=$(rl_progs "$vrx2")
		[ "$rc" = 0 ] && [[ $out == *"libxdp dispatcher, priority 20"* ]] &&
			[ "$lp" = "$rp" ] && [[ $lp == *xdp_ratelimit* ]] && [[ $lp == *xdpfilt* ]] &&
			rl detach "$vrx2" >/dev/null &&
			[[ $(loader_progs "$vrx2") == "xdpfilt_alw_all "* ]]
		result beside_xdp_filter $? "exit $rc, said: $out; xdp-loader [$lp], status [$rp]"
	else
		[ "$rc" = 1 ] && [[ $out == *"already has an XDP program attached by another tool"*"one XDP program per interface"* ]] &&
			[ ! -e "$(pin_dir "$vrx2")" ] && [ "$(xdp_prog_id "$vrx2")" = "$prog0" ]
		result beside_xdp_filter $? "exit $rc, said: $out"
	fi
	in_rx xdp-filter unload "$vrx2" >/dev/null 2>&1
	# alone: under the dispatcher, or itself the interface's program
	rl attach "$vrx2" >/dev/null && lp=$(loader_progs "$vrx2") rp=$(rl_progs "$vrx2") &&
		[ "$lp" = "$rp" ] && { [ "$lp" = "xdp_ratelimit $(xdp_prog_id "$vrx2")" ] ||
			{ (( disp )) && [[ $lp == "xdp_ratelimit "* ]]; }; }
	result status_programs_as_xdp_loader $? "xdp-loader [$lp], status [$rp]"
	rl detach "$vrx2" >/dev/null
}

# Undo: detach takes away the clsact qdisc attach created, never one it
# found or that another filter uses; detaching again has nothing to do
# (exit 3), so that an undo script can run twice.
test_detach_undo() {
	local err rc
	clsacts() { tc -n "$rx" qdisc show dev "$vrx2" | grep -c '^qdisc clsact'; }
	[ -e "$(pin_dir "$vrx2")" ] && rl detach "$vrx2" >/dev/null
	tc -n "$rx" qdisc del dev "$vrx2" clsact 2>/dev/null
	rl attach "$vrx2" >/dev/null && [ "$(clsacts)" = 1 ] &&
		rl detach "$vrx2" >/dev/null && [ "$(clsacts)" = 0 ]
	result detach_removes_its_clsact $? "clsact qdiscs left: $(clsacts)"
	err=$(rl detach "$vrx2" 2>&1 >/dev/null); rc=$?
	[ "$rc" = 3 ] && [ "$err" = "xdp-ratelimit: detach: $vrx2 is not attached: nothing to detach (exit status 3; see 'xdp-ratelimit status')" ]
	result detach_twice_nothing_to_do $? "exit $rc: $err"
	tc -n "$rx" qdisc add dev "$vrx2" clsact && rl attach "$vrx2" >/dev/null &&
		rl detach "$vrx2" >/dev/null && [ "$(clsacts)" = 1 ]
	result detach_keeps_clsact_it_found $? "clsact qdiscs: $(clsacts)"
	tc -n "$rx" qdisc del dev "$vrx2" clsact
	rl attach "$vrx2" >/dev/null &&
		tc -n "$rx" filter add dev "$vrx2" ingress prio 7 protocol ip u32 match u32 0 0 classid 1:1 &&
		rl detach "$vrx2" >/dev/null && [ "$(clsacts)" = 1 ] &&
		tc -n "$rx" filter show dev "$vrx2" ingress | grep -q u32
	result detach_keeps_clsact_in_use $? "clsact qdiscs: $(clsacts), ingress: $(tc -n "$rx" filter show dev "$vrx2" ingress)"
	tc -n "$rx" qdisc del dev "$vrx2" clsact 2>/dev/null
}

# An attached interface deleted: quota set refuses it, stats says so,
# detach removes what is left.
test_deleted_iface() {
	local gone=${id}g err rc
	rx_ifaces+=("$gone")
	ip -n "$rx" link add "$gone" type veth peer name "${id}h" &&
		ip -n "$rx" link set "$gone" up && ip -n "$rx" link set "${id}h" up &&
		rl attach "$gone" >/dev/null && rl quota set default --pps 5 --iface "$gone" >/dev/null ||
		{ result deleted_iface 1 "setup"; return; }
	ip -n "$rx" link del "$gone"
	err=$(rl quota set default --pps 7 --iface "$gone" 2>&1 >/dev/null); rc=$?
	[ "$rc" = 1 ] && [[ $err == "xdp-ratelimit: quota set: $gone no longer exists"*"'xdp-ratelimit detach $gone' removes them" ]] &&
		[ "$(rl quota list --iface "$gone" --json | jq '.interfaces[0].rules[0].pps')" = 5 ]
	result quota_set_on_deleted_iface $? "exit $rc: $err"
	err=$(rl stats --iface "$gone" 2>&1 >/dev/null); rc=$?
	[ "$rc" = 0 ] && [[ $err == "xdp-ratelimit: stats: $gone no longer exists"* ]]
	result stats_says_iface_gone $? "exit $rc: $err"
	rl detach "$gone" >/dev/null && [ ! -e "$(pin_dir "$gone")" ]
	result detach_deleted_iface $? "$(ls "$(pin_dir "$gone")" 2>&1)"
}

# ---- memory: what attach prints and status shows ------------------------------------
# The figure of each pinned map against bpftool: worked out again here from
# the key and value sizes and max_entries bpftool reports (the man page's
# Memory formula), exactly; and, on a kernel that charges a map what it
# uses (6.4 and later), within the kernel's own struct of the map (under
# 1 KiB) of its memlock. attach prints the total status shows.
test_attach_memory() {
	local out j bad=() m e k v b want memlock ncpus sum total kind
	[ -e "$pins/$vrx" ] && rl detach "$vrx" >/dev/null
	out=$(rl attach "$vrx" --max-sources 5000) || { result attach_memory 1 "attach: $out"; return; }
	j=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | .memory')
	ncpus=$(jq -r .possible_cpus <<<"$j")
	[ "$ncpus" = "$(awk -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-")
		n += (r[2] != "" ? r[2] - r[1] + 1 : 1) } } END { print n }' \
		/sys/devices/system/cpu/possible)" ] ||
		bad+=("possible CPUs $ncpus")
	sum=$(jq '[.maps[]] | add' <<<"$j")
	[ "$sum" = "$(jq .bytes <<<"$j")" ] || bad+=("total $(jq .bytes <<<"$j") is not the maps' sum $sum")
	# the first table's row (the second, of programs, starts with the name too)
	total=$(rl status --wide | awk -v i="$vrx" '$1 == i { print $6; exit }' |
		sed 's/\([0-9.]*\)\(.*\)/\1 \2/')
	grep -qx "memory: $total of kernel maps on $ncpus possible CPUs," <<<"$out" &&
		grep -qx "  .* of it for --max-sources 5000;" <<<"$out" &&
		grep -qx "  up to .* more as rules and fleet shares are written" <<<"$out" ||
		bad+=("attach printed: $out")
	for m in sources source_index source_keys history verified answered newcomers; do
		read -r e k v memlock < <(bpftool -j map show pinned "$pins/$vrx/$m" |
			jq -r '"\(.max_entries) \(.bytes_key) \(.bytes_value) \(.bytes_memlock)"')
		b=$(jq ".maps.$m" <<<"$j")
		# a hash: E x (48 + key + (8 + ncpus x value, per CPU) or value) +
		# 16 x buckets (2^k >= E) + 32 x ncpus; a per-CPU array E x (8 +
		# ncpus x value); a mappable array E x value in whole pages and
		# the page of the kernel's array before them; key
		# and value rounded to 8
		case $m in
		sources) kind=pcarray ;; source_index | source_keys) kind=mmarray ;;
		newcomers) kind=pchash ;; *) kind=hash ;;
		esac
		want=$(awk -v e="$e" -v k="$k" -v v="$v" -v n="$ncpus" -v kind="$kind" 'BEGIN {
			k = int((k + 7) / 8) * 8; v = int((v + 7) / 8) * 8
			if (kind == "pcarray") { printf "%.0f\n", e * (8 + n * v); exit }
			if (kind == "mmarray") { printf "%.0f\n", int((e * v + 4095) / 4096) * 4096 + 4096; exit }
			el = 48 + k + (kind == "pchash" ? 8 + n * v : v); p = 1; while (p < e) p *= 2
			printf "%.0f\n", e * el + 16 * p + 32 * n }')
		[ "$b" = "$want" ] || bad+=("$m: status $b, from bpftool's shape $want")
		if [ "$(printf '%s\n' 6.4 "$(uname -r)" | sort -V | head -1)" = 6.4 ]; then
			[ "$memlock" -ge "$b" ] && [ "$memlock" -lt $((b + 1024)) ] ||
				bad+=("$m: status $b, bpftool memlock $memlock")
		fi
	done
	# --max-sources sizes them: twice the sources, about twice the bytes
	rl detach "$vrx" >/dev/null && rl attach "$vrx" --max-sources 10000 >/dev/null ||
		bad+=("attach --max-sources 10000")
	b=$(rl status --json | jq --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		.memory.max_sources_bytes')
	awk -v a="$(jq .max_sources_bytes <<<"$j")" -v b="$b" 'BEGIN { exit !(b > 1.8 * a && b < 2.2 * a) }' ||
		bad+=("max_sources_bytes $(jq .max_sources_bytes <<<"$j") at 5000, $b at 10000")
	check attach_memory "${#bad[@]} == 0" "${bad[*]}"
}

# ---- what attach and reload print fits 80 columns -----------------------------------
# With a name of the kernel's longest (15 characters), every line of what
# attach (falling back to generic mode, every flag on, a --priority) and a
# reload onto new maps (another --priority) print is at most 80 columns: a
# long message goes on in lines indented two spaces.
test_attach_output_width() {
	local long out rc problems
	long=$(printf '%.15s' "${id}wwwwwwwwwwwwwww")
	rx_ifaces+=("$long")
	ip -n "$rx" link add "$long" type bridge && ip -n "$rx" link set "$long" up ||
		{ result attach_output_width 1 "setup"; return; }
	out=$(rl attach "$long" --dry-run --pass-malformed --priority 5 2>&1) &&
		out+=$'\n'$(rl reload "$long" --window 2s --no-dry-run --priority 6 2>&1) &&
		out+=$'\n'$(rl detach "$long" 2>&1); rc=$?
	# --priority: not here (no dispatcher), or kept at reload (one)
	problems=$(width_problems "$out" "attached to $long (generic mode.*):" "  falling back to generic mode" \
		"$long: --priority \(has no effect here\|kept at 5\):" \
		"  window 1s in 10 buckets (.* clock), up to [0-9]* sources, dry run" \
		"  passing malformed frames" "memory: .* possible CPUs," \
		"  up to .* more as rules and fleet shares are written" \
		"$long: new maps: carried 0 rules, 0 bans, 0 verified sources," \
		"  not the sources' windows and counters (every source starts a fresh window)" \
		"reloaded $long (generic mode.*):")
	ip -n "$rx" link del "$long"
	[ "$rc" = 0 ] && [ -z "$problems" ]
	result attach_output_width $? "exit $rc; $problems; printed: $out"
}
