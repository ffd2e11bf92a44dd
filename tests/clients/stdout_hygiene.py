#!/usr/bin/env python3
"""Stdout hygiene and prompt exit of the real workbench binary (Python stdlib only).

Usage: python3 tests/clients/stdout_hygiene.py --binary target/debug/workbench

A realistic session with WORKBENCH_LOG=trace: the handshake, discover -> inspect -> run, calls that
fail in every way a client can make them fail (bad arguments, unknown tools, a catalogue tool called
directly, wrong param types, an unknown method, a service that cannot be reached, a connect link),
and input no client should send (a line that is not JSON, JSON that is not JSON-RPC, nesting deeper
than any parser allows, a request over the 8 MiB line limit, which must get a clear error). Every line on stdout must be a JSON-RPC 2.0
message, every request must get the answer it should, the server must keep serving after each bad
line, and it must exit within 2 s once stdin closes: before initialize, after it, and with a
wait_for_connection still in flight. Logs (trace level) must all go to stderr.

Nothing leaves the machine: the one integration that would reach the network points at
127.0.0.1:9 (nothing listens there), and the data directory is a temporary one.
Adapted from the stdout/exit checks of an MCP client harness's bench script.

Prints one line per check and `stdout_hygiene: N passed, M failed`; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

EXIT_LIMIT_S = 2.0
MAX_LINE = 8 * 1024 * 1024
NINE = {
    "search_tools",
    "get_tool_schema",
    "execute_tools",
    "whoami",
    "list_integrations",
    "connect",
    "wait_for_connection",
    "get_auth_url",
    "curl_session",
}

passed = 0
failed = 0


def check(name: str, ok: bool, detail: object = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS  {name}")
    else:
        failed += 1
        print(f"FAIL  {name}  {str(detail)[:500]}")


class Server:
    """The binary with piped stdio; stdout lines and stderr collected by threads."""

    def __init__(self, binary: str, home: str, log: str = "trace") -> None:
        env = dict(os.environ)
        env.update(
            WORKBENCH_HOME=home,
            WORKBENCH_LOG=log,
            WORKBENCH_NO_BROWSER="1",
            WORKBENCH_SECRET_STORE="memory",
            WORKBENCH_WIKIPEDIA_BASE_URL="http://127.0.0.1:9",
        )
        self.proc = subprocess.Popen(
            [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.lines: list[bytes] = []
        self.by_id: dict[object, dict] = {}
        self.stderr = b""
        self.cond = threading.Condition()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout
        for raw in self.proc.stdout:
            with self.cond:
                self.lines.append(raw)
                try:
                    msg = json.loads(raw)
                    if isinstance(msg, dict) and "id" in msg and ("result" in msg or "error" in msg):
                        self.by_id[msg["id"]] = msg
                except ValueError:
                    pass
                self.cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr
        self.stderr = self.proc.stderr.read()

    def send(self, msg: object) -> None:
        self.send_raw(json.dumps(msg).encode())

    def send_raw(self, line: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, ids: list[object], timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not all(i in self.by_id for i in ids):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def close_and_time_exit(self) -> tuple[float, int | None]:
        assert self.proc.stdin
        start = time.monotonic()
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=EXIT_LIMIT_S + 3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        return time.monotonic() - start, rc


def initialize(s: Server) -> None:
    s.send(
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hygiene", "version": "1"}},
        }
    )
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def call(id_: object, name: str, arguments: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def body(resp: dict) -> dict:
    """The JSON body of a tool result's text content."""
    return json.loads(resp["result"]["content"][0]["text"])


def all_json_rpc(lines: list[bytes]) -> list[str]:
    bad = []
    for raw in lines:
        try:
            msg = json.loads(raw)
        except ValueError:
            bad.append(f"not JSON: {raw[:200]!r}")
            continue
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            bad.append(f"not a JSON-RPC 2.0 object: {raw[:200]!r}")
        elif not ("result" in msg or "error" in msg or "method" in msg):
            bad.append(f"neither response nor notification: {raw[:200]!r}")
    return bad


