#!/usr/bin/env python3
"""Drive the real workbench binary with the official Python `mcp` SDK (a client nobody here wrote).

Usage:
  .deps/venv/bin/python tests/python/sdk_session.py --binary target/debug/workbench [--mode legacy|auto]

  --mode legacy  (default) ClientSession + the `initialize` handshake, protocol 2025-11-25.
  --mode auto    the SDK's high-level `mcp.Client` default: probes `server/discover` and adopts
                 protocol 2026-07-28 (falling back to `initialize` if the server refuses).

A fake Open-Meteo (stdlib http.server on 127.0.0.1:0, in a thread) stands in for both the forecast
host and the geocoding host; it checks each request the way the real API would (method, path,
User-Agent, required query parameters) and answers with realistic bodies, or with 400
{"error": true, "reason": ...} for bad input. The binary runs with a temporary WORKBENCH_HOME and
the two base-URL overrides pointing at the fake. A search for the place "Slowtown" never gets an
answer: the fake holds the request until the client hangs up and records that it did (the
cancellation check).

Besides the session (initialize/discover, tools/list, search, schema, compose, errors) it checks the
protocol features: structuredContent with its text copy, ping, progress notifications for a batch,
logging (`logging/setLevel` and the per-request `io.modelcontextprotocol/logLevel` in `_meta`), and
cancelling an in-flight execute_tools (the upstream connection closes, the next step never runs,
the audit log says CANCELLED, the server keeps serving).

Prints one line per check, then `sdk_session: N passed, M failed`; exits 0 only when every check
passed (1 on a failed check, 2 when the session could not run at all).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import select
import socket
import sys
import tempfile
import threading
import time
import traceback
import warnings
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

try:
    import anyio
    from mcp import Client, ClientSession, StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp.types import PaginatedRequestParams
except ImportError as e:  # pragma: no cover - environment problem, not a test failure
    sys.stderr.write(
        f"sdk_session: cannot import the mcp SDK ({e}); run scripts/setup-test-deps.sh and use .deps/venv/bin/python\n"
    )
    sys.exit(2)

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
EXPECTED_PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28"}

# ---------------------------------------------------------------------------------------------
# Fake Open-Meteo
# ---------------------------------------------------------------------------------------------

FORECAST_PREFIX = "/forecast-host/v1"
GEO_PREFIX = "/geo-host/v1"

LISBON = {
    "id": 2267057,
    "name": "Lisbon",
    "latitude": 38.71667,
    "longitude": -9.13333,
    "elevation": 45.0,
    "feature_code": "PPLC",
    "country_code": "PT",
    "admin1_id": 2267056,
    "admin2_id": 6458923,
    "timezone": "Europe/Lisbon",
    "population": 517802,
    "country_id": 2264397,
    "country": "Portugal",
    "admin1": "Lisbon",
    "admin2": "Lisbon",
}
LISBON_ALT = {
    "id": 5367891,
    "name": "Lisbon",
    "latitude": 44.0333,
    "longitude": -83.8172,
    "elevation": 273.0,
    "feature_code": "PPL",
    "country_code": "US",
    "timezone": "America/Detroit",
    "population": 100,
    "country": "United States",
    "admin1": "Michigan",
}
PLACES = {"lisbon": [LISBON, LISBON_ALT]}

# Per-variable unit and a deterministic value series (index = day or row).
CURRENT_VARS = {
    "temperature_2m": ("°C", 17.3),
    "apparent_temperature": ("°C", 16.1),
    "relative_humidity_2m": ("%", 72),
    "precipitation": ("mm", 0.0),
    "rain": ("mm", 0.0),
    "weather_code": ("wmo code", 3),
    "cloud_cover": ("%", 88),
    "wind_speed_10m": ("km/h", 14.8),
    "wind_direction_10m": ("°", 320),
    "is_day": ("", 1),
}
DAILY_VARS = {
    "weather_code": ("wmo code", [3, 61, 2, 0, 80, 1, 45]),
    "temperature_2m_max": ("°C", [19.4, 18.2, 20.1, 21.0, 17.6, 19.9, 18.8]),
    "temperature_2m_min": ("°C", [12.1, 11.4, 12.9, 13.2, 11.0, 12.4, 12.0]),
    "precipitation_sum": ("mm", [0.0, 4.2, 0.1, 0.0, 6.3, 0.0, 0.0]),
    "precipitation_probability_max": ("%", [8, 71, 15, 3, 84, 5, 10]),
    "wind_speed_10m_max": ("km/h", [18.7, 24.1, 15.2, 11.9, 29.5, 13.3, 16.0]),
    "sunrise": ("iso8601", None),
    "sunset": ("iso8601", None),
}
START_DAY = (2026, 11, 30)


def day(i: int) -> str:
    """ISO date i days after START_DAY."""
    return (datetime.date(*START_DAY) + datetime.timedelta(days=i)).isoformat()


def daily_value(var: str, i: int) -> Any:
    series = DAILY_VARS[var][1]
    if series is None:  # sunrise / sunset
        return f"{day(i)}T{'07:4' if var == 'sunrise' else '17:2'}{i % 10}"
    return series[i % len(series)]


class BadRequest(Exception):
    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.reason = reason
        self.status = status


def one(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[-1] if values else None


def float_param(query: dict[str, list[str]], key: str, lo: float, hi: float) -> float:
    raw = one(query, key)
    if raw is None:
        raise BadRequest(f"Value of type 'Float' required for key '{key}'.")
    try:
        value = float(raw)
    except ValueError:
        raise BadRequest(f"Value of type 'Float' required for key '{key}'.") from None
    if not lo <= value <= hi:
        raise BadRequest(f"{key.capitalize()} must be in range of {lo:g} to {hi:g}°. Given: {raw}.")
    return value


def int_param(query: dict[str, list[str]], key: str, default: int, lo: int, hi: int) -> int:
    raw = one(query, key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"Value of type 'Int' required for key '{key}'.") from None
    if not lo <= value <= hi:
        raise BadRequest(f"Parameter '{key}' must be between {lo} and {hi}. Given: {raw}.")
    return value


def variables(query: dict[str, list[str]], key: str, known: dict[str, Any], kind: str) -> list[str]:
    raw = one(query, key)
    if raw is None:
        return []
    names = [v for v in raw.split(",") if v]
    for n in names:
        if n not in known:
            raise BadRequest(f"Data corrupted at path ''. Cannot initialize {kind} from invalid String value {n}.")
    return names


def geocoding_body(query: dict[str, list[str]]) -> dict[str, Any]:
    name = one(query, "name")
    if name is None:
        raise BadRequest("Parameter 'name' is required.")
    count = int_param(query, "count", 10, 1, 100)
    fmt = one(query, "format") or "json"
    if fmt not in ("json", "protobuf"):
        raise BadRequest(f"Cannot initialize Format from invalid String value {fmt}.")
    body: dict[str, Any] = {"generationtime_ms": 0.7169247}
    if len(name.strip()) < 2:
        return body  # the real API answers short names with no `results` at all
    results = PLACES.get(name.strip().lower(), [])
    cc = one(query, "countryCode")
    if cc:
        results = [r for r in results if r["country_code"] == cc.upper()]
    if results:
        body["results"] = results[:count]
    return body


def forecast_body(query: dict[str, list[str]]) -> dict[str, Any]:
    lat = float_param(query, "latitude", -90, 90)
    lon = float_param(query, "longitude", -180, 180)
    days = int_param(query, "forecast_days", 7, 0, 16)
    current = variables(query, "current", CURRENT_VARS, "ForecastVariable")
    daily = variables(query, "daily", DAILY_VARS, "ForecastVariableDaily")
    if one(query, "hourly"):
        variables(query, "hourly", CURRENT_VARS, "ForecastVariable")
    tz = one(query, "timezone") or "GMT"
    lisbon = abs(lat - LISBON["latitude"]) < 0.1 and abs(lon - LISBON["longitude"]) < 0.1
    if tz == "auto":
        tz = "Europe/Lisbon" if lisbon else "GMT"
    body: dict[str, Any] = {
        # The real API snaps to its grid; keep it close to what it returns for Lisbon.
        "latitude": 38.72 if lisbon else round(lat, 2),
        "longitude": -9.14 if lisbon else round(lon, 2),
        "generationtime_ms": 0.0629425048828125,
        "utc_offset_seconds": 0,
        "timezone": tz,
        "timezone_abbreviation": "GMT",
        "elevation": 45.0 if lisbon else 0.0,
    }
    if current:
        body["current_units"] = {"time": "iso8601", "interval": "seconds", **{v: CURRENT_VARS[v][0] for v in current}}
        body["current"] = {"time": f"{day(0)}T09:45", "interval": 900, **{v: CURRENT_VARS[v][1] for v in current}}
    if daily:
        body["daily_units"] = {"time": "iso8601", **{v: DAILY_VARS[v][0] for v in daily}}
        body["daily"] = {"time": [day(i) for i in range(days)], **{v: [daily_value(v, i) for i in range(days)] for v in daily}}
    return body


class FakeOpenMeteo:
    """Both Open-Meteo hosts on one port; records every request, and every request that no real
    client of the API should send (wrong method, unknown path, missing User-Agent) as a problem."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.lock = threading.Lock()
        self.slow_started = threading.Event()
        self.slow_closed = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "fake-open-meteo"

            def log_message(self, *args: Any) -> None:  # keep stderr quiet
                pass

            def reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def hold_until_client_hangs_up(self) -> None:
                """Never answer; return once the client closes the connection (or after 20 s)."""
                fake.slow_started.set()
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable:
                        try:
                            if self.connection.recv(1, socket.MSG_PEEK) == b"":
                                fake.slow_closed.set()
                                break
                        except OSError:
                            fake.slow_closed.set()
                            break
                self.close_connection = True

            def handle_any(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query, keep_blank_values=True)
                ua = self.headers.get("User-Agent", "")
                rec = {"method": self.command, "path": url.path, "query": query, "user_agent": ua}
                with fake.lock:
                    fake.requests.append(rec)
                if url.path == f"{GEO_PREFIX}/search" and one(query, "name") == "Slowtown":
                    self.hold_until_client_hangs_up()
                    return
                try:
                    if self.command != "GET":
                        raise BadRequest(f"Method {self.command} not allowed", 405)
                    if not ua.startswith("workbench/"):
                        raise BadRequest(f"unexpected User-Agent {ua!r}", 403)
                    if url.path == f"{FORECAST_PREFIX}/forecast":
                        body = forecast_body(query)
                    elif url.path == f"{GEO_PREFIX}/search":
                        body = geocoding_body(query)
                    else:
                        raise BadRequest(f"Not Found: {url.path}", 404)
                except BadRequest as e:
                    if e.status != 400:  # a malformed request is workbench's bug, not the agent's
                        with fake.lock:
                            fake.problems.append(f"{self.command} {self.path}: {e.reason}")
                    rec["status"] = e.status
                    self.reply(e.status, {"error": True, "reason": e.reason})
                    return
                rec["status"] = 200
                self.reply(200, body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="fake-open-meteo", daemon=True)

    def __enter__(self) -> FakeOpenMeteo:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def forecast_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{FORECAST_PREFIX}"

    @property
    def geocoding_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{GEO_PREFIX}"

    def seen(self, path_suffix: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["path"].endswith(path_suffix)]


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: Any = None) -> bool:
        if ok:
            self.passed += 1
            print(f"  ok    {name}", flush=True)
        else:
            self.failed += 1
            msg = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False, default=str)
            if len(msg) > 2000:
                msg = msg[:2000] + "…"
            print(f"  FAIL  {name}: {msg}", flush=True)
        return ok

    def equal(self, name: str, got: Any, want: Any) -> bool:
        return self.check(name, got == want, {"got": got, "want": want})


