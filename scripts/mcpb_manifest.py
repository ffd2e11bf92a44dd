#!/usr/bin/env python3
"""Writes the MCP Bundle manifest (manifest.json, manifest_version 0.2) of workbench.

Usage (scripts/bundle.sh calls it):
    mcpb_manifest.py --version V --tools TOOLS.json --platform linux=server/linux/workbench \
        [--platform darwin=server/darwin/workbench] [--platform win32=server/win32/workbench.exe] > manifest.json

TOOLS.json is the server's own `tools/list` result (`{"tools": [...]}`), so the manifest lists
exactly the nine meta-tools the binary serves, each with the first sentence of its description.

The settings asked at install time (`user_config`) become the environment of the server:
files folder (required: the user picks it), the default write policy, the outbound-data guard,
the secret store and, for the encrypted file store only, its passphrase (`sensitive`: the client
keeps it in the OS's secure storage, never in its plain settings). Every optional setting has a
default (an empty string means "workbench's own default"), so no `${user_config.*}` is ever left
unsubstituted. Tokens of services are never settings here: they are connected on workbench's
local connect pages and kept in its secret store.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

PLATFORMS = ("darwin", "win32", "linux")

LONG_DESCRIPTION = (
    "workbench is one local MCP server with nine tools in front of a catalogue of about two hundred "
    "service tools (GitHub, Google, Slack, Notion, Linear, Jira and more, plus built-ins for time, data "
    "and files). The assistant searches the catalogue (`search_tools`), reads a tool's schema and runs "
    "tools in batches (`execute_tools`), so a conversation pays for nine tool definitions instead of "
    "hundreds. Accounts are connected on local pages in your browser; their tokens stay in your OS "
    "keychain (or workbench's encrypted file) and never reach the chat. Writes follow a safety policy "
    "(destructive actions ask you first by default) and data leaving your machine passes the "
    "outbound-data guard."
)

USER_CONFIG = {
    "files_dir": {
        "type": "directory",
        "title": "Files folder",
        "description": "The one folder workbench may read uploads from and save downloads to (nothing outside it, "
        "no hidden files). For example a new folder 'workbench-files' in your home folder.",
        "required": True,
    },
    "write_policy": {
        "type": "string",
        "title": "Default write policy",
        "description": "allow, confirm or read_only: what happens when the assistant changes something in a service. "
        "Leave empty for workbench's default (deletions and other destructive actions ask you first, other writes run).",
        "required": False,
        "default": "",
    },
    "flow_guard": {
        "type": "string",
        "title": "Outbound-data guard",
        "description": "guard, strict or off (WORKBENCH_FLOW). guard (recommended) holds a write for your approval "
        "when private data read in the session would go to someone outside your accounts; strict is stricter; off turns "
        "the guard off (the write policy still applies).",
        "required": False,
        "default": "guard",
    },
    "secret_store": {
        "type": "string",
        "title": "Secret store",
        "description": "keychain (your OS keychain: macOS Keychain, Windows Credential Manager, Linux Secret Service) or "
        "file (an encrypted file in workbench's data folder, for systems without a keychain). Leave empty for keychain.",
        "required": False,
        "default": "",
    },
    "vault_passphrase": {
        "type": "string",
        "title": "Passphrase of the encrypted file (file store only)",
        "description": "Only with the secret store 'file': the passphrase that encrypts it. Kept in your OS's secure "
        "storage by the client. Leave empty to type it on workbench's local unlock page instead.",
        "required": False,
        "sensitive": True,
        "default": "",
    },
}

ENV = {
    "WORKBENCH_FILES_DIR": "${user_config.files_dir}",
    "WORKBENCH_POLICY_DEFAULT": "${user_config.write_policy}",
    "WORKBENCH_FLOW": "${user_config.flow_guard}",
    "WORKBENCH_SECRET_STORE": "${user_config.secret_store}",
    "WORKBENCH_VAULT_PASSPHRASE": "${user_config.vault_passphrase}",
}


def first_sentence(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    s = m.group(1) if m else text
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def manifest(version: str, tools: list[dict], platforms: dict[str, str]) -> dict:
    default = "darwin" if "darwin" in platforms else next(iter(platforms))
    overrides = {p: {"command": "${__dirname}/" + path} for p, path in platforms.items() if p != default}
    mcp_config = {
        "command": "${__dirname}/" + platforms[default],
        "args": [],
        "env": ENV,
    }
    if overrides:
        mcp_config["platform_overrides"] = overrides
    return {
        "manifest_version": "0.2",
        "name": "workbench",
        "display_name": "workbench",
        "version": version,
        "description": "A local MCP tool gateway: nine tools in front of a catalogue of service integrations.",
        "long_description": LONG_DESCRIPTION,
        "author": {"name": "The workbench authors"},
        "icon": "icon.png",
        "server": {"type": "binary", "entry_point": platforms[default], "mcp_config": mcp_config},
        "tools": [{"name": t["name"], "description": first_sentence(t.get("description", ""))} for t in tools],
        "tools_generated": False,
        "keywords": ["mcp", "gateway", "tools", "integrations", "github", "google", "slack", "notion"],
        "license": "MIT OR Apache-2.0",
        "compatibility": {
            "claude_desktop": ">=0.10.0",
            "platforms": [p for p in PLATFORMS if p in platforms],
        },
        "user_config": USER_CONFIG,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", required=True)
    ap.add_argument("--tools", required=True, help="the server's tools/list result (JSON)")
    ap.add_argument("--platform", action="append", default=[], metavar="OS=PATH")
    a = ap.parse_args()
    platforms: dict[str, str] = {}
    for item in a.platform:
        os_, _, path = item.partition("=")
        if os_ not in PLATFORMS or not path or path.startswith("/") or ".." in path.split("/"):
            ap.error(f"--platform {item!r}: expected one of {', '.join(PLATFORMS)}=a relative path in the bundle")
        platforms[os_] = path
    if not platforms:
        ap.error("at least one --platform")
    with open(a.tools, encoding="utf-8") as f:
        tools = json.load(f)["tools"]
    if len(tools) != 9:
        ap.error(f"{a.tools}: expected the nine meta-tools, got {len(tools)}")
    json.dump(manifest(a.version, tools, platforms), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
