// Turns the installed API descriptions (scripts/setup-contract-deps.sh) into one compact operation
// index on stdout: per provider, its operations as {method, path (template, from the host root),
// query/header {name: required}, body {types, props (null: any), required}, example}, and for
// Linear the object, input and argument types of its GraphQL schema (from the SDK's generated
// types). tests/it/contract.rs reads it; tests/contract/graphql-check.mjs uses the Linear part.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const deps = path.resolve(process.argv[2]);
const nm = path.join(deps, "node_modules");
const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const version = (pkg) => readJson(path.join(nm, pkg, "package.json")).version;

// ---------------------------------------------------------------- OpenAPI 3 (GitHub)

function openapi(spec, base) {
  const resolve = (o) => {
    let seen = 0;
    while (o && o.$ref && seen++ < 20) {
      o = o.$ref.slice(2).split("/").reduce((a, k) => a?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], spec);
    }
    return o;
  };
  const props = (schema, depth = 0) => {
    schema = resolve(schema);
    if (!schema || depth > 5) return { props: null, required: [] };
    for (const k of ["allOf", "oneOf", "anyOf"]) {
      if (Array.isArray(schema[k])) {
        const parts = schema[k].map((s) => props(s, depth + 1));
        if (parts.some((p) => p.props === null)) return { props: null, required: k === "allOf" ? parts.flatMap((p) => p.required) : [] };
        const all = [...new Set(parts.flatMap((p) => p.props))];
        // oneOf/anyOf: a field is required only when every alternative requires it.
        const required = k === "allOf" ? [...new Set(parts.flatMap((p) => p.required))]
          : parts.length ? parts[0].required.filter((r) => parts.every((p) => p.required.includes(r))) : [];
        return { props: all, required };
      }
    }
    if (schema.type && schema.type !== "object") return { props: null, required: [] };
    if (!schema.properties || schema.additionalProperties) return { props: null, required: schema.required || [] };
    return { props: Object.keys(schema.properties), required: schema.required || [] };
  };
  const ops = [];
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const method of ["get", "put", "post", "patch", "delete", "head"]) {
      const op = item[method];
      if (!op) continue;
      const query = {}, headers = {};
      let template = p;
      for (const prm of [...(item.parameters || []), ...(op.parameters || [])].map(resolve)) {
        if (prm.in === "query") query[prm.name] = !!prm.required;
        if (prm.in === "header") headers[prm.name.toLowerCase()] = !!prm.required;
        // GitHub marks path parameters that hold slashes (a ref like heads/main).
        if (prm.in === "path" && prm["x-multi-segment"]) template = template.replace(`{${prm.name}}`, `{+${prm.name}}`);
      }
      let body = null;
      const rb = resolve(op.requestBody);
      if (rb?.content) {
        const types = Object.keys(rb.content);
        const first = rb.content[types.find((t) => t.includes("json") || t.includes("form")) || types[0]];
        const { props: names, required } = props(first?.schema);
        body = { types, props: names, required, optional: !rb.required };
      }
      let example = null;
      const ok = resolve(op.responses?.["200"] || op.responses?.["201"]);
      const content = ok?.content?.["application/json"];
      if (content?.examples) {
        const first = resolve(Object.values(content.examples)[0]);
        example = first?.value ?? null;
      } else if (content?.example) example = content.example;
      ops.push({ id: op.operationId, method: method.toUpperCase(), path: base + template, query, headers, body, deprecated: !!op.deprecated, example });
    }
  }
  return ops;
}

// ---------------------------------------------------------------- Google discovery documents