def body_of(result: Any) -> tuple[Any, bool]:
    """The single text block of a tool result, parsed as JSON, and the isError flag."""
    content = list(result.content or [])
    if len(content) != 1 or getattr(content[0], "type", None) != "text":
        raise AssertionError(f"expected exactly one text content block, got {[getattr(c, 'type', c) for c in content]}")
    return json.loads(content[0].text), bool(result.is_error)


@asynccontextmanager
async def open_session(
    mode: str, params: StdioServerParameters, errlog: Any, timeout: float, logging_callback: Any = None
):
    """Yield (session-like object with list_tools/call_tool, protocol version, server info)."""
    if mode == "legacy":
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=timeout, logging_callback=logging_callback
            ) as session:
                init = await session.initialize()
                yield session, init.protocol_version, init.server_info
    else:
        # A stdio_client context manager is itself a Transport, which lets us keep the server's stderr.
        async with Client(
            stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=timeout, logging_callback=logging_callback
        ) as client:
            yield client, client.protocol_version, client.server_info


async def wait_for(condition: Any, seconds: float = 5.0) -> bool:
    """Poll `condition()` until it holds or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


async def list_all_tools(session: Any) -> list[Any]:
    tools, cursor = [], None
    for _ in range(100):
        if not cursor:
            res = await session.list_tools()
        elif isinstance(session, ClientSession):
            res = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
        else:
            res = await session.list_tools(cursor=cursor)
        tools.extend(res.tools)
        cursor = res.next_cursor
        if not cursor:
            return tools
    raise AssertionError("tools/list pagination did not end after 100 pages")


async def session_checks(args: argparse.Namespace, fake: FakeOpenMeteo, home: str, errlog: Any, c: Checks) -> None:
    env = {
        "WORKBENCH_HOME": home,
        "WORKBENCH_OPEN_METEO_BASE_URL": fake.forecast_base,
        "WORKBENCH_OPEN_METEO_GEOCODING_BASE_URL": fake.geocoding_base,
    }
    params = StdioServerParameters(command=args.binary, args=[], env=env)
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async with open_session(args.mode, params, errlog, args.timeout, on_log) as (session, protocol, server_info):
        # 1. initialize / discover
        c.equal("serverInfo.name is workbench", server_info.name if server_info else None, "workbench")
        c.equal(f"protocol version ({args.mode})", protocol, EXPECTED_PROTOCOL[args.mode])

        # 2. tools/list
        tools = await list_all_tools(session)
        names = [t.name for t in tools]
        c.check("tools/list has exactly the nine meta-tools", len(names) == 9 and set(names) == META_TOOLS, names)

        async def call(name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
            return body_of(await session.call_tool(name, arguments))

        # 3. search_tools
        body, is_error = await call("search_tools", {"query": "weather forecast"})
        hits = [t.get("name") for t in body.get("tools", [])] if isinstance(body, dict) else []
        c.check(
            "search_tools 'weather forecast' ranks open_meteo_get_forecast first",
            not is_error and hits[:1] == ["open_meteo_get_forecast"],
            {"isError": is_error, "top": hits[:5]},
        )

        # 4. get_tool_schema
        body, is_error = await call("get_tool_schema", {"tool": "open_meteo_get_forecast"})
        props = (body.get("schema") or {}).get("properties") or {} if isinstance(body, dict) else {}
        c.check(
            "get_tool_schema open_meteo_get_forecast has latitude",
            not is_error and "latitude" in props,
            {"isError": is_error, "properties": sorted(props)},
        )

        # 5. execute_tools with compose + return
        before = len(fake.seen("/forecast"))
        body, is_error = await call(
            "execute_tools",
            {
                "executions": [
                    {"tool": "open_meteo_search_locations", "ref_id": "place", "args": {"name": "Lisbon", "count": 1}},
                    {
                        "tool": "open_meteo_get_forecast",
                        "ref_id": "wx",
                        "args": {
                            "latitude": "{{step:place.locations.0.latitude}}",
                            "longitude": "{{step:place.locations.0.longitude}}",
                            "forecast_days": 2,
                        },
                    },
                ],
                "compose": True,
                "return": {"city": "{{step:place.locations.0.name}}", "today": "{{step:wx.daily.0}}"},
            },
        )
        geo = fake.seen("/search")
        c.check(
            "geocoding host got name=Lisbon&count=1",
            any(one(r["query"], "name") == "Lisbon" and one(r["query"], "count") == "1" for r in geo),
            [r["query"] for r in geo],
        )
        forecasts = fake.seen("/forecast")[before:]
        fq = forecasts[-1]["query"] if forecasts else {}
        c.check(
            "forecast host got latitude=38.71667 (whole-value ref keeps the number)",
            one(fq, "latitude") == "38.71667" and one(fq, "longitude") == "-9.13333" and one(fq, "forecast_days") == "2",
            fq,
        )
        # What Open-Meteo sent for day 0, as one row, plus workbench's word for WMO code 3.
        daily_vars = (one(fq, "daily") or "").split(",") if fq else []
        want_today: dict[str, Any] = {"time": day(0)}
        for v in daily_vars:
            if v in DAILY_VARS:
                want_today[v] = daily_value(v, 0)
        want_today["weather"] = "overcast"
        c.check("compose run succeeded", not is_error, body)
        c.equal("compose return is exactly {result: {city, today}}", body, {"result": {"city": "Lisbon", "today": want_today}})

        # 6. a bad argument, without compose: an INVALID_ARGUMENTS entry; the other execution still runs
        before = len(fake.requests)
        body, is_error = await call(
            "execute_tools",
            {
                "executions": [
                    {"tool": "open_meteo_get_forecast", "args": {"latitude": 123.4, "longitude": -9.13333}},
                    {"tool": "open_meteo_search_locations", "args": {"name": "Lisbon", "count": 1}},
                ]
            },
        )
        results = body.get("results") if isinstance(body, dict) else None
        first = results[0] if isinstance(results, list) and results else {}
        code = (first.get("error") or {}).get("code") if isinstance(first, dict) else None
        c.check("bad argument gives an INVALID_ARGUMENTS entry", code == "INVALID_ARGUMENTS", body)
        problems = (first.get("error") or {}).get("problems") or [] if isinstance(first, dict) else []
        c.check(
            "the INVALID_ARGUMENTS entry points at /latitude",
            any(p.get("path") == "/latitude" for p in problems if isinstance(p, dict)),
            problems,
        )
        second = results[1] if isinstance(results, list) and len(results) > 1 else {}
        c.check(
            "the other execution in the batch still ran",
            isinstance(second, dict) and (second.get("result") or {}).get("locations", [{}])[0].get("name") == "Lisbon",
            second,
        )
        c.check(
            "the invalid execution never reached the forecast host",
            not any(r["path"].endswith("/forecast") for r in fake.requests[before:]),
            fake.requests[before:],
        )

        # 7. an upstream 400 surfaces with the provider's reason
        body, is_error = await call(
            "execute_tools",
            {
                "executions": [
                    {
                        "tool": "open_meteo_get_forecast",
                        "args": {"latitude": 38.71667, "longitude": -9.13333, "daily": ["temperature_2m_maxx"]},
                    }
                ]
            },
        )
        err = ((body.get("results") or [{}])[0].get("error") or {}) if isinstance(body, dict) else {}
        c.check(
            "an Open-Meteo 400 becomes UPSTREAM_ERROR with its reason",
            err.get("code") == "UPSTREAM_ERROR" and "temperature_2m_maxx" in str(err.get("message")) and err.get("status") == 400,
            body,
        )

        # 8. whoami
        body, is_error = await call("whoami", {})
        uid = body.get("id") if isinstance(body, dict) else None
        c.check("whoami id starts with usr_", not is_error and isinstance(uid, str) and uid.startswith("usr_"), body)

        # 9. an unknown top-level tool is a protocol error (-32602), and the server keeps serving
        try:
            await session.call_tool("no_such_tool", {})
            c.check("unknown tool is a JSON-RPC error", False, "the call succeeded")
        except MCPError as e:
            c.check("unknown tool is a JSON-RPC error -32602", e.error.code == -32602, e.error.model_dump())
        body, is_error = await call("whoami", {})
        c.equal("server still answers after the error", body.get("id") if isinstance(body, dict) else None, uid)

        await feature_checks(session, protocol, fake, logs, c)

    c.check("fake Open-Meteo saw no malformed requests (method, path, User-Agent)", not fake.problems, fake.problems)


async def feature_checks(session: Any, protocol: str, fake: FakeOpenMeteo, logs: list[Any], c: Checks) -> None:
    """structuredContent, ping, progress, logging and cancellation, as a client library sees them."""
    # 10. structuredContent: the result object, plus the same JSON as text; errors are text only
    result = await session.call_tool("whoami", {})
    text = json.loads(result.content[0].text)
    c.check(
        "structuredContent is the result object and the text block is its copy",
        isinstance(result.structured_content, dict) and result.structured_content == text,
        {"structured": result.structured_content, "text": text},
    )
    result = await session.call_tool("get_tool_schema", {"tool": "no_such_tool_anywhere"})
    c.check(
        "an error result is isError with text only",
        bool(result.is_error) and result.structured_content is None,
        result.model_dump(),
    )

    # 11. ping: answered on 2025-11-25; 2026-07-28 removed it, so there it is "method not found"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK marks ping deprecated for 2026-07-28
        try:
            pong = await session.send_ping()
            c.check(f"ping ({protocol})", protocol == "2025-11-25" and pong is not None, repr(pong))
        except MCPError as e:
            c.check(f"ping ({protocol})", protocol != "2025-11-25" and e.error.code == -32601, e.error.model_dump())

    # 12. progress: one notification per finished execution
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    await session.call_tool(
        "execute_tools",
        {
            "executions": [
                {"tool": "time_get_current", "args": {"timezone": "UTC"}},
                {"tool": "open_meteo_search_locations", "args": {"name": "Lisbon", "count": 1}},
                {"tool": "no_such_tool", "args": {}},
            ]
        },
        progress_callback=on_progress,
    )
    await wait_for(lambda: len(progress) >= 3, 3)
    c.equal("progress: done counts 1..3 of total 3", sorted((p[0], p[1]) for p in progress), [(1, 3), (2, 3), (3, 3)])
    c.equal(
        "progress messages name each execution and its outcome",
        sorted(p[2] or "" for p in progress),
        ["no_such_tool failed (TOOL_NOT_FOUND)", "open_meteo_search_locations ok", "time_get_current ok"],
    )

    # 13. logging: nothing unasked; logging/setLevel; a per-request level in _meta wins for that request
    def finished(tool: str) -> int:
        return sum(1 for m in logs if isinstance(m.data, dict) and m.data.get("message") == f"{tool} finished")

    await session.call_tool("whoami", {})
    await anyio.sleep(0.3)
    c.equal("no log messages before the client asks", [m.data for m in logs], [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # logging is deprecated (SEP-2577) but still served
        await session.set_logging_level("info")
        await session.call_tool("whoami", {})
        ok = await wait_for(lambda: finished("whoami") == 1, 3)
        msg = next((m for m in logs if isinstance(m.data, dict) and m.data.get("message") == "whoami finished"), None)
        c.check(
            "logging/setLevel info: the call's info event arrives as notifications/message",
            ok and msg is not None and msg.level == "info" and str(msg.logger).startswith("workbench"),
            [m.model_dump() for m in logs],
        )
        await session.set_logging_level("error")
        await session.call_tool("whoami", {})
        await anyio.sleep(0.3)
        c.equal("logging/setLevel error: info events stop", finished("whoami"), 1)
        await session.call_tool("whoami", {}, meta={"io.modelcontextprotocol/logLevel": "info"})
        ok = await wait_for(lambda: finished("whoami") == 2, 3)
        c.check("a request's own _meta logLevel info gets that request's info events", ok, [m.data for m in logs])

    # 14. cancellation: a compose whose first step hangs upstream; the client gives up on it
    before = len(fake.requests)
    scope = anyio.CancelScope()

    async def slow_compose() -> None:
        with scope:
            await session.call_tool(
                "execute_tools",
                {
                    "compose": True,
                    "executions": [
                        {"ref_id": "place", "tool": "open_meteo_search_locations", "args": {"name": "Slowtown"}},
                        {"ref_id": "wx", "tool": "open_meteo_get_forecast", "args": {"latitude": 1, "longitude": 1}},
                    ],
                },
            )

    async with anyio.create_task_group() as tg:
        tg.start_soon(slow_compose)
        started = await wait_for(fake.slow_started.is_set, 10)
        c.check("the slow upstream request started", started)
        scope.cancel()
    closed = await wait_for(fake.slow_closed.is_set, 5)
    c.check("cancelling the call closed the upstream connection", closed)
    await anyio.sleep(0.3)
    after = [r["path"] for r in fake.requests[before:]]
    c.check("the compose step after the cancelled one never ran", not any(p.endswith("/forecast") for p in after), after)
    body, _ = body_of(
        await session.call_tool(
            "execute_tools",
            {"executions": [{"tool": "audit_search_log", "args": {"tool": "open_meteo_search_locations", "limit": 1}}]},
        )
    )
    entry = (((body.get("results") or [{}])[0].get("result") or {}).get("entries") or [{}])[0]
    c.check(
        "the audit row of the cancelled execution says CANCELLED",
        entry.get("error_code") == "CANCELLED" and "Slowtown" in json.dumps(entry.get("args")),
        entry,
    )
    body, is_error = body_of(await session.call_tool("whoami", {}))
    c.check("the server keeps serving after a cancellation", not is_error and "id" in body, body)


def leaves(e: BaseException) -> list[BaseException]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, BaseExceptionGroup):
            stack.extend(x.exceptions)
        else:
            out.append(x)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="path to the workbench binary")
    p.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    p.add_argument("--timeout", type=float, default=30.0, help="per-request read timeout in seconds (default 30)")
    args = p.parse_args()
    args.binary = os.path.abspath(args.binary)
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        print(f"sdk_session: {args.binary} is not an executable file; build it first (cargo build)", file=sys.stderr)
        return 2

    print(f"sdk_session: {args.binary} (mode {args.mode})", flush=True)
    c = Checks()
    fatal: list[str] = []
    with tempfile.TemporaryDirectory(prefix="workbench-sdk-") as home, FakeOpenMeteo() as fake, tempfile.TemporaryFile(
        "w+", encoding="utf-8", prefix="workbench-stderr-"
    ) as errlog:
        try:
            anyio.run(session_checks, args, fake, home, errlog, c)
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
                print("---", file=sys.stderr)

    for f in fatal:
        c.failed += 1
        print(f"  FAIL  session aborted: {f}", flush=True)
    if fatal:
        print(
            "  (the session could not finish: the server may have exited, closed stdout or not answered; "
            "its stderr, if any, is printed above)",
            flush=True,
        )
    print(f"sdk_session: {c.passed} passed, {c.failed} failed", flush=True)
    if fatal:
        return 2
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
