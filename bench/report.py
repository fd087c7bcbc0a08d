#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The report of `make bench` (bench/run.sh): assembles what each part
measured into results.json, prints the one table, a PASS/MISS line per
performance target and, with --mode smoke, sanity checks ending in
"bench: N passed, N failed".

`report.py --markdown build/bench/results.json` prints the same figures as
the Markdown tables of bench/PERFORMANCE.md, every one as median [min-max]."""
import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time


def load_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        pass
    return rows


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values), "n": len(values)}


def fmt(s, digits=2, unit=""):
    if not s:
        return "-"
    f = "%%.%df" % digits
    return (f % s["median"]) + unit + " [" + (f % s["min"]) + "-" + (f % s["max"]) + "]"


def machine(ncpus):
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return {"cpus": ncpus, "cpu_model": model, "kernel": platform.release(),
            "memory_mb": mem, "hostname": platform.node()}


CASE_LABEL = {
    "a": "(a) bare XDP_DROP",
    "m": "minimal limiter (floor)",
    "M": "minimal limiter, 1 frame/source/min (floor)",
    "b": "(b) xdp-ratelimit, 1 pps/source",
    "B": "(b) xdp-ratelimit, 1 frame/source/min",
    "c": "(c) xdp-ratelimit --dry-run",
    "C": "(c) xdp-ratelimit --dry-run",
    "D": "(d) nftables meter, 1/minute",
    "E": "(e) iptables hashlimit, 1/min",
    "d": "(d) nftables meter, limit rate",
    "e": "(e) iptables hashlimit srcip",
    "f": "xdp-ratelimit, table 65,536",
    "g": "xdp-ratelimit, table 65,536 + aggregate",
    "h": "xdp-ratelimit, table 65,536 + newcomer budget",
    "s": "(s) SYNs: xdp-ratelimit --proto tcp --syn --pps 1",
    "t": "(t) SYNs: nftables meter on tcp flags syn",
    "u": "(u) SYNs: iptables hashlimit -p tcp --syn",
    "dispatcher": "xdp-ratelimit under libxdp's dispatcher, 1 pps",
    "direct": "xdp-ratelimit attached directly, 1 pps",
}
GROUP_LABEL = {
    "v4_1": "1 source (IPv4)",
    "v4_1024": "1,024 sources (IPv4)",
    "v6_1": "1 source (IPv6, reference for the 1,000,000-source rows)",
    "v6_1m": "1,000,000 sources (IPv6), --max-sources 1,048,576",
    "v6_1m_shuf": "1,000,000 sources (IPv6) in a shuffled order (trafficgen --shuffle), "
                  "--max-sources 1,048,576",
    "spoof": "1,000,000 random (spoofed) sources (IPv6), --max-sources 65,536",
    "dispatcher": "1 source (IPv4), in Debian 12's kernel under qemu (emulated CPU)",
}
GROUP_ORDER = ["v4_1", "v4_1024", "v6_1", "v6_1m", "v6_1m_shuf", "spoof", "dispatcher"]


def dispatcher(raw):
    """The lines of bench/vm-dispatcher.sh: the guest's kernel, and the
    per-packet cost of the dispatcher's path against the program run
    directly, a source under its quota and one over."""
    out = {"kernel": None, "progs": {}}
    for r in raw:
        if r.get("kind") == "kernel":
            out["kernel"] = r
        elif r.get("kind") == "progs":
            p = {q["name"]: q for q in r["progs"]}
            verdict = p.get("direct", {}).get("verdict")
            out["progs"][verdict] = {
                "src": r["src"], "rounds": r["rounds"],
                "direct_ns": p.get("direct", {}).get("ns"),
                "dispatcher_ns": p.get("dispatcher", {}).get("ns"),
                "other_verdicts": sum(q["other_verdicts"] for q in r["progs"]),
                "verdicts": sorted({q["verdict"] for q in r["progs"]}),
                "ratio": r["ratio_to_base"].get("dispatcher")}
    return out if out["kernel"] or out["progs"] else None


CPUS_FIGURES = (("under", "1 source under quota"),
                ("light", "a light source (each packet a new bucket)"),
                ("refresh", "a refresh (light - under)"))


def ratio_of(a, b):
    """a over b, two summaries of runs that are not paired (separate boots):
    the ratio of the medians, and the extremes' (min over max, max over min)"""
    if not a or not b or not b["median"] or not b["min"] or not b["max"]:
        return None
    return {"median": a["median"] / b["median"], "min": a["min"] / b["max"],
            "max": a["max"] / b["min"]}


def cpus(raw):
    """The lines of bench/vm-cpus.sh (--smoke: of ratelimit-bench cpus run
    here): per count of possible CPUs, the ns of one source under quota, of
    a light source net of its driver and of a refresh, and each over the
    same at 2 possible CPUs."""
    kernels = {r.get("asked"): r for r in raw if r.get("kind") == "kernel"}
    rows = []
    for r in raw:
        if r.get("kind") != "cpus":
            continue
        cs = {c["name"]: c for c in r["cases"]}
        k = kernels.get(r.get("asked")) or {}
        rows.append({"asked": r.get("asked"), "here": bool(r.get("here")),
                     "possible_cpus": r["possible_cpus"], "settings_ncpus": r["settings_ncpus"],
                     "online_cpus": r["online_cpus"], "rounds": r["rounds"],
                     "kernel": k.get("release"), "possible": k.get("possible"),
                     "bpf_jit_enable": k.get("bpf_jit_enable"),
                     "wrong_verdicts": sum(c["wrong_verdicts"] for c in r["cases"]),
                     "cases": cs, "under": r["under_net"], "light": r["light_net"],
                     "refresh": r["refresh"], "light_vs_under": r["light_vs_under"]})
    rows.sort(key=lambda x: x["possible_cpus"])
    base = next((x for x in rows if x["possible_cpus"] == 2 and not x["here"]), None)
    for x in rows:
        for f, _ in CPUS_FIGURES:
            x[f + "_vs_2"] = ratio_of(x[f], base[f]) if base else None
    return rows


def tp_rows_of(raw):
    """run.sh's lines (frames received, counters, the generator's JSON) as
    rows with Mpps and the fraction xdp-ratelimit passed."""
    rows = []
    for r in raw:
        g = r.get("generator") or {}
        secs = g.get("seconds") or 0
        if secs <= 0:
            continue
        p, d = r.get("passed", 0), r.get("dropped", 0)
        rows.append({"group": r["group"], "case": r["case"], "rep": r["rep"],
                     "received": r["received"], "seconds": secs,
                     "sent_pps": g.get("pps"), "mpps": r["received"] / secs / 1e6,
                     "passed_fraction": p / (p + d) if p + d > 0 else None})
    return rows


def throughput(rows):
    """Per group and case: Mpps, and ratios to (a), (d) and the minimal
    limiter taken per repeat."""
    out = {}
    by = {}
    rows = [r for r in rows if r["group"] != "pairs"]
    for r in rows:
        by.setdefault((r["group"], r["rep"]), {})[r["case"]] = r
    groups = sorted({r["group"] for r in rows}, key=lambda g: GROUP_ORDER.index(g)
                    if g in GROUP_ORDER else 99)
    for g in groups:
        reps = sorted(rep for (gg, rep) in by if gg == g)
        cases = []
        for r in rows:
            if r["group"] == g and r["case"] not in cases:
                cases.append(r["case"])
        res = {}
        for c in cases:
            mpps, ra, rd, rm, frac = [], [], [], [], []
            for rep in reps:
                one = by[(g, rep)]
                if c not in one:
                    continue
                v = one[c]["mpps"]
                mpps.append(v)
                if "a" in one and one["a"]["mpps"] > 0:
                    ra.append(v / one["a"]["mpps"])
                d = one.get("d") or one.get("D")
                if d and d["mpps"] > 0:
                    rd.append(v / d["mpps"])
                mm = one.get("m") or one.get("M")
                if mm and mm["mpps"] > 0:
                    rm.append(v / mm["mpps"])
                frac.append(one[c].get("passed_fraction"))
            res[c] = {"label": CASE_LABEL.get(c, c), "mpps": summary(mpps),
                      "ratio_a": summary(ra), "ratio_d": summary(rd),
                      "ratio_m": summary(rm),
                      "passed_fraction": summary(frac)}
        out[g] = {"label": GROUP_LABEL.get(g, g), "cases": res}
    return out


