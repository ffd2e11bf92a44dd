#!/usr/bin/env python3
"""Builds tests/it/data/mcpbench/ from a checkout of Accenture/mcp-bench (Apache-2.0).

Usage: scripts/search-mcpbench-data.py <mcp-bench checkout> <out dir>

What it writes (data only, no code of theirs):
* tools.json: each of the benchmark's 28 MCP servers with its tools' names, descriptions and
  parameter names/types, read from the servers' sources the way their `tools/list` answers
  them (FastMCP: the function name and docstring; TypeScript/JS servers: the `name` and
  `description` literals of their tool definitions).
* tasks.json: the benchmark's task questions (`fuzzy_description`, the user-style question)
  with the tools its `task_description` / `dependency_analysis` name (the right tools), and
  single-step requests: each numbered step of a task description that names exactly one tool,
  with the tool's name taken out of the sentence.

The split is deterministic (a hash of the text): a third held out from all tuning.
"""
import ast, hashlib, json, re, sys
from pathlib import Path

SRC = Path(sys.argv[1])
OUT = Path(sys.argv[2])

def server_dirs():
    cmds = json.loads((SRC / "mcp_servers/commands.json").read_text())
    return {name: (SRC / "mcp_servers" / v["cwd"].replace("../", "")) for name, v in cmds.items()}

def py_tools(path: Path):
    out = []
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            attr = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if attr != "tool":
                continue
            name, desc = node.name, ast.get_docstring(node) or ""
            if call:
                for kw in call.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        name = kw.value.value
                    if kw.arg == "description" and isinstance(kw.value, ast.Constant):
                        desc = kw.value.value
            params = {}
            for a in node.args.args + node.args.kwonlyargs:
                if a.arg in ("self", "ctx", "context"):
                    continue
                t = ast.unparse(a.annotation) if a.annotation else ""
                kind = "integer" if "int" in t else "number" if "float" in t else "boolean" if "bool" in t else \
                    "array" if ("list" in t.lower() or "List" in t) else "object" if "dict" in t.lower() else "string"
                params[a.arg] = {"type": kind}
            out.append({"name": name, "description": desc.strip(), "params": params})
    # Low-level servers: types.Tool(name="x", description="y", inputSchema={...}); an enum's
    # member value stands for itself (TimeTools.GET_CURRENT_TIME.value).
    enums = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                    enums[f"{node.name}.{st.targets[0].id}.value"] = st.value.value
    def const(v):
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return v.value
        if isinstance(v, ast.JoinedStr):
            return "".join(x.value for x in v.values if isinstance(x, ast.Constant))
        return enums.get(ast.unparse(v))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Tool"):
            kw = {k.arg: k.value for k in node.keywords}
            name = const(kw["name"]) if "name" in kw else None
            if not name:
                continue
            params = {}
            schema = kw.get("inputSchema")
            if isinstance(schema, ast.Dict):
                for k, v in zip(schema.keys, schema.values):
                    if const(k) == "properties" and isinstance(v, ast.Dict):
                        params = {const(pk): {"type": "string"} for pk in v.keys if const(pk)}
            out.append({"name": name, "description": (const(kw.get("description")) or "").strip(), "params": params})
    return out