function discovery(doc) {
  const root = "/" + doc.servicePath;
  const schemaProps = (ref) => {
    const s = ref && doc.schemas[ref];
    return s?.properties ? Object.keys(s.properties) : null;
  };
  const common = Object.keys(doc.parameters || {});
  const ops = [];
  const walk = (res) => {
    for (const m of Object.values(res.methods || {})) {
      const query = {};
      for (const c of common) query[c] = false;
      for (const [n, p] of Object.entries(m.parameters || {})) if (p.location === "query") query[n] = !!p.required;
      const body = m.request ? { types: ["application/json"], props: schemaProps(m.request.$ref), required: [], optional: false } : null;
      const paths = [root + (m.flatPath || m.path)];
      if (m.path !== m.flatPath && m.path && !m.path.includes("{+")) paths.push(root + m.path);
      for (const p of paths) ops.push({ id: m.id, method: m.httpMethod, path: p, query, headers: {}, body, deprecated: !!m.deprecated, example: null });
      const simple = m.mediaUpload?.protocols?.simple?.path;
      if (simple) {
        const q = { ...query, uploadType: true };
        const types = ["multipart/related", ...(m.mediaUpload.accept || [])];
        ops.push({ id: m.id + " (upload)", method: m.httpMethod, path: simple, query: q, headers: {}, body: { types, props: null, required: [], optional: false }, deprecated: false, example: null });
      }
    }
    for (const r of Object.values(res.resources || {})) walk(r);
  };
  walk(doc);
  return ops;
}

// ---------------------------------------------------------------- trello.js, jira.js, confluence.js

