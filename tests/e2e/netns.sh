# shellcheck shell=bash
# e2e area: network namespaces. An attachment belongs to its namespace:
# the same interface name attached in two at once, every command in each
# with and without --iface acting on its own, status naming the other
# only as such, `ip netns exec` (a private mount namespace) refused by
# readers and writers alike, a detach in one leaving the other, a
# namespace's directory there only while something is attached in it and
# kept while a change holds its lock, and what an attach killed in a PID
# namespace of its own left repaired.
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
		[[ $out$'\n' == *"which this frees:"$'\n'"  rm -r $b3/IFACE"$'\n'* ]] &&
		[[ $out$'\n' == *"once none is left:"$'\n'"  rmdir $b3"$'\n'* ]] &&
		[ "$(awk 'length > 80' <<<"$out")" = "" ] ||
		why+=("status: $out")
	rm -r "${b3:?}/$vrx"
	rl status --json | jq -e --argjson n "$ino3" \
		'.other_namespaces | map(select(.netns_inode == $n)) | length == 0' >/dev/null ||
		why+=("still listed after its pins went: $(rl status --json | jq -c .other_namespaces)")
	# what status says to run last leaves nothing of that namespace
	rmdir "$b3" || why+=("rmdir $b3, as status says: $(ls -A "$b3")")
	result netns_gone "${#why[@]}" "${why[*]}"
}