STR = r'(?:"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'|`((?:[^`\\]|\\.)*)`)'

def js_tools(path: Path):
    text = path.read_text(errors="replace")
    out = []
    # server.tool("name", "description", ...) / registerTool("name", { description: "..." })
    for m in re.finditer(r'\.(?:tool|registerTool)\(\s*' + STR + r'\s*,\s*(?:\{[^{}]*?description\s*:\s*)?' + STR, text, re.S):
        g = m.groups()
        out.append({"name": next(x for x in g[:3] if x is not None), "description": next((x for x in g[3:] if x is not None), ""), "params": {}})
    # { name: "x", description: "y" } objects
    for m in re.finditer(r'name\s*:\s*' + STR + r'\s*,\s*(?:title\s*:\s*' + STR + r'\s*,\s*)?description\s*:\s*' + STR, text, re.S):
        g = m.groups()
        out.append({"name": next(x for x in g[:3] if x is not None), "description": next((x for x in g[6:] if x is not None), ""), "params": {}})
    # One tool per file: const NAME = "x"; const DESCRIPTION = "y" / readonly name = 'x';
    # readonly description = 'a' + 'b'
    name = re.search(r'(?:const NAME\s*=|readonly name\s*(?::\s*string)?\s*=)\s*' + STR, text)
    desc = re.search(r'(?:const DESCRIPTION\s*=|readonly description\s*(?::\s*string)?\s*=)\s*(' + STR + r'(?:\s*\+\s*' + STR + r')*)', text, re.S)
    if name:
        d = "".join(next((x for x in g if x is not None), "") for g in re.findall(STR, desc.group(1))) if desc else ""
        params = {k: {"type": "string"} for k in re.findall(r'(\w+)\s*:\s*z\.', text)}
        out.append({"name": next(x for x in name.groups() if x is not None), "description": d, "params": params})
    return out

def unescape(s):
    return s.replace("\\n", "\n").replace('\\"', '"').replace("\\'", "'").replace("\\`", "`")

def listing(directory: Path):
    found = {}
    for p in sorted(directory.rglob("*")):
        if any(x in p.parts for x in ("node_modules", "tests", "test", "dist", "build", "__pycache__", "weather_agent")):
            continue
        tools = py_tools(p) if p.suffix == ".py" else js_tools(p) if p.suffix in (".ts", ".js") else []
        for t in tools:
            t["description"] = unescape(t["description"]).strip()
            if t["name"] not in found or len(t["description"]) > len(found[t["name"]]["description"]):
                found[t["name"]] = t
    return found

def slug(server):
    """The upstream server's name as a user would configure it: lower case, '_' for spaces."""
    return re.sub(r"[^a-z0-9]+", "_", server.lower()).strip("_")

def split_of(text):
    return "held-out" if int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3 == 0 else "dev"

def plain(name):
    """A name that is also an everyday word (add, max, search, fetch) counts only when written
    as a tool: Server:name, `name`, name(...), or after call/use/via."""
    return re.fullmatch(r"[a-z]+", name) is not None

def mentions(text, name, server):
    n = re.escape(name)
    if not plain(name):
        return re.search(r"(?<![\w-])" + n + r"(?![\w-])", text) is not None
    return re.search(r"(?:" + re.escape(server) + r"\s*:\s*|`|\b(?:call|calls|calling|use|using|via|run|invoke)\s+(?:the\s+)?)" + n + r"\b|\b" + n + r"(?:\(|`| tool\b)", text) is not None

def steps(description):
    """The numbered steps of a task description: '1. ... 2. ...' -> ['...', '...']."""
    parts = re.split(r"(?:^|\s)(?:Step\s*)?\d{1,2}[.)]\s+", description)
    return [p.strip() for p in parts[1:] if p.strip()]

def strip_tool(step, name, server):
    """The step as a request, without the tool's name: 'Use article_searcher to find X' -> 'find X'."""
    n = re.escape(name)
    s = re.sub(r"\b(?:[Uu]se|[Uu]sing|[Cc]all|[Cc]alling|[Ii]nvoke|[Rr]un)\s+(?:the\s+)?(?:" + re.escape(server) + r"\s*:\s*)?`?" + n + r"`?(?:\s+tool)?(?:\s*\([^)]*\))?\s*(?:to\s+|with\s+|for\s+|on\s+)?", "", step)
    s = re.sub(r"\s*\b(?:via|with|using|through|by calling)\s+(?:the\s+)?`?" + n + r"`?(?:\s+tool)?(?:\s*\([^)]*\))?", "", s)
    s = re.sub(r"\s*\(\s*`?" + n + r"`?\s*\)", "", s)
    s = re.sub(r"(?:" + re.escape(server) + r"\s*:\s*)?`?" + n + r"`?", "", s)
    s = re.sub(r"\(\s*\)|\bvia\s+(?=\(|$|[.,;])", "", s)
    s = re.sub(r"\s+", " ", s).strip(" ,;:-")
    return s[:1].upper() + s[1:] if s else s

# A single-step request starts with what it asks for; steps whose verb was the tool's name
# ("Call get_x for each id") are left out rather than guessed at.
VERBS = set("""search find look retrieve fetch get list convert calculate compute query obtain gather
collect check lookup pull identify resolve read download summarize summarise extract determine
perform run translate browse show display scan discover explore evaluate estimate compare measure
predict recommend analyze analyse generate create draw plot visualize visualise divide multiply add
subtract round sum average count request consult cast""".split())

def first_sentence(text):
    return re.split(r"(?<=[a-z0-9)\]\"”])[.;]\s+(?=[A-Z])", text, maxsplit=1)[0].rstrip(". ")

def is_request(text):
    words = text.split()
    if not 4 <= len(words) <= 45 or re.search(r"\bstep\s*\d", text, re.I):
        return False
    return words[0].lower().strip(",:") in VERBS

if __name__ == "__main__":
    dirs = server_dirs()
    servers = []
    for name, d in dirs.items():
        tools = listing(d)
        print(f"{name}: {len(tools)}", file=sys.stderr)
        servers.append({"server": slug(name), "title": name, "source": "mcp_servers/" + d.name,
                        "tools": [tools[k] for k in sorted(tools)]})
    by_title = {s["title"]: s for s in servers}
    multi, single = [], []
    seen = set()
    for f in ["mcpbench_tasks_single_runner_format.json", "mcpbench_tasks_multi_2server_runner_format.json",
              "mcpbench_tasks_multi_3server_runner_format.json"]:
        for group in json.loads((SRC / "tasks" / f).read_text())["server_tasks"]:
            titles = [t for t in group["server_name"].split("+")]
            for task in group["tasks"]:
                text = task["task_description"] + "\n" + task.get("dependency_analysis", "")
                expect = []
                for title in titles:
                    for tool in by_title[title]["tools"]:
                        if mentions(text, tool["name"], title):
                            expect.append(f"{slug(title)}_{tool['name']}")
                q = task["fuzzy_description"].strip()
                if expect and q not in seen:
                    seen.add(q)
                    multi.append({"id": task["task_id"], "q": q, "servers": [slug(t) for t in titles],
                                  "expect": sorted(set(expect)), "split": split_of(q)})
                for step in steps(task["task_description"]):
                    named = [(title, tool["name"]) for title in titles for tool in by_title[title]["tools"]
                             if mentions(step, tool["name"], title)]
                    if len(named) != 1:
                        continue
                    title, tool = named[0]
                    request = first_sentence(strip_tool(step, tool, title))
                    if not is_request(request) or request in seen:
                        continue
                    seen.add(request)
                    single.append({"id": task["task_id"], "q": request, "expect": [f"{slug(title)}_{tool}"],
                                   "split": split_of(request)})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "tools.json").write_text(json.dumps({"servers": servers}, indent=1, ensure_ascii=False) + "\n")
    (OUT / "tasks.json").write_text(json.dumps({"multi": multi, "single": single}, indent=1, ensure_ascii=False) + "\n")
    print(f"{sum(len(s['tools']) for s in servers)} tools, {len(multi)} multi-step, {len(single)} single-step", file=sys.stderr)
