#!/usr/bin/env python3
"""The PromQL in monitoring/ as the monitoring suite needs it.

  promql.py names FILE...            the metric names the expressions of
                                     alert rules (.yml) or a Grafana
                                     dashboard (.json) read, one a line
  promql.py without ALERT RULES      the rules file with ALERT's expression
                                     replaced by one that never fires
  promql.py alerts RULES             the alerts' names, one a line
No YAML library: rules files are read as alerts.yml writes them (`expr:`
on one line, or `expr: |` and the lines indented below it).
"""
import json
import re
import sys

KEYWORDS = {"and", "or", "unless", "bool", "by", "without", "on", "ignoring",
            "group_left", "group_right", "offset", "inf", "nan"}
NEVER = "absent(vector(1))"


def names_of(expr):
    """Metric names in one expression: what is left after strings, label
    matchers, ranges, groupings, offsets, numbers and calls are removed."""
    # Grafana's label_values(SELECTOR, LABEL) reads SELECTOR
    expr = re.sub(r"label_values\((.*),\s*\w+\s*\)", r"\1", expr)
    s = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    s = re.sub(r"\{[^}]*\}", "", s)
    s = re.sub(r"\[[^\]]*\]", "", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", s)
    s = re.sub(r"\boffset\s+\w+", "", s)
    s = re.sub(r"(?<![\w:])\d+(\.\d+)?([eE][+-]?\d+)?", "", s)
    found = set()
    for m in re.finditer(r"([A-Za-z_:][\w:]*)\s*(\()?", s):
        if not m.group(2) and m.group(1) not in KEYWORDS:
            found.add(m.group(1))
    return found


def rule_exprs(text):
    """(start, end, expression) of every expr: of a rules file."""
    lines = text.split("\n")
    out, pos, i = [], 0, 0
    offsets = []
    for ln in lines:
        offsets.append(pos)
        pos += len(ln) + 1
    while i < len(lines):
        m = re.match(r"^(\s*)expr:\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        start = offsets[i] + lines[i].index("expr:")
        if m.group(2).strip() in ("|", ">", "|-", ">-"):
            body, j = [], i + 1
            while j < len(lines) and (not lines[j].strip() or
                                      len(lines[j]) - len(lines[j].lstrip()) > len(m.group(1))):
                body.append(lines[j].strip())
                j += 1
            out.append((start, offsets[j - 1] + len(lines[j - 1]), " ".join(body)))
            i = j
        else:
            out.append((start, offsets[i] + len(lines[i]), m.group(2)))
            i += 1
    return out


def dashboard_exprs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "expr" and isinstance(v, str):
                yield v
            elif k == "query" and isinstance(v, str) and "label_values" in v:
                yield v
            else:
                yield from dashboard_exprs(v)
    elif isinstance(node, list):
        for v in node:
            yield from dashboard_exprs(v)


def main(argv):
    if len(argv) >= 2 and argv[0] == "names":
        found = set()
        for f in argv[1:]:
            text = open(f).read()
            exprs = (dashboard_exprs(json.loads(text)) if f.endswith(".json")
                     else (e for _, _, e in rule_exprs(text)))
            for e in exprs:
                found |= names_of(e)
        print("\n".join(sorted(found)))
        return 0
    if len(argv) == 2 and argv[0] == "alerts":
        print("\n".join(re.findall(r"^\s*- alert:\s*(\S+)", open(argv[1]).read(), re.M)))
        return 0
    if len(argv) == 3 and argv[0] == "without":
        text = open(argv[2]).read()
        at = re.search(r"^\s*- alert:\s*" + re.escape(argv[1]) + r"\s*$", text, re.M)
        if not at:
            print(f"promql.py: no alert {argv[1]}", file=sys.stderr)
            return 1
        start, end, _ = next(e for e in rule_exprs(text) if e[0] > at.start())
        sys.stdout.write(text[:start] + "expr: " + NEVER + text[end:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