# ---- a namespace's directory ---------------------------------------------------
# It is there while an interface is attached in the namespace: the last
# detach removes it, and a command that fails or finds nothing attached
# (which made it to take the lock) leaves none; one interface detached of
# two leaves it and the other's pins. Only the namespace's own, and only
# empty: this suite's namespace's and an empty one of another stay.
test_netns_dir_tidy() {
	local ns4=${id}n i1=${id}i i2=${id}j why=() out rc c d4 top other
	in4() { nsenter --net="/run/netns/$ns4" "$cli" "$@"; }
	ip netns add "$ns4" && extra_ns+=("$ns4") &&
		ip link add "$i1" netns "$ns4" type veth peer name "$i2" netns "$ns4" &&
		ip -n "$ns4" link set "$i1" up && ip -n "$ns4" link set "$i2" up &&
		ip -n "$ns4" link set lo up && d4=$(ns_pins "$ns4") && [ -n "$d4" ] ||
		{ result netns_dir_tidy 1 "a namespace with two interfaces"; return; }
	top=${d4%/*} other=${d4%/*}/netns:0:$$	# inode 0: no namespace's
	mkdir -m 0700 "$other" && tmpdirs+=("$other") &&
		fresh --default-pps 10 && [ ! -e "$d4" ] ||
		{ result netns_dir_tidy 1 "attach here, $other, no $d4 yet"; return; }
	# lo has no native XDP: that attach fails after pinning in its staging
	# directory, and rolls back
	for c in "attach lo --mode native" "attach ${id}x" "detach $i1" \
		"quota set default --pps 5 --iface $i1" "reload $i1" "ban del all --iface $i1"; do
		# shellcheck disable=SC2086
		out=$(in4 $c 2>&1); rc=$?
		[ "$rc" != 0 ] || why+=("'$c' there succeeded: $out")
		[ ! -e "$d4" ] || why+=("'$c' there (exit $rc) left $d4: $(ls -A "$d4")")
	done
	in4 attach "$i1" --default-pps 10 >/dev/null && in4 attach "$i2" --default-pps 10 >/dev/null &&
		[ -e "$d4/$i1/link" ] && [ -e "$d4/$i2/link" ] ||
		{ result netns_dir_tidy 1 "attach $i1 and $i2 there: $(ls -A "$d4" 2>&1); ${why[*]}"; return; }
	out=$(in4 detach "$i1" 2>&1) || why+=("detach $i1: $out")
	[ ! -e "$d4/$i1" ] && [ -e "$d4/$i2/link" ] && [ -e "$d4/$i2/config" ] ||
		why+=("after detaching $i1 of two: $(ls -A "$d4" 2>&1)")
	out=$(in4 status --json | jq -r '[.interfaces[] | .ifname, .state] | join(" ")')
	[ "$out" = "$i2 ok" ] || why+=("status there after detaching $i1: $out")
	out=$(in4 detach "$i2" 2>&1) || why+=("detach $i2: $out")
	[ ! -e "$d4" ] || why+=("$d4 left after the last detach there: $(ls -A "$d4")")
	out=$(in4 detach "$i2" 2>&1); rc=$?
	[ "$rc" = 3 ] && [ ! -e "$d4" ] || why+=("detach $i2 again: exit $rc ($out), $d4 there: $(ls -A "$d4" 2>&1)")
	[ -d "$other" ] || why+=("another namespace's empty $other was removed")
	[ -e "$pins/$vrx/link" ] && [ -d "$top" ] || why+=("this namespace's pins: $(ls -A "$pins" 2>&1)")
	result netns_dir_tidy "${#why[@]}" "${why[*]}"
}

# ---- a namespace's directory while a change holds its lock -------------------
# The lock is an flock on the directory itself: were it removed while a
# change holds it (empty until the change pins, as an `rmdir` of every
# empty netns:* directory by a script's cleanup would), the change would
# fail ("cannot create ...: No such file or directory") and the next one
# would lock a new directory beside it. strace stops an attach just after
# it took the lock (its first uname, before it pins anything); the
# directory must then not be removable, the lock still taken at its path,
# and the attach must complete once resumed. Stopped a step earlier, just
# after the flock (before the lock is marked held), the directory can go:
# the attach must take the new one and complete.
# held_attach IFACE SYSCALL: attach IFACE in $ns5 (the caller's) under strace, stopped
# after its first SYSCALL (an arithmetic 1 when it did not stop); sets
# held_strace (strace's PID), held_cli (the CLI's) and held_out. Stopped means
# strace's own "stopped by SIGSTOP": under ptrace a process shows the state of a
# group stop ('t') at every system call it is traced through as well.
held_attach() {	# IFACE SYSCALL
	held_out=$(mktemp) && tmpfiles+=("$held_out")
	held_trace=$(mktemp) && tmpfiles+=("$held_trace")
	# (a sanitizer build's leak check cannot run under ptrace)
	ASAN_OPTIONS=detect_leaks=0 nsenter --net="/run/netns/$ns5" strace -f -qq -o "$held_trace" -e trace="$2" \
		-e inject="$2:signal=SIGSTOP:when=1" "$cli" attach "$1" --default-pps 10 >"$held_out" 2>&1 &
	held_strace=$! held_cli=
	bg+=("$held_strace")
	stopped() {
		held_cli=$(ps -o pid= --ppid "$held_strace" | tr -d ' ')
		[ -n "$held_cli" ] && grep -q -- '--- stopped by SIGSTOP ---' "$held_trace"
	}
	within 100 stopped
}
# Resume the held attach: its exit status (killed, with strace, after 30 s).
held_resume() {
	ended() { [[ ! -e /proc/$held_strace || $(awk '{print $3}' "/proc/$held_strace/stat") == Z ]]; }
	kill -CONT "$held_cli"
	within 300 ended || kill -KILL "$held_cli" "$held_strace" 2>/dev/null
	wait "$held_strace"
}
lock_busy() { flock -n -E 75 "$1" true 2>/dev/null; [ $? = 75 ]; }
# The held attach, resumed, completes in directory DIR, and a detach then
# leaves no directory: what fails goes into the caller's `why`.
resumed_attached() {	# NS DIR IFACE WHAT
	local rc
	held_resume; rc=$?
	[ "$rc" = 0 ] && [ -e "$2/$3/link" ] || why+=("$4: exit $rc: $(cat "$held_out")")
	nsenter --net="/run/netns/$1" "$cli" detach "$3" >/dev/null && [ ! -e "$2" ] ||
		why+=("$4: detach $3, then $2: $(ls -A "$2" 2>&1)")
}
test_netns_dir_held() {
	local i1=${id}k i2=${id}l why=() d5 ns5=${id}h
	ip netns add "$ns5" && extra_ns+=("$ns5") &&
		ip link add "$i1" netns "$ns5" type veth peer name "$i2" netns "$ns5" &&
		ip -n "$ns5" link set "$i1" up && ip -n "$ns5" link set "$i2" up &&
		d5=$(ns_pins "$ns5") && [ -n "$d5" ] && [ ! -e "$d5" ] ||
		{ result netns_dir_held 1 "a namespace with two interfaces, no pins yet"; return; }
	# held: the directory stays, with the lock at its path
	if held_attach "$i1" uname; then
		lock_busy "$d5" || why+=("the stopped attach does not hold the lock of $d5")
		rmdir "$d5" 2>/dev/null && why+=("an empty-directory rmdir removed $d5 under a held lock")
		lock_busy "$d5" || why+=("after that rmdir, the lock at $d5 is free: a second change would run beside the first")
	else
		why+=("the attach did not stop after taking the lock: $(cat "$held_out")")
	fi
	resumed_attached "$ns5" "$d5" "$i1" "the held attach"
	# just locked: removed under it, it takes the lock again
	if held_attach "$i1" flock; then
		lock_busy "$d5" || why+=("the attach stopped after its flock holds no lock of $d5")
		rmdir "$d5" || why+=("$d5 not removable before the lock was marked held: $(ls -A "$d5")")
	else
		why+=("the attach did not stop after its flock: $(cat "$held_out")")
	fi
	resumed_attached "$ns5" "$d5" "$i1" "the attach whose directory went"
	result netns_dir_held "${#why[@]}" "${why[*]}"
}

# ---- an attach killed in a PID namespace of its own ----------------------------
# Its staging directory is named by its pid there ("IFACE attaching 4":
# strace is 1), which here names another process (a kernel thread):
# no pid says whether a staging directory's attach still runs, the lock
# does (only a change holding it makes one). Killed before its rename, it
# leaves a complete staging directory: status reports it, detach removes
# it, and an attach of the interface then works.
test_netns_pid_stage() {
	local i1=${id}k i2=${id}l why=() d6 out rc stage ns6=${id}w
	ip netns add "$ns6" && extra_ns+=("$ns6") &&
		ip link add "$i1" netns "$ns6" type veth peer name "$i2" netns "$ns6" &&
		ip -n "$ns6" link set "$i1" up && ip -n "$ns6" link set "$i2" up &&
		d6=$(ns_pins "$ns6") && [ -n "$d6" ] ||
		{ result netns_pid_stage 1 "a namespace with two interfaces"; return; }
	in6() { nsenter --net="/run/netns/$ns6" "$@"; }
	ASAN_OPTIONS=detect_leaks=0 in6 timeout 60 unshare --pid --fork strace -f -qq -o /dev/null -e trace=rename \
		-e inject=rename:signal=SIGKILL:when=1 "$cli" attach "$i1" --default-pps 10 >/dev/null 2>&1
	stage=$(compgen -G "$d6/$i1 attaching *" | head -n 1)
	[ -e "$stage/config" ] && [ ! -e "$d6/$i1" ] && kill -0 "${stage##* }" 2>/dev/null ||
		{ result netns_pid_stage 1 "no staging directory whose pid is alive here: $(ls -A "$d6" 2>&1)"; return; }
	tmpdirs+=("$stage")	# what detach leaves, the cleanup removes
	out=$(in6 "$cli" status --json | jq -r --arg i "$i1" '.interfaces[] | select(.ifname == $i) | .staging_dir')
	[ "$out" = "$stage" ] || why+=("status --json names no staging directory of $i1: $(in6 "$cli" status --json)")
	out=$(in6 "$cli" detach "$i1" 2>&1); rc=$?
	[ "$rc" = 0 ] && [[ $out == "removed the pins an interrupted attach left for $i1"* ]] && [ ! -e "$stage" ] ||
		why+=("detach: exit $rc: $out; left: $(ls -A "$d6" 2>&1)")
	out=$(in6 "$cli" attach "$i1" --default-pps 10 2>&1) && [ -e "$d6/$i1/link" ] ||
		why+=("attach after the repair: $out")
	in6 "$cli" detach "$i1" >/dev/null && [ ! -e "$d6" ] || why+=("$d6 left after the last detach: $(ls -A "$d6" 2>&1)")
	result netns_pid_stage "${#why[@]}" "${why[*]}"
}
