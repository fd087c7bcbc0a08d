#!/bin/bash
# Shipping it: scripts/install-deps.sh (what each mode installs, resolved
# by apt against a fresh Debian 12; no service started while installing)
# and `make deb` (lintian, its control file, installed into a scratch
# root with dpkg and resolvable on a fresh Debian 12, the paths its units
# name); `make` and `make deb` in a chroot of a fresh Debian 12 with only
# the build's packages.
# Usage: tests/package/run.sh BUILD_DIR [TEST...] (names as below, without t_).
set -u
suite=package
. "$(dirname "$0")/../lib.sh"
lib_args rlp "$@"
tests=(deps_lists deps_fresh_root deps_build_fresh_root deps_no_service deb)
check_test_names
deps=$repo/scripts/install-deps.sh
tmp=$(mktemp -d)
tmpdirs+=("$tmp")
version=$(cat "$repo/VERSION")
# the package is of the normal build: a sanitizer build (make SANITIZE=1
# test) lives in BUILD/sanitize, beside it
deb_build=$build
readelf -d "$build/xdp-ratelimit" 2>/dev/null | grep -q libasan && deb_build=${build%/sanitize}
deb=$deb_build/xdp-ratelimit_${version}-1_amd64.deb

lib_require

# what a server package looks like: a unit or an init script
SERVICE_FILES='^(/usr)?/lib/systemd/system/[^/]+\.(service|socket|timer)$|^/etc/init\.d/'
fresh=$tmp/fresh-status
python3 "$here/fresh_status.py" >"$fresh"
# PACKAGE...: the packages apt would install on the fresh system, by name
fresh_installs() {
	apt-get -s -o Dir::State::status="$fresh" install --no-install-recommends "$@" 2>&1 |
		awk '$1 == "Inst" { print $2 }'
}
# the packages installed here, and those that ship a service, from dpkg's
# file lists; those of the fresh system
declare -A known=() serves=() fresh_has=()
for f in /var/lib/dpkg/info/*.list; do
	f=${f##*/}; f=${f%.list}; known[${f%%:*}]=1
done
for f in $(grep -lE "$SERVICE_FILES" /var/lib/dpkg/info/*.list); do
	f=${f##*/}; f=${f%.list}; serves[${f%%:*}]=1
done
for f in $(sed -n 's/^Package: //p' "$fresh"); do fresh_has[$f]=1; done
# PACKAGE...: those of them (not on the fresh system) that ship a service;
# "?NAME" for one not installed here, whose files dpkg cannot tell
services_of() {
	local p
	for p in "$@"; do
		[ -n "${fresh_has[$p]:-}" ] && continue
		if [ -n "${serves[$p]:-}" ]; then
			echo "$p"
		elif [ -z "${known[$p]:-}" ]; then
			echo "?$p"
		fi
	done
}

# ---- install-deps.sh -------------------------------------------------------
t_deps_lists() {
	local base test extra rc out=""
	base=$("$deps" --print) && test=$("$deps" --print --test) || { result deps_print 1 "exit $?"; return; }
	extra=$(comm -13 <(sort <<<"$base") <(sort <<<"$test"))
	[ -n "$base" ] && [ -z "$(comm -23 <(sort <<<"$base") <(sort <<<"$test"))" ] &&
		for p in nginx-light redis-server prometheus qemu-system-x86 hping3 tcpreplay lintian; do
			grep -qx "$p" <<<"$extra" || exit 1
		done
	result deps_test_adds_the_tests_packages $? "only with --test: $(echo $extra)"
	for p in make clang libxdp-dev libbpf-dev libelf-dev libmicrohttpd-dev libhiredis-dev dpkg-dev; do
		grep -qx "$p" <<<"$base" || out+=" $p"
	done
	[ -z "${out:-}" ]
	result deps_build_packages $? "missing from the build's list:$out"
	out=$("$deps" --frob 2>&1); rc=$?
	[ "$rc" = 2 ] && [[ $out == *"unknown option '--frob'"* ]]
	result deps_bad_option $? "exit $rc: $out"
}

# apt resolves each mode on a fresh Debian 12: the build's packages bring
# no service with them, the tests' bring their servers.
t_deps_fresh_root() {
	local base test s
	base=$(fresh_installs $("$deps" --print))
	test=$(fresh_installs $("$deps" --print --test))
	s=$(services_of $base)
	[ "$(wc -l <<<"$base")" -ge 20 ] && [ -z "$s" ]
	result deps_build_installs_no_service $? "$(wc -l <<<"$base") packages; with a unit, init script or unknown: $(echo $s)"
	s=$(services_of $test)
	grep -qx redis-server <<<"$s" && grep -qx prometheus <<<"$s" && grep -qx nginx-common <<<"$s" &&
		! grep -q '^?' <<<"$s"
	result deps_test_installs_servers $? "with a unit, init script or unknown: $(echo $s)"
}

