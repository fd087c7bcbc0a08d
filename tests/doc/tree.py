#!/usr/bin/env python3
"""The tree's rules, from the includes of user/ and of the tests: nothing
in user/lib includes a user/cli header (the library never depends on the
CLI), nor does a test outside tests/cli (the library's tests, the program's
and the bench link the library alone); and no two modules (X.c with X.h)
include each other in a loop, directly or through others. Prints each
breach, one a line; prints nothing when the tree keeps them. Usage:
tree.py REPO_ROOT"""
import os
import re
import sys

root = sys.argv[1]
deps = {}
for room in ('lib', 'cli'):
    for name in os.listdir(os.path.join(root, 'user', room)):
        mod = room + '/' + name.rsplit('.', 1)[0]
        with open(os.path.join(root, 'user', room, name)) as f:
            text = f.read()
        found = set(re.findall(r'#include "((?:lib|cli)/[a-z_]+)\.h"', text))
        deps.setdefault(mod, set()).update(found - {mod})

breaches = ['%s includes %s.h' % (m, d) for m in sorted(deps) if m.startswith('lib/')
            for d in sorted(deps[m]) if d.startswith('cli/')]
for top in ('tests', 'bench'):
    for where, _, names in os.walk(os.path.join(root, top)):
        rel = os.path.relpath(where, root)
        if rel == 'tests/cli' or rel.startswith('tests/cli/'):
            continue
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            with open(os.path.join(where, name)) as f:
                for d in re.findall(r'#include "(cli/[a-z_]+\.h)"', f.read()):
                    breaches.append('%s/%s includes %s (only tests/cli may)' % (rel, name, d))
state = {}


def walk(mod, stack):
    state[mod] = 'open'
    stack.append(mod)
    for d in sorted(deps.get(mod, ())):
        if state.get(d) == 'open':
            breaches.append('loop: ' + ' -> '.join(stack[stack.index(d):] + [d]))
        elif d not in state:
            walk(d, stack)
    stack.pop()
    state[mod] = 'done'


for m in sorted(deps):
    if m not in state:
        walk(m, [])
print('\n'.join(breaches), end='\n' if breaches else '')
