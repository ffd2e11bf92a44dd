#!/usr/bin/env python3
"""Write the link order of workbench's start-up code (build/startup-order.txt).

The release binary's code is about 18 MB, and a process pays for the code it runs a page run at a
time: the kernel maps file pages around each fault (64 KiB), so functions run at start-up that lie
scattered over the whole text cost far more than their size, in RSS and in page faults. The linker
(LLD, Rust's default on x86_64 Linux) can place named functions first, in a given order
(`--symbol-ordering-file`, passed by build.rs); this script finds those functions by running the
server under valgrind's callgrind (which records every function that runs) on the binary with its
symbols:

    cargo rustc --release --locked --bin workbench -- -C strip=none
    python3 scripts/order-file.py target/release/workbench

Two sessions are recorded: `initialize` alone (start-up), then `initialize`, `tools/list` and one
`search_tools` (the first request). The file lists start-up's functions first, then the rest of
the first request's, each group in the order valgrind first saw them, by their mangled names (one
a line). Names the binary no longer has are skipped by the linker (build.rs silences its warning),
so a stale file costs only the effect, never the build; regenerate it after large changes and
compare with scripts/footprint.sh (docs/footprint.md, "Start-up code in one place").
"""

import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "startup-order.txt")


def messages(first_request):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "order", "version": "1"}},
    }
    out = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    if first_request:
        out.append({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        out.append(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "search_tools", "arguments": {"query": "create a jira issue"}},
            }
        )
    return out


def run(binary, first_request):
    """The mangled names of the functions that ran, in the order callgrind first names them."""
    with tempfile.TemporaryDirectory() as home:
        out = os.path.join(home, "callgrind.out")
        env = dict(os.environ, WORKBENCH_HOME=home, WORKBENCH_SECRET_STORE="memory", WORKBENCH_NO_BROWSER="1")
        p = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no", "--compress-pos=no",
             f"--callgrind-out-file={out}", binary],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        want = 1 + (2 if first_request else 0)
        for m in messages(first_request):
            p.stdin.write((json.dumps(m) + "\n").encode())
            p.stdin.flush()
        got = 0
        while got < want:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("order-file: the server closed before answering")
            if b'"id"' in line:
                got += 1
        p.stdin.close()
        p.wait(timeout=300)
        names, seen = [], set()
        for line in open(out, encoding="utf-8", errors="replace"):
            m = re.match(r"c?fn=(?:\(\d+\) )?(\S+)", line)
            if m and m.group(1) not in seen:
                seen.add(m.group(1))
                names.append(m.group(1))
        return names


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: order-file.py BINARY (built with -C strip=none)")
    binary = sys.argv[1]
    nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    ours = {line.split()[-1] for line in nm.splitlines() if len(line.split()) == 3 and line.split()[1] in "tTwW"}
    if not ours:
        raise SystemExit("order-file: the binary has no symbols (build it with -C strip=none)")
    start = [n for n in run(binary, False) if n in ours]
    first = [n for n in run(binary, True) if n in ours and n not in set(start)]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(start + first) + "\n")
    print(f"{OUT}: {len(start)} start-up functions, then {len(first)} more for the first request")


if __name__ == "__main__":
    main()
