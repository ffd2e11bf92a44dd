#!/usr/bin/env python3
"""Drive `workbench serve --profile runstack` with the official Python `mcp` SDK.

Usage:
  .deps/venv/bin/python tests/python/runstack_session.py --binary target/debug/workbench [--mode legacy|auto]

The runstack profile exposes the four tools of the Runstack design (search_tools by regex,
check_authentication, initiate_connection, execute_tool). This script runs that design's
recommended workflow the way a prompt written for it would: search by pattern, check
authentication, get a connection link when a provider is missing, execute. Upstream calls go to
the same fake Open-Meteo as sdk_session.py; the binary gets a temporary WORKBENCH_HOME and the
encrypted file secret store (so connect links work without a desktop keychain).

Prints one line per check, then `runstack_session: N passed, M failed`; exits 0 only when every
check passed (1 on a failed check, 2 when the session could not run at all).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from sdk_session import EXPECTED_PROTOCOL, Checks, FakeOpenMeteo, leaves, list_all_tools, open_session  # noqa: E402

RUNSTACK_TOOLS = ["search_tools", "check_authentication", "initiate_connection", "execute_tool"]


def payload(result: Any) -> tuple[Any, bool]:
    """structuredContent on success (checked against the text copy), else the text parsed."""
    import json

    text = json.loads(result.content[0].text)
    if result.structured_content is not None and result.structured_content != text:
        raise AssertionError(f"structuredContent and text differ: {result.structured_content} vs {text}")
    return text, bool(result.is_error)


async def checks(args: argparse.Namespace, fake: FakeOpenMeteo, home: str, errlog: Any, c: Checks) -> None:
    env = {
        "WORKBENCH_HOME": home,
        "WORKBENCH_OPEN_METEO_BASE_URL": fake.forecast_base,
        "WORKBENCH_OPEN_METEO_GEOCODING_BASE_URL": fake.geocoding_base,
        "WORKBENCH_SECRET_STORE": "file",
        "WORKBENCH_VAULT_PASSPHRASE": "runstack session passphrase",
        "WORKBENCH_NO_BROWSER": "1",
    }
    params = StdioServerParameters(command=args.binary, args=["serve", "--profile", "runstack"], env=env)
    async with open_session(args.mode, params, errlog, args.timeout) as (session, protocol, server_info):
        c.equal("serverInfo.name is workbench", server_info.name if server_info else None, "workbench")
        c.equal(f"protocol version ({args.mode})", protocol, EXPECTED_PROTOCOL[args.mode])
        names = [t.name for t in await list_all_tools(session)]
        c.equal("tools/list is exactly the four runstack tools", sorted(names), sorted(RUNSTACK_TOOLS))

        async def call(name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
            return payload(await session.call_tool(name, arguments))

        # 1. search_tools(pattern) -> the right tool name, with parameters and requiredAuth
        body, is_error = await call("search_tools", {"pattern": "open_meteo.*(forecast|locations)", "searchIn": "names"})
        found = {t["name"]: t for t in body.get("tools", [])} if isinstance(body, dict) else {}
        c.check(
            "search_tools by regex over names finds the Open-Meteo tools",
            not is_error and {"open_meteo_get_forecast", "open_meteo_search_locations"} <= set(found),
            body,
        )
        forecast = found.get("open_meteo_get_forecast", {})
        c.check(
            "each hit carries its parameter schema and requiredAuth",
            "latitude" in (forecast.get("parameters") or {}).get("properties", {}) and forecast.get("requiredAuth") is None,
            forecast,
        )
        body, _ = await call("search_tools", {"pattern": "github.*issue"})
        gh = [t["name"] for t in body.get("tools", [])]
        c.check("search_tools 'github.*issue' (both) finds github_create_issue", "github_create_issue" in gh, gh)
        body, is_error = await call("search_tools", {"pattern": "(unclosed"})
        c.check(
            "a bad regex is a clear tool error",
            is_error and str(body.get("error", "")).startswith("Invalid regex pattern"),
            body,
        )

        # 2. check_authentication(toolName)
        body, _ = await call("check_authentication", {"toolName": "open_meteo_get_forecast"})
        c.equal(
            "check_authentication: a public tool needs no auth",
            body,
            {"toolName": "open_meteo_get_forecast", "authenticated": True, "reason": "no_auth_required"},
        )
        body, _ = await call("check_authentication", {"toolName": "github_create_issue"})
        c.check(
            "check_authentication: github without a token -> token_missing, githubToken",
            body.get("authenticated") is False
            and body.get("reason") == "token_missing"
            and body.get("requiredAuth") == "githubToken",
            body,
        )

        # 3. initiate_connection(provider) -> a local link
        body, is_error = await call("initiate_connection", {"provider": "github"})
        link = str(body.get("link", ""))
        c.check(
            "initiate_connection github -> {link, provider} on 127.0.0.1",
            not is_error and body.get("provider") == "github" and link.startswith("http://127.0.0.1:") and "/connect/" in link,
            body,
        )

        # 4. execute_tool(toolName, args) and its error shapes
        body, is_error = await call(
            "execute_tool", {"toolName": "open_meteo_search_locations", "args": {"name": "Lisbon", "count": 1}}
        )
        c.check(
            "execute_tool success -> {toolName, success: true, result}",
            not is_error
            and body.get("success") is True
            and body.get("toolName") == "open_meteo_search_locations"
            and body["result"]["locations"][0]["name"] == "Lisbon",
            body,
        )
        body, is_error = await call("execute_tool", {"toolName": "open_meteo_get_forecast", "args": {"latitude": 123.4}})
        c.check(
            "execute_tool bad args -> Invalid arguments for tool, expectedParameters, providedParameters",
            is_error
            and body.get("error") == "Invalid arguments for tool"
            and "longitude" in (body.get("expectedParameters") or {})
            and body.get("providedParameters") == ["latitude"],
            body,
        )
        body, is_error = await call(
            "execute_tool", {"toolName": "github_create_issue", "args": {"owner": "o", "repo": "r", "title": "t"}}
        )
        c.check(
            "execute_tool without a connection -> Tool requires connection, requiredAuth",
            is_error
            and body.get("error") == "Tool requires connection"
            and body.get("requiredAuth") == "githubToken"
            and body.get("message") == "Use initiate_connection(provider) to connect.",
            body,
        )

        # 5. names of the default profile are not tools here
        try:
            await session.call_tool("execute_tools", {"executions": []})
            c.check("execute_tools is not a runstack tool", False, "the call succeeded")
        except MCPError as e:
            c.check("execute_tools is not a runstack tool (-32602)", e.error.code == -32602, e.error.model_dump())

    c.check("fake Open-Meteo saw no malformed requests", not fake.problems, fake.problems)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="path to the workbench binary")
    p.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    p.add_argument("--timeout", type=float, default=30.0, help="per-request read timeout in seconds (default 30)")
    args = p.parse_args()
    args.binary = os.path.abspath(args.binary)
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        print(f"runstack_session: {args.binary} is not an executable file; build it first", file=sys.stderr)
        return 2
    print(f"runstack_session: {args.binary} (mode {args.mode})", flush=True)
    c = Checks()
    fatal: list[str] = []
    with tempfile.TemporaryDirectory(prefix="workbench-runstack-") as home, FakeOpenMeteo() as fake, tempfile.TemporaryFile(
        "w+", encoding="utf-8"
    ) as errlog:
        try:
            anyio.run(checks, args, fake, home, errlog, c)
        except BaseException as e:  # noqa: BLE001 - report every underlying cause, then fail
            if isinstance(e, KeyboardInterrupt):
                raise
            for x in leaves(e):
                fatal.append(f"{type(x).__name__}: {x}")
                if not isinstance(x, (AssertionError, MCPError)):
                    traceback.print_exception(x, file=sys.stderr)
        if fatal or c.failed:
            errlog.seek(0)
            stderr = errlog.read().strip()
            if stderr:
                print("--- workbench stderr", file=sys.stderr)
                print(stderr[-8000:], file=sys.stderr)
    for f in fatal:
        c.failed += 1
        print(f"  FAIL  session aborted: {f}", flush=True)
    print(f"runstack_session: {c.passed} passed, {c.failed} failed", flush=True)
    if fatal:
        return 2
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