def exit_checks(binary: str, home: str) -> None:
    # Before initialize: a client that starts us and goes away.
    s = Server(binary, home, log="debug")
    time.sleep(0.3)
    took, rc = s.close_and_time_exit()
    check(f"exits on stdin EOF before initialize ({took:.2f} s, exit {rc})", rc == 0 and took < EXIT_LIMIT_S)
    check("nothing on stdout when no request came", s.lines == [], s.lines[:3])

    # After initialize.
    s = Server(binary, home, log="debug")
    initialize(s)
    check("initialize answered", s.wait_for(["init"]))
    took, rc = s.close_and_time_exit()
    check(f"exits on stdin EOF after initialize ({took:.2f} s, exit {rc})", rc == 0 and took < EXIT_LIMIT_S)

    # With a call in flight: a 600 s wait_for_connection on a pending connect link.
    s = Server(binary, home, log="debug")
    initialize(s)
    s.send(call("c", "connect", {"integration": "github"}))
    ok = s.wait_for(["init", "c"])
    conn = body(s.by_id["c"]).get("connectionId") if ok and "result" in s.by_id["c"] else None
    check("connect gives a connectionId for a pending link", bool(conn), s.by_id.get("c"))
    s.send(call("w", "wait_for_connection", {"connectionId": conn or "x", "timeoutSec": 600}))
    time.sleep(0.3)
    check("wait_for_connection is still waiting", "w" not in s.by_id, s.by_id.get("w"))
    took, rc = s.close_and_time_exit()
    check(f"exits on stdin EOF with a call in flight ({took:.2f} s, exit {rc})", rc == 0 and took < EXIT_LIMIT_S)


