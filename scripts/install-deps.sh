#!/bin/sh
# Install the Debian 12 packages xdp-ratelimit needs.
#   scripts/install-deps.sh          what `make`, `make deb` and `make demo` need
#   scripts/install-deps.sh --test   that and what the tests need (servers among them)
#   ... --print                      list the mode's packages, install nothing
# Idempotent: does nothing when everything is present. Installing starts no
# service: a policy-rc.d that refuses every start stands in /usr/sbin while
# apt-get runs (one already there is put back after).
set -eu

# To build and run: the compilers and the libraries the CLI links
# (libxdp, libbpf, libelf, zlib, libhiredis: the sync agent's Redis client,
# libmicrohttpd: the exporter); libjansson-dev: trafficgen, which make demo
# floods with, and the bench; libclang-rt-dev: the libFuzzer and sanitizer
# runtimes `make` links the fuzzers with (only recommended by clang);
# libc6-dev: only recommended by gcc; dpkg-dev: dpkg-shlibdeps for make
# deb; iproute2: the demo's namespaces; libssl-dev: libcrypto, the
# HMAC-SHA256 of the sync agent's fleet values.
BUILD_PKGS="make gcc libc6-dev clang libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config \
libjansson-dev libclang-rt-dev libmicrohttpd-dev libhiredis-dev libxdp-dev \
dpkg-dev iproute2 libssl-dev"

# To test: llvm (llvm-objdump); valgrind: make valgrind; strace: the stress
# and ops tests kill the CLI at chosen syscalls; mandoc: the man page's
# lint; nginx-light, curl, tcpreplay: the spoofed-flood test against a real
# server; prometheus (promtool): the exposition format, the alert rules;
# systemd: systemd-analyze verify of the units; redis-server, redis-tools:
# tests/sync starts its own Redis (redis-cli --cluster create);
# xdp-tools: xdp-filter and xdp-loader beside xdp-ratelimit; hping3:
# forged-address tests; qemu-system-x86, busybox-static, cpio: tests/vm
# boots Debian's own kernels; lintian: the package's check; stunnel4,
# openssl: tests/sync's TLS tunnel to Redis and its certificates;
# gnuplot-nox: the bench's plot of Mpps against table size (bench/sweep.gp).
TEST_PKGS="llvm nftables iptables jq python3 valgrind strace mandoc nginx-light \
curl tcpreplay prometheus systemd redis-server redis-tools xdp-tools hping3 \
qemu-system-x86 busybox-static cpio lintian stunnel4 openssl gnuplot-nox"

POLICY=/usr/sbin/policy-rc.d
SAVED=$POLICY.install-deps

usage() {
	echo "usage: $0 [--test] [--print]" >&2
	exit 2
}

pkgs=$BUILD_PKGS
print=0
for a in "$@"; do
	case $a in
	--test) pkgs="$BUILD_PKGS $TEST_PKGS" ;;
	--print) print=1 ;;
	*) echo "install-deps: unknown option '$a'" >&2; usage ;;
	esac
done

if [ "$print" = 1 ]; then
	for p in $pkgs; do echo "$p"; done
	exit 0
fi

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing; run as root (sudo $0 $*)" >&2
	exit 1
fi

# invoke-rc.d and deb-systemd-invoke ask policy-rc.d before they start
# anything; 101 is "action forbidden". Only for this run.
no_services() {
	# a saved one is the operator's, left by a run that was killed: ours
	# is the one in place then
	if [ ! -e "$SAVED" ] && [ -e "$POLICY" ]; then mv "$POLICY" "$SAVED"; fi
	printf '#!/bin/sh\n# install-deps.sh: no service starts while it installs\nexit 101\n' >"$POLICY"
	chmod 0755 "$POLICY"
}
services_as_before() {
	rm -f "$POLICY"
	if [ -e "$SAVED" ]; then mv "$SAVED" "$POLICY"; fi
}
trap services_as_before EXIT
trap 'exit 130' INT TERM
no_services

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
