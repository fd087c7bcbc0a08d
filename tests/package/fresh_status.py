#!/usr/bin/env python3
"""Print a dpkg status file of a fresh Debian 12 as this machine has it:
the installed packages that are Essential or of Priority required, and
what they depend on (what debootstrap's minbase installs), for
`apt-get -s -o Dir::State::status=FILE` to resolve installs against.
Usage: fresh_status.py [STATUS] (default /var/lib/dpkg/status)."""
import re
import sys


def field(st, name):
    m = re.search(rf"^{name}: (.*)$", st, re.M)
    return m.group(1) if m else ""


def main(argv):
    path = argv[0] if argv else "/var/lib/dpkg/status"
    pkgs, provides = {}, {}
    for st in open(path).read().split("\n\n"):
        if "Status: install ok installed" not in st:
            continue
        name = field(st, "Package")
        pkgs[name] = st.strip()
        for p in filter(None, field(st, "Provides").split(",")):
            provides.setdefault(p.split()[0].split(":")[0], name)

    def deps(st):
        for f in ("Pre-Depends", "Depends"):
            for alts in filter(None, field(st, f).split(",")):
                for a in alts.split("|"):
                    n = a.split()[0].split(":")[0]
                    if n in pkgs or n in provides:
                        yield n if n in pkgs else provides[n]
                        break

    todo = [n for n, st in pkgs.items()
            if field(st, "Essential") == "yes" or field(st, "Priority") == "required"]
    seen = set()
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(deps(pkgs[n]))
    sys.stdout.write("\n\n".join(pkgs[n] for n in sorted(seen)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
