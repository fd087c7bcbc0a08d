#!/bin/bash
# What monitoring/ ships, against the real exporter: the alert rules pass
# promtool's check and their own tests (each alert's tests fail without
# it), the dashboard is an importable Grafana dashboard, and every metric
# the rules and the dashboard read is one the exporter serves, with
# samples, scraped in a namespace; xdp_ratelimit_attached says what status
# says (ok, broken, gone) and xdp_ratelimit_build_info the version.
# Usage: tests/monitoring/run.sh BUILD_DIR [TEST...] (names as below, without t_).
set -u
suite=monitoring
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mon=$repo/monitoring
. "$here/../lib.sh"
lib_init "${1:-build}" rlm
shift
only=("$@")
promql() { python3 "$here/promql.py" "$@"; }

vtx2=${id}c vrx2=${id}d			# the pair made broken, then gone
rx_ifaces+=("$vrx2")
# the exporter's, on the rx loopback: below the ephemeral ports (32768 and up),
# which a client of an earlier test in the namespace may still hold
port=$((10000 + ($$ + 7) % 20000))
tmp=$(mktemp -d)
tmpdirs+=("$tmp")

if [ "$(id -u)" != 0 ]; then
	result setup 1 "needs root"; lib_finish; exit 1
fi
lib_setup_ns && setup_link && setup_link "$vtx2" "$vrx2" 201 &&
	ip -n "$rx" link set lo up || lib_abort setup "cannot create namespaces and links"

