#!/usr/bin/env python3
"""What gap tracking adds, paired, from gap_pairs.sh's CSV.

    bench/hotpath/gap_summary.py gap_hotpath.csv

Each process of gap_pairs.sh is one block of rows with the same probe and
jitter; a pair is one process with gaps off and one with them on, per probe
library. Per pair and shape: the mean over the process's repetitions, on
minus off; then the mean ± SEM of those differences over the pairs.
"""
import csv
import statistics as st
import sys
from collections import defaultdict


def main(path):
    blocks, prev = [], None
    for r in csv.DictReader(open(path)):
        key = (r["probe"], r["jitter"])
        if key != prev:
            blocks.append((key, []))
            prev = key
        blocks[-1][1].append(r)
    probes = len({key[0] for key, _ in blocks})
    per = defaultdict(lambda: defaultdict(dict))  # (probe, shape) -> pair -> jitter -> ns
    for i, ((probe, jitter), rows) in enumerate(blocks):
        shapes = defaultdict(list)
        for r in rows:
            if r["leg"] == "probe":
                shapes[(int(r["threads"]), int(r["endpoints"]))].append(float(r["cpu_ns_per_msg"]))
        for shape, v in shapes.items():
            per[(probe, shape)][i // (2 * probes)][jitter] = st.mean(v)
    print("probe,threads,endpoints,pairs,off_ns,on_ns,added_ns,added_sem")
    for (probe, (threads, endpoints)), pairs in sorted(per.items()):
        both = [p for p in pairs.values() if "0" in p and "1" in p]
        d = [p["1"] - p["0"] for p in both]
        sem = st.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
        off, on = st.mean(p["0"] for p in both), st.mean(p["1"] for p in both)
        print(f"{probe},{threads},{endpoints},{len(d)},{off:.1f},{on:.1f},{st.mean(d):.1f},{sem:.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