def session_checks(binary: str, home: str) -> None:
    s = Server(binary, home, log="trace")
    initialize(s)
    s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    s.send(call(2, "search_tools", {"query": "current time in tokyo", "limit": 5}))
    s.send(call(3, "get_tool_schema", {"tool": "time_get_current"}))
    s.send(call(4, "execute_tools", {"executions": [{"tool": "time_get_current", "args": {"timezone": "Asia/Tokyo"}}]}))
    # Failing calls, each a clear error and none fatal.
    s.send(call(5, "execute_tools", {"executions": [{"tool": "time_get_current", "args": {"timezone": 5, "bogus": 1}}]}))
    s.send(call(6, "execute_tools", {"executions": [{"tool": "time_get_curent", "args": {}}]}))
    s.send(call(7, "execute_tools", {"executions": "all of them"}))
    s.send(call(8, "get_tool_schema", {"tool": "no_such_tool"}))
    s.send(call(9, "no_such_meta_tool", {}))
    s.send(call(10, "wikipedia_get_summary", {"title": "Rust"}))
    s.send({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": 5}})
    s.send({"jsonrpc": "2.0", "id": 12, "method": "resources/frobnicate"})
    s.send(call(13, "execute_tools", {"executions": [{"tool": "wikipedia_get_summary", "args": {"title": "Rust"}}]}))
    # Input no client should send.
    s.send_raw(b"this is not json")
    s.send_raw(b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":"x"}')
    s.send_raw(b"[" * 100_000)
    s.send_raw(b'{"a":' * 5_000 + b"1" + b"}" * 5_000)
    big = b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"' + b"x" * MAX_LINE + b'"}}}'
    s.send_raw(big)
    s.send(call(16, "whoami", {}))
    s.send(call(17, "list_integrations", {}))
    s.send({"jsonrpc": "2.0", "id": 18, "method": "ping"})
    want = ["init"] + list(range(1, 14)) + [15, 16, 17, 18]
    ok = s.wait_for(want, timeout=30)
    check("every request got an answer", ok, sorted(set(want) - set(s.by_id), key=str))
    r = s.by_id

    def result(i: object) -> dict:
        return r.get(i, {}).get("result") or {}

    check("initialize: serverInfo workbench", result("init").get("serverInfo", {}).get("name") == "workbench", r.get("init"))
    names = [t["name"] for t in result(1).get("tools", [])]
    check("tools/list: exactly the nine meta-tools", len(names) == 9 and set(names) == NINE, names)
    found = [t["name"] for t in body(r[2]).get("tools", [])] if 2 in r else []
    check("search_tools finds time_get_current first", found[:1] == ["time_get_current"], found)
    check("get_tool_schema returns an object schema", 3 in r and body(r[3]).get("schema", {}).get("type") == "object", r.get(3))
    now = body(r[4])["results"][0].get("result", {}).get("now", {}) if 4 in r else {}
    check("execute_tools runs time_get_current", now.get("timezone") == "Asia/Tokyo", r.get(4))
    err5 = body(r[5])["results"][0].get("error", {}) if 5 in r else {}
    check("bad arguments: INVALID_ARGUMENTS with both problems", err5.get("code") == "INVALID_ARGUMENTS" and len(err5.get("problems", [])) == 2, err5)
    err6 = body(r[6])["results"][0].get("error", {}) if 6 in r else {}
    check("unknown tool: TOOL_NOT_FOUND with did_you_mean", err6.get("code") == "TOOL_NOT_FOUND" and "time_get_current" in json.dumps(err6), err6)
    check("malformed executions: a tool error (isError)", result(7).get("isError") is True, r.get(7))
    check("get_tool_schema of an unknown tool: isError", result(8).get("isError") is True, r.get(8))
    check("unknown top-level tool: JSON-RPC -32602", r.get(9, {}).get("error", {}).get("code") == -32602, r.get(9))
    check("catalogue tool called directly: guidance to execute_tools", result(10).get("isError") is True and "execute_tools" in json.dumps(result(10)), r.get(10))
    e11 = r.get(11, {}).get("error", {})
    check("tools/call with a numeric name: -32602 saying what is wrong", e11.get("code") == -32602 and "tools/call" in e11.get("message", ""), e11)
    check("unknown method: -32601", r.get(12, {}).get("error", {}).get("code") == -32601, r.get(12))
    err13 = body(r[13])["results"][0].get("error", {}) if 13 in r else {}
    check("unreachable service: NETWORK_ERROR", err13.get("code") == "NETWORK_ERROR", err13)
    check("whoami answers after the bad input", "id" in (body(r[16]) if 16 in r else {}), r.get(16))
    check("list_integrations answers", "integrations" in (body(r[17]) if 17 in r else {}), r.get(17))
    check("ping answers last", result(18) == {}, r.get(18))
    with s.cond:
        lines = list(s.lines)
    invalid = [m for m in map(json.loads, lines) if "id" not in m and m.get("error", {}).get("code") == -32600]
    check("JSON that is not JSON-RPC gets one Invalid Request (-32600)", len(invalid) == 1, invalid)
    e15 = r.get(15, {}).get("error", {})
    check(
        "a request over the 8 MiB line limit: -32600 'Message too large' with its id",
        e15.get("code") == -32600 and e15.get("message", "").startswith(f"Message too large: {len(big)} bytes"),
        e15,
    )
    took, rc = s.close_and_time_exit()
    check(f"exits on stdin EOF after a full session ({took:.2f} s, exit {rc})", rc == 0 and took < EXIT_LIMIT_S)
    bad = all_json_rpc(s.lines)
    check(f"all {len(s.lines)} stdout lines are JSON-RPC 2.0", not bad, bad[:3])
    time.sleep(0.1)
    err = s.stderr.decode(errors="replace")
    check("trace logs went to stderr", " TRACE " in err or " DEBUG " in err, err[:200])
    check("the over-long request is logged on stderr", "exceeded the line limit" in err, "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wb-hygiene-") as home:
        exit_checks(a.binary, home)
        session_checks(a.binary, home)
    print(f"stdout_hygiene: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
