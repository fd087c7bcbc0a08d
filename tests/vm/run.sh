#!/bin/bash
# Boot Debian 12's own kernel packages in qemu (TCG: no KVM needed) and run
# a guest script there: the program must load and enforce on the kernel
# Debian 12 users run (6.1 LTS), not only on the one this machine runs.
#
# Usage: tests/vm/run.sh BUILD_DIR [FLAVOUR[:GUEST_SCRIPT]...]
#   FLAVOUR: cloud (linux-image-cloud-amd64) or rt (linux-image-rt-amd64);
#   GUEST_SCRIPT: a busybox sh script run as the guest's init (default
#   tests/vm/guest-FLAVOUR.sh). Default: cloud rt.
#
# Each flavour's kernel package is fetched once with `apt-get download`
# into BUILD_DIR/vm/ and unpacked with dpkg -x; the initramfs is built
# anew from busybox-static, the project's binaries, the iproute2, nft, jq,
# bpftool, xdp-filter, xdp-loader and strace binaries and their libraries (ldd),
# libxdp's BPF objects, and the kernel modules
# the guest loads (veth, nftables). The guest prints one result line per
# test and `N passed, N failed` on the serial console, then powers off;
# qemu runs under a timeout, so a hung guest is a failed suite, not a
# hung `make test`.
#   VM_TIMEOUT=S      seconds a boot may take (default 900: a boot takes about 200 s
#                     on an idle 2-CPU machine, twice that and more when it is
#                     busy; the bound is for a hung guest, not a slow one)
#   VM_APPEND=ARGS    more kernel command line, for the guest to read
#   VM_CONSOLE=FILE   the last boot's whole console, kept there
#   VM_FIRST_OUTPUT=S seconds a boot may take to show the kernel's first
#                     line (default 120; it shows within seconds): qemu
#                     under TCG can hang in its firmware by chance, after
#                     "Booting from ROM...". Such a boot is killed and
#                     booted again, once, and a "vm: no kernel output" line
#                     says so; the second boot has only VM_TIMEOUT's bound
#                     (a busy machine's slow boot is no hang)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(cd "${1:-build}" && pwd) || exit 1
shift
[ $# -gt 0 ] || set -- cloud rt
cache=$out/vm
boot_timeout=${VM_TIMEOUT:-900}	# seconds, per boot
first_output=${VM_FIRST_OUTPUT:-120}	# seconds, per boot
passed=0 failed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/rl-vm.XXXXXX")
qemu=	# the running boot's timeout(1), which ends its qemu with it
trap '[ -n "$qemu" ] && kill "$qemu" 2>/dev/null; rm -rf "$work"' EXIT

result() {	# NAME STATUS [why]
	if [ "$2" = 0 ]; then
		echo "ok   vm/$1"; passed=$((passed + 1))
	else
		echo "FAIL vm/$1${3:+: $3}"; failed=$((failed + 1))
	fi
}

# The versioned kernel package a flavour's metapackage depends on, unpacked
# into $cache/FLAVOUR; prints that directory.
kernel_of() {	# FLAVOUR
	local meta=linux-image-$1-amd64 pkg dir=$cache/$1
	if [ ! -e "$dir/.done" ]; then
		pkg=$(apt-cache depends "$meta" 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
		if [ -z "$pkg" ]; then
			echo "vm: no kernel package behind $meta (run 'apt-get update')" >&2
			return 1
		fi
		rm -rf "$dir" && mkdir -p "$dir" || return 1
		(cd "$dir" && apt-get download -q "$pkg" >/dev/null 2>&1) || {
			echo "vm: apt-get download $pkg failed" >&2
			return 1
		}
		dpkg -x "$dir"/*.deb "$dir/root" && rm -f "$dir"/*.deb &&
			touch "$dir/.done" || return 1
	fi
	echo "$dir"
}

# Copy FILE into the initramfs tree ROOT at PATH (default: the same path),
# with the shared libraries it needs.
add() {	# ROOT FILE [PATH]
	local root=$1 f=$2 to=${3:-$2} lib
	mkdir -p "$root/$(dirname "$to")" && cp -L "$f" "$root/$to" || return 1
	for lib in $(ldd "$f" 2>/dev/null | grep -oE '/[^ ]+'); do
		[ -e "$root/$lib" ] && continue
		mkdir -p "$root/$(dirname "$lib")" && cp -L "$lib" "$root/$lib"
	done
}

# Copy module NAME of the kernel in KERNEL_DIR into DIR, after the modules
# it depends on (its modinfo `depends=`), listing each once in DIR/order.
module() {	# KERNEL_DIR NAME DIR
	local f dep
	grep -qx "$2.ko" "$3/order" && return 0
	f=$(find "$1"/root/lib/modules/*/kernel -name "$2.ko" | head -n 1)
	[ -n "$f" ] || { echo "vm: no module $2 in $1" >&2; return 1; }
	for dep in $(strings "$f" | sed -n 's/^depends=//p' | tr ',' ' '); do
		module "$1" "$dep" "$3" || return 1
	done
	cp "$f" "$3/" && echo "$2.ko" >>"$3/order"
}

# The CLI of the last commit whose stub under libxdp's dispatcher held
# every map (it read the config map): multi.sh checks what this build does
# with its attachments. Built once per run, plainly.
prev_commit=d7bd2ae
prev_cli() {
	local t=$work/prev
	[ -x "$t/build/xdp-ratelimit" ] && return 0
	mkdir -p "$t" && git -C "$here/../.." archive "$prev_commit" 2>/dev/null | tar -x -C "$t" &&
		env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u SANITIZE -u OUTPUT \
			make -C "$t" -j2 build/xdp-ratelimit >"$t/make.log" 2>&1
}

# Build the initramfs of a guest: busybox, our binaries, the tools the
# guest scripts use, the kernel's modules they load.
initramfs() {	# KERNEL_DIR GUEST_SCRIPT OUTPUT
	local kdir=$1 script=$2 img=$3 root=$work/root m b
	rm -rf "$root" && mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,modules} || return 1
	cp /bin/busybox "$root/bin/busybox" || return 1
	for b in $("$root/bin/busybox" --list); do
		[ "$b" = busybox ] || ln -sf busybox "$root/bin/$b"
	done
	# busybox's sh runs its own applet for a bare `ip`, `nft` would be
	# fine but is named apart alike: each tool by a name of its own
	add "$root" /sbin/ip /sbin/iproute2 &&
		add "$root" /usr/sbin/nft /sbin/nftables &&
		add "$root" /usr/bin/jq /sbin/jqjson &&
		add "$root" /usr/sbin/bpftool /sbin/bpftool &&
		add "$root" /usr/sbin/xdp-filter /sbin/xdp-filter &&
		add "$root" /usr/sbin/xdp-loader /sbin/xdp-loader &&
		add "$root" /usr/bin/strace /sbin/strace &&
		add "$root" /usr/sbin/nft /usr/sbin/nft || return 1	# as the CLI runs it
	# libxdp's BPF objects (its dispatcher, xdp-filter's programs), where
	# libxdp and xdp-tools look for them
	for b in /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o /usr/lib/x86_64-linux-gnu/bpf/xdpfilt_*.o; do
		add "$root" "$b" || return 1
	done
	for b in xdp-ratelimit test_prog trafficgen ratelimit-bench baselines.bpf.o kill_at_swap.so; do
		add "$root" "$out/$b" "/rl/$b" || return 1
	done
	# without it, multi.sh fails its tests of the previous build's
	# attachments (only guests that run multi.sh need it)
	if grep -q multi.sh "$script" && prev_cli; then
		add "$root" "$work/prev/build/xdp-ratelimit" /rl/xdp-ratelimit-prev || return 1
	elif grep -q multi.sh "$script"; then
		echo "vm: cannot build the CLI of $prev_commit (a full clone has it): $(tail -n 3 "$work/prev/make.log" 2>/dev/null)" >&2
	fi
	# modules (6.1 cloud: veth, nftables and its limit, the egress hook's
	# clsact and cls_bpf, SYNPROXY and connection tracking are), after what
	# they depend on
	: >"$root/modules/order"
	for m in veth nf_tables nft_objref nft_limit sch_ingress cls_bpf nft_synproxy; do
		module "$kdir" "$m" "$root/modules" || return 1
	done
	cp "$here/guest-lib.sh" "$root/guest-lib.sh" &&
		cp "$here/multi.sh" "$root/multi.sh" &&
		cp "$script" "$root/init" && chmod +x "$root/init" || return 1
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$img"
}

