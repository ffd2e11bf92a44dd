#!/usr/bin/env python3
"""A small MCP client over stdio (standard library only), for the distribution checks: the
bundle's declared command (scripts/check-bundle.sh), an installed archive's binary, and the
Windows build under Wine (tests/windows/wine_smoke.py). It runs on Linux, macOS and Windows
(reads stdout on a thread; no select on pipes).

As a command:
    mcp_stdio.py smoke [--config FILE] [--env K=V ...] [-- COMMAND ARGS...]
runs `initialize` (protocol 2025-11-25), `tools/list` (exactly the nine meta-tools) and a
`search_tools` call, then closes stdin and expects the server to exit. --config reads
{"command", "args", "env"} (the resolved mcp_config of a bundle); the server's environment is
this process's plus that env plus --env. Prints one line per check; exits 0 only if all passed.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Any

META_TOOLS = {
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
PROTOCOL = "2025-11-25"


class McpError(Exception):
    pass


class Session:
    """One server process; requests are answered in order of their ids."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None, stderr_path: str | None = None,
                 timeout: float = 60.0):
        self.timeout = timeout
        self._stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        if os.path.isfile(command[0]):
            # An absolute path in the system's own spelling (Windows: backslashes).
            command = [os.path.abspath(command[0]), *command[1:]]
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._next = 0
        self.notifications: list[dict[str, Any]] = []
        self.stdout_garbage: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        self._next += 1
        rid = self._next
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise McpError(f"{method}: no answer within {timeout or self.timeout:.0f}s")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise McpError(f"{method}: the server closed stdout (exit status {self.proc.poll()})")
            try:
                reply = json.loads(line)
            except ValueError:
                self.stdout_garbage.append(line)
                continue
            if not isinstance(reply, dict):
                self.stdout_garbage.append(line)
                continue
            if "id" not in reply or "method" in reply:
                self.notifications.append(reply)
                continue
            if reply.get("id") != rid:
                continue
            if "error" in reply:
                raise McpError(f"{method}: error {reply['error']}")
            return reply.get("result")

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "workbench-dist-check", "version": "1"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> tuple[Any, bool]:
        """Calls a tool; returns (structuredContent or the parsed text, isError)."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments}, timeout=timeout)
        body = result.get("structuredContent")
        if body is None:
            text = "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
            try:
                body = json.loads(text)
            except ValueError:
                body = text
        return body, bool(result.get("isError"))

    def close(self, wait: float = 15.0) -> int | None:
        """Closes stdin; returns the exit status (None if it had to be killed)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            if self._stderr is not subprocess.DEVNULL:
                self._stderr.close()


class Checks:
    def __init__(self, name: str):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, what: str, ok: bool, detail: Any = None) -> bool:
        if ok:
            self.passed += 1
            print(f"ok   {what}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f": {detail!r}"[:600] if detail is not None else ""), flush=True)
        return ok

    def done(self) -> int:
        print(f"{self.name}: {self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 and self.passed > 0 else 1


def smoke(s: Session, c: Checks, query: str = "what time is it in Tokyo", expect: str = "time_get_current") -> None:
    """initialize, tools/list (the nine), search_tools finding `expect` for `query`."""
    init = s.initialize()
    info = init.get("serverInfo", {})
    c.check("initialize: serverInfo is workbench", info.get("name") == "workbench", info)
    c.check(f"initialize: protocol {PROTOCOL}", init.get("protocolVersion") == PROTOCOL, init.get("protocolVersion"))
    tools = s.request("tools/list", {}).get("tools", [])
    names = {t.get("name") for t in tools}
    c.check("tools/list: exactly the nine meta-tools", names == META_TOOLS and len(tools) == 9, sorted(names))
    body, is_error = s.call("search_tools", {"query": query})
    hits = [t.get("name") for t in body.get("tools", [])] if isinstance(body, dict) else []
    c.check(f"search_tools {query!r} finds {expect}", not is_error and expect in hits[:5], body if is_error else hits)


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "smoke":
        print(__doc__, file=sys.stderr)
        return 2
    args = argv[1:]
    command: list[str] = []
    if "--" in args:
        i = args.index("--")
        args, command = args[:i], args[i + 1:]
    extra: dict[str, str] = {}
    config: dict[str, Any] = {}
    while args:
        a = args.pop(0)
        if a == "--config" and args:
            with open(args.pop(0), encoding="utf-8") as f:
                config = json.load(f)
        elif a == "--env" and args and "=" in args[0]:
            k, v = args.pop(0).split("=", 1)
            extra[k] = v
        else:
            print(f"mcp_stdio: unknown argument {a!r}", file=sys.stderr)
            return 2
    if config:
        command = [config["command"], *config.get("args", [])]
    if not command:
        print("mcp_stdio: no command (give --config FILE or -- COMMAND ...)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env.update(config.get("env", {}))
    env.update(extra)
    c = Checks("mcp_stdio smoke")
    s = Session(command, env=env)
    try:
        smoke(s, c)
    except McpError as e:
        c.check("the session ran", False, str(e))
    status = s.close()
    c.check("the server exits when stdin closes", status == 0, status)
    c.check("nothing but JSON-RPC on stdout", not s.stdout_garbage, s.stdout_garbage[:3])
    return c.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
