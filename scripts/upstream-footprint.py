#!/usr/bin/env python3
"""The workbench server's memory and search latency with many upstream tools (issue 27, item 6).

Usage: upstream-footprint.py --workbench BIN [--harness DIR] [--tools N] [--searches N] [--runs N]

What `examples/search_footprint.rs --upstream N` measures is the search index in a process of its
own; this measures the server a client talks to, with everything it keeps for the upstream servers
(their cached listings, the catalogue made from them, pins, the index). It makes a throwaway
WORKBENCH_HOME whose config.json names N/20 upstream servers and whose SQLite cache holds each
one's `tools/list` answer (20 tools each, MCP-Bench's real tools recombined as the example does:
tests/it/data/mcpbench/tools.json), as after the servers were listed once. No upstream server is
started: every one has a cached listing. Then it starts the server --runs times (default 2; the
first run embeds every upstream tool and stores the vectors, the next ones are restarts), and in
each: `initialize`, one `search_tools` (the registry, the catalogue and the index are made on first
use), RSS, --searches more searches over the evaluation's queries, RSS again and the round trips'
median / p90 / p99 as the client sees them.

It drives the server with the MCP harness's client (DIR/bench.py: `Conn`, `mem`), imported, not
copied; DIR defaults to ../shared/tools/mcp-harness beside the checkout.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time

PV = "2025-11-25"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "it", "data")


def synthetic_servers(size, per_server=20):
    """`size` tools over servers of `per_server`, made as examples/search_footprint.rs makes them."""
    listing = json.load(open(os.path.join(DATA, "mcpbench", "tools.json")))
    pool = [(s["server"], t) for s in listing["servers"] for t in s["tools"]]
    servers, nxt = {}, 0
    for s in range((size + per_server - 1) // per_server):
        base = "".join(c.lower() if c.isascii() and c.isalnum() else "_" for c in pool[nxt % len(pool)][0])
        seen, tools = set(), []
        while len(tools) < min(per_server, size - s * per_server):
            _, t = pool[nxt % len(pool)]
            nxt += 7
            if t["name"] in seen:
                nxt += 1
                continue
            seen.add(t["name"])
            tools.append(
                {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "inputSchema": {"type": "object", "properties": t.get("params") or {}},
                    "annotations": {"readOnlyHint": True},
                }
            )
        servers[f"{base}{s}"] = tools
    return servers


def queries():
    own = [q["q"] for q in json.load(open(os.path.join(DATA, "search_queries.json")))]
    tasks = json.load(open(os.path.join(DATA, "mcpbench", "tasks.json")))
    return own + [t["q"] for k in ("single", "multi") for t in tasks[k]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workbench", required=True)
    ap.add_argument("--harness", default=os.path.join(ROOT, "..", "shared", "tools", "mcp-harness"))
    ap.add_argument("--tools", type=int, default=10000)
    ap.add_argument("--searches", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.harness))
    import bench  # the harness's bench.py

    home = tempfile.mkdtemp(prefix="wb-upstream-footprint-")
    env = dict(os.environ, WORKBENCH_HOME=home, WORKBENCH_SECRET_STORE="memory", WORKBENCH_NO_BROWSER="1")

    def conn():
        old = os.environ.copy()
        os.environ.clear()
        os.environ.update(env)
        try:
            return bench.Conn([os.path.abspath(a.workbench)], os.path.join(home, "stderr.log"), 120.0)
        finally:
            os.environ.clear()
            os.environ.update(old)

    # A first start makes the data directory and the database; then the servers and their
    # cached listings are written in, as `workbench servers add` and a first listing leave them.
    c = conn()
    c.initialize(PV)
    c.request("tools/call", {"name": "search_tools", "arguments": {"query": "create a jira issue"}})
    c.close()
    servers = synthetic_servers(a.tools)
    cfg_path = os.path.join(home, "config.json")
    cfg = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {}
    cfg["mcp_servers"] = {name: {"command": "true"} for name in servers}
    json.dump(cfg, open(cfg_path, "w"))
    db = sqlite3.connect(os.path.join(home, "workbench.db"))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    db.executemany(
        "INSERT INTO upstream_listing (server, tools, listed_at, last_error) VALUES (?, ?, ?, NULL)",
        [(name, json.dumps(tools, separators=(",", ":")), now) for name, tools in servers.items()],
    )
    db.commit()
    db.close()
    print(f"machine: {os.cpu_count()} cores, load average {open('/proc/loadavg').read().split()[:3]}")
    print(f"{a.tools} upstream tools over {len(servers)} servers, binary {a.workbench}")

    qs = queries()
    for run in range(a.runs):
        c = conn()
        c.initialize(PV)
        rss_init = bench.mem(c.p.pid)["rss_kb"] or 0
        m, first_ms, _, _ = c.request("tools/call", {"name": "search_tools", "arguments": {"query": "create a jira issue"}})
        if "error" in m:
            raise SystemExit(f"search_tools: {m['error']}")
        rss_first = bench.mem(c.p.pid)["rss_kb"] or 0
        times = []
        for i in range(a.searches):
            q = qs[i % len(qs)]
            m, ms, _, _ = c.request("tools/call", {"name": "search_tools", "arguments": {"query": q}})
            if "error" in m:
                raise SystemExit(f"search_tools {q!r}: {m['error']}")
            times.append(ms)
        # A query only the upstream tools answer: they are really in the index.
        m, _, _, _ = c.request("tools/call", {"name": "search_tools", "arguments": {"query": "calculate the mean of a list of numbers"}})
        text = "".join(b.get("text", "") for b in m["result"].get("content", []))
        found = [t["name"] for t in json.loads(text).get("tools", [])][:3]
        mem = bench.mem(c.p.pid)
        times.sort()
        pct = lambda p: times[min(len(times) - 1, int(p * (len(times) - 1)))]
        label = "first start (embeds every tool)" if run == 0 else f"restart {run}"
        print(
            f"{label}: RSS after initialize {rss_init / 1024:.1f} MiB, first search_tools {first_ms:.1f} ms, "
            f"RSS after it {rss_first / 1024:.1f} MiB, after {a.searches} more {(mem['rss_kb'] or 0) / 1024:.1f} MiB "
            f"(high-water {(mem['hwm_kb'] or 0) / 1024:.1f}); round trip median {statistics.median(times):.2f} ms, "
            f"p90 {pct(0.9):.2f}, p99 {pct(0.99):.2f}; 'calculate the mean of a list of numbers' -> {found}"
        )
        c.close()


if __name__ == "__main__":
    main()
