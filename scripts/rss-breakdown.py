#!/usr/bin/env python3
"""Where a workbench process's resident memory goes (docs/footprint.md, "Round 3").

Starts the binary on stdio with a throwaway WORKBENCH_HOME and the in-memory secret store, then
prints the RSS by kind of mapping after `initialize`, after the first `search_tools` and after N
more searches:

  binary text / rodata / data   the executable's file-backed code, read-only data, writable data
  embedding table               the pages of the embedded token table present (of its total)
  libs                          the shared libraries and the loader
  heap (brk)                    the main thread's malloc heap
  malloc arenas                 anonymous mappings of glibc's per-thread arenas (64 MiB reserves)
  thread stacks                 anonymous mappings holding a thread's stack pointer
  other anonymous               anything else anonymous (mmap'd large allocations, TLS, ...)

Stdlib only. Reads /proc/<pid>/smaps, /proc/<pid>/task/*/syscall (stack pointers) and
/proc/<pid>/pagemap (present bits of the table's pages).

  python3 scripts/rss-breakdown.py target/release/workbench [--searches 2000] [--env K=V ...]
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

USUAL = [
    "create a jira issue",
    "send a slack message",
    "list open pull requests",
    "what time is it in Tokyo",
    "search my email for invoices",
    "add an event to my calendar",
]
MAGIC = b"WBEMB2\0\0"
PAGE = os.sysconf("SC_PAGE_SIZE")


class Conn:
    def __init__(self, cmd, env):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.id = 0

    def request(self, method, params=None):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method}
        if params is not None:
            msg["params"] = params
        started = time.perf_counter()
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            m = json.loads(line)
            if m.get("id") == self.id:
                return m, (time.perf_counter() - started) * 1000

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def close(self):
        self.p.stdin.close()
        self.p.wait(5)


def mappings(pid):
    maps, cur = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                cur = {"lo": lo, "hi": hi, "perms": head[1], "offset": int(head[2], 16),
                       "path": head[5] if len(head) > 5 else "", "kb": {}}
                maps.append(cur)
            elif head[0].endswith(":") and len(head) >= 2 and head[1].isdigit():
                cur["kb"][head[0][:-1]] = int(head[1])
    return maps


def stack_pointers(pid):
    sps = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                parts = f.read().split()
            if len(parts) >= 3:
                sps.append(int(parts[-2], 16))
        except (OSError, ValueError):
            pass
    return sps


def present_pages(pid, lo, hi):
    n = 0
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek((lo // PAGE) * 8)
        data = f.read(((hi - lo + PAGE - 1) // PAGE) * 8)
    for (entry,) in struct.iter_unpack("<Q", data):
        n += (entry >> 63) & 1
    return n


def table_range(binary):
    """File offset and length of the embedded table (its header: magic, count, dim)."""
    with open(binary, "rb") as f:
        data = f.read()
    at = data.find(MAGIC)
    if at < 0:
        return None
    count, dim, bits = struct.unpack_from("<III", data, at + 8)
    # Rows of dim values of `bits` bits each (src/registry/search/embed.rs).
    return at, 20 + count * 4 + count * dim * bits // 8


def breakdown(pid, binary, table):
    exe = os.path.realpath(binary)
    sps = stack_pointers(pid)
    out = {}

    def add(k, kb):
        out[k] = out.get(k, 0) + kb

    table_kb = None
    for m in mappings(pid):
        rss = m["kb"].get("Rss", 0)
        path = m["path"]
        if path == exe:
            kind = {"r-xp": "binary text", "r--p": "binary rodata"}.get(m["perms"], "binary data")
            add(kind, rss)
            if table and m["perms"] == "r--p":
                t_lo = m["lo"] + (table[0] - m["offset"])
                t_hi = t_lo + table[1]
                lo, hi = max(t_lo, m["lo"]), min(t_hi, m["hi"])
                if lo < hi:
                    pages = present_pages(pid, lo - lo % PAGE, hi)
                    table_kb = (table_kb or 0) + pages * PAGE // 1024
        elif path.startswith("/") and not path.startswith("/memfd"):
            add("libs", rss)
        elif path == "[heap]":
            add("heap (brk)", rss)
        elif path in ("[stack]",):
            add("thread stacks", rss)
        elif path.startswith("["):
            add("vdso/vvar", rss)
        else:
            if any(m["lo"] <= sp < m["hi"] for sp in sps):
                add("thread stacks", rss)
            elif m["lo"] % (64 << 20) == 0 or (m["hi"] - m["lo"]) >= (32 << 20):
                add("malloc arenas", rss)
            else:
                add("other anonymous", rss)
        add("= anonymous (private)", m["kb"].get("Anonymous", 0))
        add("= file-backed", rss - m["kb"].get("Anonymous", 0))
        add("= total RSS", rss)
    if table_kb is not None:
        out["  of rodata: embedding table present"] = table_kb
        out["  (table size)"] = table[1] // 1024
    out["threads"] = len(os.listdir(f"/proc/{pid}/task"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--searches", type=int, default=2000)
    ap.add_argument("--env", action="append", default=[], help="K=V for the server's environment")
    a = ap.parse_args()
    home = tempfile.mkdtemp(prefix="wb-rss-")
    env = dict(os.environ, WORKBENCH_HOME=home, WORKBENCH_SECRET_STORE="memory", WORKBENCH_NO_BROWSER="1")
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    table = table_range(a.binary)
    c = Conn([a.binary], env)
    c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "rss-breakdown", "version": "0"}})
    c.notify("notifications/initialized")
    time.sleep(0.2)
    rows = {"after initialize": breakdown(c.p.pid, a.binary, table)}
    c.request("tools/list")
    _, first_ms = c.request("tools/call", {"name": "search_tools", "arguments": {"query": USUAL[0]}})
    time.sleep(0.2)
    rows["after first search"] = breakdown(c.p.pid, a.binary, table)
    times = []
    for i in range(a.searches):
        _, ms = c.request("tools/call", {"name": "search_tools", "arguments": {"query": USUAL[i % len(USUAL)]}})
        times.append(ms)
    time.sleep(0.2)
    rows[f"after {a.searches} more"] = breakdown(c.p.pid, a.binary, table)
    with open(f"/proc/{c.p.pid}/status") as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    c.close()
    keys = []
    for r in rows.values():
        keys += [k for k in r if k not in keys]
    cols = list(rows)
    print("| KiB | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for k in keys:
        print(f"| {k} | " + " | ".join(str(rows[c_].get(k, 0)) for c_ in cols) + " |")
    times.sort()
    med = times[len(times) // 2] if times else 0
    print(f"first search {first_ms:.2f} ms; then median {med:.3f} ms; VmHWM {hwm} KiB")


if __name__ == "__main__":
    sys.exit(main())
