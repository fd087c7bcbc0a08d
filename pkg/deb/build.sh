#!/bin/bash
# Wrap what `make install` put in ROOT (Debian's paths) into a .deb: the
# binary stripped, the man page compressed, the docs Debian wants
# (copyright, changelog, README.Debian) and the monitoring examples, the
# dependencies dpkg-shlibdeps finds in the binary (and libelf1, which
# libbpf and libxdp read the embedded BPF object with), /etc as conffiles.
# Usage (make deb): pkg/deb/build.sh ROOT DEB VERSION MAINTAINER
set -euo pipefail
root=$1 deb=$2 version=$3 maintainer=$4
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
doc=$root/usr/share/doc/xdp-ratelimit
bin=$root/usr/sbin/xdp-ratelimit
umask 022

[ -x "$bin" ] || { echo "deb: $bin is missing: make install did not run" >&2; exit 1; }
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$bin"
gzip -9nf "$root"/usr/share/man/man8/*.8

install -d "$doc/examples/monitoring" "$root/usr/share/lintian/overrides"
# the years and the changelog's date are the commits', so that a rebuild
# is the same; today's without git or its history
first=$(date +%Y) last=$first when=$(date -R)
if git -C "$repo" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	first=$(git -C "$repo" log --reverse --format=%cd --date=format:%Y | awk 'NR == 1')
	last=$(git -C "$repo" log -1 --format=%cd --date=format:%Y)
	when=$(git -C "$repo" log -1 --format=%cD)
fi
years=$first
[ "$years" = "$last" ] || years=$years-$last
sed "s|@YEARS@|$years|" "$here/copyright" >"$doc/copyright"
install -m 0644 "$here/README.Debian" "$doc/"
# not meant for Debian's archive: no ITP bug to close
echo "xdp-ratelimit: initial-upload-closes-no-bugs" >"$root/usr/share/lintian/overrides/xdp-ratelimit"
install -m 0644 "$repo"/monitoring/* "$doc/examples/monitoring/"
printf 'xdp-ratelimit (%s) unstable; urgency=medium\n\n  * Built from the source tree with make deb.\n\n -- %s  %s\n' \
	"$version" "$maintainer" "$when" | gzip -9n >"$doc/changelog.Debian.gz"

# dpkg-shlibdeps reads debian/control of a source package: give it one
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
printf 'Source: xdp-ratelimit\n\nPackage: xdp-ratelimit\nArchitecture: amd64\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "$(cd "$repo" && realpath "$bin")" 2>"$work/err" |
	sed -n 's/^shlibs:Depends=//p')
# but its warning that the binary is not under debian/: it is not meant to be
grep -v "should already be installed in their package's directory" "$work/err" >&2 || true
[ -n "$depends" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

install -d -m 0755 "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@MAINTAINER@|$maintainer|" \
	-e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$depends|" "$here/control.in" >"$root/DEBIAN/control"
(cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -print |
	sed 's|^\./||' | sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN"/*
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "  $deb"
