#!/bin/sh
# Install the Debian 12 packages xdp-ratelimit needs to build, test and benchmark.
# Idempotent: does nothing when everything is present.
set -eu

# libclang-rt-dev: the libFuzzer and sanitizer runtimes of clang (only
# recommended by clang on Debian 12); valgrind: make valgrind; strace: the
# stress test kills attach at chosen syscalls; mandoc: make test lints the
# man page (doc/xdp-ratelimit.8); nginx-light, curl, tcpreplay: the
# spoofed-flood test (tests/flood/run.sh) against a real server;
# libmicrohttpd-dev: the exporter's HTTP server; prometheus (promtool): the
# exporter test checks the exposition format it scrapes (with curl);
# systemd: systemd-analyze verify of the units in systemd/; libhiredis-dev:
# the sync agent's Redis client; redis-server: tests/sync starts one;
# redis-tools: redis-cli (--cluster create: tests/sync/cluster.sh);
# libxdp-dev, xdp-tools: attach through libxdp's multi-program dispatcher,
# and xdp-filter/xdp-loader beside it in tests; hping3: forged-address
# tests; qemu-system-x86, busybox-static: tests/vm boots Debian's own
# kernel packages (fetched there with apt-get download) in a VM;
# libssl-dev (build list): libcrypto, the HMAC-SHA256 of the sync agent's
# fleet values; stunnel4, openssl (test list): tests/sync/run.sh's TLS
# tunnel to Redis and its certificates
PKGS="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config \
libjansson-dev iproute2 nftables iptables jq python3 libclang-rt-dev valgrind \
strace mandoc nginx-light curl tcpreplay libmicrohttpd-dev prometheus systemd \
libhiredis-dev redis-server redis-tools libxdp-dev xdp-tools hping3 \
qemu-system-x86 busybox-static cpio libssl-dev stunnel4 openssl"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing; run as root (sudo $0)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
