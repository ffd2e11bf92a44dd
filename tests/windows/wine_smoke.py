#!/usr/bin/env python3
"""Smoke test of the Windows build (workbench.exe) under Wine, as a Windows user would run it.

    python3 tests/windows/wine_smoke.py --exe target/x86_64-pc-windows-gnu/release/workbench.exe \
        --shim target/x86_64-pc-windows-gnu/wine-shim/bcryptprimitives.dll [--prefix DIR]

The .exe and the TEST-ONLY ProcessPrng shim (Wine 8 has no bcryptprimitives.dll) are copied into
C:\\wbtest\\bin of a Wine prefix (default .deps/wine, created on first use; the workbench data of
earlier runs is removed first). No WORKBENCH_HOME and no WORKBENCH_FILES_DIR: the data directory
and the files folder are the Windows defaults under the Wine user's profile. A fake service on
127.0.0.1 (standard library; Wine shares the host's network) stands in for Google Drive and for a
custom app. Checks:

1. initialize, tools/list (the nine), search_tools, execute_tools time_get_current;
2. the encrypted file store (WORKBENCH_SECRET_STORE=file, WORKBENCH_VAULT_PASSPHRASE): a vault
   secret set in one process, then used by a second one (a custom app's bearer token reaches the
   fake; the value is in no result, and secrets.enc / workbench.db hold no copy of it);
   a wrong passphrase is refused;
3. the data directory is %APPDATA%\\workbench\\workbench\\data and a Drive download lands in the
   files folder %USERPROFILE%\\workbench-files;
4. `workbench clients register` writes %APPDATA%\\Claude\\claude_desktop_config.json for a test
   APPDATA (C:\\wbtest\\AppData\\Roaming), keeping the other servers and keys;
5. upstream MCP servers end with workbench when workbench is killed (the job object of
   src/upstream/job.rs): workbench.exe itself, and Wine's ping.exe, which ignores its stdin
   closing and would otherwise run on for two minutes.

Prints one line per check; exits 0 only if all passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dist"))
from mcp_stdio import Checks, McpError, Session, smoke  # noqa: E402

TOKEN = "wine-smoke-secret-7f3a9c2e"
DRIVE_TOKEN = "ya29.wine-drive-token-5512"
PASSPHRASE = "wine smoke passphrase"
FILE_BODY = b"hello from a fake Drive, read under Wine\n"


class Fake:
    """Google Drive (metadata + media) and a custom app's /ping, on 127.0.0.1."""

    def __init__(self) -> None:
        self.seen: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):
                u = urlsplit(self.path)
                q = parse_qs(u.query)
                fake.seen.append({"path": u.path, "query": q, "auth": self.headers.get("authorization")})
                if u.path == "/app/ping":
                    ok = self.headers.get("authorization") == f"Bearer {TOKEN}"
                    return self.send(200 if ok else 401, {"pong": ok})
                if u.path == "/drive/v3/files/f1":
                    if self.headers.get("authorization") != f"Bearer {DRIVE_TOKEN}":
                        return self.send(401, {"error": {"code": 401, "message": "bad token"}})
                    if q.get("alt") == ["media"]:
                        body = FILE_BODY
                        self.send_response(200)
                        self.send_header("content-type", "text/plain")
                        self.send_header("content-length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                    return self.send(200, {"id": "f1", "name": "notes.txt", "mimeType": "text/plain", "size": str(len(FILE_BODY))})
                return self.send(404, {"error": {"code": 404, "message": "no route"}})

            def send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def run1(s: Session, tool: str, args: dict, timeout: float | None = None) -> tuple[bool, object]:
    """Runs one tool through execute_tools: (succeeded, its result or error)."""
    body, is_error = s.call("execute_tools", {"executions": [{"tool": tool, "args": args}]}, timeout=timeout)
    first = (body.get("results") or [{}])[0] if isinstance(body, dict) else {}
    if is_error or not isinstance(first, dict) or "error" in first:
        return False, first.get("error", body) if isinstance(first, dict) else body
    return True, first.get("result")


def wine_env(prefix: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update({
        "WINEPREFIX": prefix,
        "WINEDEBUG": "-all",
        # No Mono or Gecko install prompts when the prefix is made.
        "WINEDLLOVERRIDES": "mscoree,mshtml=",
        "WINEARCH": "win64",
    })
    return env


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--prefix", default=os.path.join(os.getcwd(), ".deps", "wine"))
    a = ap.parse_args()
    wine = shutil.which("wine") or shutil.which("wine64")
    if not wine:
        print("wine_smoke: wine not found (Debian: apt-get install wine)", file=sys.stderr)
        return 2
    prefix = os.path.abspath(a.prefix)
    env = wine_env(prefix)
    c = Checks("wine_smoke")

    t0 = time.monotonic()
    if not os.path.isdir(os.path.join(prefix, "drive_c", "windows")):
        os.makedirs(prefix, exist_ok=True)
        subprocess.run([wine, "wineboot", "-i"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        subprocess.run(["wineserver", "-w"], env=env, check=False)
    print(f"(wine prefix ready in {time.monotonic() - t0:.1f} s: {prefix})", flush=True)
    drive_c = os.path.join(prefix, "drive_c")
    user = next(
        (u for u in sorted(os.listdir(os.path.join(drive_c, "users"))) if u != "Public"),
        None,
    )
    if user is None:
        print("wine_smoke: the prefix has no user profile", file=sys.stderr)
        return 2
    profile = os.path.join(drive_c, "users", user)
    data_dir = os.path.join(profile, "AppData", "Roaming", "workbench", "workbench", "data")
    files_dir = os.path.join(profile, "workbench-files")
    test_root = os.path.join(drive_c, "wbtest")
    for d in (data_dir, files_dir, test_root):
        shutil.rmtree(d, ignore_errors=True)
    bin_dir = os.path.join(test_root, "bin")
    os.makedirs(bin_dir)
    shutil.copy(a.exe, os.path.join(bin_dir, "workbench.exe"))
    shutil.copy(a.shim, os.path.join(bin_dir, "bcryptprimitives.dll"))
    exe_win = r"C:\wbtest\bin\workbench.exe"
    fake = Fake()

    def session(extra: dict[str, str], log: str) -> Session:
        e = dict(env)
        e.update(extra)
        return Session([wine, exe_win], env=e, stderr_path=os.path.join(test_root, log), timeout=120)

    base = {
        "WORKBENCH_SECRET_STORE": "file",
        "WORKBENCH_VAULT_PASSPHRASE": PASSPHRASE,
        "WORKBENCH_PRIVATE_HOSTS": fake.origin,
        "WORKBENCH_POLICY_CUSTOM": "allow",
        "WORKBENCH_NO_BROWSER": "1",
    }

    # ---------------------------------------------------------------- 1 + 2a: the session, a secret set
    t1 = time.monotonic()
    s = session(base, "session1.log")
    try:
        smoke(s, c)
        print(f"(first session answered in {time.monotonic() - t1:.1f} s)", flush=True)
        ok, body = run1(s, "time_get_current", {"timezone": "Asia/Tokyo"})
        c.check("execute_tools time_get_current (Asia/Tokyo)", ok and "Asia/Tokyo" in json.dumps(body), body)
        ok, body = run1(s, "vault_set_secret", {
            "name": "SMOKE_TOKEN", "value": TOKEN, "description": "wine smoke", "allowed_hosts": [fake.origin]})
        c.check("vault_set_secret into the encrypted file store", ok and TOKEN not in json.dumps(body), body)
        app = {
            "name": "smokeapp",
            "description": "The smoke test's fake service",
            "base_url": fake.origin + "/app/",
            "auth": {"type": "bearer", "token": "{{vault:SMOKE_TOKEN}}"},
            "operations": [{"tool_name": "smokeapp_get_ping", "method": "GET", "path": "/ping",
                            "description": "Ping the fake service", "params": {"type": "object", "properties": {}}}],
        }
        ok, body = run1(s, "custom_create_app", app)
        c.check("custom_create_app with a {{vault:...}} bearer token", ok, body)
    except McpError as e:
        c.check("first session ran", False, str(e))
    c.check("first session exits when stdin closes", s.close(wait=30) == 0)

    secrets_file = os.path.join(data_dir, "secrets.enc")
    c.check(r"data directory is %APPDATA%\workbench\workbench\data", os.path.isfile(os.path.join(data_dir, "workbench.db")), data_dir)
    c.check("secrets.enc is in the data directory", os.path.isfile(secrets_file), secrets_file)

    # ------------------------------------------------------------- 2b + 3: used by a second process
    s = session({**base, "WORKBENCH_GOOGLE_DRIVE_TOKEN": DRIVE_TOKEN,
                 "WORKBENCH_GOOGLE_DRIVE_BASE_URL": fake.origin + "/drive/v3"}, "session2.log")
    try:
        s.initialize()
        ok, body = run1(s, "smokeapp_get_ping", {})
        pinged = [r for r in fake.seen if r["path"] == "/app/ping"]
        c.check("a second process uses the stored secret (the fake got the bearer token)",
                ok and bool(pinged) and pinged[-1]["auth"] == f"Bearer {TOKEN}", (body, pinged))
        c.check("the secret's value is in no result", TOKEN not in json.dumps(body), body)
        ok, body = run1(s, "google_drive_download_file", {"file_id": "f1", "save_to": "notes.txt"})
        saved = os.path.join(files_dir, "notes.txt")
        c.check(r"a download lands in %USERPROFILE%\workbench-files",
                ok and os.path.isfile(saved) and open(saved, "rb").read() == FILE_BODY, body)
        ok, body = run1(s, "google_drive_download_file", {"file_id": "f1", "save_to": r"C:\wbtest\escape.txt"})
        c.check("a path outside the files folder is refused", not ok and "outside" in json.dumps(body), body)
        c.check("nothing was written outside the files folder", not os.path.exists(os.path.join(test_root, "escape.txt")))
    except McpError as e:
        c.check("second session ran", False, str(e))
    s.close(wait=30)
    for name in ("secrets.enc", "workbench.db", "workbench.db-wal"):
        p = os.path.join(data_dir, name)
        if os.path.exists(p):
            raw = open(p, "rb").read()
            c.check(f"{name} holds no copy of the secret", TOKEN.encode() not in raw and DRIVE_TOKEN.encode() not in raw)

    # A wrong passphrase: the store refuses, the secret does not leak, the session still serves.
    s = session({**base, "WORKBENCH_VAULT_PASSPHRASE": "not the passphrase"}, "session3.log")
    try:
        s.initialize()
        before = len([r for r in fake.seen if r["path"] == "/app/ping"])
        ok, body = run1(s, "smokeapp_get_ping", {})
        after = len([r for r in fake.seen if r["path"] == "/app/ping"])
        text = json.dumps(body)
        c.check("a wrong passphrase is refused and nothing is sent", not ok and after == before and TOKEN not in text
                and ("passphrase" in text.lower() or "decrypt" in text.lower() or "unlock" in text.lower()), body)
    except McpError as e:
        c.check("wrong-passphrase session ran", False, str(e))
    s.close(wait=30)

    # ------------------------------------------------------------------------ 4: clients register
    appdata = os.path.join(test_root, "AppData", "Roaming")
    claude = os.path.join(appdata, "Claude")
    os.makedirs(claude)
    config = os.path.join(claude, "claude_desktop_config.json")
    with open(config, "w", encoding="utf-8") as f:
        f.write('{\r\n  "mcpServers": {\r\n    "other": {"command": "npx", "args": ["-y", "x"]}\r\n  },\r\n  "theme": "dark"\r\n}\r\n')
    e = dict(env)
    e.update({"WORKBENCH_SECRET_STORE": "memory"})
    # Wine sets APPDATA from the prefix's profile for every process it starts, so the test
    # APPDATA is set the Windows way: in cmd.exe, for the one command.
    r = subprocess.run([wine, "cmd", "/c", r"set APPDATA=C:\wbtest\AppData\Roaming&& " + exe_win
                        + " clients register --client claude-desktop"], env=e, capture_output=True, text=True, timeout=180)
    try:
        doc = json.load(open(config, encoding="utf-8"))
    except ValueError as ex:
        doc = {"error": str(ex)}
    entry = doc.get("mcpServers", {}).get("workbench", {})
    c.check(r"clients register writes %APPDATA%\Claude\claude_desktop_config.json",
            r.returncode == 0 and entry.get("command", "").lower().endswith("workbench.exe"), (r.returncode, r.stdout[-800:], r.stderr[-400:], doc))
    c.check("the other server and keys are kept", doc.get("mcpServers", {}).get("other") == {"command": "npx", "args": ["-y", "x"]}
            and doc.get("theme") == "dark", doc)
    c.check("a backup of the original is written", any(n.startswith("claude_desktop_config.json.workbench-backup-") for n in os.listdir(claude)),
            os.listdir(claude))

    # ------------------------------------------------------------- 5: upstream servers end with it
    home_cfg = os.path.join(data_dir, "config.json")
    cfg = json.load(open(home_cfg, encoding="utf-8")) if os.path.exists(home_cfg) else {}
    # "inner" is workbench.exe itself; "sleeper" is Wine's ping.exe, which never answers MCP and,
    # unlike workbench, does not exit when its stdin closes: only the job object ends it.
    cfg["mcp_servers"] = {
        "inner": {"command": exe_win, "args": []},
        "sleeper": {"command": r"C:\windows\system32\ping.exe", "args": ["-n", SLEEPER_COUNT, "127.0.0.1"]},
    }
    with open(home_cfg, "w", encoding="utf-8") as f:
        json.dump(cfg, f)
    s = session({**base, "WORKBENCH_POLICY_INNER": "allow"}, "session4.log")
    try:
        s.initialize()
        ok, body = run1(s, "inner_whoami", {}, timeout=180)
        c.check("an upstream server (workbench.exe) starts and answers", ok, body)
        procs = workbench_processes()
        c.check("workbench.exe runs twice (workbench and its upstream server) and the sleeper server runs",
                len([p for p in procs if p[1] == "workbench"]) >= 2 and any(p[1] == "ping" for p in procs), procs)
        os.kill(s.proc.pid, signal.SIGKILL)
        s.proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and workbench_processes():
            time.sleep(0.5)
        left = workbench_processes()
        c.check("killing workbench ends its upstream servers, the one ignoring stdin too (job object)", not left, left)
    except McpError as ex:
        c.check("upstream session ran", False, str(ex))
    finally:
        s.close(wait=5)
        for pid, _ in workbench_processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    subprocess.run(["wineserver", "-k"], env=env, check=False)
    fake.server.shutdown()
    print(f"(wine smoke: {time.monotonic() - t0:.1f} s)")
    return c.done()


SLEEPER_COUNT = "117"


def workbench_processes() -> list[tuple[int, str]]:
    """Linux pids of this test's Wine processes: workbench.exe and the sleeper (their command
    lines name them)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "wine_smoke" in cmd:
            continue
        if "wbtest\\bin\\workbench.exe" in cmd:
            found.append((int(pid), "workbench"))
        elif "ping.exe" in cmd and f"-n {SLEEPER_COUNT} " in cmd + " ":
            found.append((int(pid), "ping"))
    return found


if __name__ == "__main__":
    sys.exit(main())
