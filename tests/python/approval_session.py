#!/usr/bin/env python3
"""Approvals on every client, through the official Python `mcp` SDK against the real binary.

For vault_delete_secret, github_merge_pr (against a fake GitHub on 127.0.0.1) and curl_session, all
held by the default safety policy (`confirm`), in both protocol generations (legacy 2025-11-25:
form elicitation; auto, 2026-07-28: the input-required round the SDK drives with the same
elicitation callback):

* approved: the call runs, once (the next identical call asks again);
* answered no, declined: refused (POLICY_DENIED), nothing sent;
* 2026-07-28: a tampered, replayed or re-targeted request state is refused and runs nothing;
* a client without elicitation gets CONFIRMATION_REQUIRED with an approval_url; after the user's
  Approve on that page (a raw HTTP form POST with the browser's headers), the same call runs once.

Usage: .deps/venv/bin/python tests/python/approval_session.py --binary target/debug/workbench
Prints one line per check; exits 0 only when all passed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters, stdio_client

RESULTS: list[tuple[str, bool, str]] = []
GH_TOKEN = "ghp_pythonapproval000000000000000000000"


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{'' if ok else '  -- ' + detail[:600]}")


def body(result) -> dict:
    return json.loads(result.content[0].text)


def execute(tool: str, args: dict) -> dict:
    return {"executions": [{"tool": tool, "args": args}]}


class FakeGitHub(BaseHTTPRequestHandler):
    merges: list[str] = []

    def do_PUT(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        if self.path == "/repos/acme/demo/pulls/7/merge" and self.headers.get("authorization") == f"Bearer {GH_TOKEN}":
            FakeGitHub.merges.append(self.path)
            self.reply(200, {"sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6", "merged": True, "message": "Pull Request successfully merged"})
        else:
            self.reply(404, {"message": "Not Found"})

    def reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # noqa: ANN002 - silence
        pass


def approve_in_browser(url: str, decision: str = "approve") -> int:
    """Does what the user's browser does: load the page, submit its own form."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    html = opener.open(url, timeout=10).read().decode()
    token = re.search(r'name="form_token" value="([0-9a-f]+)"', html).group(1)
    parts = urllib.parse.urlsplit(url)
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode({"form_token": token, "decision": decision}).encode(),
        headers={
            "Origin": f"{parts.scheme}://{parts.netloc}",
            "Sec-Fetch-Site": "same-origin",
            "Sec-Fetch-Mode": "navigate",
            "Content-Type": "application/x-www-form-urlencoded",
        },
        method="POST",
    )
    try:
        return opener.open(request, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code


SECRET = {"name": "K", "value": "v-0123456789", "allowed_hosts": ["api.example.com"]}
MERGE = {"owner": "acme", "repo": "demo", "pull_number": 7}


async def run_held(c, tool: str) -> tuple[dict, bool]:
    """Runs one held call; returns its answer and whether it ran."""
    if tool == "vault_delete_secret":
        await c.call_tool("execute_tools", execute("vault_set_secret", SECRET))
        r = body(await c.call_tool("execute_tools", execute(tool, {"name": "K"})))
        return r, r["results"][0].get("result", {}).get("deleted") is True
    if tool == "github_merge_pr":
        before = len(FakeGitHub.merges)
        r = body(await c.call_tool("execute_tools", execute(tool, MERGE)))
        return r, r["results"][0].get("result", {}).get("merged") is True and len(FakeGitHub.merges) == before + 1
    r = body(await c.call_tool("curl_session", {"integrations": ["github"]}))
    return r, "token" in r


def shown_in(tool: str, question: str) -> bool:
    """The user's question names what will happen (curl_session's says what the token allows)."""
    return ("ANY API call" in question and "github" in question) if tool == "curl_session" else tool in question


def code_of(r: dict) -> str | None:
    if "results" in r:
        return r["results"][0].get("error", {}).get("code")
    return r.get("code")


def error_of(r: dict) -> dict:
    return r["results"][0].get("error", {}) if "results" in r else r


async def with_elicitation(params, errlog, mode: str) -> None:
    answers: list[types.ElicitResult] = []
    asked: list[str] = []

    async def on_elicit(context, p):  # noqa: ANN001 - the SDK's callback signature
        asked.append(p.message)
        return answers.pop(0) if answers else types.ElicitResult(action="decline")

    async with Client(stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=on_elicit) as c:
        version = c.protocol_version
        for tool in ["vault_delete_secret", "github_merge_pr", "curl_session"]:
            answers[:] = [types.ElicitResult(action="accept", content={"approve": True})]
            before = len(asked)
            r, ran = await run_held(c, tool)
            check(f"[{mode} {version}] {tool}: asked, approved, ran", ran and len(asked) == before + 1 and shown_in(tool, asked[-1]), str(r))
            answers[:] = []
            r, ran = await run_held(c, tool)
            check(f"[{mode} {version}] {tool}: the approval was spent (asked again)", not ran and len(asked) == before + 2, str(r))
            answers[:] = [types.ElicitResult(action="accept", content={"approve": False})]
            r, ran = await run_held(c, tool)
            check(f"[{mode} {version}] {tool}: answered no: refused", not ran and code_of(r) == "POLICY_DENIED", str(r))
            answers[:] = [types.ElicitResult(action="decline")]
            r, ran = await run_held(c, tool)
            check(f"[{mode} {version}] {tool}: declined: refused", not ran and code_of(r) == "POLICY_DENIED", str(r))

        if version >= "2026-07-28":
            await c.call_tool("execute_tools", execute("vault_set_secret", SECRET))
            args = execute("vault_delete_secret", {"name": "K"})
            first = await c.session.call_tool("execute_tools", args, allow_input_required=True)
            is_ir = isinstance(first, types.InputRequiredResult)
            check(f"[{mode} {version}] a held call answers input_required with a request state", is_ir and bool(first.request_state), repr(first)[:300])
            if is_ir:
                key = next(iter(first.input_requests))
                yes = {key: types.ElicitResult(action="accept", content={"approve": True})}
                state = first.request_state
                flipped = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
                for label, s, a in [
                    ("tampered", flipped, args),
                    ("forged", "rs1.eyJ4IjoxfQ.AAAA", args),
                    ("re-targeted to other arguments", state, execute("vault_delete_secret", {"name": "K", "x": 1})),
                ]:
                    r = await c.session.call_tool("execute_tools", a, input_responses=yes, request_state=s, allow_input_required=True)
                    refused = isinstance(r, types.CallToolResult) and r.is_error and "Refused" in r.content[0].text
                    check(f"[{mode} {version}] a {label} request state is refused", refused, repr(r)[:300])
                r = await c.session.call_tool("execute_tools", args, input_responses=yes, request_state=state, allow_input_required=True)
                ok = isinstance(r, types.CallToolResult) and body(r)["results"][0].get("result", {}).get("deleted") is True
                check(f"[{mode} {version}] the genuine state, answered yes, runs it", ok, repr(r)[:300])
                r = await c.session.call_tool("execute_tools", args, input_responses=yes, request_state=state, allow_input_required=True)
                replayed = isinstance(r, types.CallToolResult) and r.is_error and "already used" in r.content[0].text
                check(f"[{mode} {version}] a replayed request state is refused", replayed, repr(r)[:300])
            # Ask first, run after: in a batch where one execution is held, nothing runs in the
            # first round, and on the retry each execution runs once. (Before, the executions the
            # policy did not hold ran in the first round and again on the retry: here the new
            # secret would be written twice, and the second write, an overwrite, asked again.)
            await c.call_tool("execute_tools", execute("vault_set_secret", SECRET))
            batch = {"executions": [
                {"tool": "vault_set_secret", "args": {"name": "NEW", "value": "v-9876543210", "allowed_hosts": ["api.example.com"]}},
                {"tool": "vault_delete_secret", "args": {"name": "K"}},
            ]}
            first = await c.session.call_tool("execute_tools", batch, allow_input_required=True)
            listed = body(await c.call_tool("execute_tools", execute("vault_list_secrets", {})))
            names = sorted(x["name"] for x in listed["results"][0]["result"]["secrets"])
            check(
                f"[{mode} {version}] a batch with a held execution asks before running any of it",
                isinstance(first, types.InputRequiredResult) and len(first.input_requests) == 1 and names == ["K"],
                f"{first!r} {names}"[:400],
            )
            answers[:] = [types.ElicitResult(action="accept", content={"approve": True})]
            before = len(asked)
            r = body(await c.call_tool("execute_tools", batch))
            ran = [x.get("result") is not None for x in r["results"]]
            listed = body(await c.call_tool("execute_tools", execute("vault_list_secrets", {})))
            names = sorted(x["name"] for x in listed["results"][0]["result"]["secrets"])
            check(
                f"[{mode} {version}] approved: each execution of the batch ran once, one question asked",
                ran == [True, True] and len(asked) == before + 1 and names == ["NEW"],
                f"{r} asked={asked[before:]} {names}",
            )
            await c.call_tool("execute_tools", execute("vault_set_secret", SECRET))
            # The model cannot answer for the user: an answer without the sealed state asks again.
            fake = {"approve_1": {"action": "accept", "content": {"approve": True}}}
            r = await c.session.call_tool("execute_tools", args, input_responses=fake, allow_input_required=True)
            check(f"[{mode} {version}] an answer without a state approves nothing", isinstance(r, types.InputRequiredResult), repr(r)[:300])


async def without_elicitation(params, errlog, mode: str) -> None:
    async with Client(stdio_client(params, errlog=errlog), mode=mode) as c:
        version = c.protocol_version
        for tool in ["vault_delete_secret", "github_merge_pr", "curl_session"]:
            r, ran = await run_held(c, tool)
            err = error_of(r)
            url = err.get("approval_url", "")
            check(
                f"[{mode} {version}, no elicitation] {tool}: CONFIRMATION_REQUIRED with an approval_url",
                not ran and code_of(r) == "CONFIRMATION_REQUIRED" and url.startswith("http://127.0.0.1:") and err.get("expires_in_seconds", 0) > 0,
                str(r),
            )
            if not url:
                continue
            status = await anyio.to_thread.run_sync(approve_in_browser, url)
            r, ran = await run_held(c, tool)
            check(f"[{mode} {version}, no elicitation] {tool}: after Approve on the page, the repeat runs", status == 200 and ran, f"{status} {r}")
            r, ran = await run_held(c, tool)
            again = error_of(r).get("approval_url")
            check(f"[{mode} {version}, no elicitation] {tool}: once only", not ran and again and again != url, str(r))
            status = await anyio.to_thread.run_sync(approve_in_browser, again, "deny")
            r, ran = await run_held(c, tool)
            check(f"[{mode} {version}, no elicitation] {tool}: after Deny, refused and asked again", status == 200 and not ran and code_of(r) == "CONFIRMATION_REQUIRED", str(r))


async def main(binary: str) -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(
        os.environ,
        WORKBENCH_NO_BROWSER="1",
        WORKBENCH_SECRET_STORE="memory",
        WORKBENCH_GITHUB_TOKEN=GH_TOKEN,
        WORKBENCH_GITHUB_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}",
    )
    with open(os.devnull, "w") as errlog:
        for mode in ["legacy", "auto"]:
            # A fresh data dir per mode: a secret left by the last pass would make its first
            # vault_set_secret an overwrite, which the policy holds too.
            params = StdioServerParameters(command=binary, args=[], env=dict(env, WORKBENCH_HOME=tempfile.mkdtemp(prefix="wb-approval-")))
            await with_elicitation(params, errlog, mode)
            await without_elicitation(params, errlog, mode)
    server.shutdown()
    failed = sum(1 for _, ok, _ in RESULTS if not ok)
    print(f"approval_session: {len(RESULTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    sys.exit(anyio.run(main, parser.parse_args().binary))
