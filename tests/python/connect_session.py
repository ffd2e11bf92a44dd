#!/usr/bin/env python3
"""Connect links through URL-mode elicitation, with the official Python `mcp` SDK against the real binary.

In both protocol generations (legacy 2025-11-25: the server sends `elicitation/create` in URL mode;
auto, 2026-07-28: `connect` answers `input_required` with one URL-mode request and a sealed
request state, and the SDK retries with the answer):

* a client that declares URL elicitation is asked to open the loopback connect page; its callback
  gets exactly the link of the result (`openedByClient: true`), in URL mode, never a form;
* declined: the link is still in the result (`openedByClient: false`);
* the user finishes on the page (a credential form POST, as the browser sends it) and
  wait_for_connection sees it; the credential never reaches the client: not in any elicitation,
  not in any result;
* 2026-07-28: the retry hands back the same link (no second one minted); a tampered or replayed
  state gives no link;
* a client without elicitation gets the link in the result as before (no question, no
  `openedByClient`).

Usage: .deps/venv/bin/python tests/python/connect_session.py --binary target/debug/workbench
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
TOKEN = "ghp_pythonconnect0000000000000000000000"


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{'' if ok else '  -- ' + detail[:600]}")


def body(result) -> dict:
    return json.loads(result.content[0].text)


class FakeGitHub(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path == "/user" and self.headers.get("authorization") == f"Bearer {TOKEN}":
            self.reply(200, {"login": "octo"})
        else:
            self.reply(401, {"message": "Bad credentials"})

    def reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # noqa: ANN002 - silence
        pass


def finish_in_browser(url: str) -> int:
    """Does what the user's browser does on the connect page: load it, type the token, submit."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    html = opener.open(url, timeout=10).read().decode()
    token = re.search(r'name="form_token" value="([0-9a-f]+)"', html).group(1)
    action = re.search(r'<form[^>]*action="([^"]+)"', html).group(1)
    parts = urllib.parse.urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    request = urllib.request.Request(
        urllib.parse.urljoin(url, action),
        data=urllib.parse.urlencode({"form_token": token, "token": TOKEN}).encode(),
        headers={
            "Origin": origin,
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


async def with_url_elicitation(params, errlog, mode: str) -> None:
    asked: list = []
    answers: list[str] = []

    async def on_elicit(context, p):  # noqa: ANN001 - the SDK's callback signature
        asked.append(p)
        return types.ElicitResult(action=answers.pop(0) if answers else "decline")

    async with Client(stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=on_elicit) as c:
        v = c.protocol_version
        answers[:] = ["decline"]
        r = body(await c.call_tool("connect", {"integration": "github"}))
        check(f"[{mode} {v}] declined: the link is still there, openedByClient false", r.get("openedByClient") is False and r.get("url", "").startswith("http://127.0.0.1:") and len(asked) == 1, str(r))

        answers[:] = ["accept"]
        r = body(await c.call_tool("connect", {"integration": "github"}))
        url = r.get("url", "")
        check(f"[{mode} {v}] connect: the client is asked once to open the link", len(asked) == 2, repr(asked))
        if len(asked) == 2:
            q = asked[1]
            check(f"[{mode} {v}] the client got exactly the result's loopback link", getattr(q, "url", None) == url and url.startswith("http://127.0.0.1:") and "/connect/" in url, f"{q!r} {r}")
            check(f"[{mode} {v}] its elicitation id is the connectionId", getattr(q, "elicitation_id", None) == r.get("connectionId"), repr(q))
        check(f"[{mode} {v}] accepted: openedByClient true", r.get("openedByClient") is True and "wait_for_connection" in r.get("message", ""), str(r))

        if v >= "2026-07-28":
            first = await c.session.call_tool("connect", {"integration": "github"}, allow_input_required=True)
            is_ir = isinstance(first, types.InputRequiredResult)
            check(f"[{mode} {v}] connect answers input_required with one URL request", is_ir and len(first.input_requests) == 1, repr(first)[:300])
            if is_ir:
                key, req = next(iter(first.input_requests.items()))
                link = req.params.url
                yes = {key: types.ElicitResult(action="accept")}
                state = first.request_state
                flipped = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
                r2 = await c.session.call_tool("connect", {"integration": "github"}, input_responses=yes, request_state=flipped, allow_input_required=True)
                check(f"[{mode} {v}] a tampered state gives no link", isinstance(r2, types.CallToolResult) and r2.is_error and "/connect/" not in r2.content[0].text, repr(r2)[:300])
                r2 = await c.session.call_tool("connect", {"integration": "gitlab"}, input_responses=yes, request_state=state, allow_input_required=True)
                check(f"[{mode} {v}] a state re-targeted to another integration gives no link", isinstance(r2, types.CallToolResult) and r2.is_error and "/connect/" not in r2.content[0].text, repr(r2)[:300])
                r2 = await c.session.call_tool("connect", {"integration": "github"}, input_responses=yes, request_state=state, allow_input_required=True)
                ok = isinstance(r2, types.CallToolResult) and not r2.is_error and body(r2).get("url") == link and body(r2).get("openedByClient") is True
                check(f"[{mode} {v}] the retry hands back the same link (none minted twice)", ok, repr(r2)[:300])
                r2 = await c.session.call_tool("connect", {"integration": "github"}, input_responses=yes, request_state=state, allow_input_required=True)
                check(f"[{mode} {v}] a replayed state is refused", isinstance(r2, types.CallToolResult) and r2.is_error and "already used" in r2.content[0].text, repr(r2)[:300])

        status = await anyio.to_thread.run_sync(finish_in_browser, url)
        w = body(await c.call_tool("wait_for_connection", {"connectionId": r["connectionId"], "timeoutSec": 10}))
        check(f"[{mode} {v}] the user finished on the page; wait_for_connection sees it", status == 200 and "CONNECTED" in json.dumps(w), f"{status} {w}")
        modes = {getattr(q, "mode", None) for q in asked}
        check(f"[{mode} {v}] every question was URL mode, never a form", modes == {"url"} and not any(hasattr(q, "requested_schema") for q in asked), repr(asked))
        seen = json.dumps([q.model_dump() for q in asked]) + json.dumps(r) + json.dumps(w)
        check(f"[{mode} {v}] the credential never reached the client", TOKEN not in seen, seen[:300])


async def without_elicitation(params, errlog, mode: str) -> None:
    async with Client(stdio_client(params, errlog=errlog), mode=mode) as c:
        v = c.protocol_version
        r = body(await c.call_tool("connect", {"integration": "github"}))
        check(
            f"[{mode} {v}, no elicitation] connect answers the link as before",
            r.get("url", "").startswith("http://127.0.0.1:") and "openedByClient" not in r and r["url"] in r.get("message", ""),
            str(r),
        )


async def main(binary: str) -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    params_for = lambda home: StdioServerParameters(  # noqa: E731
        command=binary,
        args=[],
        env=dict(
            os.environ,
            WORKBENCH_HOME=home,
            WORKBENCH_NO_BROWSER="1",
            WORKBENCH_SECRET_STORE="memory",
            WORKBENCH_GITHUB_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}",
        ),
    )
    with open(os.devnull, "w") as errlog:
        for mode in ["legacy", "auto"]:
            await with_url_elicitation(params_for(tempfile.mkdtemp(prefix="wb-connect-")), errlog, mode)
            await without_elicitation(params_for(tempfile.mkdtemp(prefix="wb-connect-")), errlog, mode)
    server.shutdown()
    failed = sum(1 for _, ok, _ in RESULTS if not ok)
    print(f"connect_session: {len(RESULTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    sys.exit(anyio.run(main, parser.parse_args().binary))
