# shellcheck shell=bash
# e2e area: network namespaces. An attachment belongs to its namespace:
# the same interface name attached in two at once, every command in each
# with and without --iface acting on its own, status naming the other
# only as such, `ip netns exec` (a private mount namespace) refused by
# readers and writers alike, and a detach in one leaving the other.
# Sourced by tests/e2e/run.sh; `tests/e2e/run.sh BUILD_DIR NAME` runs one.

test_netns_same_name() {
	local ns2=${id}m peer=${id}p why=() out rc q1 q2 ino2 b2
	in2() { nsenter --net="/run/netns/$ns2" "$@"; }
	ip netns add "$ns2" && extra_ns+=("$ns2") &&
		ip link add "$vrx" netns "$ns2" type veth peer name "$peer" netns "$ns2" &&
		ip -n "$ns2" link set "$vrx" up && ip -n "$ns2" link set "$peer" up ||
		{ result netns_same_name 1 "a second namespace with $vrx"; return; }
	fresh --default-pps 10 || { result netns_same_name 1 "attach here"; return; }
	# the same name in the other namespace: attached too, without --iface
	# for everything that follows there (it is the only one there)
	out=$(in2 "$cli" attach "$vrx" --default-pps 20 2>&1) || why+=("attach there: $out")
	b2=$(ns_pins "$ns2")
	[ -n "$b2" ] && [ "$b2" != "$pins" ] && [ -e "$b2/$vrx/config" ] && [ -e "$pins/$vrx/config" ] ||
		why+=("pin directories: here $pins, there '$b2'")
	in2 "$cli" quota set 198.18.60.0/24 --pps 5 >/dev/null || why+=("quota set without --iface there")
	q1=$(rl quota list --iface "$vrx" --json | jq -c '[.interfaces[0].rules[] | [.prefix, .pps]]')
	q2=$(in2 "$cli" quota list --json | jq -c '[.interfaces[0].rules[] | [.prefix, .pps]]')
	[ "$q1" = '[["0.0.0.0/0",10],["::/0",10]]' ] || why+=("rules here: $q1")
	[ "$q2" = '[["0.0.0.0/0",20],["198.18.60.0/24",5],["::/0",20]]' ] || why+=("rules there: $q2")
	for c in "stats --json" "ban list --json" "save" "status --json" "ban del all"; do
		# shellcheck disable=SC2086
		out=$(in2 "$cli" $c 2>&1) || why+=("'$c' without --iface there: $out")
	done
	[[ $(in2 "$cli" save) == *"attach $vrx "*"quota set 198.18.60.0/24 --pps 5 --iface $vrx"* ]] ||
		why+=("save there: $(in2 "$cli" save)")
	# status: each its own, the other named as another namespace's, never
	# judged or given a repair hint
	ino2=$(stat -L -c %i "/run/netns/$ns2")
	out=$(rl status --json)
	jq -e --arg i "$vrx" --argjson n "$ino2" \
		'(.interfaces | map(.ifname) | index($i)) != null and
		 (.other_namespaces | map(select(.netns_inode == $n and .interfaces == [$i])) | length) == 1' \
		<<<"$out" >/dev/null || why+=("status --json here: $out")
	out=$(rl status)
	[[ $out == *"in network namespace net:[$ino2] (not this one): $vrx"* ]] && [[ $out != *repair* ]] &&
		[[ $out != *BROKEN* ]] || why+=("status here: $out")
	out=$(in2 "$cli" status --json | jq -c --arg i "$vrx" '[.interfaces[] | .ifname, .state]')
	[ "$out" = "[\"$vrx\",\"ok\"]" ] || why+=("status there: $out")
	# ip netns exec: readers refuse as writers do, and nothing changes
	for c in "status" "quota list" "stats" "ban list" "save" "quota set default --pps 1"; do
		# shellcheck disable=SC2086
		out=$(ip netns exec "$ns2" "$cli" $c 2>&1); rc=$?
		[ "$rc" = 1 ] && [[ $out == *"nsenter --net=/run/netns/NAME"* ]] ||
			why+=("ip netns exec '$c': exit $rc, said: $out")
	done
	[ "$(in2 "$cli" quota list --json | jq -c '[.interfaces[0].rules[] | [.prefix, .pps]]')" = "$q2" ] ||
		why+=("ip netns exec changed the rules there")
	# a detach there leaves this one enforcing, and its directory goes
	out=$(in2 "$cli" detach "$vrx" 2>&1) || why+=("detach there: $out")
	[ ! -e "$b2" ] || why+=("$b2 left after the last detach there: $(ls "$b2")")
	[ "$(rl quota list --iface "$vrx" --json | jq -c '[.interfaces[0].rules[] | [.prefix, .pps]]')" = "$q1" ] &&
		[ "$(rl status --json | jq -r --arg i "$vrx" '.interfaces[] | select(.ifname == $i) | .state')" = ok ] ||
		why+=("this namespace's attachment after the detach there: $(rl status)")
	send --src 198.18.61.1 --count 30 >/dev/null
	[ "$(seen 198.18.61.1)" = 10 ] || why+=("here after the detach there: $(seen 198.18.61.1) of 30 passed, want 10")
	result netns_same_name "${#why[@]}" "${why[*]}"
}