SWEEP_CASES = [("a", "bare XDP_DROP"), ("m", "minimal limiter"),
               ("p", "xdp-ratelimit"), ("n", "nftables meter")]


def sweep(raw):
    """run.sh's table-size sweep: per size, each receiver's Mpps, and the
    program's against bare XDP_DROP and against the minimal limiter,
    within each repeat."""
    by = {}
    for r in raw:
        secs = (r.get("generator") or {}).get("seconds") or 0
        if secs > 0:
            by.setdefault(r["size"], {}).setdefault(r["rep"], {})[r["case"]] = \
                r["received"] / secs / 1e6
    out = []
    for size in sorted(by):
        reps = by[size].values()
        row = {"sources": size,
               "mpps": {c: summary([x.get(c) for x in reps]) for c, _ in SWEEP_CASES}}
        for c, den in (("p", "a"), ("p", "m"), ("m", "a"), ("n", "a")):
            row["ratio_%s_%s" % (c, den)] = summary(
                [x[c] / x[den] for x in reps if x.get(c) and x.get(den)])
        out.append(row)
    return out


def sweep_plot(rows, res, label):
    """sweep.dat (the plot's data) and, when gnuplot is there, sweep.png
    beside it, drawn by bench/sweep.gp; the PNG's path or None."""
    dat = os.path.join(res, "sweep.dat")
    with open(dat, "w") as f:
        f.write("# sources, then median min max Mpps of: %s\n"
                % ", ".join(n for _, n in SWEEP_CASES))
        for r in rows:
            cells = []
            for c, _ in SWEEP_CASES:
                m = r["mpps"][c]
                cells += ["%.4f %.4f %.4f" % (m["median"], m["min"], m["max"])
                          if m else "NaN NaN NaN"]
            f.write("%d %s\n" % (r["sources"], " ".join(cells)))
    gp = shutil.which("gnuplot")
    if not gp or not rows:
        return None
    png = os.path.join(res, "sweep.png")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep.gp")
    ok = subprocess.run([gp, "-e", "datafile='%s'; outfile='%s'; subtitle='%s'"
                         % (dat, png, label.replace("'", "")), script]).returncode == 0
    return png if ok and os.path.exists(png) else None


def per_rep_ratio(rows, num, den):
    """Ratio of two (group, case) rates, per repeat."""
    a = {r["rep"]: r["mpps"] for r in rows if (r["group"], r["case"]) == num}
    b = {r["rep"]: r["mpps"] for r in rows if (r["group"], r["case"]) == den}
    return summary([a[k] / b[k] for k in a if k in b and b[k] > 0])


def pairs_summary(rows):
    """The back-to-back runs of (b) with 1 IPv6 source and the spoofed
    floods (f) without and (g) with an aggregate budget, (h) with a
    newcomer budget."""
    rows = [r for r in rows if r["group"] == "pairs"]
    if not rows:
        return None
    out = {"n": len({r["rep"] for r in rows}),
           "seconds": statistics.median(r["seconds"] for r in rows)}
    for c in "bfgh":
        out["mpps_" + c] = summary([r["mpps"] for r in rows if r["case"] == c])
        out["passed_" + c] = summary([r["passed_fraction"] for r in rows
                                      if r["case"] == c and r.get("passed_fraction") is not None])
    for c in "fgh":
        out["ratio_" + c] = per_rep_ratio(rows, ("pairs", c), ("pairs", "b"))
    # the newcomer budget's refusal against the aggregate's
    out["ratio_h_g"] = per_rep_ratio(rows, ("pairs", "h"), ("pairs", "g"))
    return out


def established(rows):
    """Established sources and a spoofed flood in one rule."""
    out = []
    for r in rows:
        g = r.get("flood_generator") or {}
        secs = g.get("seconds") or 0
        # what reached XDP from them during the flood; passed + dropped
        out.append({
            "sources": r["established_sources"],
            "sent": r["established_passed"] + r["established_dropped"],
            "passed": r["established_passed"], "dropped": r["established_dropped"],
            "flood_seconds": secs,
            "received_mpps": r["received"] / secs / 1e6 if secs else None,
            "passed_during_flood": r["passed"], "tracked": r["tracked"]})
    return out


def pages(n):
    """n bytes in whole 4 KiB pages"""
    return (n + 4095) // 4096 * 4096


def mmap_bytes(entries, value_size):
    """a mappable array (source_index, source_keys): whole pages, and the
    page before them"""
    return pages(entries * value_size) + 4096


