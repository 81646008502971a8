#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares benchmark runs of two builds, A (before) and B (after).

    tests/bench/ab.py [--file xcuda.csv] A_DIR... -- B_DIR...
    tests/bench/ab.py --self-test

Each DIR is one run-bench.sh result directory (its OUT).  For every row of
FILE (xcuda.csv: the local transport; upstream.csv: the upstream link;
native.csv: the GPU alone) in every run, the median of A's runs is set
against the median of B's.  A row is "worse" only when B lost more than
the threshold (--threshold, 2 %) AND more than A's own spread between its
runs: a difference smaller than the noise of A against itself says
nothing.  Prints one line per row and a last line: N rows, N worse,
N better, N within the noise.
"""
import csv
import os
import statistics
import sys

# Units where less is better; every other unit (GB/s) is a rate.
LOWER = {"us", "ms", "s", "ns"}


def load(path):
    """{(metric, size): (value, unit)} of one result CSV."""
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                rows[(r["metric"], int(r["size_bytes"]))] = (
                    float(r["value"]), r["unit"])
            except (KeyError, ValueError):
                continue
    return rows


def compare(a_runs, b_runs, threshold):
    """Rows of (key, unit, a_median, b_median, change, noise, verdict).

    change: B against A, positive when B is better; noise: A's spread,
    (max - min) / median, as a fraction.
    """
    keys = [k for k in a_runs[0]
            if all(k in r for r in a_runs + b_runs)]
    out = []
    for k in keys:
        unit = a_runs[0][k][1]
        a = [r[k][0] for r in a_runs]
        b = [r[k][0] for r in b_runs]
        am, bm = statistics.median(a), statistics.median(b)
        if am <= 0 or bm <= 0:
            continue
        change = (am / bm - 1) if unit in LOWER else (bm / am - 1)
        noise = (max(a) - min(a)) / am if len(a) > 1 else 0.0
        if change < -threshold and -change > noise:
            verdict = "WORSE"
        elif change > threshold and change > noise:
            verdict = "better"
        else:
            verdict = "noise"
        out.append((k, unit, am, bm, change, noise, verdict))
    return out


def main(argv):
    threshold, name = 0.02, "xcuda.csv"
    args = list(argv)
    while args and args[0].startswith("--") and args[0] != "--":
        opt = args.pop(0)
        if opt == "--self-test":
            return self_test()
        if not args:
            break
        if opt == "--file":
            name = args.pop(0)
        elif opt == "--threshold":
            threshold = float(args.pop(0)) / 100
        else:
            print("unknown option " + opt, file=sys.stderr)
            return 2
    if "--" not in args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    i = args.index("--")
    a_dirs, b_dirs = args[:i], args[i + 1:]
    if not a_dirs or not b_dirs:
        print("ab.py: A and B each need a run", file=sys.stderr)
        return 2
    a_runs = [load(os.path.join(d, name)) for d in a_dirs]
    b_runs = [load(os.path.join(d, name)) for d in b_dirs]
    rows = compare(a_runs, b_runs, threshold)
    n = {"WORSE": 0, "better": 0, "noise": 0}
    print("%-14s %10s %5s %10s %10s %8s %7s" %
          ("metric", "size", "unit", "A", "B", "B vs A", "A noise"))
    for (metric, size), unit, am, bm, change, noise, verdict in rows:
        n[verdict] += 1
        print("%-14s %10d %5s %10.4g %10.4g %+7.1f%% %6.1f%% %s" %
              (metric, size, unit, am, bm, 100 * change, 100 * noise,
               verdict if verdict != "noise" else ""))
    print("%d rows, %d worse, %d better, %d within the noise "
          "(%s; threshold %.0f%%, %d and %d runs)" %
          (len(rows), n["WORSE"], n["better"], n["noise"], name,
           100 * threshold, len(a_runs), len(b_runs)))
    return 0


def self_test():
    """Synthetic runs with known answers; prints N passed, N failed."""
    def run(vals):
        return {(m, 0): (v, u) for m, (v, u) in vals.items()}
    a = [run({"lat": (10.0, "us"), "bw": (50.0, "GB/s"),
              "jit": (10.0, "us")}),
         run({"lat": (10.2, "us"), "bw": (51.0, "GB/s"),
              "jit": (14.0, "us")})]
    b = [run({"lat": (11.0, "us"), "bw": (56.0, "GB/s"),
              "jit": (11.5, "us")}),
         run({"lat": (11.2, "us"), "bw": (57.0, "GB/s"),
              "jit": (11.0, "us")})]
    got = {k[0]: v for k, _, _, _, _, _, v in compare(a, b, 0.02)}
    checks = [
        ("a latency 10 % higher than a 2 % noise is worse",
         got.get("lat") == "WORSE"),
        ("a rate 11 % higher is better", got.get("bw") == "better"),
        ("a change within A's own 40 % spread is noise",
         got.get("jit") == "noise"),
    ]
    failed = 0
    for what, ok in checks:
        print(("PASS " if ok else "FAIL ") + what)
        failed += not ok
    print("%d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
