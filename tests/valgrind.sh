#!/bin/bash
# The unit suite and CLI commands under valgrind (memcheck, full leak check):
# no invalid access, no uninitialised use, no leak. Usage: tests/valgrind.sh BUILD_DIR
# (a build without SANITIZE). Ends with "valgrind: N passed, N failed".
#
# - the unit suite, and the CLI's help and error paths; commands that read
#   pins run against an empty bpffs in a private mount namespace (root), so
#   the result does not depend on what else is attached;
# - the success paths (root): attach to a veth in a network namespace made
#   here, quota set/list/del, stats (tables, --json, --prometheus, --top,
#   --watch) with real frames counted, status, ban list/del of the bans they
#   caused, events following them, save and restore, one scrape of the
#   exporter, a sync agent against a redis-server of its own for a second,
#   detach. The
#   namespace and the pins go at
#   exit, whatever happens.
# tests/valgrind.supp silences known reports inside libbpf 1.1 and libxdp 1.3 (see there).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# its bounded waits (within); this suite keeps its own result lines
. "$here/lib.sh"
out=${1:-build}
out=$(cd "$out" && pwd) || exit 1
cli=$out/xdp-ratelimit
gen=$out/trafficgen
passed=0
failed=0
log=$(mktemp)
vg_key=$(mktemp) vg_short=$(mktemp)	# fleet keys: root's, mode 600 (mktemp's)
head -c 32 /dev/urandom >"$vg_key"
head -c 31 /dev/urandom >"$vg_short"
id=rlvg$$
ns=${id}n va=${id}a vb=${id}b	# the limiter goes on $va; frames come in from $vb
pins=	# the namespace's pin directory, once it exists
cleanup() {
	if [ -e "/run/netns/$ns" ]; then
		[ -n "$pins" ] && [ -e "$pins/$va" ] &&
			nsenter --net="/run/netns/$ns" "$cli" detach "$va" >/dev/null 2>&1
		ip netns del "$ns" 2>/dev/null
	fi
	[ -z "$pins" ] || rm -rf "${pins:?}/$va" 2>/dev/null
	[ -z "$pins" ] || rmdir "$pins" 2>/dev/null
	rm -f "$log" "$vg_key" "$vg_short"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# the CLI's own failures exit 1 or 2: valgrind's errors get a code of their own
VG_ERR=99
vg=(valgrind -q --error-exitcode=$VG_ERR --leak-check=full
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes
    --suppressions="$here/valgrind.supp")

result() {	# NAME OK
	if [ "$2" = 1 ]; then
		echo "ok   valgrind/$1"
		passed=$((passed + 1))
	else
		sed 's/^/    /' "$log" | tail -n 40
		echo "FAIL valgrind/$1"
		failed=$((failed + 1))
	fi
}

# run_cli NAME WANT_STATUS [--empty-bpffs | --in-ns] ARGS...
# (--in-ns: in the test's network namespace, with the machine's bpffs)
run_cli() {
	local name=$1 want=$2 st
	shift 2
	if [ "${1:-}" = --in-ns ]; then
		shift
		nsenter --net="/run/netns/$ns" "${vg[@]}" "$cli" "$@" >"$log" 2>&1
	elif [ "${1:-}" = --empty-bpffs ]; then
		shift
		if [ "$(id -u)" -ne 0 ]; then
			echo "    (not root: $name runs against the real bpffs)"
			"${vg[@]}" "$cli" "$@" >"$log" 2>&1
		else
			unshare -m sh -c 'mount -t bpf bpf /sys/fs/bpf && exec "$@"' sh \
				"${vg[@]}" "$cli" "$@" >"$log" 2>&1
		fi
	else
		"${vg[@]}" "$cli" "$@" >"$log" 2>&1
	fi
	st=$?
	[ "$st" = "$want" ] || echo "exit status $st, want $want (valgrind errors: $VG_ERR)" >>"$log"
	result "$name" "$([ "$st" = "$want" ] && echo 1)"
}

# SIGNAL to the command of PID run under valgrind, which must end it
# cleanly: true when it exited 0, else its status goes to the log.
stopped_clean() {	# SIGNAL PID
	local st
	kill "-$1" "$2"
	wait "$2"
	st=$?
	[ "$st" = 0 ] || echo "exit status $st, want 0 (valgrind errors: $VG_ERR)" >>"$log"
	[ "$st" = 0 ]
}

if ! command -v valgrind >/dev/null; then
	echo "valgrind not installed (scripts/install-deps.sh)"
	echo "valgrind: 0 passed, 1 failed"
	exit 1
fi

for suite in unit cli; do	# the library's host tests, the CLI's
	valgrind -q --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect,possible \
		--suppressions="$here/valgrind.supp" "$out/test_$suite" >"$log" 2>&1
	result "${suite}_suite" "$([ $? = 0 ] && echo 1)"
done

run_cli help 0 --help
run_cli version 0 --version
for c in attach reload detach quota ban stats events status save restore exporter sync; do
	run_cli "${c}_help" 0 "$c" --help
done
run_cli no_command 2
run_cli unknown_command 2 bogus
run_cli unknown_option 2 status --bogus
run_cli attach_no_iface 2 attach
run_cli attach_bad_window 2 attach lo --window 5h
run_cli attach_bad_buckets 2 attach lo --buckets 17
run_cli attach_bad_rate 2 attach lo --default-pps 1.5k
run_cli attach_bad_mode 2 attach lo --mode turbo
run_cli reload_no_iface 2 reload
run_cli reload_bad_ttl 2 reload lo --verified-ttl 500ms
run_cli reload_not_attached 1 --empty-bpffs reload lo
run_cli quota_bad_prefix 2 quota set 198.18.0.1/15 --pps 1
run_cli quota_mapped_prefix 2 quota set ::ffff:198.18.0.7 --pps 1
run_cli quota_bad_rate 2 quota set 198.18.0.0/15 --pps -1
run_cli quota_no_limit 2 quota set 198.18.0.0/15
run_cli quota_bad_ban 2 quota set 198.18.0.0/15 --ban 25h
run_cli quota_bad_new_pps 2 quota set 198.18.0.0/15 --new-pps lots
run_cli quota_bad_proto 2 quota set 198.18.0.0/15 --proto sctp --pps 1
run_cli quota_bad_dport 2 quota set 198.18.0.0/15 --proto udp --dport 2000-1000 --pps 1
run_cli quota_bad_syn 2 quota set 198.18.0.0/15 --syn --pps 1
run_cli quota_bad_burst 2 quota set 198.18.0.0/15 --burst 0
run_cli ban_no_subcommand 2 ban
run_cli ban_bad_address 2 ban del 198.18.300.1
run_cli ban_list_sibling_option 2 ban list --new-pps 1
run_cli stats_bad_top 2 stats --top x
run_cli stats_bad_watch 2 stats --watch 2h
run_cli stats_prometheus_watch 2 stats --prometheus --watch
run_cli exporter_bad_listen 2 exporter --listen localhost:9567
run_cli exporter_no_listen 2 exporter
run_cli sync_no_redis 2 sync
run_cli sync_bad_url 2 sync --redis redis://nohost
run_cli sync_bad_fleet 2 sync --redis redis://h:1 --fleet 'a b'
run_cli sync_no_fleet_key 2 sync --redis redis://h:1
run_cli sync_short_fleet_key 1 sync --redis redis://h:1 --fleet-key-file "$vg_short"
run_cli sync_nothing_attached 1 --empty-bpffs sync --redis unix:///nonexistent.sock --fleet-key-file "$vg_key"
run_cli restore_no_file 2 restore
run_cli events_operand 2 events eth0
run_cli events_nothing_attached 1 --empty-bpffs events
run_cli restore_missing_file 1 --empty-bpffs restore /nonexistent/x.rules
run_cli status_nothing_attached 0 --empty-bpffs status
run_cli status_json_nothing_attached 0 --empty-bpffs status --json
run_cli stats_nothing_attached 0 --empty-bpffs stats
run_cli quota_list_nothing_attached 0 --empty-bpffs quota list --json
run_cli ban_list_nothing_attached 0 --empty-bpffs ban list --json
run_cli ban_del_nothing_attached 1 --empty-bpffs ban del all
run_cli quota_set_nothing_attached 1 --empty-bpffs quota set 198.18.0.0/15 --pps 1
run_cli detach_not_attached 3 --empty-bpffs detach rlvg0

# ---- success paths, on a veth pair in a namespace of our own -------------
fail_all() {	# WHY: the success paths cannot run
	echo "$1" >"$log"
	result success_paths 0
}
if [ "$(id -u)" -ne 0 ]; then
	fail_all "needs root (XDP, namespaces, bpffs)"
elif ! ip netns add "$ns" ||
	! ip -n "$ns" link add "$va" type veth peer name "$vb" ||
	! ip -n "$ns" link set "$va" up || ! ip -n "$ns" link set "$vb" up ||
	! ip -n "$ns" link set lo up; then
	fail_all "cannot create the test namespace $ns"
elif ! pins=$(nsenter --net="/run/netns/$ns" "$cli" status --json | jq -r .pin_dir) ||
	[ -z "$pins" ]; then
	fail_all "status --json names no pin directory"
else
	run_cli attach 0 --in-ns attach "$va" --default-pps 100 --max-sources 1024
	run_cli attach_again 1 --in-ns attach "$va"
	run_cli reload 0 --in-ns reload "$va" --pass-malformed --verified-ttl 5m
	run_cli reload_new_maps 0 --in-ns reload "$va" --max-sources 2048
	run_cli reload_mode 1 --in-ns reload "$va" --mode generic
	run_cli quota_set_v4 0 --in-ns quota set 198.18.0.0/24 --pps 50 --aggregate-pps 1k --iface "$va"
	run_cli quota_set_v6 0 --in-ns quota set 2001:db8::/32 --bps 1M --iface "$va"
	run_cli quota_set_allow 0 --in-ns quota set 198.18.0.7 --pps unlimited --iface "$va"
	run_cli quota_set_default 0 --in-ns quota set default --pps 200 --iface "$va"
	run_cli quota_set_ban 0 --in-ns quota set 198.18.0.0/24 --new-pps 1k --new-bps 10M --ban 1m --iface "$va"
	run_cli quota_set_scoped 0 --in-ns quota set default --proto tcp --syn --pps 20 --burst 5 --iface "$va"
	run_cli quota_set_scoped_dport 0 --in-ns quota set 198.18.0.0/24 --proto udp --dport 53-54 --pps 5 --iface "$va"
	run_cli quota_del_scoped 0 --in-ns quota del 198.18.0.0/24 --proto udp --dport 53-54 --iface "$va"
	run_cli quota_del_scoped_none 1 --in-ns quota del 198.18.0.0/24 --proto icmp --iface "$va"
	run_cli quota_list 0 --in-ns quota list --iface "$va"
	run_cli quota_list_json 0 --in-ns quota list --json --iface "$va"
	run_cli quota_list_verbose_wide 0 --in-ns quota list -v --wide --iface "$va"
	# events follows the frames below (limited, banned) until SIGTERM
	evout=$(mktemp)
	nsenter --net="/run/netns/$ns" "${vg[@]}" "$cli" events --json \
		--iface "$va" >"$evout" 2>"$log" &
	w=$!
	within 300 grep -q '^following' "$log"
	# real frames (the generator is not under test): sources to list.
	# 198.18.0.1 first, on a connection the host answered (its answer
	# out of $va through the egress hook): at twice its quota it is banned
	mac=$(ip -n "$ns" -j link show "$va" | jq -r '.[0].address')
	nsenter --net="/run/netns/$ns" python3 "$here/gen/answers.py" "$va" 198.19.0.1 \
		198.18.0.1 1 &&
	nsenter --net="/run/netns/$ns" "$gen" --dev "$vb" --count 100 --hex \
		"$(python3 "$here/gen/answers.py" --peer-frame "$mac" 198.18.0.1 198.19.0.1)" \
		>/dev/null 2>&1 &&
	nsenter --net="/run/netns/$ns" "$gen" --dev "$vb" --src 198.18.0.1 \
		--sources 8 --count 800 >/dev/null 2>&1 &&
	nsenter --net="/run/netns/$ns" "$gen" --dev "$vb" --src 2001:db8::1 \
		--sources 4 --count 400 >/dev/null 2>&1 ||
		echo "    (trafficgen failed: stats runs on empty tables)"
	within 300 grep -q '"banned"' "$evout"
	stopped_clean TERM "$w"
	st=$?
	grep -q '"banned"' "$evout" || echo "no banned event: $(cat "$evout")" >>"$log"
	result events "$([ "$st" = 0 ] && grep -q '"banned"' "$evout" && echo 1)"
	rm -f "$evout"
	run_cli stats 0 --in-ns stats --iface "$va"
	run_cli stats_json_top 0 --in-ns stats --json --top 3 --iface "$va"
	run_cli stats_top_all 0 --in-ns stats --top 0 --iface "$va"
	run_cli status_wide 0 --in-ns status --wide
	run_cli stats_sort_rate 0 --in-ns stats --sort dropped-rate --wide --iface "$va"
	run_cli stats_sort_bad 2 --in-ns stats --sort newest --iface "$va"
	# --watch until SIGINT, which ends it cleanly (exit 0): sent once it
	# has drawn two frames (valgrind takes seconds to start; a SIGINT
	# before the CLI's handler is set would kill it)
	nsenter --net="/run/netns/$ns" "${vg[@]}" "$cli" stats --watch 200ms \
		--top 2 --iface "$va" >"$log" 2>&1 &
	w=$!
	drawn_twice() { [ "$(grep -c '^ADDRESS' "$log")" -ge 2 ]; }
	within 300 drawn_twice
	stopped_clean INT "$w"
	result stats_watch "$([ $? = 0 ] && echo 1)"
	run_cli stats_prometheus 0 --in-ns stats --prometheus --top 3 --iface "$va"
	run_cli status 0 --in-ns status
	run_cli status_json 0 --in-ns status --json
	# the 198.18.0.0/24 sources sent twice their quota: banned
	run_cli ban_list 0 --in-ns ban list --iface "$va"
	run_cli ban_list_json 0 --in-ns ban list --json --iface "$va"
	run_cli ban_del 0 --in-ns ban del 198.18.0.1 --iface "$va"
	run_cli ban_del_not_banned 1 --in-ns ban del 198.18.0.1 --iface "$va"
	run_cli ban_del_not_one_source 2 --in-ns ban del 2001:db8::/48 --iface "$va"
	run_cli ban_del_all 0 --in-ns ban del all --iface "$va"
	# rules files: save, a restore that changes rules, one with a bad line
	rules=$(mktemp)
	nsenter --net="/run/netns/$ns" "$cli" save --iface "$va" >"$rules" &&
		sed -i 's/--pps 50 /--pps 60 /' "$rules" &&
		echo "quota set 198.18.9.0/24 --pps 9 --iface $va" >>"$rules"
	run_cli save 0 --in-ns save --iface "$va"
	run_cli restore_test 0 --in-ns restore --test "$rules"
	run_cli restore 0 --in-ns restore "$rules"
	run_cli restore_noflush 0 --in-ns restore --noflush --iface "$va" "$rules"
	echo "quota set 198.18.9.0/24 --pps 9x --iface $va" >>"$rules"
	run_cli restore_bad_line 1 --in-ns restore "$rules"
	run_cli restore_test_bad_line 1 --in-ns restore --test "$rules"
	rm -f "$rules"
	# the exporter: one scrape, then SIGTERM ends it (exit 0)
	nsenter --net="/run/netns/$ns" "${vg[@]}" "$cli" exporter \
		--listen 127.0.0.1:9567 >"$log" 2>&1 &
	w=$!
	within 300 grep -q '^serving' "$log"
	nsenter --net="/run/netns/$ns" curl -sf --max-time 30 \
		http://127.0.0.1:9567/metrics >/dev/null || echo "scrape failed" >>"$log"
	stopped_clean TERM "$w"
	st=$?
	result exporter "$([ "$st" = 0 ] && ! grep -q "scrape failed" "$log" && echo 1)"
	# the sync agent against a redis-server of ours: a few intervals,
	# status while it runs, then SIGTERM ends it (exit 0)
	rdir=$(mktemp -d)
	redis-server --port 0 --unixsocket "$rdir/r.sock" --save '' --appendonly no \
		--dir "$rdir" >/dev/null 2>&1 &
	rpid=$!
	within 50 test -S "$rdir/r.sock"
	run_cli sync_unreachable 1 --in-ns sync --iface "$va" --redis "unix://$rdir/none.sock" \
		--fleet-key-file "$vg_key"
	nsenter --net="/run/netns/$ns" "${vg[@]}" "$cli" sync --iface "$va" \
		--redis "unix://$rdir/r.sock" --interval 50ms --fleet-key-file "$vg_key" >"$log" 2>&1 &
	w=$!
	# until it has exchanged (status says ok; the plain CLI asks), at most
	# 30 s under valgrind
	sync_ok() {
		[ "$(nsenter --net="/run/netns/$ns" "$cli" status --json 2>/dev/null |
			jq -r --arg i "$va" '.interfaces[] | select(.ifname == $i) | .sync.state')" = ok ]
	}
	synced=0
	within 300 sync_ok && synced=1
	run_cli status_sync 0 --in-ns status --json
	stopped_clean TERM "$w"
	st=$?
	[ "$synced" = 1 ] || echo "status never said ok within 30 s" >>"$log"
	result sync_agent "$([ "$st" = 0 ] && [ "$synced" = 1 ] && echo 1)"
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	rm -rf "$rdir"
	run_cli quota_del 0 --in-ns quota del 198.18.0.0/24 --iface "$va"
	run_cli quota_del_missing 1 --in-ns quota del 198.18.0.0/24 --iface "$va"
	run_cli detach 0 --in-ns detach "$va"
	run_cli status_after_detach 0 --in-ns status
	echo "detach left pins or the program behind" >"$log"
	result detach_cleaned_up "$([ ! -e "$pins/$va" ] &&
		! ip -n "$ns" -d link show "$va" | grep -q prog/xdp && echo 1)"
fi

echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