# install-deps.sh in a mount namespace of its own, /usr/sbin an overlay
# (the machine's own policy-rc.d untouched), with stand-ins for dpkg-query
# (nothing installed) and apt-get (records its arguments and what
# policy-rc.d answers while it runs; exits $APT_EXIT).
deps_run() {	# BEFORE|- APT_EXIT ARGS...: prints the log; exit status is the script's
	local before=$1 apt_exit=$2 s=$tmp/stubs
	shift 2
	rm -rf "$s" "$tmp/ov" && mkdir -p "$s" "$tmp/ov/up" "$tmp/ov/work"
	printf '#!/bin/sh\nexit 1\n' >"$s/dpkg-query"
	cat >"$s/apt-get" <<-'EOF'
	#!/bin/sh
	[ "$1" = update ] && exit 0
	shift 4	# install -y -qq --no-install-recommends
	echo "install $*" >>"$LOG"
	/usr/sbin/policy-rc.d nginx start; echo "policy-rc.d says $?" >>"$LOG"
	exit "$APT_EXIT"
	EOF
	chmod +x "$s/dpkg-query" "$s/apt-get"
	: >"$tmp/log"
	LOG=$tmp/log APT_EXIT=$apt_exit BEFORE=$before unshare -m --propagation private sh -c '
		mount -t overlay overlay -o "lowerdir=/usr/sbin,upperdir=$0/ov/up,workdir=$0/ov/work" /usr/sbin || exit 99
		rm -f /usr/sbin/policy-rc.d
		[ "$BEFORE" = - ] || printf "%s\n" "$BEFORE" >/usr/sbin/policy-rc.d
		PATH=$0/stubs:$PATH "$@" >/dev/null 2>&1; rc=$?
		if [ -e /usr/sbin/policy-rc.d ]; then echo "after: $(cat /usr/sbin/policy-rc.d)"; else echo "after: none"; fi >>"$LOG"
		ls /usr/sbin/policy-rc.d.* >>"$LOG" 2>/dev/null
		exit $rc' "$tmp" "$deps" "$@"
}
t_deps_no_service() {
	local rc log want
	deps_run - 0 --test; rc=$?
	log=$(cat "$tmp/log")
	want="install $(echo $("$deps" --print --test))
policy-rc.d says 101
after: none"
	[ "$rc" = 0 ] && [ "$log" = "$want" ]
	result deps_policy_rc_d_while_installing $? "exit $rc:"$'\n'"$log"
	deps_run '#!/bin/sh
exit 0 # the operator'"'"'s' 0; rc=$?
	log=$(cat "$tmp/log")
	want="install $(echo $("$deps" --print))
policy-rc.d says 101
after: #!/bin/sh
exit 0 # the operator's"
	[ "$rc" = 0 ] && [ "$log" = "$want" ]
	result deps_policy_rc_d_put_back $? "exit $rc:"$'\n'"$log"
	deps_run - 100; rc=$?
	log=$(cat "$tmp/log")
	[ "$rc" = 100 ] && [[ $log == *"policy-rc.d says 101"$'\n'"after: none" ]]
	result deps_policy_rc_d_removed_on_failure $? "exit $rc:"$'\n'"$log"
	# and the machine's own is as it was
	[ ! -e /usr/sbin/policy-rc.d.install-deps ]
	result deps_host_untouched $? "$(ls /usr/sbin/policy-rc.d* 2>&1)"
}