# ---- an attachment whose namespace died -----------------------------------------------
# Deleting a namespace takes its interfaces, and the kernel detaches the
# XDP link of each (ifindex 0), but the pins stay: status elsewhere marks
# that attachment gone and says which directory to remove; after that it
# is no longer listed.
test_netns_gone() {
	local ns3=${id}g peer=${id}q why=() out b3 ino3
	ip netns add "$ns3" && extra_ns+=("$ns3") &&
		ip link add "$vrx" netns "$ns3" type veth peer name "$peer" netns "$ns3" &&
		ip -n "$ns3" link set "$vrx" up && ip -n "$ns3" link set "$peer" up &&
		nsenter --net="/run/netns/$ns3" "$cli" attach "$vrx" --default-pps 20 >/dev/null &&
		b3=$(ns_pins "$ns3") && [ -n "$b3" ] && [ -e "$b3/$vrx/link" ] ||
		{ result netns_gone 1 "an attachment in a third namespace"; return; }
	tmpdirs+=("$b3")	# what the test does not remove, the cleanup does
	ino3=$(stat -L -c %i "/run/netns/$ns3")
	gone_here() {
		rl status --json | jq -e --argjson n "$ino3" --arg i "$vrx" --arg d "$b3" \
			'.other_namespaces | map(select(.netns_inode == $n)) |
			 length == 1 and .[0].gone == [$i] and .[0].pin_dir == $d' >/dev/null
	}
	gone_here && why+=("gone while its namespace lives: $(rl status --json | jq -c .other_namespaces)")
	ip netns del "$ns3"
	# the kernel destroys the namespace, and with it the veth, in the background
	within 200 gone_here || why+=("not marked gone 20 s after its namespace was deleted: $(rl status --json | jq -c .other_namespaces)")
	out=$(rl status)
	[[ $out == *"in network namespace net:[$ino3] (not this one): $vrx (gone)"* ]] &&
		[[ $out == *"which this frees:"$'\n'"  rm -r $b3/IFACE"* ]] &&
		[ "$(awk 'length > 80' <<<"$out")" = "" ] ||
		why+=("status: $out")
	rm -r "${b3:?}/$vrx"
	rl status --json | jq -e --argjson n "$ino3" \
		'.other_namespaces | map(select(.netns_inode == $n)) | length == 0' >/dev/null ||
		why+=("still listed after its pins went: $(rl status --json | jq -c .other_namespaces)")
	result netns_gone "${#why[@]}" "${why[*]}"
}
