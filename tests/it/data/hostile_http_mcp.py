"""A hostile upstream MCP server over Streamable HTTP for tests/it/hardening.rs (standard library
only): it listens on 127.0.0.1 (a free port, written to argv[1] once it listens), lists two tools
and answers `tools/call` densely: `dense` with one JSON answer, `dense_sse` with one server-sent
event, each holding `values` empty objects (under the 8 MiB a body or an event may hold, tens of
bytes each once parsed); `flood_sse` streams `values` bytes of one event that never ends; `asks`
answers with `values` requests of its own (`ping`) as events before its result; any other tool
answers with its arguments. GET (a stream the server
opens) is refused with 405, as the protocol allows."""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE = sys.argv[1]
TOOLS = [
    {"name": n, "description": f"Answers densely ({n}).", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"values": {"type": "integer"}}}}
    for n in ("dense", "dense_sse", "flood_sse", "asks", "echo")
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", kind="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        self.reply(405, b"")

    def do_DELETE(self):
        self.reply(200, b"")

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        method, mid = msg.get("method"), msg.get("id")
        if mid is None or method is None:
            self.reply(202, b"")
            return
        if method == "initialize":
            version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
            result = {"protocolVersion": version, "capabilities": {"tools": {}},
                      "serverInfo": {"name": "dense", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            params = msg.get("params", {})
            tool, args = params.get("name"), params.get("arguments") or {}
            if tool == "flood_sse":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                total, chunk = int(args.get("values", 1000)), b"x" * (1 << 20)
                try:
                    self.wfile.write(b"event: message\ndata: ")
                    while total > 0:
                        self.wfile.write(chunk[:total])
                        total -= len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True
                return
            if tool == "asks":
                events = "".join(
                    "event: message\ndata: %s\n\n" % json.dumps({"jsonrpc": "2.0", "id": f"s{k}", "method": "ping"})
                    for k in range(int(args.get("values", 1)))
                )
                done = {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "asked"}]}}
                events += "event: message\ndata: %s\n\n" % json.dumps(done)
                self.reply(200, events.encode(), "text/event-stream")
                return
            if tool in ("dense", "dense_sse"):
                objects = ",".join(["{}"] * int(args.get("values", 1000)))
                body = '{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":{"z":[%s]}}}' % (json.dumps(mid), objects)
                if tool == "dense":
                    self.reply(200, body.encode())
                else:
                    self.reply(200, ("event: message\ndata: " + body + "\n\n").encode(), "text/event-stream")
                return
            result = {"content": [{"type": "text", "text": json.dumps(args)}]}
        else:
            self.reply(200, json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}}).encode())
            return
        self.reply(200, json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
