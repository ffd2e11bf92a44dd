#!/usr/bin/env python3
"""The safety policy through the official Python `mcp` SDK: a destructive tool (vault_delete_secret,
`confirm` by default) asks the user through MCP elicitation and obeys the answer; a client without
elicitation gets CONFIRMATION_REQUIRED (with an approval page), and on protocol 2026-07-28 the
question comes as an input-required round the SDK answers with the same callback.

Usage: .deps/venv/bin/python tests/python/elicitation_session.py --binary target/debug/workbench
Prints one line per check; exits 0 only when all passed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import anyio
import mcp.types as types
from mcp import Client, ClientSession, StdioServerParameters, stdio_client

RESULTS: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{'' if ok else '  -- ' + detail}")


def body(result) -> dict:
    return json.loads(result.content[0].text)


def execute(tool: str, args: dict) -> dict:
    return {"executions": [{"tool": tool, "args": args}]}


async def main(binary: str) -> int:
    home = tempfile.mkdtemp(prefix="wb-elicit-")
    env = dict(os.environ, WORKBENCH_HOME=home, WORKBENCH_NO_BROWSER="1", WORKBENCH_SECRET_STORE="memory")
    params = StdioServerParameters(command=binary, args=[], env=env)
    answers: list[types.ElicitResult] = []
    asked: list[str] = []

    async def on_elicit(context, params):  # noqa: ANN001 - the SDK's callback signature
        asked.append(params.message)
        return answers.pop(0)

    secret = {"name": "K", "value": "v-0123456789", "allowed_hosts": ["api.example.com"]}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=on_elicit) as s:
                await s.initialize()
                r = body(await s.call_tool("execute_tools", execute("vault_set_secret", secret)))
                check("a plain write runs without a question", "result" in r["results"][0] and not asked, str(r))

                answers.append(types.ElicitResult(action="accept", content={"approve": True}))
                r = body(await s.call_tool("execute_tools", execute("vault_delete_secret", {"name": "K"})))
                check("the user is asked about a destructive tool", len(asked) == 1 and "vault_delete_secret" in asked[0], str(asked))
                check("approved: it runs", r["results"][0].get("result", {}).get("deleted") is True, str(r))

                await s.call_tool("execute_tools", execute("vault_set_secret", secret))
                answers.append(types.ElicitResult(action="accept", content={"approve": False}))
                r = body(await s.call_tool("execute_tools", execute("vault_delete_secret", {"name": "K"})))
                check("answered no: POLICY_DENIED", r["results"][0].get("error", {}).get("code") == "POLICY_DENIED", str(r))

                answers.append(types.ElicitResult(action="decline"))
                r = body(await s.call_tool("execute_tools", execute("vault_delete_secret", {"name": "K"})))
                check("declined: POLICY_DENIED", r["results"][0].get("error", {}).get("code") == "POLICY_DENIED", str(r))
                r = body(await s.call_tool("execute_tools", execute("vault_list_secrets", {})))
                check("the secret is still there", [x["name"] for x in r["results"][0]["result"]["secrets"]] == ["K"], str(r))

        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("execute_tools", execute("vault_set_secret", secret))
                r = body(await s.call_tool("execute_tools", execute("vault_delete_secret", {"name": "K"})))
                code = r["results"][0].get("error", {}).get("code")
                check("no elicitation: CONFIRMATION_REQUIRED", code == "CONFIRMATION_REQUIRED", str(r))

        # On 2026-07-28 the same callback answers the input-required round (approval_session.py
        # covers both generations, the browser path and tampered request states).
        answers.append(types.ElicitResult(action="accept", content={"approve": True}))
        before = len(asked)
        # A fresh data dir: K, left by the session above, would make vault_set_secret an overwrite,
        # which the policy holds too.
        fresh = StdioServerParameters(command=binary, args=[], env=dict(env, WORKBENCH_HOME=tempfile.mkdtemp(prefix="wb-elicit-")))
        async with Client(stdio_client(fresh, errlog=errlog), mode="auto", elicitation_callback=on_elicit) as c:
            await c.call_tool("execute_tools", execute("vault_set_secret", secret))
            r = body(await c.call_tool("execute_tools", execute("vault_delete_secret", {"name": "K"})))
            check(
                f"protocol {c.protocol_version}: asked through the client, approved, ran",
                r["results"][0].get("result", {}).get("deleted") is True and len(asked) == before + 1,
                str(r),
            )

    failed = sum(1 for _, ok, _ in RESULTS if not ok)
    print(f"elicitation_session: {len(RESULTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    sys.exit(anyio.run(main, parser.parse_args().binary))