sample() {	# TEXT NAME{LABELS}: the value of one sample
	awk -v s="$2" '$1 == s { print $2 }' <<<"$1"
}
attached_of() {	# TEXT IFACE: its states as "ok=1 broken=0 gone=0"
	local st out=()
	for st in ok broken gone; do
		out+=("$st=$(sample "$1" "xdp_ratelimit_attached{ifname=\"$2\",state=\"$st\"}")")
	done
	echo "${out[*]}"
}
status_of() {	# IFACE: state and problem, as status --json says
	rl status --json | jq -r --arg i "$1" '.interfaces[] | select(.ifname == $i) | "\(.state) \(.problem // "")"'
}
status_is() { [[ $(status_of "$1") == "$2"* ]]; }	# IFACE START

# ---- the rules -------------------------------------------------------------
t_rules() {
	local out m=$tmp/mutant a why=()
	out=$(promtool check rules "$mon/alerts.yml" 2>&1)
	result rules_check $? "$out"
	out=$(cd "$mon" && promtool test rules alerts.test.yml 2>&1)
	result rules_test $? "$out"
	# each alert's tests fail when it never fires: none goes untested
	mkdir -p "$m"
	cp "$mon/alerts.test.yml" "$m/"
	for a in $(promql alerts "$mon/alerts.yml"); do
		promql without "$a" "$mon/alerts.yml" >"$m/alerts.yml" &&
			promtool check rules "$m/alerts.yml" >/dev/null 2>&1 || { why+=("$a: no mutant"); continue; }
		(cd "$m" && promtool test rules alerts.test.yml >/dev/null 2>&1) &&
			why+=("$a: its tests pass without it")
	done
	a=$(promql alerts "$mon/alerts.yml" | wc -l)
	check rules_tests_need_each_alert "${#why[@]} == 0 && $a >= 8" "$a alerts: ${why[*]}"
}

# ---- the dashboard ----------------------------------------------------------
# What Grafana's import needs: its datasource as an input, and panels with
# unique ids, a place, and Prometheus targets through that input.
t_dashboard() {
	local out
	out=$(python3 - "$mon/grafana-dashboard.json" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
ins = [i["name"] for i in d.get("__inputs", []) if i.get("pluginId") == "prometheus"]
if ins != ["DS_PROMETHEUS"]:
    bad.append(f"__inputs: {ins}")
for k in ("uid", "title", "schemaVersion", "panels", "templating"):
    if k not in d:
        bad.append(f"no {k}")
ids = [p["id"] for p in d["panels"]]
if len(ids) != len(set(ids)):
    bad.append(f"panel ids repeat: {ids}")
targets = 0
for p in d["panels"]:
    g = p.get("gridPos", {})
    if not all(k in g for k in "xywh") or g["x"] + g["w"] > 24:
        bad.append(f"panel {p['id']}: gridPos {g}")
    if p["type"] == "row":
        continue
    if p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
        bad.append(f"panel {p['id']}: datasource {p.get('datasource')}")
    if not p.get("targets"):
        bad.append(f"panel {p['id']}: no targets")
    for t in p.get("targets", []):
        targets += 1
        if not t.get("expr") or t.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            bad.append(f"panel {p['id']}: target {t}")
if targets < 10:
    bad.append(f"{targets} targets")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
)
	result dashboard_importable $? "$out"
}

# ---- the metrics, scraped --------------------------------------------------
exporter_start() {	# LOG ARGS...: start it in rx; ${bg[-1]} is the exporter
	local log=$1
	shift
	nsenter --net="/run/netns/$rx" "$cli" exporter "$@" >"$log" 2>&1 &
	bg+=($!)
	within 100 grep -q "^serving " "$log"
}
scrape() { in_rx curl -sf --max-time 5 "http://127.0.0.1:$port/metrics"; }
# The exporter serves one reading a second: a change shows in a later scrape.
scraped_as() {	# IFACE STATES: a scrape says IFACE is in STATES ("ok=0 broken=1 gone=0")
	[ "$(attached_of "$(scrape)" "$1")" = "$2" ]
}

t_metrics() {
	local out names n missing=() mac v
	rl attach "$vrx" --default-pps 10 >/dev/null && rl attach "$vrx2" >/dev/null ||
		{ result metrics_setup 1 "attach failed"; return; }
	# drops and a source series: every family has samples
	mac=$(mac_of "$vrx")
	in_tx "$gen" --dev "$vtx" --dst-mac "$mac" --src 198.18.40.1 --count 50 >/dev/null 2>&1
	exporter_start "$tmp/exporter.log" --listen "127.0.0.1:$port" ||
		{ result metrics_exporter 1 "did not start: $(cat "$tmp/exporter.log")"; return; }
	out=$(scrape)
	promtool check metrics <<<"$out" >/dev/null 2>&1
	result metrics_promtool $? "$(promtool check metrics <<<"$out" 2>&1 | head -5)"
	v=$(cat "$repo/VERSION")
	[ "$(sample "$out" "xdp_ratelimit_build_info{version=\"$v\"}")" = 1 ] &&
		[ "$(grep -c '^xdp_ratelimit_build_info{' <<<"$out")" = 1 ]
	result build_info_version $? "$(grep build_info <<<"$out")"
	[ "$(attached_of "$out" "$vrx")" = "ok=1 broken=0 gone=0" ] &&
		[ "$(attached_of "$out" "$vrx2")" = "ok=1 broken=0 gone=0" ] &&
		[ "$(status_of "$vrx")" = "ok " ]
	result attached_ok $? "$vrx: $(attached_of "$out" "$vrx"), $vrx2: $(attached_of "$out" "$vrx2")"
	# every name the rules and the dashboard read, with a sample
	names=$(promql names "$mon/alerts.yml" "$mon/grafana-dashboard.json")
	n=$(wc -l <<<"$names")
	for m in $names; do
		grep -q "^$m{" <<<"$out" || missing+=("$m")
	done
	check monitoring_names_served "${#missing[@]} == 0 && n >= 15" \
		"$n names; not served: ${missing[*]}"
	# the name check itself: a name the exporter lacks is found
	echo '{"panels": [{"targets": [{"expr": "rate(xdp_ratelimit_nonexistent_total{a=\"b\"}[5m]) / on (x) up"}]}]}' >"$tmp/d.json"
	names=$(promql names "$tmp/d.json")
	[ "$names" = $'up\nxdp_ratelimit_nonexistent_total' ]
	result monitoring_names_parser $? "$names"

	# broken: the link pin removed (the program detaches with its link)
	rm -f "$(pin_dir "$vrx2")/link"
	within 50 status_is "$vrx2" broken
	within 50 scraped_as "$vrx2" "ok=0 broken=1 gone=0"
	out=$(scrape)
	[ "$(attached_of "$out" "$vrx2")" = "ok=0 broken=1 gone=0" ] &&
		[ "$(attached_of "$out" "$vrx")" = "ok=1 broken=0 gone=0" ] &&
		[[ $(status_of "$vrx2") == "broken the link pin is missing"* ]]
	result attached_broken $? "$(attached_of "$out" "$vrx2"); status: $(status_of "$vrx2")"
	rl detach "$vrx2" >/dev/null 2>&1
	rl attach "$vrx2" >/dev/null || { result attached_gone 1 "attach again failed"; return; }
	# gone: the interface deleted under its program
	ip -n "$rx" link del "$vrx2"
	within 50 status_is "$vrx2" "broken the interface is gone"
	within 50 scraped_as "$vrx2" "ok=0 broken=0 gone=1"
	out=$(scrape)
	[ "$(attached_of "$out" "$vrx2")" = "ok=0 broken=0 gone=1" ] &&
		[[ $(status_of "$vrx2") == "broken the interface is gone"* ]]
	result attached_gone $? "$(attached_of "$out" "$vrx2"); status: $(status_of "$vrx2")"
	out=$(rl stats --prometheus)
	[ "$(attached_of "$out" "$vrx2")" = "ok=0 broken=0 gone=1" ] &&
		[ "$(attached_of "$out" "$vrx")" = "ok=1 broken=0 gone=0" ] &&
		promtool check metrics <<<"$out" >/dev/null 2>&1
	result stats_prometheus_attached $? "$(grep '^xdp_ratelimit_attached' <<<"$out")"
	rl detach "$vrx2" >/dev/null 2>&1
	out=$(rl stats --prometheus --iface "$vrx")
	[ "$(grep -c '^xdp_ratelimit_attached{' <<<"$out")" = 3 ] &&
		[ "$(attached_of "$out" "$vrx")" = "ok=1 broken=0 gone=0" ]
	result stats_prometheus_attached_iface $? "$(grep '^xdp_ratelimit_attached' <<<"$out")"
}

start=$(date +%s)
tests=(rules dashboard metrics)
for t in "${tests[@]}"; do
	if [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $t "* ]]; then
		"t_$t"
	fi
done
echo "  monitoring took $(( $(date +%s) - start )) s"
lib_finish