def memory(rows, sizes64, ncpus):
    """Measured memlock of sources + source_index + source_keys + history, the history's
    per-entry overhead worked out from it, and the formula for this machine
    and for 64 CPUs, per source per CPU and shared."""
    out = {"rows": []}
    by = {}
    for r in rows:
        by.setdefault(r["max_sources"], []).append(r)
    # memlock = S * (8 + ncpus * V) + pages(B * bucket) + 4096
    #           + pages(S * key) + 4096 + E * h + b * roundup_pow2(E)
    # sources (a per-CPU array: a per-CPU pointer and ncpus values a slot),
    # source_index and source_keys (mappable arrays: a bucket, a slot's
    # key) are exact; with two sizes, solve the history's h (per entry:
    # hash element, key, value) and b (per hash bucket)
    def arrays(r, n=ncpus):
        v = (r["value_size"] + 7) // 8 * 8
        return (r["slots"] * (8 + n * v) +
                mmap_bytes(r["buckets"], (r["bucket_size"] + 7) // 8 * 8) +
                mmap_bytes(r.get("keys", r["slots"]), (r["key_size"] + 7) // 8 * 8))
    pts = []
    for n, rs in sorted(by.items()):
        r = rs[0]
        e = r["history_entries"]
        pts.append((e, 1 << (e - 1).bit_length(), r["memlock"] - arrays(r)))
    h = b = None
    if len(pts) >= 2:
        (e1, p1, y1), (e2, p2, y2) = pts[0], pts[-1]
        det = e1 * p2 - e2 * p1
        if det:
            h = (y1 * p2 - y2 * p1) / det
            b = (e1 * y2 - e2 * y1) / det
    out["overhead_per_entry"] = h
    out["bytes_per_hash_bucket"] = b
    s64 = {r["max_sources"]: r for r in sizes64}
    for n, rs in sorted(by.items()):
        r = rs[0]
        s_, e, v = r["slots"], r["history_entries"], (r["value_size"] + 7) // 8 * 8
        hh = h if h is not None else (r["memlock"] - arrays(r)) / e
        mem = summary([x["memlock"] for x in rs])
        row = {"max_sources": n, "slots": s_, "buckets": r["buckets"],
               "entries": e, "value_size": r["value_size"],
               "bucket_size": r["bucket_size"], "key_size": r["key_size"],
               "memlock": mem,
               "sources_memlock": r["sources_memlock"], "index_memlock": r["index_memlock"],
               "keys_memlock": r["keys_memlock"], "history_memlock": r["history_memlock"],
               "program_total": summary([x["program_total"] for x in rs]),
               "overhead_per_entry_here": (r["memlock"] - arrays(r)) / e,
               "bytes_per_source": mem["median"] / n,
               # per tracked source at --max-sources: what each possible
               # CPU adds (its values in every slot) and what is shared
               # (the slots' per-CPU pointers, the index, the keys, the
               # history)
               "bytes_per_source_per_cpu": s_ * v / n,
               "bytes_per_source_shared": (mem["median"] - s_ * ncpus * v) / n}
        pw = 1 << (e - 1).bit_length()
        row["formula_here"] = arrays(r) + e * hh + (b or 0) * pw
        # doc/design/memory.md, constants as written there: sources,
        # source_index (192-byte buckets), source_keys (16 bytes a slot),
        # then the history (an entry per source, not per CPU)
        hv = (r.get("history_value_size", 0) + 7) // 8 * 8
        row["history_value_size"] = r.get("history_value_size")
        row["formula_readme"] = (s_ * (8 + ncpus * v) + mmap_bytes(r["buckets"], 192) +
                                 mmap_bytes(s_, 16) + e * (64 + hv) + 16 * pw)
        if n in s64:
            x = s64[n]
            e64 = x["history_entries"]
            row["entries_64"] = e64
            row["slots_64"] = x["slots"]
            row["formula_64"] = (arrays(x, 64) + e64 * hh +
                                 (b or 0) * (1 << (e64 - 1).bit_length()))
            row["bytes_per_source_64"] = row["formula_64"] / n
        out["rows"].append(row)
    return out


def accuracy(rows, ncpus):
    out = []
    for r in rows:
        allowed = math.floor(0.01 * r["budget"]) + ncpus
        out.append({k: r.get(k) for k in (
            "tool", "population", "quota_pps", "multiple", "offered_pps", "sent",
            "passed", "lost", "sources", "budget", "full_windows", "per_window",
            "worst_excess", "worst_excess_any_interval",
            "worst_excess_any_short_interval")} | {"allowed_excess": allowed})
    return out


def md(s, digits=2, unit=""):
    """median [min-max] for a Markdown cell"""
    if not s:
        return ""
    f = "%%.%df" % digits
    return "%s%s [%s-%s]" % (f % s["median"], unit, f % s["min"], f % s["max"])


def markdown(path):
    """bench/PERFORMANCE.md tables from a results.json."""
    with open(path) as f:
        r = json.load(f)
    w = sys.stdout.write
    m = r["machine"]
    w("<!-- bench/report.py --markdown %s: %s mode, %s, %d s -->\n\n"
      % (path, r["mode"], r["generated"], r["seconds"]))
    cost = r.get("cost")
    if cost:
        w("**Per-packet cost** (`BPF_PROG_TEST_RUN` on CPU %d, %d rounds; ns per packet):\n\n"
          % (cost["cpu"], cost["rounds"]))
        w("| case | ns/packet | × XDP_PASS | × minimal limiter |\n|---|---|---|---|\n")
        for c in cost["cases"]:
            if c["name"].startswith("xcpu") or c["name"] in ("churn_driver", "churn"):
                continue
            w("| %s | %s | %s | %s |\n" % (c["label"], md(c["ns"], 1), md(c["ratio_pass"]),
                                           md(c.get("ratio_minimal"))))
        ev = cost.get("events")
        if ev:
            w("\n**Events** under a flood that reports on every packet (65,536 sources, "
              "each a pass and a drop per visit, `--window 1ms`; %.0f%% of the packets' "
              "events counted lost): %s × the same program without events, net of the "
              "churn driver, within each round (%s ns more per packet).\n"
              % (100 * ev["lost_per_packet"], md(ev["on_vs_off"]), md(ev["extra_ns"], 1)))
        x = cost.get("cross_cpu")
        if x:
            w("\n**Cross-CPU part of one lease refresh** (the `bpf_loop` over the other "
              "CPUs' values, net of the refresh without it; ns):\n\n")
            w("| emulated CPUs (reads) | ns | per round |\n|---|---|---|\n")
            for pt in x.get("points", []):
                w("| %d (%d) | %.1f | %s |\n" % (pt["ncpus"], pt["ncpus"] - 1, pt["median_ns"],
                                              md(pt["per_round_ns"], 1)))
            fm = x["fit_of_medians"]
            w("\nFit: `t(n) = %.1f + %.2f × (n − 1)` ns (slope within each round: %s). "
              "Here (n = %d): measured %.1f ns with the program's own loop, formula %.1f "
              "(per round: error %s). 64 CPUs: %.0f ns per refresh.\n\n"
              % (fm["fixed_ns"], fm["per_cpu_ns"], md(x["per_cpu_ns"]), x["ncpus"],
                 fm["measured_here_ns"], fm["formula_here_ns"],
                 md({k: 100 * v for k, v in x["formula_error"].items()}, 0, "%"),
                 fm["formula_64_ns"]))
    if cost and cost.get("dispatcher_path_vs_under"):
        w("**Under libxdp's dispatcher**, natively here: the program through the stub "
          "(its tail call) plus what libxdp's dispatcher program adds to a bare XDP_PASS, "
          "within each round: %s × the program alone.\n\n"
          % md(cost["dispatcher_path_vs_under"]))
    d = r.get("dispatcher")
    if d and d.get("progs"):
        w("**Under libxdp's dispatcher** (Debian 12's kernel %s under qemu without KVM: "
          "an emulated CPU, so only the ratios mean anything; `BPF_PROG_TEST_RUN` of "
          "the dispatcher against the program; ns per packet):\n\n"
          % ((d.get("kernel") or {}).get("release", "?")))
        w("| case | direct | under the dispatcher | × direct |\n|---|---|---|---|\n")
        for v, what in (("pass", "1 source under quota"), ("drop", "1 source over quota")):
            p = d["progs"].get(v)
            if p:
                w("| %s | %s | %s | %s |\n" % (what, md(p["direct_ns"], 0),
                                             md(p["dispatcher_ns"], 0), md(p["ratio"])))
        w("\n")
    cr = [x for x in r.get("cpus") or [] if not x["here"]]
    if cr:
        w("**CPU count** (Debian 12's kernel %s under qemu without KVM, booted with "
          "`possible_cpus=` 2, 16 and 64, 2 CPUs present: an emulated CPU, so only the "
          "ratios mean anything; `BPF_PROG_TEST_RUN`, ns per packet; × 2: the ratio of "
          "the medians [of the extremes] to the boot with 2):\n\n"
          % (cr[0]["kernel"] or "?"))
        w("| possible CPUs | under quota | light source | refresh | light × 2 | "
          "refresh × 2 |\n|---|---|---|---|---|---|\n")
        for x in cr:
            w("| %d | %s | %s | %s | %s | %s |\n" % (
                x["possible_cpus"], md(x["under"], 0), md(x["light"], 0), md(x["refresh"], 0),
                md(x["light_vs_2"]), md(x["refresh_vs_2"])))
        w("\n")
    tp = r.get("throughput") or {}
    if tp:
        w("**Throughput on a veth pair** (Mpps; ratios taken within each repeat):\n\n")
        w("| sources | receiver | Mpps | × (a) | × (d) | × minimal | passed |\n"
          "|---|---|---|---|---|---|---|\n")
        for g in GROUP_ORDER:
            if g not in tp:
                continue
            first = True
            for c, cv in tp[g]["cases"].items():
                pf = cv["passed_fraction"]
                w("| %s | %s | %s | %s | %s | %s | %s |\n" % (
                    tp[g]["label"] if first else "", cv["label"], md(cv["mpps"]),
                    md(cv["ratio_a"]), md(cv["ratio_d"]), md(cv.get("ratio_m")),
                    ("%.1f%%" % (100 * pf["median"])) if pf else ""))
                first = False
        w("\n")
    p = r.get("spoof_pairs")
    if p:
        w("**Spoofed floods against the single-source rate** (%d repeats of three "
          "back-to-back runs of %.1f s, IPv6):\n\n" % (p["n"], p["seconds"]))
        w("| run | Mpps | × 1 source |\n|---|---|---|\n")
        for c, label in (("b", "1 source, 1 pps (b)"),
                         ("f", "1,000,000 random sources, table 65,536"),
                         ("g", "the same + `--aggregate-pps 10k`"),
                         ("h", "the same + `--new-pps 10k` instead")):
            if p.get("mpps_" + c):
                w("| %s | %s | %s |\n" % (label, md(p["mpps_" + c]),
                                          md(p.get("ratio_" + c)) if c != "b" else ""))
        if p.get("ratio_h_g"):
            w("\nRefused by the newcomer budget against refused by the aggregate "
              "budget, within each repeat: %s.\n" % md(p["ratio_h_g"]))
        w("\n")
    for e in r.get("established") or []:
        w("**Established sources and a spoofed flood in one rule** (`--pps 1k "
          "--new-pps 10k`): %d sources at 100 pps each, established, had %d "
          "frames reach XDP while 1,000,000 random sources flooded for %.1f s "
          "(%.2f Mpps reached XDP; %d frames passed in all): the established "
          "sources passed %d and **lost %d to the limiter**.\n\n"
          % (e["sources"], e["sent"], e["flood_seconds"], e["received_mpps"] or 0,
             e["passed_during_flood"], e["passed"], e["dropped"]))
    acc = r.get("accuracy") or []
    if acc:
        w("**Accuracy** (paced traffic; window 1 s in 10 buckets; packets passed per "
          "source per window of the bucket grid, median [min-max] over the windows):\n\n")
        w("| sources | rate | tool | passed per window | worst excess in a window | "
          "in any 1 s interval | in any 0.9 s interval |\n|---|---|---|---|---|---|---|\n")
        for a in sorted(acc, key=lambda a: (a["population"], a["multiple"])):
            w("| %d | %g× | %s | %s (%d windows) | %s | %s | %s |\n" % (
                a["population"], a["multiple"], a["tool"], md(a["per_window"], 0),
                a["full_windows"] or 0, a["worst_excess"], a["worst_excess_any_interval"],
                a["worst_excess_any_short_interval"]))
        w("\n")
    mem = r.get("memory") or {}
    if mem.get("rows"):
        w("**Memory** (`bpftool map show` memlock of `sources`, `source_index`, "
          "`source_keys` and `history`):\n\n")
        w("| --max-sources N | slots S | memlock | ÷ N | per CPU ÷ N | shared ÷ N | ÷ S | "
          "whole program | 64 CPUs (formula) |\n|---|---|---|---|---|---|---|---|---|\n")
        for m_ in mem["rows"]:
            w("| %d | %d | %.1f MB | %.0f B | %.0f B | %.0f B | %.0f B | %.1f MB | %s |\n" % (
                m_["max_sources"], m_["slots"], m_["memlock"]["median"] / 1e6,
                m_["bytes_per_source"], m_["bytes_per_source_per_cpu"],
                m_["bytes_per_source_shared"], m_["memlock"]["median"] / m_["slots"],
                m_["program_total"]["median"] / 1e6,
                ("%.2f GB (%.1f KiB ÷ N)" % (m_["formula_64"] / 1e9,
                                            m_["bytes_per_source_64"] / 1024))
                if "formula_64" in m_ else ""))
        w("\n")
    sw = (r.get("sweep") or {}).get("rows")
    if sw:
        w("**Table size** (Mpps on the veth against the number of sources, each limiter "
          "holding all of them, 1 frame per source per minute, every measured frame dropped; "
          "the sources in the generator's order; ratios within each repeat):\n\n")
        w("| sources | %s | xdp-ratelimit × minimal | xdp-ratelimit × (a) |\n"
          % " | ".join(n for _, n in SWEEP_CASES))
        w("|---|%s---|---|\n" % ("---|" * len(SWEEP_CASES)))
        for row in sw:
            w("| %s | %s | %s | %s |\n" % (
                "{:,}".format(row["sources"]),
                " | ".join(md(row["mpps"][c]) for c, _ in SWEEP_CASES),
                md(row["ratio_p_m"]), md(row["ratio_p_a"])))
        w("\n![Mpps against table size](sweep.png)\n\n")
    w("**Performance targets:**\n\n")
    for t in r.get("targets", []):
        w("- %s %s\n" % ("**MISS**" if t["result"] == "MISS" else t["result"], t["text"]))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--markdown":
        return markdown(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="full")
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ncpus", type=int, required=True)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--phases", default="", help="NAME=SECONDS ...")
    a = ap.parse_args()
    t = a.tmp
    ncpus = a.ncpus

    cost = load_json(os.path.join(t, "cost.json"))
    tp_rows = tp_rows_of(load_jsonl(os.path.join(t, "throughput.jsonl")))
    mem = memory(load_jsonl(os.path.join(t, "memory.jsonl")),
                 load_jsonl(os.path.join(t, "sizes64.jsonl")), ncpus)
    acc = accuracy(load_jsonl(os.path.join(t, "accuracy.jsonl")), ncpus)
    est = established(load_jsonl(os.path.join(t, "established.jsonl")))
    cpu_rows = cpus(load_jsonl(os.path.join(t, "cpus.jsonl")))
    vm = load_jsonl(os.path.join(t, "dispatcher.jsonl"))
    disp = dispatcher(vm)
    tp_rows += tp_rows_of([r for r in vm if r.get("kind") == "throughput"])
    tp = throughput(tp_rows)
    x = (cost or {}).get("cross_cpu")
    if x:
        # doc/design/cpus.md: a source on one CPU refreshes about
        # B + log2(budget) + 1 times per window
        budget, nb = 1000, 10
        refr = nb + math.ceil(math.log2(budget)) + 1
        x["amortized"] = {"budget": budget, "buckets": nb, "refreshes": refr,
                          "here_ns": refr * x["measured_here_ns"]["median"] / budget,
                          "cpus64_ns": refr * (x.get("fit_of_medians") or {}).get(
                              "formula_64_ns", x["formula_64_ns"]["median"]) / budget}

    # ---- performance targets --------------------------------------------------
    targets = []

    def target(name, value, ok, text):
        targets.append({"target": name, "value": value,
                        "result": "n/a" if ok is None else ("PASS" if ok else "MISS"),
                        "text": text})

    cases = {c["name"]: c for c in (cost or {}).get("cases", [])}
    for n, what in (("under", "under quota"), ("over", "over quota")):
        r = cases.get(n, {}).get("ratio_minimal")
        target("cost_vs_minimal_" + n, r, r and r["median"] <= 1.5,
               "per-packet cost, 1 source %s: %s x the minimal limiter (<= 1.5)"
               % (what, fmt(r)))

    def tpv(g, c):
        return tp.get(g, {}).get("cases", {}).get(c)

    for g, b in (("v4_1", "b"), ("v4_1024", "b"), ("v6_1m", "B")):
        x = tpv(g, b)
        if not x:
            continue
        r = x["ratio_a"]
        target("veth_vs_xdp_drop_" + g, r, r and r["median"] >= 0.8,
               "veth, %s: (b) at %s of bare XDP_DROP (>= 0.80)"
               % (GROUP_LABEL[g].split(" (")[0], fmt(r)))
        for c, who in (("d", "nftables"), ("e", "hashlimit")):
            if g == "v6_1m":
                c = c.upper()
            r = per_rep_ratio(tp_rows, (g, b), (g, c))
            if r:
                target("veth_vs_%s_%s" % (who, g), r, r["median"] >= 4,
                       "veth, %s: (b) at %s x %s (>= 4)"
                       % (GROUP_LABEL[g].split(" (")[0], fmt(r), who))
    # the spoofed floods: from the back-to-back runs ("pairs") when there
    # are any, else from the throughput repeats
    pairs = pairs_summary(tp_rows)
    for g, c, what in (("v6_1m", "B", "1,000,000 sources, table above them"),
                       ("spoof", "f", "1,000,000 spoofed, table 65,536, no aggregate"),
                       ("spoof", "g", "1,000,000 spoofed, table 65,536, aggregate budget")):
        if g == "spoof" and pairs:
            r, g, how = pairs["ratio_" + c], "pairs", ", %d back-to-back runs" % pairs["n"]
        else:
            r, how = per_rep_ratio(tp_rows, (g, c), ("v6_1", "b")), ""
        if r:
            target("veth_%s_%s_vs_single" % (g, c), r, r["median"] >= 0.5,
                   "veth, %s: %s of its single-source rate (>= 0.50%s)"
                   % (what, fmt(r), how))
    # a flood refused by the newcomer budget costs no more than
    # one refused by the aggregate (within the noise of one run: 5%), and
    # established sources in the flood's rule lose nothing
    ev = (cost or {}).get("events")
    if ev:
        r = ev["on_vs_off"]
        target("cost_events", r, r["median"] <= 1.05,
               "per-packet cost, a flood reporting an event on every packet: %s x the "
               "program without events (<= 1.05)" % fmt(r))
    # ratios the cost part takes within each round: (its key, the
    # target's name, the bound (None: reported), what it says)
    # - a flood refused by the newcomer budget against the aggregate;
    # - verified sources: a verified source's packet under a rule that
    #   reads verification (its CPU's copy of the answer time: no lookup)
    #   costs what it costs under one that does not; under --ban it also
    #   looks its connection up;
    # - rule scope: a SYN judged by a SYN rule beside an unscoped one, and
    #   a packet in no scope while scopes are in use, against one rule;
    # - SYN cookies: a spoofed SYN answered with one against the same SYN
    #   refused by a newcomer budget today (both behind the TCP churn
    #   driver, which copies the frame back each repeat);
    # - libxdp's dispatcher, natively here from its parts (libxdp's
    #   dispatcher program, the stub's tail call); the whole path in
    #   Debian 12's kernel under qemu is below (an emulated CPU: reported
    #   beside, as a check)
    for key, name, bound, text in (
            ("spoof_newcomer_vs_aggregate", "cost_newcomer_vs_aggregate", 1.05,
             "spoofed flood refused by the newcomer budget: %s x refused by the "
             "aggregate budget"),
            ("verified_newcomer_vs_under", "cost_verified_newcomer_rule", 1.05,
             "a verified source under a rule with a newcomer budget: %s x under a "
             "rule without"),
            ("verified_ban_vs_under", "cost_verified_ban_rule", None,
             "a verified source under a rule with --ban (its answered connection "
             "looked up, its packet counted): %s x under a rule without"),
            ("scope_syn_vs_under", "cost_scope_syn", 1.5,
             "a SYN under a SYN rule and an unscoped rule: %s x one rule"),
            ("scope_unscoped_vs_under", "cost_scope_unscoped", 1.05,
             "a packet under an unscoped rule while a scope is in use: %s x "
             "without scopes"),
            ("dispatcher_path_vs_under", "cost_dispatcher_vs_direct", 1.10,
             "under libxdp's dispatcher, 1 source under quota (here, from libxdp's "
             "dispatcher program and the stub's tail call): %s x attached directly"),
            ("slot_vs_under", "cost_slot_vs_under", None,
             "the dispatcher's stub alone (its tail call): %s x the program run "
             "directly"),
            ("syn_cookie_vs_refused", "cost_syn_cookie_vs_refused", None,
             "a spoofed SYN answered with a SYN cookie (the cookie, the SYN-ACK "
             "built, XDP_TX): %s x the same SYN refused by a newcomer budget")):
        r = (cost or {}).get(key)
        if r:
            target(name, r, None if bound is None else r["median"] <= bound,
                   "per-packet cost, " + text % fmt(r) +
                   (" (reported)" if bound is None else " (<= %.2f)" % bound))
    vmk = ((disp or {}).get("kernel") or {}).get("release", "?")
    for v, what in (("pass", "under"), ("drop", "over")):
        r = ((disp or {}).get("progs", {}).get(v) or {}).get("ratio")
        if r:
            target("cost_dispatcher_vs_direct_vm_" + what, r, None,
                   "per-packet cost under libxdp's dispatcher, 1 source %s quota, the "
                   "whole path in kernel %s under qemu (emulated CPU): %s x attached "
                   "directly (reported)" % (what, vmk, fmt(r)))
    r = per_rep_ratio(tp_rows, ("dispatcher", "dispatcher"), ("dispatcher", "direct"))
    if r:
        target("veth_dispatcher_vs_direct", r, None,
               "veth, 1 source, under libxdp's dispatcher: %s of attached directly "
               "(reported; kernel %s under qemu, emulated CPU)" % (fmt(r), vmk))
    for g in ("v4_1", "v4_1024"):
        for c, who in (("t", "nftables"), ("u", "hashlimit")):
            r = per_rep_ratio(tp_rows, (g, "s"), (g, c))
            if r:
                target("veth_syn_vs_%s_%s" % (who, g), r, None,
                       "veth, %s, SYNs under a SYN-scoped rule: (s) at %s x %s (reported)"
                       % (GROUP_LABEL[g].split(" (")[0], fmt(r), who))
    cs = {c["name"]: c for c in (cost or {}).get("cases", [])}
    if "egress_reply" in cs:
        e = cs["egress_reply"]["ns"]
        target("cost_egress_reply", e, None,
               "egress hook, per answer of the host (TCP ACK to a verified source, "
               "--ban in force): %.0f ns [%.0f-%.0f] (reported)"
               % (e["median"], e["min"], e["max"]))
    if pairs and pairs.get("ratio_h_g"):
        r = pairs["ratio_h_g"]
        target("veth_newcomer_vs_aggregate", r, r["median"] >= 0.95,
               "veth, spoofed flood refused by the newcomer budget: %s of the rate "
               "refused by the aggregate budget (>= 0.95, %d back-to-back runs)"
               % (fmt(r), pairs["n"]))
    for e in est:
        target("established_lost", e["dropped"], e["dropped"] == 0,
               "established sources in the flood's rule: lost %d of %d to the limiter (0)"
               % (e["dropped"], e["sent"]))
    for r in acc:
        if r["tool"] != "xdp-ratelimit":
            continue
        target("excess_%s_%sx" % (r["population"], r["multiple"]), r["worst_excess"],
               r["worst_excess"] is not None and r["worst_excess"] <= r["allowed_excess"],
               "accuracy, %d source(s) at %gx: worst excess %s packets per window "
               "(<= 1%% of %d + %d CPUs = %d)" % (
                   r["population"], r["multiple"], r["worst_excess"], r["budget"],
                   ncpus, r["allowed_excess"]))
    for r in acc:
        # --burst of a tenth of the quota: every 1 s interval, wherever it
        # starts, within the quota (reported: what --burst is for)
        if r["tool"] != "xdp-ratelimit-burst":
            continue
        target("excess_any_burst_%s_%sx" % (r["population"], r["multiple"]),
               r["worst_excess_any_interval"], None,
               "accuracy with --burst of a tenth of the quota, %d source(s) at %gx, any "
               "1 s interval: worst excess %s (reported)" % (
                   r["population"], r["multiple"], r["worst_excess_any_interval"]))
    for r in acc:
        # the same bound on every 1 s interval, wherever it starts (not
        # only the windows of the bucket grid of xdp-ratelimit(8) "Window")
        if r["tool"] != "xdp-ratelimit":
            continue
        v = r["worst_excess_any_interval"]
        target("excess_any_%s_%sx" % (r["population"], r["multiple"]), v,
               v is not None and v <= r["allowed_excess"],
               "accuracy, %d source(s) at %gx, any 1 s interval (not only the "
               "bucket grid): worst excess %s (<= %d)" % (
                   r["population"], r["multiple"], v, r["allowed_excess"]))

    # ---- compact per-source state: size, speed, the memory formula of doc/design/memory.md ---
    x = tpv("v4_1", "b")
    if x:
        r = x["ratio_a"]
        target("compact_one_source_vs_xdp_drop", r, r and r["median"] >= 0.7,
               "compact state: veth, 1 source: (b) at %s of bare XDP_DROP (>= 0.70; 0.53 before)"
               % fmt(r))
    x = tpv("v6_1m", "B")
    if x:
        r = x["ratio_a"]
        target("compact_million_vs_xdp_drop", r, r and r["median"] >= 0.26,
               "compact state: veth, 1,000,000 tracked sources: (b) at %s of bare XDP_DROP "
               "(>= 0.26, twice the 0.13 before)" % fmt(r))
    if mem["rows"]:
        v = mem["rows"][0]["value_size"]
        target("compact_value_size", v, v <= 128,
               "compact state: sizeof(struct rl_source) = %d B as bpftool shows it (<= 128)" % v)
    for m_ in mem["rows"]:
        err = abs(m_["formula_readme"] - m_["memlock"]["median"]) / m_["memlock"]["median"]
        target("compact_formula_%d" % m_["max_sources"], err, err <= 0.01,
               "compact state: --max-sources %d: the doc/design/memory.md formula is within %.2f%% of "
               "bpftool's memlock (<= 1%%)" % (m_["max_sources"], 100 * err))

    # the per-source layout's targets, each a ratio within one run: the
    # program against the minimal limiter (bench/minimal.bpf.c) with a
    # million tracked sources in the generator's order and shuffled, and
    # at one source on the same clock; against bare XDP_DROP at one
    # source and under a spoofed flood a newcomer budget refuses
    for g, what in (("v6_1m", "the generator's order"), ("v6_1m_shuf", "a shuffled order")):
        x = tpv(g, "B")
        r = x and x.get("ratio_m")
        if r:
            target("layout_million_vs_minimal_" + g, r, r["median"] >= 1.5,
                   "layout: veth, 1,000,000 tracked sources in %s: (b) at %s x the "
                   "minimal limiter (>= 1.5)" % (what, fmt(r)))
    r = cases.get("under", {}).get("ratio_minimal")
    if r:
        target("layout_one_source_cost_vs_minimal", r, r["median"] <= 1.0,
               "layout: per-packet cost, 1 source under quota: %s x the minimal limiter, "
               "both on the program's clock (<= 1.0)" % fmt(r))
    x = tpv("v4_1", "b")
    if x and x["ratio_a"]:
        r = x["ratio_a"]
        target("layout_one_source_vs_xdp_drop", r, r["median"] >= 0.85,
               "layout: veth, 1 source: (b) at %s of bare XDP_DROP (>= 0.85)" % fmt(r))
    x = tpv("spoof", "h")
    if x and x["ratio_a"]:
        r = x["ratio_a"]
        target("layout_spoof_newcomer_vs_xdp_drop", r, r["median"] >= 0.4,
               "layout: veth, 1,000,000 spoofed sources refused by a newcomer budget: "
               "%s of bare XDP_DROP (>= 0.40)" % fmt(r))
    for key, what in (("under_rate_vs_drop", "1 source under quota"),
                      ("spoof_newcomer_rate_vs_drop",
                       "a spoofed flood refused by a newcomer budget (net of the churn driver)")):
        r = (cost or {}).get(key)
        if r:
            target("layout_cost_" + key, r, None,
                   "layout: per-packet cost, %s: a rate %s of bare XDP_DROP's" % (what, fmt(r)))
    # the CPU count, in Debian 12's kernel under qemu: a light source and a
    # refresh at 64 possible CPUs within 1.5x of the same at 2
    for x in cpu_rows:
        if x["here"] or x["possible_cpus"] == 2:
            continue
        for f, what in CPUS_FIGURES[1:]:
            r = x[f + "_vs_2"]
            if r:
                target("layout_cpus_%s_%d_vs_2" % (f, x["possible_cpus"]), r,
                       r["median"] <= 1.5 if x["possible_cpus"] == 64 else None,
                       "layout: per-packet cost of %s at %d possible CPUs: %s x at 2 "
                       "(Debian 12's kernel under qemu)%s"
                       % (what, x["possible_cpus"], fmt(r),
                          " (<= 1.5)" if x["possible_cpus"] == 64 else ""))
    sw = sweep(load_jsonl(os.path.join(t, "sweep.jsonl")))
    sweep_png = sweep_plot(sw, os.path.dirname(os.path.abspath(a.out)),
                           "%s mode, %d CPUs, %s" % (a.mode, ncpus, platform.release()))
    if sw:
        big = sw[-1]
        r = big["ratio_p_m"]
        target("layout_sweep_largest_vs_minimal", r, None,
               "layout: table size sweep, %d sources: xdp-ratelimit at %s x the minimal "
               "limiter, %s of bare XDP_DROP" % (big["sources"], fmt(r), fmt(big["ratio_p_a"])))

    results = {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "mode": a.mode, "seconds": a.seconds, "cpu": a.cpu,
        "phase_seconds": {k: int(v) for k, v in
                          (p.split("=", 1) for p in a.phases.split() if "=" in p)},
        "machine": machine(ncpus),
        "cost": cost, "throughput": tp, "spoof_pairs": pairs, "established": est,
        "dispatcher": disp, "cpus": cpu_rows,
        "throughput_runs": tp_rows,
        "memory": mem, "accuracy": acc, "targets": targets,
        "sweep": {"rows": sw, "png": sweep_png, "gnuplot": bool(shutil.which("gnuplot"))},
    }
    with open(a.out, "w") as f:
        json.dump(results, f, indent=1)

    # ---- the table -----------------------------------------------------------
    m = results["machine"]
    w = sys.stdout.write
    w("\nxdp-ratelimit benchmark (%s mode, %ds): %d CPUs (%s), kernel %s\n"
      % (a.mode, a.seconds, m["cpus"], m["cpu_model"], m["kernel"]))
    w("every figure: median [min-max] over repeats; ratios taken within a repeat\n")
    if cost:
        w("\nPer-packet cost, BPF_PROG_TEST_RUN on CPU %d, %d rounds     ns/packet"
          "              x XDP_PASS           x minimal limiter\n" % (cost["cpu"], cost["rounds"]))
        for c in cost["cases"]:
            if c["name"].startswith("xcpu"):
                continue
            w("  %-40s %-22s %-20s %s\n" % (
                c["label"], fmt(c["ns"]), fmt(c["ratio_pass"]),
                fmt(c.get("ratio_minimal")) if c.get("ratio_minimal") else ""))
        ev = cost.get("events")
        if ev:
            w("  events, a flood reporting on every packet: %s x without events, "
              "net of the driver (%s ns more); %.0f%% of its events counted lost\n"
              % (fmt(ev["on_vs_off"]), fmt(ev["extra_ns"], 1), 100 * ev["lost_per_packet"]))
        x = cost.get("cross_cpu")
        if x:
            w("  cross-CPU part of a refresh (bpf_loop over the other CPUs' values):\n")
            for c in cost["cases"]:
                if c["name"].startswith("xcpu"):
                    w("    %-38s %s\n" % (c["label"], fmt(c["ns"])))
            fm = x.get("fit_of_medians")
            if fm:
                w("    fit to the medians: t(n) = %.1f + %.2f x (n - 1) ns for n CPUs\n"
                  % (fm["fixed_ns"], fm["per_cpu_ns"]))
            w("    fit within each round: t(n) = %s + %s x (n - 1) ns\n"
              % (fmt(x["fixed_ns"]), fmt(x["per_cpu_ns"])))
            if fm:
                w("    here (n = %d): measured %.1f ns, formula %.1f ns (%+.0f%%); "
                  "n = 64: %.0f ns per refresh\n"
                  % (x["ncpus"], fm["measured_here_ns"], fm["formula_here_ns"],
                     100 * (fm["formula_here_ns"] / fm["measured_here_ns"] - 1)
                     if fm["measured_here_ns"] else 0, fm["formula_64_ns"]))
            w("    per round: here measured %s ns, formula %s ns (error %s); n = 64: %s ns\n"
              % (fmt(x["measured_here_ns"], 1), fmt(x["formula_here_ns"], 1),
                 fmt(x.get("formula_error"), 2), fmt(x["formula_64_ns"], 0)))
            am = x.get("amortized")
            if am:
                w("    per passed packet, a source at a quota of %d/window: ~%d refreshes "
                  "per window (B + log2(budget) + 1) x t(n) / %d = %.2f ns here, "
                  "%.1f ns on 64 CPUs\n" % (am["budget"], am["refreshes"], am["budget"],
                                             am["here_ns"], am["cpus64_ns"]))
    if cost and cost.get("dispatcher_path_vs_under"):
        w("\nUnder libxdp's dispatcher, here: the program through the stub + what the "
          "dispatcher adds to XDP_PASS, within each round: %s x the program alone\n"
          % fmt(cost["dispatcher_path_vs_under"]))
    if disp and disp["progs"]:
        w("\nUnder libxdp's dispatcher, in Debian 12's kernel %s under qemu (an emulated "
          "CPU: only ratios within the run mean anything)\n" % vmk)
        w("  per-packet cost (BPF_PROG_TEST_RUN)      direct ns/packet       "
          "dispatcher ns/packet   x direct\n")
        for v, what in (("pass", "1 source under quota"), ("drop", "1 source over quota")):
            p = disp["progs"].get(v)
            if p:
                w("  %-40s %-22s %-22s %s\n" % (what, fmt(p["direct_ns"], 0),
                                                fmt(p["dispatcher_ns"], 0), fmt(p["ratio"])))
    if cpu_rows:
        vm_rows = [x for x in cpu_rows if not x["here"]]
        if vm_rows:
            jit = {x["bpf_jit_enable"] for x in vm_rows}
            w("\nCPU count: BPF_PROG_TEST_RUN in Debian 12's kernel %s under qemu, booted with "
              "possible_cpus= each (2 present; JIT %s; an emulated CPU: the ns are slow, only "
              "ratios within the run mean anything; x 2: ratio of the medians [of the "
              "extremes] to the boot with 2)\n"
              % (vm_rows[0]["kernel"] or "?",
                 "on" if jit == {1} else "off" if jit == {0} else "unknown"))
        else:
            w("\nCPU count: BPF_PROG_TEST_RUN here only (--smoke boots no guest)\n")
        w("  %-9s %-26s %-26s %-26s %-20s %-20s %s\n" % (
            "possible", "under ns", "light ns", "refresh ns", "light x under",
            "light x 2", "refresh x 2"))
        for x in cpu_rows:
            w("  %-9s %-26s %-26s %-26s %-20s %-20s %s\n" % (
                "%d%s" % (x["possible_cpus"], " here" if x["here"] else
                          "" if x["asked"] == x["possible_cpus"] else " (asked %s)" % x["asked"]),
                fmt(x["under"], 0), fmt(x["light"], 0), fmt(x["refresh"], 0),
                fmt(x["light_vs_under"]), fmt(x["light_vs_2"]), fmt(x["refresh_vs_2"])))
        w("  under, light: net of the driver that runs the program (light's moves the test "
          "clock one bucket per packet); refresh: light - under, within each round\n")
    if tp:
        w("\nThroughput on a veth pair, trafficgen at full speed, generator and receiver on CPU %d\n"
          "  (what the receiving XDP hook ran on, per second)    Mpps                  x (a)"
          "                x (d)                x minimal            passed\n" % a.cpu)
        for g, gv in tp.items():
            w("  %s\n" % gv["label"])
            for c, cv in gv["cases"].items():
                pf = cv["passed_fraction"]
                w("    %-40s %-21s %-20s %-20s %-20s %s\n" % (
                    cv["label"], fmt(cv["mpps"]), fmt(cv["ratio_a"]), fmt(cv["ratio_d"]),
                    fmt(cv.get("ratio_m")) if cv.get("ratio_m") else "",
                    ("%.1f%%" % (100 * pf["median"])) if pf else ""))
    if pairs:
        w("\nSpoofed floods (IPv6, 1,000,000 random sources, table 65,536) against the "
          "single-source rate:\n  %d repeats of three back-to-back runs of %.1f s "
          "(order rotating), ratios within a repeat\n" % (pairs["n"], pairs["seconds"]))
        w("    %-40s %-21s %s\n" % ("", "Mpps", "x (b), 1 source"))
        for c, label in (("b", "(b) xdp-ratelimit, 1 source (IPv6)"),
                         ("f", "xdp-ratelimit, table 65,536"),
                         ("g", "xdp-ratelimit, table 65,536 + aggregate"),
                         ("h", "xdp-ratelimit, table 65,536 + newcomer")):
            w("    %-40s %-21s %s\n" % (label, fmt(pairs["mpps_" + c]),
                                        fmt(pairs.get("ratio_" + c)) if c != "b" else ""))
        w("    newcomer budget refusing / aggregate refusing, within a repeat: %s\n"
          % fmt(pairs.get("ratio_h_g")))
    for e in est:
        w("\nEstablished sources and a spoofed flood in one rule (--pps 1k --new-pps 10k):\n"
          "  %d established sources had %d frames reach XDP during %.1f s of 1,000,000 "
          "random sources (%.2f Mpps into XDP): passed %d, lost to the limiter %d; "
          "%d sources tracked\n"
          % (e["sources"], e["sent"], e["flood_seconds"], e["received_mpps"] or 0,
             e["passed"], e["dropped"], e["tracked"]))
    if mem["rows"]:
        w("\nMemory of the sources, source_index, source_keys and history maps (bpftool "
          "map show: memlock), %d CPUs here\n" % ncpus)
        w("  %-12s %-18s %-14s %-14s %-14s %-24s %s\n" % (
            "max-sources", "slots/history", "memlock", "formula here", "whole program",
            "per source (CPU+shared)", "64 CPUs (formula)"))
        for r in mem["rows"]:
            w("  %-12d %-18s %-14s %-14s %-14s %-24s %s\n" % (
                r["max_sources"], "%d/%d" % (r["slots"], r["entries"]),
                "%.1f MB" % (r["memlock"]["median"] / 1e6),
                "%.1f MB" % (r["formula_here"] / 1e6),
                "%.1f MB" % (r["program_total"]["median"] / 1e6),
                "%.0f B (%d x %.0f + %.0f)" % (r["bytes_per_source"], ncpus,
                                              r["bytes_per_source_per_cpu"],
                                              r["bytes_per_source_shared"]),
                ("%.2f GB (%.0f B a source)" % (r["formula_64"] / 1e9,
                                               r["bytes_per_source_64"]))
                if "formula_64" in r else "-"))
        if mem["overhead_per_entry"] is not None:
            r0 = mem["rows"][0]
            w("  formula: S x (8 + ncpus x %d) + pages(B x %d) + pages(S x %d) + 8192 + "
              "E x %.1f + %.1f x roundup_pow2(E) bytes (S slots of sources and of "
              "source_keys, B buckets of source_index, E entries of history: its overhead "
              "per entry and per hash bucket worked out from the two sizes)\n"
              % ((r0["value_size"] + 7) // 8 * 8, r0["bucket_size"], r0["key_size"],
                 mem["overhead_per_entry"], mem["bytes_per_hash_bucket"]))
    if acc:
        w("\nAccuracy: paced traffic, window 1 s in 10 buckets; packets passed per source per window\n")
        w("  %-14s %-8s %-5s %-6s %-24s %-15s %s\n" % (
            "tool", "sources", "rate", "quota", "passed/window (n)", "worst excess",
            "worst excess in any interval of 1 s / 0.9 s"))
        for r in acc:
            w("  %-14s %-8d %-5s %-6d %-24s %-15s %s / %s\n" % (
                r["tool"], r["population"], "%gx" % r["multiple"], r["budget"],
                fmt(r["per_window"], 0) + " (%d)" % (r["full_windows"] or 0),
                r["worst_excess"], r["worst_excess_any_interval"],
                r.get("worst_excess_any_short_interval")))
        w("  window: the bucket holding the packet and the 9 before it (xdp-ratelimit(8)), on "
          "the program's clock; passes counted at a UDP socket behind the limiter\n")
    if sw:
        w("\nTable size: Mpps against sources (each in the table; the generator's order)\n")
        w("  %-10s %s %-20s %s\n" % ("sources", "".join("%-21s " % n for _, n in SWEEP_CASES),
                                     "x minimal", "x (a)"))
        for row in sw:
            w("  %-10d %s %-20s %s\n" % (
                row["sources"], "".join("%-21s " % fmt(row["mpps"][c]) for c, _ in SWEEP_CASES),
                fmt(row["ratio_p_m"]), fmt(row["ratio_p_a"])))
        w("  plot: %s\n" % (sweep_png or "not drawn (no gnuplot: scripts/install-deps.sh --test)"))
    w("\nPerformance targets\n")
    for tg in targets:
        w("  %-4s %s\n" % (tg["result"], tg["text"]))
    w("\nresults: %s\n" % a.out)

    if a.mode != "smoke":
        return 0
    return smoke(results, ncpus)


def smoke(r, ncpus):
    """Each part produced sane numbers (not speed targets)."""
    passed = failed = 0

    def check(name, ok, why=""):
        nonlocal passed, failed
        if ok:
            print("ok   bench/%s" % name)
            passed += 1
        else:
            print("FAIL bench/%s%s" % (name, (": " + why) if why else ""))
            failed += 1

    cost = r["cost"]
    check("cost_ran", bool(cost and cost.get("cases")), "no cost figures")
    if cost:
        cs = {c["name"]: c for c in cost["cases"]}
        bad = [c["name"] for c in cost["cases"]
               if not (0 < c["ns"]["median"] < 100000)]
        check("cost_sane", not bad, "implausible ns/packet: %s" % bad)
        wrong = [c["name"] for c in cost["cases"] if c["wrong_verdicts"]]
        check("cost_verdicts", not wrong, "unexpected verdicts: %s" % wrong)
        # the fastest rounds: noise (another job on the CPU) only adds time,
        # and a smoke run has two rounds
        check("cost_above_pass", all(cs[n]["ns"]["min"] > cs["xdp_pass"]["ns"]["min"]
                                     for n in ("under", "over", "minimal_under", "churn")),
              "a limiter measured cheaper than XDP_PASS")
        check("cost_dispatcher", (cost.get("dispatcher_path_vs_under") or {})
              .get("median", 0) > 0, "no dispatcher path measured")
        check("cost_cross_cpu", cost.get("cross_cpu", {}).get("per_cpu_ns", {})
              .get("median", 0) > 0, "no per-CPU growth measured")
        ev = cost.get("events") or {}
        check("cost_events", ev.get("on_vs_off", {}).get("median", 0) > 0 and
              ev.get("lost_per_packet", 0) > 0.5,
              "events on against off: %s" % ev)
    rows = r["memory"]["rows"]
    check("memory_ran", bool(rows), "no memlock read")
    for m in rows:
        check("memory_%d" % m["max_sources"],
              m["memlock"]["median"] >= m["slots"] * ncpus * m["value_size"],
              "memlock below slots x ncpus x value")
        # every map of the table counted: the formula, with a key per slot
        # in source_keys, is memlock less the kernel's struct of each map
        err = (m["memlock"]["median"] - m["formula_readme"]) / m["memlock"]["median"]
        check("memory_formula_%d" % m["max_sources"], 0 <= err <= 0.01,
              "doc/design/memory.md's formula %d B against memlock %d B"
              % (m["formula_readme"], m["memlock"]["median"]))
    tp = r["throughput"]
    g = tp.get("v4_1", {}).get("cases", {})
    check("throughput_ran", len(g) == 9, "cases measured: %s" % list(g))
    for c, v in g.items():
        check("throughput_%s" % c, v["mpps"] and v["mpps"]["median"] > 0.05,
              "%s Mpps" % (v["mpps"] and v["mpps"]["median"]))
    for c in "bs":	# (s): SYNs under a SYN rule of 1 pps
        b = g.get(c, {}).get("passed_fraction")
        check("throughput_%s_drops" % c, b is not None and b["median"] < 0.01,
              "xdp-ratelimit (%s) at 1 pps passed %s" % (c, b))
    acc = r["accuracy"]
    check("accuracy_ran", len(acc) == 4, "%d runs" % len(acc))
    for a in acc:
        ok = a["passed"] and a["passed"] > 0 and not a["lost"] and a["full_windows"]
        check("accuracy_%s" % a["tool"], bool(ok),
              "passed %s, lost %s, full windows %s" % (a["passed"], a["lost"],
                                                      a["full_windows"]))
        if a["tool"] == "xdp-ratelimit" and a["per_window"]:
            med = a["per_window"]["median"]
            check("accuracy_xdp_quota", 0.5 * a["budget"] <= med <= a["budget"] + ncpus,
                  "median %s per window against a quota of %s" % (med, a["budget"]))
    d = r.get("dispatcher") or {}
    for v in ("pass", "drop"):
        p = (d.get("progs") or {}).get(v)
        check("dispatcher_cost_%s" % v, bool(p and p["ratio"] and p["ratio"]["median"] > 0
                                              and p["verdicts"] == [v]
                                              and not p["other_verdicts"]),
              "dispatcher against direct, %s: %s" % (v, p))
    g = tp.get("dispatcher", {}).get("cases", {})
    check("dispatcher_throughput_ran", len(g) == 5, "cases measured: %s" % list(g))
    for c in ("dispatcher", "direct"):
        v = g.get(c, {})
        check("dispatcher_throughput_%s" % c, bool(v.get("mpps") and v["mpps"]["median"] > 0.001
                                                   and v["passed_fraction"]
                                                   and v["passed_fraction"]["median"] < 0.01),
              "%s: %s" % (c, v))
    sw = (r.get("sweep") or {}).get("rows") or []
    check("sweep_ran", len(sw) >= 2, "sizes measured: %s" % [x["sources"] for x in sw])
    for x in sw:
        bad = [c for c, _ in SWEEP_CASES
               if not (x["mpps"][c] and x["mpps"][c]["median"] > 0.05)]
        check("sweep_%d" % x["sources"], not bad, "no rate for %s" % bad)
    if r["sweep"]["gnuplot"]:
        check("sweep_plot", bool(r["sweep"]["png"]), "gnuplot did not draw the plot")
    cr = r.get("cpus") or []
    check("cpus_ran", len(cr) == 1, "rows: %d" % len(cr))
    for x in cr:
        cs = x["cases"]
        check("cpus_ncpus", x["settings_ncpus"] >= x["possible_cpus"] > 0,
              "settings.ncpus %d, possible CPUs %d" % (x["settings_ncpus"], x["possible_cpus"]))
        check("cpus_verdicts", not x["wrong_verdicts"], "a case's packet was not passed")
        # the fastest rounds (noise only adds time): the driver costs
        # more with the program behind it than with XDP_PASS
        check("cpus_above", cs["under"]["ns"]["min"] > cs["driver"]["ns"]["min"] and
              cs["light"]["ns"]["min"] > cs["driver"]["ns"]["min"],
              "%s" % {n: c["ns"]["min"] for n, c in cs.items()})
    est = r.get("established") or []
    check("established_ran", len(est) == 1 and est[0]["sent"] > 0 and est[0]["passed"] > 0,
          "established sources and a flood: %s" % est)
    print("bench: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
