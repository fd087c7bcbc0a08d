# shellcheck shell=bash
# e2e area: the command line itself: help, version, status, and every bad
# input (refused with its exit status and message, nothing changed).
# Sourced by tests/e2e/run.sh, which sets up the namespaces and links and
# holds the helpers (send, fresh, quota, seen, src_stat, ...). Each
# test_NAME is one test: `tests/e2e/run.sh BUILD_DIR NAME` runs it alone.

# run as nobody: what an unprivileged user is told
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# ---- help, version, status ------------------------------------------------------
test_cli_help() {
	local bad=() c out err=/tmp/$id.err rc
	tmpfiles+=("$err")
	for c in "" attach detach quota ban stats events status; do
		out=$(rl $c --help 2>"$err"); rc=$?
		[ "$rc" = 0 ] && [[ $out == Usage:* ]] && [ ! -s "$err" ] ||
			bad+=("'$c --help': exit $rc")
	done
	[[ $(rl --version) == "xdp-ratelimit "[0-9]* ]] || bad+=("--version")
	# no command, no subcommand: an error first, then the usage
	err=$(rl 2>&1 >/dev/null); rc=$?
	[ "$rc" = 2 ] && [[ $err == "xdp-ratelimit: missing command"*Usage:* ]] ||
		bad+=("no command: exit $rc, said '${err%%$'\n'*}'")
	err=$(rl quota 2>&1 >/dev/null); rc=$?
	[ "$rc" = 2 ] && [[ $err == "xdp-ratelimit: quota: missing subcommand"*Usage:* ]] ||
		bad+=("quota without set/del/list: exit $rc, said '${err%%$'\n'*}'")
	err=$(rl ban 2>&1 >/dev/null); rc=$?
	[ "$rc" = 2 ] && [[ $err == "xdp-ratelimit: ban: missing subcommand"*Usage:* ]] ||
		bad+=("ban without list/del: exit $rc, said '${err%%$'\n'*}'")
	check help_and_version "${#bad[@]} == 0" "${bad[*]}"
	fresh --window 500ms --buckets 5 --max-sources 100 --ipv6-prefix 56 ||
		{ result status_json 1 "attach"; return; }
	out=$(rl status --json | jq -c --arg i "$vrx" '.interfaces[] | select(.ifname == $i) |
		[.mode, .window_ms, .buckets, .max_sources, .ipv6_prefix, .state]')
	[ "$out" = '["native",500,5,100,56,"ok"]' ]
	result status_json $? "status --json: $out"
	# the human table, every column: every value in its header's column
	out=$(rl status --wide)
	[[ $out == "IFACE "*" MODE "*" WINDOW "*" BUCKETS "*" MAX_SRC "*" MEMORY "*" IPV6_PFX "*" RULES "*" VERIFIED "*" EGRESS "*" STATE"$'\n'* ]] &&
		[[ "$(table_row "$out" IFACE "$vrx")" =~ ^"$vrx native 500ms 5 100 "[0-9.]+[kMG]B" /56 0 0 $vrx ok"$ ]]
	result status_table $? "status printed:"$'\n'"$out"
}

# ---- bad input: refused, exit status, nothing changed -----------------------------
# What a refused command must leave as it was: rules and totals of $vrx,
# the programs on every link, and the pin directories.
state() {
	rl quota list --iface "$vrx" --json
	stats_json | jq -c '.interfaces[0].totals'
	xdp_prog_id "$vrx"
	echo "/$(xdp_prog_id "$vrx2")/$(xdp_prog_id "$dummy")/$(xdp_prog_id "$dot")"
	ls "$pins" | grep "^$id"
}
# bad NAME STATUS WORD CMD...: CMD fails with exit STATUS and a message on
# stderr starting "xdp-ratelimit: " that names WORD, and changes nothing.
bad() {
	local name=$1 want=$2 word=$3 err rc why=()
	shift 3
	err=$("$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" = "$want" ] || why+=("exit $rc, want $want")
	[[ $err == "xdp-ratelimit: "* ]] || why+=("stderr not 'xdp-ratelimit: ...'")
	[[ $err == *"$word"* ]] || why+=("does not say '$word'")
	[ "$(state)" = "$state0" ] || why+=("state changed")
	result "bad_$name" "${#why[@]}" "${why[*]}: $err"
}
test_cli_bad_input() {
	fresh --default-pps 10 && quota 198.18.19.0/24 --pps 5 &&
		rl attach "$dot" >/dev/null ||
		{ result bad_input 1 "attach"; return; }
	send --src 198.18.19.1 --count 20 >/dev/null
	local q=(quota set) i=(--iface "$vrx") rc
	# a name with a dot is pinned with ':' in its place
	[ -d "$(pin_dir "$dot")" ] && [ -n "$(xdp_prog_id "$dot")" ] &&
		rl status --json | jq -e --arg i "$dot" \
			'.interfaces[] | select(.ifname == $i and .state == "ok")' >/dev/null
	result iface_name_with_dot $? "attach $dot: pins $(ls -d "$(pin_dir "$dot")" 2>&1)"
	state0=$(state)
	bad address 2 "198.18.300.1" rl "${q[@]}" 198.18.300.1 --pps 5 "${i[@]}"
	bad address_v6 2 "2001:db8::g" rl "${q[@]}" 2001:db8::g/64 --pps 5 "${i[@]}"
	bad prefix_length 2 "/33" rl "${q[@]}" 198.18.0.0/33 --pps 5 "${i[@]}"
	bad prefix_length_v6 2 "/129" rl "${q[@]}" 2001:db8::/129 --pps 5 "${i[@]}"
	bad host_bits 2 "198.18.19.0/24" rl "${q[@]}" 198.18.19.1/24 --pps 5 "${i[@]}"
	bad rate 2 "5x" rl "${q[@]}" 198.18.19.0/24 --pps 5x "${i[@]}"
	bad rate_negative 2 "-1" rl "${q[@]}" 198.18.19.0/24 --bps -1 "${i[@]}"
	bad rate_too_large 2 "too large" rl "${q[@]}" 198.18.19.0/24 --pps 99999999999999999999 "${i[@]}"
	bad no_limit 2 "--pps" rl "${q[@]}" 198.18.19.0/24 "${i[@]}"
	bad syn_cookies_switch 2 "neither on nor off" rl "${q[@]}" 198.18.19.0/24 --syn-cookies yes "${i[@]}"
	bad missing_value 2 "--pps" rl "${q[@]}" 198.18.19.0/24 "${i[@]}" --pps
	bad ipv6_longer_than_tracked 1 "/64" rl "${q[@]}" 2001:db8::/96 --pps 5 "${i[@]}"
	# a window counts at most 4294967294 packets or bytes (32-bit buckets)
	bad budget_too_large 2 "--pps 4294967294 or less" rl "${q[@]}" 198.18.19.0/24 --pps 5G "${i[@]}"
	bad budget_too_large_scoped 2 "--aggregate-bps 4294967294 or less" \
		rl "${q[@]}" 198.18.19.0/24 --proto tcp --syn --aggregate-bps 5G "${i[@]}"
	bad default_budget_too_large 2 "--default-pps 71582788 or less" \
		rl attach "$vrx2" --window 1m --default-pps 100M
	# --verified-ttl: 1s to 24h; --replies-via: interfaces here, once each
	bad verified_ttl_short 2 "1s to 24h" rl attach "$vrx2" --verified-ttl 500ms
	bad verified_ttl_long 2 "1s to 24h" rl attach "$vrx2" --verified-ttl 1441m
	bad verified_ttl_garbage 2 "duration" rl attach "$vrx2" --verified-ttl soon
	bad replies_via_missing 2 "no interface named 'nosuch$id'" \
		rl attach "$vrx2" --replies-via "nosuch$id"
	bad replies_via_twice 2 "twice" rl attach "$vrx2" --replies-via "$vrx,$vrx"
	bad replies_via_empty 2 "IFACE" rl attach "$vrx2" --replies-via ,
	# --ban: 0, or 1ms to a day; --new-*: a RATE, its range said
	bad ban_hours 2 "1ms to 24h" rl "${q[@]}" 198.18.19.0/24 --ban 25h "${i[@]}"
	bad ban_too_long 2 "1ms to 24h" rl "${q[@]}" 198.18.19.0/24 --ban 1441m "${i[@]}"
	bad ban_negative 2 "1ms to 24h" rl "${q[@]}" 198.18.19.0/24 --ban -1s "${i[@]}"
	bad ban_fraction 2 "1ms to 24h" rl "${q[@]}" 198.18.19.0/24 --ban 1.5s "${i[@]}"
	bad ban_garbage 2 "1ms to 24h" rl "${q[@]}" 198.18.19.0/24 --ban soon "${i[@]}"
	bad duration_hours_upper 2 "duration" rl "${q[@]}" 198.18.19.0/24 --ban 1H "${i[@]}"
	bad verified_ttl_hours 2 "1s to 24h" rl attach "$vrx2" --verified-ttl 25h
	bad ban_for_list 2 "'quota set'" rl quota list --ban 1s "${i[@]}"
	bad new_pps_negative 2 "allowed" rl "${q[@]}" 198.18.19.0/24 --new-pps -5 "${i[@]}"
	bad new_pps_fraction 2 "allowed" rl "${q[@]}" 198.18.19.0/24 --new-pps 1.5k "${i[@]}"
	bad new_pps_garbage 2 "allowed" rl "${q[@]}" 198.18.19.0/24 --new-pps lots "${i[@]}"
	bad new_bps_too_large 2 "allowed" rl "${q[@]}" 198.18.19.0/24 --new-bps 99999999999999999999 "${i[@]}"
	# ban del: one source as ban list shows it, or all; not banned: exit 1
	bad ban_del_v6_shorter 2 "not one source" rl ban del 2001:db8::/48 "${i[@]}"
	bad ban_del_v4_prefix 2 "not one source" rl ban del 198.18.0.0/24 "${i[@]}"
	bad ban_del_default 2 "not one source" rl ban del default "${i[@]}"
	bad ban_del_garbage 2 "198.18.300.1" rl ban del 198.18.300.1 "${i[@]}"
	bad ban_del_no_address 2 "ADDRESS" rl ban del "${i[@]}"
	bad ban_del_not_banned 1 "198.18.19.1 is not banned" rl ban del 198.18.19.1 "${i[@]}"
	bad ban_del_not_attached 1 "$vrx2" rl ban del all --iface "$vrx2"
	bad ban_list_sibling_option 2 "--new-pps" rl ban list --new-pps 3 "${i[@]}"
	bad ban_unknown_subcommand 2 "frob" rl ban frob
	bad duration 2 "5x" rl attach "$vrx2" --window 5x
	bad duration_too_long 2 "1m" rl attach "$vrx2" --window 2m
	bad buckets 2 "16" rl attach "$vrx2" --buckets 17
	bad mode 2 "turbo" rl attach "$vrx2" --mode turbo
	bad priority_zero 2 "from 1 to 1000" rl attach "$vrx2" --priority 0
	bad priority_too_big 2 "from 1 to 1000" rl attach "$vrx2" --priority 1001
	bad unknown_interface 1 "nosuch$$" rl attach "nosuch$$"
	bad attach_twice 1 "run 'xdp-ratelimit reload $vrx'" rl attach "$vrx"
	bad quota_not_attached 1 "$vrx2" rl "${q[@]}" 198.18.19.0/24 --pps 5 --iface "$vrx2"
	bad quota_unknown_interface 1 "nosuch$$" rl "${q[@]}" 198.18.19.0/24 --pps 5 --iface "nosuch$$"
	bad detach_not_attached 3 "$vrx2 is not attached: nothing to detach" rl detach "$vrx2"
	bad detach_no_such_interface 3 "nothing to detach" rl detach "nosuch$$"
	bad reload_not_attached 1 "nothing to reload" rl reload "$vrx2"
	# restore: a bad file changes nothing, with or without --test
	local f=/tmp/$id.rules
	tmpfiles+=("$f")
	printf 'quota set 198.18.19.0/24 --pps 5\nquota set 198.18.20.0/24 --pps 5x\n' >"$f"
	bad restore_test_bad_line 1 "$f:2: " rl restore --test --iface "$vrx" "$f"
	printf 'quota del 198.18.19.0/24 --iface %s\n' "$vrx" >"$f"
	bad restore_noflush_del 1 "$f:1: quota del: restore --noflush never deletes" rl restore --noflush "$f"
	printf '# only a comment\n\n' >"$f"
	bad restore_no_command 1 "has no command" rl restore "$f"
	bad restore_test_no_command 1 "has no command" rl restore --test "$f"
	printf 'quota set 198.18.19.0/24 --pps 5 --iface %s\n' "$vrx" >"$f"
	bad restore_iface_other 1 "a line for $vrx in a restore of $vrx2 alone" rl restore --iface "$vrx2" "$f"
	bad restore_iface_bad_name 2 "'/'" rl restore --iface "a/b" "$f"
	bad restore_missing_file 1 "save --iface IFACE --to-unit" rl restore "/tmp/$id.nosuch"
	bad save_to_unit_several 1 "name one with --iface" rl save --to-unit
	bad quota_del_no_rule 1 "198.18.19.7" rl quota del 198.18.19.7 "${i[@]}"
	# what the kernel would refuse as an interface name (dev_valid_name):
	# with '' or '/' the pin path would be the root or another's directory,
	# and ':' names the pins of an interface whose name has a '.'
	bad iface_empty 2 "empty" rl detach ""
	bad iface_empty_attach 2 "empty" rl attach ""
	bad iface_empty_quota 2 "empty" rl "${q[@]}" 198.18.19.0/24 --pps 1 --iface ""
	bad iface_empty_stats 2 "empty" rl stats --iface ""
	bad iface_dot 2 "'.'" rl detach .
	bad iface_dot_dot 2 "'..'" rl quota list --iface ..
	bad iface_slash 2 "'/'" rl detach "$vrx/"
	bad iface_slash_quota 2 "'/'" rl "${q[@]}" 198.18.19.0/24 --pps 1 --iface "$vrx/"
	bad iface_colon 2 "':'" rl detach "${dot//./:}"
	bad iface_whitespace 2 "whitespace" rl detach "$vrx "
	bad iface_too_long 2 "15 characters" rl detach "${vrx}xxxxxxxxxxxxxxx"
	bad stats_not_attached 1 "$vrx2" rl stats --iface "$vrx2"
	bad stats_sort_unknown 2 "dropped-rate, dropped, passed or rate" rl stats --sort newest "${i[@]}"
	bad stats_sort_prometheus 2 "rate()" rl stats --prometheus --sort rate "${i[@]}"
	bad quota_verbose_for_set 2 "unknown option '-v'" rl "${q[@]}" 198.18.19.0/24 --pps 1 -v "${i[@]}"
	bad events_not_attached 1 "run 'xdp-ratelimit attach $vrx2' first" rl events --iface "$vrx2"
	bad events_unknown_interface 1 "nosuch$$ is not attached" rl events --iface "nosuch$$"
	bad events_operand 2 "--iface" rl events "$vrx"
	bad events_iface_empty 2 "empty" rl events --iface ""
	bad events_bad_flag 2 "--top" rl events --top 3 "${i[@]}"
	bad unknown_command 2 "frobnicate" rl frobnicate
	bad unknown_subcommand 2 "frob" rl quota frob 198.18.19.0/24
	bad unknown_flag 2 "--ppz" rl "${q[@]}" 198.18.19.0/24 --ppz 5 "${i[@]}"
	bad unknown_flag_attach 2 "--bogus" rl attach "$vrx2" --bogus
	bad native_unsupported 1 "generic" rl attach "$dummy" --mode native
	bad not_root_quota 1 "root" in_rx "${nobody[@]}" "$cli" "${q[@]}" 198.18.19.0/24 --pps 1 "${i[@]}"
	bad not_root_attach 1 "root" in_rx "${nobody[@]}" "$cli" attach "$vrx2"
	bad not_root_detach 1 "root" in_rx "${nobody[@]}" "$cli" detach "$vrx"
	bad not_root_ban_del 1 "root" in_rx "${nobody[@]}" "$cli" ban del all "${i[@]}"
	bad not_root_ban_list 1 "root" in_rx "${nobody[@]}" "$cli" ban list "${i[@]}"
	bad not_root_events 1 "root" in_rx "${nobody[@]}" "$cli" events "${i[@]}"
	bad ip_netns_exec_attach 1 "nsenter --net=" ip netns exec "$rx" "$cli" attach "$vrx2"
	bad ip_netns_exec_quota 1 "nsenter --net=" ip netns exec "$rx" "$cli" "${q[@]}" 198.18.19.0/24 --pps 1 "${i[@]}"
	bad ip_netns_exec_detach 1 "nsenter --net=" ip netns exec "$rx" "$cli" detach "$vrx"
	bad ip_netns_exec_ban_del 1 "nsenter --net=" ip netns exec "$rx" "$cli" ban del all "${i[@]}"
	bad ip_netns_exec_stats 1 "nsenter --net=" ip netns exec "$rx" "$cli" stats --iface "$vrx"
	# sync's secrets (checked before Redis is asked, which is not there):
	# root's files, no permission for group or others; a fleet key of 32
	# bytes or more; a password that fits, refused rather than cut
	local sd s=(sync --redis "unix:///nonexistent-$id.sock" "${i[@]}")
	sd=$(mktemp -d) && tmpdirs+=("$sd") && chmod 700 "$sd"
	head -c 32 /dev/urandom >"$sd/key" && printf '%031d\n' 0 >"$sd/short" &&
		printf '%0300d\n' 0 >"$sd/longpw" && echo secret >"$sd/pw" &&
		chmod 600 "$sd/key" "$sd/short" "$sd/longpw" "$sd/pw" &&
		cp -p "$sd/key" "$sd/key644" && chmod 644 "$sd/key644" &&
		cp -p "$sd/key" "$sd/key640" && chmod 640 "$sd/key640" &&
		cp -p "$sd/key" "$sd/keynobody" && chown nobody "$sd/keynobody" &&
		cp -p "$sd/pw" "$sd/pw604" && chmod 604 "$sd/pw604" ||
		{ result sync_secret_files 1 "cannot make the files"; return; }
	bad sync_no_fleet_key 2 "--fleet-key-file FILE" rl "${s[@]}"
	bad sync_fleet_key_missing 1 "cannot read --fleet-key-file" rl "${s[@]}" --fleet-key-file "$sd/none"
	bad sync_fleet_key_short 1 "holds 31 bytes: a fleet key is at least 32" rl "${s[@]}" --fleet-key-file "$sd/short"
	bad sync_fleet_key_mode 1 "is open to group or others: only root may read it (chown root:root $sd/key644 && chmod 600" \
		rl "${s[@]}" --fleet-key-file "$sd/key644"
	bad sync_fleet_key_group 1 "open to group or others" rl "${s[@]}" --fleet-key-file "$sd/key640"
	bad sync_fleet_key_owner 1 "is not owned by root: only root may read it (chown root:root" rl "${s[@]}" --fleet-key-file "$sd/keynobody"
	bad sync_fleet_key_dir 1 "not a regular file" rl "${s[@]}" --fleet-key-file "$sd"
	bad sync_password_mode 1 "--password-file $sd/pw604 is open to group or others" \
		rl "${s[@]}" --fleet-key-file "$sd/key" --password-file "$sd/pw604"
	bad sync_password_long 1 "longer than 255 bytes" \
		rl "${s[@]}" --fleet-key-file "$sd/key" --password-file "$sd/longpw"
	bad sync_user_without_password 2 "needs its password" \
		rl "${s[@]}" --fleet-key-file "$sd/key" --redis-user fleet
	bad sync_user_bad 2 "--redis-user" rl "${s[@]}" --fleet-key-file "$sd/key" --redis-user 'a b'
	# the rule and the counters still work after all that
	send --src 198.18.19.1 --count 20 >/dev/null
	local p d
	p=$(src_stat 198.18.19.1 passed_packets) d=$(src_stat 198.18.19.1 dropped_packets)
	check still_enforces_after_bad_input "p >= 5 && p <= 10 && p + d == 40" \
		"198.18.19.1 at 5 pps: $p passed, $d dropped of 2 x 20"
	rl detach "$dot" >/dev/null; rc=$?
	[ "$rc" = 0 ] && [ ! -e "$(pin_dir "$dot")" ] && [ -z "$(xdp_prog_id "$dot")" ]
	result detach_iface_name_with_dot $? "detach $dot: exit $rc"
}

# Pins in a directory another user could have written are refused, naming
# the fix: in a bpffs of its own (a mount namespace of its own), so that
# the machine's pins are never touched.
test_cli_pins_trusted() {
	local out p
	# the directory of this shell's network namespace, which the
	# commands below run in
	p=$("$cli" status --json | jq -r .pin_dir) || { result pins_not_roots_refused 1 "status --json"; return; }
	out=$(unshare -m --propagation private bash -c '
		mount -t bpf -o mode=0777 bpf /sys/fs/bpf &&
			mkdir -m 0755 /sys/fs/bpf/xdp-ratelimit && mkdir -m 0700 "$2" &&
			mkdir -m 0755 "$2/x" && chown 65534 /sys/fs/bpf/xdp-ratelimit || exit 9
		"$1" stats --iface x; echo "rc=$?"
		chown 0 /sys/fs/bpf/xdp-ratelimit && chmod 0700 /sys/fs/bpf/xdp-ratelimit
		"$1" quota list --iface x; echo "rc=$?"
		chmod 0700 "$2/x"
		"$1" quota list --iface x; echo "rc=$?"' _ "$cli" "$p" 2>&1)
	[[ $out == *"xdp-ratelimit: stats: /sys/fs/bpf/xdp-ratelimit is not a directory of root's with mode 0700 (owner uid 65534, mode 0755)"*"mount -t bpf -o mode=0700 bpf /sys/fs/bpf"*"rc=1"*"quota list: $p/x is not a directory of root's with mode 0700 (owner uid 0, mode 0755)"*"chmod 0700 $p/x"*"rc=1"* ]] &&
		[[ $(tail -2 <<<"$out") == *"cannot open $p/x/config"* ]]
	result pins_not_roots_refused $? "$out"
}