# Run qemu on KERNEL and INITRD, its console into LOG, within
# boot_timeout. With WATCH, a boot that shows no kernel output within
# first_output seconds is killed (qemu hung in its firmware): status 2.
# The kernel's first line: with `quiet` it prints nothing before init
# unless something goes wrong ("[    1.234567] ..."), and the guests'
# first line is guest_init's "guest: Linux version ...".
qemu_boot() {	# KERNEL INITRD LOG [WATCH]
	local t0=$SECONDS fw
	: >"$3"	# before qemu's shell opens it: polled at once
	timeout --kill-after=10 "$boot_timeout" qemu-system-x86_64 -nographic -no-reboot \
		-m 1G -smp 2 -kernel "$1" -initrd "$2" \
		-append "console=ttyS0 panic=-1 quiet ${VM_APPEND:-}" </dev/null >"$3" 2>&1 &
	qemu=$!
	while [ -n "${4:-}" ] && kill -0 "$qemu" 2>/dev/null &&
		! grep -qaE 'guest: |\[ *[0-9]+\.[0-9]+\] ' "$3"; do
		if [ $((SECONDS - t0)) -ge "$first_output" ]; then
			fw=$(grep -ao 'Booting from [A-Za-z]*' "$3" | tail -n 1)
			echo "vm: no kernel output within ${first_output}s (qemu hung before it${fw:+, after \"$fw\"}): killed qemu (timeout pid $qemu), booting again"
			kill "$qemu" && wait "$qemu"
			qemu=
			return 2
		fi
		sleep 0.5
	done
	wait "$qemu"
	qemu=
}