// The three are generated by one author from Trello's and Atlassian's OpenAPI files, all alike:
// `export async function <name>(client, parameters) { const config = { url, method, searchParams:
// {wire: parameters.x}, body: {wire: parameters.x} | parameters.x, ... } }`, and a zod schema per
// operation in parameters/<name>.d.ts whose non-optional members are the required parameters.
function generatedClient(pkgDir, prefix = "") {
  const dir = path.join(nm, pkgDir, "api");
  const ops = [];
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".js") && f !== "index.js")) {
    const js = fs.readFileSync(path.join(dir, f), "utf8");
    for (const m of js.matchAll(/export async function (\w+)\(client(?:, parameters)?\) \{(?:(?!export async function)[\s\S])*?const config = \{([\s\S]*?)\n    \};/g)) {
      const [, name, cfg] = m;
      const url = /url: [`'](.*?)[`'],/.exec(cfg)?.[1];
      const method = /method: '(\w+)'/.exec(cfg)?.[1];
      if (!url || !method) continue;
      const block = (key) => {
        const b = new RegExp(`\\n        ${key}: \\{([\\s\\S]*?)\\n        \\}`).exec(cfg);
        return b ? [...b[1].matchAll(/^\s*'?([\w$.\[\]-]+)'?: parameters\??\.(\w+)/gm)].map((x) => [x[1], x[2]]) : null;
      };
      // Required parameters: not z.ZodOptional in the operation's parameter schema.
      const pfile = path.join(nm, pkgDir, "parameters", name + ".d.ts");
      const pdts = fs.existsSync(pfile) ? fs.readFileSync(pfile, "utf8") : "";
      const required = new Set([...pdts.matchAll(/^\s{4}(\w+): z\.(?!ZodOptional)/gm)].map((x) => x[1]));
      const query = {};
      for (const [wire, param] of block("searchParams") || []) query[wire] = required.has(param);
      const bodyFields = block("body");
      // `body: parameters.x` (or FormData): a body whose members are not listed.
      const anyBody = !bodyFields && /\n        body: (?!undefined)/.test(cfg);
      const body = bodyFields ? { types: ["application/json"], props: bodyFields.map((b) => b[0]), required: bodyFields.filter((b) => required.has(b[1])).map((b) => b[0]), optional: true }
        : anyBody ? { types: ["application/json", "multipart/form-data"], props: null, required: [], optional: true } : null;
      const p = prefix + url.replace(/\$\{(?:encodeURIComponent\()?parameters\??\.(\w+)\)?\}/g, "{$1}");
      ops.push({ id: name, method, path: p, query, headers: {}, body, deprecated: false, example: null });
    }
  }
  return ops;
}
const trello = () => generatedClient("trello.js/dist", "/1");

// ---------------------------------------------------------------- Discord (discord-api-types' routes)

// Each route of `Routes` carries its methods in its JSDoc ("- GET `/channels/{channel.id}`"):
// methods and path templates only; the query and body types are not tied to a route.
function discord() {
  const js = fs.readFileSync(path.join(nm, "discord-api-types/rest/v10/index.js"), "utf8");
  const ops = [];
  for (const m of js.matchAll(/^\s*\*\s*- (GET|POST|PUT|PATCH|DELETE)\s+`([^`]+)`/gm)) {
    const p = "/api/v10" + m[2].replace(/\{[^}]+\}/g, (x) => x.replace(/[^{}\w]/g, "_"));
    ops.push({ id: m[1] + " " + m[2], method: m[1], path: p, query: { "*": false }, headers: {}, body: m[1] === "GET" ? null : { types: ["application/json", "multipart/form-data"], props: null, required: [], optional: true }, deprecated: false, example: null });
  }
  return ops;
}

// ---------------------------------------------------------------- Todoist (the SDK's requests)

// Each client method of @doist/todoist-sdk is one `request({ httpMethod, baseUri: this.syncApiBase
// (/api/v1/) | this.apiRootBase (/), relativePath: <expression over consts/endpoints.js> })`; the
// expression is evaluated with the SDK's own constants and path helpers, a path variable standing
// for itself as {name}. Methods and paths only: the payload's names are camelCase types the SDK
// converts, not a wire list.
async function todoist() {
  const dist = path.join(nm, "@doist/todoist-sdk/dist/esm");
  const consts = await import(path.join(dist, "consts/endpoints.js"));
  const generatePath = (...parts) => parts.join("/");
  const hole = (k) => `{${String(k)}}`;
  const args = new Proxy({}, { get: (_, k) => hole(k) });
  const scope = new Proxy({}, {
    has: () => true,
    get: (_, k) => (k === Symbol.unscopables ? undefined : k === "generatePath" ? generatePath : k === "args" ? args : k in consts ? consts[k] : hole(k)),
  });
  const files = [path.join(dist, "todoist-api.js"), ...fs.readdirSync(path.join(dist, "clients")).map((f) => path.join(dist, "clients", f))];
  const ops = [];
  for (const file of files.filter((f) => f.endsWith(".js"))) {
    const js = fs.readFileSync(file, "utf8");
    for (const m of js.matchAll(/httpMethod: '(\w+)',\s*baseUri: this\.(\w+),\s*relativePath: (.*),\n/g)) {
      const [, method, base, expr] = m;
      let rel;
      try {
        // eslint-disable-next-line no-new-func
        rel = new Function("scope", `with (scope) { return (${expr}); }`)(scope);
      } catch {
        continue;
      }
      if (typeof rel !== "string") continue;
      rel = rel.replace(/%7B(\w+)%7D/g, "{$1}").replace(/^\//, "");
      const p = (base === "syncApiBase" ? "/api/v1/" : "/") + rel;
      const body = method === "GET" ? null : { types: ["application/json", "multipart/form-data"], props: null, required: [], optional: true };
      ops.push({ id: `${path.basename(file, ".js")} ${method} ${rel}`, method, path: p, query: { "*": false }, headers: {}, body, deprecated: false, example: null });
    }
  }
  return ops;
}

// ---------------------------------------------------------------- Stripe (the SDK's resources)

// Stripe's SDK is generated from its OpenAPI: each resource method is one `_makeRequest('<METHOD>',
// `<path>`, ...)` in resources/<R>.js, typed `name(id, params?: <X>Params)` in resources/<R>.d.ts,
// whose `interface <X>Params` members are the operation's parameters (required: no `?`): query
// parameters on GET, form fields on POST and DELETE (Stripe's OpenAPI puts DELETE's in the body).
function stripe() {
  const dir = path.join(nm, "stripe/cjs/resources");
  const ops = [];
  const shared = {};
  const sharedDts = fs.readFileSync(path.join(nm, "stripe/cjs/shared.d.ts"), "utf8");
  for (const m of sharedDts.matchAll(/^export interface (\w+Params) \{\n([\s\S]*?)\n\}/gm)) {
    shared[m[1]] = [...m[2].matchAll(/^    (\w+)\??: /gm)].map((x) => x[1]);
  }
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.name.endsWith(".js")) resource(f);
    }
  };
  const resource = (file) => {
    const js = fs.readFileSync(file, "utf8");
    const dtsFile = file.replace(/\.js$/, ".d.ts");
    const dts = fs.existsSync(dtsFile) ? fs.readFileSync(dtsFile, "utf8") : "";
    const paramsOf = {};
    for (const m of dts.matchAll(/^    (\w+)\([^)]*?params\??: (\w+)/gm)) paramsOf[m[1]] = m[2];
    const members = (type) => {
      const block = new RegExp(`^export interface ${type}(?: extends (\\w+))? \\{\\n([\\s\\S]*?)\\n\\}`, "m").exec(dts);
      if (!block) return null;
      const own = [...block[2].matchAll(/^    (\w+)(\??): /gm)].map((x) => [x[1], !x[2]]);
      // List operations extend shared.d.ts's PaginationParams.
      const inherited = block[1] ? [...(shared[block[1]] || [])].map((n) => [n, false]) : [];
      return [...own, ...inherited];
    };
    for (const m of js.matchAll(/^    (\w+)\([^)]*\) \{\n\s*return this\._makeRequest\('(\w+)', [`'](.*?)[`']/gm)) {
      const [, name, method, url] = m;
      const p = url.replace(/\$\{encodeURIComponent\((\w+)\)\}/g, "{$1}");
      const names = paramsOf[name] ? members(paramsOf[name]) : [];
      const query = {};
      let body = null;
      if (method === "GET") for (const [n, r] of names || []) query[n] = r;
      else body = { types: ["application/x-www-form-urlencoded"], props: names ? names.map((n) => n[0]) : null, required: (names || []).filter((n) => n[1]).map((n) => n[0]), optional: true };
      ops.push({ id: path.basename(file, ".js") + "." + name, method, path: p, query, headers: {}, body, deprecated: false, example: null });
    }
  };
  walk(dir);
  return ops;
}

// ---------------------------------------------------------------- Linear (GraphQL types from the SDK)

function linear() {
  const dist = path.join(nm, "@linear/sdk/dist");
  const file = fs.readdirSync(dist).filter((f) => /^index-.*\.d\.mts$/.test(f)).map((f) => path.join(dist, f))
    .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
  const src = fs.readFileSync(file, "utf8");
  const types = {};
  const named = (t) => {
    // Scalars["String"] / Maybe<Team> / Array<Scalars["ID"]> / InputMaybe<Array<Scalars["String"]>> / Team
    const s = /Scalars\["(\w+)"\]/.exec(t);
    if (s) return s[1];
    const inner = t.replace(/\b(?:Maybe|InputMaybe|Array)</g, "").replace(/[<>;\s]/g, "");
    return inner.split("|")[0].replace(/\[\]$/, "");
  };
  for (const m of src.matchAll(/^type (\w+) = (?:[\w&\s]*&\s*)?\{\n([\s\S]*?)\n\};/gm)) {
    const [, name, bodyText] = m;
    const fields = {};
    let doc = "";
    for (const line of bodyText.split("\n")) {
      if (/^\s*(\/\*\*|\*)/.test(line)) { doc += line; continue; }
      const f = /^  (\w+)(\??): (.*);$/.exec(line);
      if (f && f[1] !== "__typename") {
        const dep = /@deprecated ([^*]*)/.exec(doc);
        fields[f[1]] = { type: named(f[3]), required: f[2] !== "?" && !/^(Maybe|InputMaybe)</.test(f[3]), deprecated: dep ? dep[1].trim() : null };
      }
      if (f || !/^\s*(\/\*\*|\*)/.test(line)) doc = "";
    }
    types[name] = fields;
  }
  const enums = [...src.matchAll(/^declare enum (\w+) \{/gm)].map((m) => m[1]);
  const scalars = [...src.matchAll(/^  (\w+): /gm)].length ? Object.keys(types.Scalars || {}) : [];
  return { source: path.relative(nm, file), types, enums, scalars };
}

// ---------------------------------------------------------------- Notion (the SDK's endpoint table)

function notion() {
  const require = createRequire(path.join(nm, "@notionhq/client/package.json"));
  const endpoints = require(path.join(nm, "@notionhq/client/build/src/api-endpoints.js"));
  const ops = [];
  for (const [name, e] of Object.entries(endpoints)) {
    if (!e || typeof e.path !== "function" || !e.method) continue;
    const params = Object.fromEntries((e.pathParams || []).map((p) => [p, `{${p}}`]));
    const query = Object.fromEntries((e.queryParams || []).map((q) => [q, false]));
    const body = (e.bodyParams || []).length ? { types: ["application/json"], props: e.bodyParams, required: [], optional: true } : null;
    ops.push({ id: name, method: e.method.toUpperCase(), path: "/v1/" + e.path(params), query, headers: { "notion-version": true }, body, deprecated: false, example: null });
  }
  return ops;
}

// ---------------------------------------------------------------- Slack (the SDK's method list)

function slack() {
  const js = fs.readFileSync(path.join(nm, "@slack/web-api/dist/methods.js"), "utf8");
  const names = [...new Set([...js.matchAll(/bindApiCall(?:WithOptionalArgument)?\(this, '([\w.]+)'\)/g)].map((m) => m[1]))];
  const body = { types: ["application/x-www-form-urlencoded", "application/json", "multipart/form-data"], props: null, required: [], optional: true };
  // Every Web API method takes its arguments as form fields, JSON or query parameters: names are
  // not checked ("*"), the method is.
  return names.flatMap((n) => ["GET", "POST"].map((method) => ({ id: n, method, path: "/api/" + n, query: { "*": false }, headers: {}, body: method === "POST" ? body : null, deprecated: false, example: null })));
}

// ---------------------------------------------------------------- Asana (its generated client)

function asana() {
  const dir = path.join(nm, "asana/src/api");
  const ops = [];
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith("Api.js"))) {
    const js = fs.readFileSync(path.join(dir, f), "utf8");
    // One JSDoc + `<name>WithHttpInfo(...) { ... callApi('<path>', '<METHOD>', ...` per operation.
    for (const m of js.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(\w+)WithHttpInfo\(([^)]*)\) \{([\s\S]*?)callApi\(\s*'([^']+)', '(\w+)'/g)) {
      const [, doc, name, , body, p, method] = m;
      const query = {};
      for (const q of doc.matchAll(/@param \{[^}]*\} opts\.(\S+)/g)) query[q[1]] = false;
      const literal = /let queryParams = \{([\s\S]*?)\};/.exec(body);
      for (const q of (literal?.[1] || "").matchAll(/'([^']+)': /g)) query[q[1]] = true;
      const hasBody = /let postBody = body;/.test(body);
      const form = /formParams = \{\s*'/.test(body);
      const bodySpec = hasBody ? { types: ["application/json"], props: ["data"], required: ["data"], optional: false }
        : form ? { types: ["multipart/form-data"], props: null, required: [], optional: false } : null;
      ops.push({ id: name, method, path: "/api/1.0" + p, query, headers: {}, body: bodySpec, deprecated: false, example: null });
    }
  }
  return ops;
}

// ---------------------------------------------------------------- HubSpot (its generated clients)

function hubspot() {
  const root = path.join(nm, "@hubspot/api-client/lib/codegen");
  const ops = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (path.basename(dir) === "apis" && e.name.endsWith("Api.js") && e.name !== "baseapi.js") api(p);
    }
  };
  const modelProps = (apiFile, type) => {
    const f = path.join(path.dirname(apiFile), "../models", type + ".js");
    if (!fs.existsSync(f)) return null;
    return [...fs.readFileSync(f, "utf8").matchAll(/"baseName": "([^"]+)"/g)].map((m) => m[1]);
  };
  const api = (file) => {
    const js = fs.readFileSync(file, "utf8");
    // Request factories only (the response processors below them have no localVarPath).
    for (const chunk of js.split("const localVarPath = '").slice(1)) {
      const p = chunk.slice(0, chunk.indexOf("'"));
      const method = /HttpMethod\.(\w+)/.exec(chunk)?.[1];
      if (!method) continue;
      const end = chunk.indexOf("return requestContext;");
      const body = end > 0 ? chunk.slice(0, end) : chunk;
      const query = {};
      for (const q of body.matchAll(/(?:append|set)QueryParam\("([^"]+)"/g)) query[q[1]] = false;
      const type = /ObjectSerializer\.serialize\(\w+, "([\w<>]+)", ""\), contentType\)/.exec(body)?.[1];
      const bodySpec = type ? { types: ["application/json"], props: /^\w+$/.test(type) ? modelProps(file, type) : null, required: [], optional: false } : null;
      ops.push({ id: path.basename(file, ".js") + " " + p, method, path: p, query, headers: {}, body: bodySpec, deprecated: false, example: null });
    }
  };
  walk(root);
  return ops;
}

// ---------------------------------------------------------------- Sentry (its generated client)

function sentry() {
  const dist = path.join(nm, "@sentry/api/dist");
  const js = fs.readFileSync(path.join(dist, "index.js"), "utf8");
  const types = fs.readFileSync(path.join(dist, "types.gen.d.ts"), "utf8").split("\n");
  const norm = (n) => n.toLowerCase().replace(/[^a-z0-9]/g, "");
  // <Name>Data blocks: the members of `body` and `query` (8-space indented), required without `?`.
  const data = {};
  for (let i = 0; i < types.length; i++) {
    const m = /^export type (\w+)Data = \{$/.exec(types[i]);
    if (!m) continue;
    const entry = { body: null, query: null };
    let part = null;
    for (i++; i < types.length && types[i] !== "};"; i++) {
      const top = /^ {4}(body|query|path|headers|url)(\??): (.*)$/.exec(types[i]);
      if (top) {
        part = top[3].startsWith("{") && !top[3].startsWith("{}") ? top[1] : null;
        if (part === "body" || part === "query") entry[part] = { names: [], required: [], optional: top[2] === "?" };
        continue;
      }
      const member = /^ {8}'?([\w.\[\]-]+)'?(\??): /.exec(types[i]);
      if (member && (part === "body" || part === "query")) {
        entry[part].names.push(member[1]);
        if (!member[2]) entry[part].required.push(member[1]);
      }
    }
    data[norm(m[1])] = entry;
  }
  const ops = [];
  for (const m of js.matchAll(/var (\w+) = \(options\) => \(options\.client \?\? client\)\.(get|put|post|delete|patch)\(\{([\s\S]*?)\n\}\);/g)) {
    const [, name, method, cfg] = m;
    const url = /url: "([^"]+)"/.exec(cfg)?.[1];
    if (!url) continue;
    const d = data[norm(name)] || { body: null, query: null };
    const query = Object.fromEntries((d.query?.names || []).map((q) => [q, (d.query.required || []).includes(q) && !d.query.optional]));
    const body = d.body ? { types: [/formData/.test(cfg) ? "multipart/form-data" : "application/json"], props: d.body.names, required: d.body.required, optional: d.body.optional } : null;
    ops.push({ id: name, method: method.toUpperCase(), path: url, query, headers: {}, body, deprecated: false, example: null });
  }
  return ops;
}