# A fresh Debian 12 with the build's packages, as a chroot: the files of
# the fresh system's packages and of those apt would add for
# install-deps.sh (hard links to this machine's, the tree read-only), their
# dpkg database, the alternatives their scripts make; the source as `git
# ls-files` lists it. `make` and `make deb` there show that the build's
# list is enough.
fresh_root() {	# DIR
	local r=$1 p f l t pkgs
	pkgs=$( { sed -n 's/^Package: //p' "$fresh"; fresh_installs $("$deps" --print); } | sort -u)
	mkdir -p "$r/var/lib/dpkg/info" "$r/etc/alternatives" "$r/src" "$r/proc" "$r/tmp" "$r/dev"
	for l in /*; do	# merged /usr, as this machine has it
		[ -L "$l" ] && t=$(readlink "$l") && [[ $t == usr/* ]] && mkdir -p "$r/$t" && ln -s "$t" "$r${l}"
	done
	for p in $pkgs; do
		for f in /var/lib/dpkg/info/"$p".* /var/lib/dpkg/info/"$p":*; do
			[ -e "$f" ] && cp "$f" "$r/var/lib/dpkg/info/"
		done
		dpkg-query -s "$p" 2>/dev/null && echo
	done >"$r/var/lib/dpkg/status"
	cp /var/lib/dpkg/info/format "$r/var/lib/dpkg/info/"	# the multiarch layout
	touch "$r/var/lib/dpkg/available" "$r/var/lib/dpkg/diversions" "$r/var/lib/dpkg/statoverride"
	cat "$r"/var/lib/dpkg/info/*.list | sort -u | sed 's|^/||' |
		grep -vxE '|\.|bin|sbin|lib|lib32|lib64|libx32' |
		(cd / && cpio -pdml --quiet "$r") 2>/dev/null
	for f in /etc/alternatives/*; do
		[ -L "$f" ] && [ -e "$r$(readlink "$f")" ] && cp -P "$f" "$r/etc/alternatives/"
	done
	for f in /usr/bin/* /usr/sbin/*; do
		[ -L "$f" ] && [[ $(readlink "$f") == /etc/alternatives/* ]] &&
			[ -e "$r$(readlink "$f")" ] && [ ! -e "$r$f" ] && cp -P "$f" "$r$f"
	done
	chroot "$r" /sbin/ldconfig && touch "$r/dev/null" &&
		(cd "$repo" && git ls-files | cpio -pdm --quiet "$r/src")
}
in_fresh_root() {	# DIR CMD: run CMD (sh) in /src, the tree read-only but /src
	unshare -m --propagation private sh -c '
		r=$0
		mount --bind "$r" "$r" && mount -o remount,bind,ro "$r" "$r" &&
		mount --bind "$r/src" "$r/src" && mount -o remount,bind,rw "$r/src" &&
		mount -t proc proc "$r/proc" && mount -t tmpfs tmpfs "$r/tmp" &&
		mount --bind /dev/null "$r/dev/null" || exit 99
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp chroot "$r" sh -c "cd /src && $1"' "$@"
}
t_deps_build_fresh_root() {
	local r=$tmp/fresh-root out rc n
	fresh_root "$r" || { result deps_fresh_root_made 1 "cannot make it"; return; }
	n=$(grep -c '^Package: ' "$r/var/lib/dpkg/status")
	out=$(in_fresh_root "$r" 'make -j2 2>&1 && build/xdp-ratelimit --version' 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$(tail -1 <<<"$out")" = "xdp-ratelimit $version" ] &&
		[ -x "$r/src/build/test_prog" ] && [ -x "$r/src/build/trafficgen" ]
	result deps_build_in_fresh_root $? "$n packages; exit $rc: $(tail -5 <<<"$out")"
	out=$(in_fresh_root "$r" 'make deb 2>&1' 2>&1); rc=$?
	[ "$rc" = 0 ] && [ -f "$r/src/build/xdp-ratelimit_${version}-1_amd64.deb" ]
	result deps_deb_in_fresh_root $? "exit $rc: $(tail -5 <<<"$out")"
	# what make demo runs besides the build
	out=$(in_fresh_root "$r" 'for c in ip nsenter timeout; do command -v $c || echo "no $c"; done' 2>&1)
	! grep -q '^no ' <<<"$out"
	result deps_demo_tools_in_fresh_root $? "$out"
	# and without a package of the list the build fails there: the test can fail
	rm -f "$r/usr/include/microhttpd.h" && touch "$r/src/user/cli/cmd_exporter.c"
	out=$(in_fresh_root "$r" 'make -j2 2>&1' 2>&1); rc=$?
	[ "$rc" != 0 ] && grep -q 'microhttpd.h' <<<"$out"
	result deps_fresh_root_can_fail $? "exit $rc: $(tail -3 <<<"$out")"
}

# ---- make deb --------------------------------------------------------------
t_deb() {
	local out rc f r=$tmp/root why=() want u line path
	rm -f "$deb"
	out=$(make -s -C "$repo" deb OUTPUT="$deb_build" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ -f "$deb" ]
	result deb_builds $? "exit $rc: $out"
	[ -f "$deb" ] || return
	out=$(lintian "$deb" 2>&1); rc=$?
	out=$(grep -v 'root privileges' <<<"$out")
	[ "$rc" = 0 ] && ! grep -q '^E:' <<<"$out"
	result deb_lintian_no_errors $? "exit $rc: $out"
	# the control file: its version, the libraries the binary links
	f=$(dpkg-deb -f "$deb" Version Depends Architecture)
	for want in "Version: $version-1" "Architecture: amd64"; do
		grep -qx "$want" <<<"$f" || why+=("no $want")
	done
	for want in libxdp1 libbpf1 libelf1 libhiredis0.14 libmicrohttpd12 libc6; do
		grep -q "^Depends:.*\b$want\b" <<<"$f" || why+=("Depends lacks $want")
	done
	while read -r line; do
		dpkg -S "$line" >/dev/null 2>&1 || why+=("no package has $line, which it links")
	done < <(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/sbin/xdp-ratelimit >"$tmp/bin" &&
		readelf -d "$tmp/bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
	check deb_control "${#why[@]} == 0" "${why[*]}"$'\n'"$f"
	# installed with dpkg into a scratch root whose database holds only the
	# packages it depends on, as installed here
	why=()
	mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates"
	touch "$r/var/lib/dpkg/available"
	for p in $(dpkg-deb -f "$deb" Depends | tr ',' '\n' | awk '{ print $1 }'); do
		dpkg-query -s "$p" >>"$r/var/lib/dpkg/status" && echo >>"$r/var/lib/dpkg/status"
		touch "$r/var/lib/dpkg/info/$p.list"
	done
	out=$(dpkg --root="$r" -i "$deb" 2>&1); rc=$?
	[ "$rc" = 0 ] && [ "$(dpkg --root="$r" -s xdp-ratelimit | sed -n 's/^Status: //p')" = "install ok installed" ]
	result deb_dpkg_installs $? "exit $rc: $out"
	for f in /usr/sbin/xdp-ratelimit /usr/share/man/man8/xdp-ratelimit.8.gz \
		/usr/share/bash-completion/completions/xdp-ratelimit \
		/usr/share/doc/xdp-ratelimit/README.Debian /usr/share/doc/xdp-ratelimit/copyright \
		/usr/share/doc/xdp-ratelimit/examples/monitoring/alerts.yml \
		/usr/share/doc/xdp-ratelimit/examples/monitoring/grafana-dashboard.json \
		/lib/systemd/system/xdp-ratelimit@.service /etc/xdp-ratelimit/IFACE.rules.example; do
		[ -f "$r$f" ] || why+=("no $f")
	done
	grep -qx /etc/xdp-ratelimit/IFACE.rules.example "$r/var/lib/dpkg/info/xdp-ratelimit.conffiles" ||
		why+=("the example is no conffile")
	"$r/usr/sbin/xdp-ratelimit" --version | grep -qx "xdp-ratelimit $version" || why+=("--version")
	# what each unit names is there: the commands it runs, the directories
	# of the files it reads under /etc/xdp-ratelimit, its man page
	for u in "$r"/lib/systemd/system/xdp-ratelimit*.service; do
		while read -r path; do
			[ -x "$r$path" ] || why+=("${u##*/} runs $path, not installed")
		done < <(sed -n 's/^Exec[A-Za-z]*=[-@+!:]*\([^ ]*\).*/\1/p' "$u")
		while read -r path; do
			[ -d "$r${path%/*}" ] || why+=("${u##*/} reads $path, no ${path%/*}")
		done < <(grep -oE '/etc/xdp-ratelimit/[^ ]*' "$u")
		for path in $(sed -n 's/^Documentation=//p' "$u" | grep -oE 'man:[a-z-]+\([0-9]\)'); do
			path=${path#man:}
			[ -f "$r/usr/share/man/man${path: -2:1}/${path%(*}.${path: -2:1}.gz" ] ||
				why+=("${u##*/} documents with $path, not installed")
		done
	done
	[ "$(ls "$r"/lib/systemd/system/xdp-ratelimit*.service | wc -l)" -ge 3 ] || why+=("units")
	check deb_files_where_units_want_them "${#why[@]} == 0" "${why[*]}"
	# purged: nothing of it left, the conffile neither
	out=$(dpkg --root="$r" -P xdp-ratelimit 2>&1); rc=$?
	f=$(cd "$r" && find . -path ./var -prune -o -type f -print)
	[ "$rc" = 0 ] && [ -z "$f" ]
	result deb_purge_removes_all $? "exit $rc: $out; left: $f"
	# on a fresh Debian 12, apt finds every dependency in the archive
	out=$(fresh_installs "$deb")
	grep -qx xdp-ratelimit <<<"$out" && grep -qx libxdp1 <<<"$out"
	result deb_resolves_on_fresh_debian12 $? "apt would install: $(echo $out)"
}

run_tests t_
lib_finish