# Boot FLAVOUR's kernel with GUEST_SCRIPT as init; its result lines are
# this suite's.
boot() {	# FLAVOUR GUEST_SCRIPT
	local flavour=$1 script=$2 kdir vmlinuz img=$work/initrd.gz log=$work/console line p f
	kdir=$(kernel_of "$flavour") || { result "$flavour/boot" 1 "no kernel package"; return; }
	vmlinuz=$(ls "$kdir"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$vmlinuz" ] || { result "$flavour/boot" 1 "no vmlinuz in $kdir"; return; }
	initramfs "$kdir" "$script" "$img" || { result "$flavour/boot" 1 "initramfs"; return; }
	echo "vm: booting $(basename "$vmlinuz") with $(basename "$script")"
	qemu_boot "$vmlinuz" "$img" "$log" watch
	[ $? = 2 ] && qemu_boot "$vmlinuz" "$img" "$log"
	[ -n "${VM_CONSOLE:-}" ] && tr -d '\r' <"$log" >"$VM_CONSOLE"
	# the guest's lines, without the console's carriage returns
	tr -d '\r' <"$log" | grep -E '^(ok  |FAIL|  )' | grep -v '^  *$' | sed "s|^ok   |ok   $flavour/|; s|^FAIL |FAIL $flavour/|"
	line=$(tr -d '\r' <"$log" | grep -E '^guest: [0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then
		result "$flavour/boot" 1 "no result from the guest within ${boot_timeout}s; console:"
		tr -d '\r' <"$log" | tail -n 30 | sed 's/^/    /'
		return
	fi
	p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
	f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
	passed=$((passed + p)) failed=$((failed + f))
}

for arg in "$@"; do
	flavour=${arg%%:*}
	script=$here/guest-$flavour.sh
	[ "$arg" != "$flavour" ] && script=${arg#*:}
	if [ ! -r "$script" ]; then
		echo "vm: no guest script $script" >&2
		exit 2
	fi
	boot "$flavour" "$script"
done
echo "vm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