const octokit = path.join(nm, "@octokit/openapi/generated/api.github.com.json");
const google = (doc) => discovery(readJson(path.join(deps, "google", doc + ".json")));
const gwheel = "google-api-python-client 2.202.0";
const providers = {
  github: { description: `@octokit/openapi ${version("@octokit/openapi")} (api.github.com.json)`, integrations: ["github"], ops: openapi(readJson(octokit), "") },
  gmail: { description: `${gwheel} (gmail.v1 discovery document)`, integrations: ["gmail"], ops: google("gmail.v1") },
  google_drive: { description: `${gwheel} (drive.v3 discovery document)`, integrations: ["google_drive"], ops: google("drive.v3") },
  google_sheets: { description: `${gwheel} (sheets.v4 discovery document)`, integrations: ["google_sheets"], ops: google("sheets.v4") },
  google_calendar: { description: `${gwheel} (calendar.v3 discovery document)`, integrations: ["google_calendar"], ops: google("calendar.v3") },
  trello: { description: `trello.js ${version("trello.js")} (its generated operation list; third-party, from Trello's OpenAPI)`, integrations: ["trello"], ops: trello() },
  notion: { description: `@notionhq/client ${version("@notionhq/client")} (its endpoint table: path, query and body parameter names)`, integrations: ["notion"], ops: notion() },
  slack: { description: `@slack/web-api ${version("@slack/web-api")} (its Web API method list; argument names not checked)`, integrations: ["slack"], ops: slack() },
  asana: { description: `asana ${version("asana")} (its client generated from Asana's OpenAPI: paths, query names, the data envelope)`, integrations: ["asana"], ops: asana() },
  hubspot: { description: `@hubspot/api-client ${version("@hubspot/api-client")} (its clients generated from HubSpot's OpenAPI: paths, query names, body properties)`, integrations: ["hubspot"], ops: hubspot() },
  jira: { description: `jira.js ${version("jira.js")} (its generated cloud and agile clients; third-party, from Atlassian's OpenAPI)`, integrations: ["jira"], ops: [...generatedClient("jira.js/dist/cloud"), ...generatedClient("jira.js/dist/agile")] },
  confluence: { description: `confluence.js ${version("confluence.js")} (its generated v1 and v2 clients; third-party, from Atlassian's OpenAPI)`, integrations: ["confluence"], ops: [...generatedClient("confluence.js/dist/v1"), ...generatedClient("confluence.js/dist/v2")] },
  discord: { description: `discord-api-types ${version("discord-api-types")} (its v10 route list: methods and paths only)`, integrations: ["discord"], ops: discord() },
  todoist: { description: `@doist/todoist-sdk ${version("@doist/todoist-sdk")} (its client's requests: methods and paths only)`, integrations: ["todoist"], ops: await todoist() },
  stripe: { description: `stripe ${version("stripe")} (its resources generated from Stripe's OpenAPI: methods, paths, parameter names)`, integrations: ["stripe"], ops: stripe() },
  sentry: { description: `@sentry/api ${version("@sentry/api")} (its client generated from Sentry's OpenAPI)`, integrations: ["sentry"], ops: sentry() },
  linear: { description: `@linear/sdk ${version("@linear/sdk")} (its generated schema types)`, integrations: ["linear"], ops: [{ id: "graphql", method: "POST", path: "/graphql", query: {}, headers: {}, body: { types: ["application/json"], props: ["query", "variables", "operationName"], required: ["query"], optional: false }, deprecated: false, example: null }], graphql: linear() },
};
process.stdout.write(JSON.stringify({ providers }));
