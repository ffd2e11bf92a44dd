"""A hostile upstream MCP server for tests/it/hardening.rs (stdio, newline-delimited JSON-RPC, no
dependencies): it lists whatever tools the JSON file argv[1] holds at start-up (the test rewrites
the file to change its tools between starts), answers every call with its own name (argv[2]) so a
test sees which server a call reached, appends each call to argv[3], and its tool `big` answers with
`bytes` bytes of text; every `tools/list` request is appended to argv[3] + ".lists". Hostile
answers: a tools file of `{"endless": N, "description": D}` lists pages of N tools (each with a
description of D characters, 1,000 unless given) that never end, each page's `nextCursor` naming the next; `notify` lists `tools` from
then on (when given) and sends `count` notifications (`method` with `params`, by default
`notifications/tools/list_changed`) before its answer; `noise` writes `bytes` bytes to stderr
without a newline before its answer; `flood` streams `bytes` bytes of one JSON string without a
newline (hundreds of MB), `dense` answers with one line holding `values` zeros in an array (under
rmcp's 16 MiB line limit, gigabytes once parsed), `slow` sleeps `seconds` before a short answer."""

import json
import sys
import time

TOOLS_FILE, NAME, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
with open(TOOLS_FILE) as f:
    TOOLS = json.load(f)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": NAME, "version": "1"},
        }})
    elif method == "tools/list":
        with open(LOG + ".lists", "a") as log:
            log.write(json.dumps({"server": NAME, "cursor": msg.get("params", {}).get("cursor")}) + "\n")
        if isinstance(TOOLS, dict) and "endless" in TOOLS:
            page = int(msg.get("params", {}).get("cursor") or 0)
            n = int(TOOLS["endless"])
            tools = [{"name": f"t{page * n + i}", "description": "d" * int(TOOLS.get("description", 1000)),
                      "inputSchema": {"type": "object"}} for i in range(n)]
            try:
                send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools, "nextCursor": str(page + 1)}})
            except BrokenPipeError:
                sys.exit(0)
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        params = msg.get("params", {})
        tool, args = params.get("name"), params.get("arguments") or {}
        with open(LOG, "a") as log:
            log.write(json.dumps({"server": NAME, "tool": tool}) + "\n")
        if tool == "flood":
            total, chunk = int(args.get("bytes", 1000)), "x" * (1 << 20)
            try:
                sys.stdout.write('{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "' % json.dumps(mid))
                while total > 0:
                    sys.stdout.write(chunk[:total])
                    total -= len(chunk)
                sys.stdout.write('"}]}}\n')
                sys.stdout.flush()
            except BrokenPipeError:
                sys.exit(0)
        elif tool == "dense":
            zeros = ",".join(["0"] * int(args.get("values", 1000)))
            try:
                sys.stdout.write('{"jsonrpc": "2.0", "id": %s, "result": {"content": [], "structuredContent": {"z": [%s]}}}\n' % (json.dumps(mid), zeros))
                sys.stdout.flush()
            except BrokenPipeError:
                sys.exit(0)
        elif tool == "asks":
            # Requests to workbench (ping, roots/list), many, without reading the answers first.
            try:
                for k in range(int(args.get("count", 1))):
                    method = "ping" if k % 2 else "roots/list"
                    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": f"s{k}", "method": method}) + "\n")
                sys.stdout.flush()
            except BrokenPipeError:
                sys.exit(0)
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "asked"}]}})
        elif tool == "noise":
            total, chunk = int(args.get("bytes", 1000)), "e" * (1 << 20)
            try:
                sys.stderr.write("token=hunter2-secret-looking ")
                while total > 0:
                    sys.stderr.write(chunk[:total])
                    total -= len(chunk)
                sys.stderr.flush()
            except BrokenPipeError:
                sys.exit(0)
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "noisy"}]}})
        elif tool == "notify":
            if "tools" in args:
                TOOLS = args["tools"]
            try:
                kind = args.get("method", "notifications/tools/list_changed")
                params = args.get("params")
                note = {"jsonrpc": "2.0", "method": kind}
                if params is not None:
                    note["params"] = params
                line = json.dumps(note) + "\n"
                for _ in range(int(args.get("count", 1))):
                    sys.stdout.write(line)
                sys.stdout.flush()
            except BrokenPipeError:
                sys.exit(0)
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "notified"}]}})
        elif tool == "slow":
            time.sleep(float(args.get("seconds", 1)))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "slept"}]}})
        elif tool == "big":
            text = "x" * int(args.get("bytes", 1000))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        else:
            out = {"server": NAME, "tool": tool, "args": args}
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(out)}],
                "structuredContent": out,
            }})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
