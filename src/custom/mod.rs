//! Custom apps: declarative HTTP apps the user defines (a base URL, an auth scheme whose secret
//! parts are `{{vault:NAME}}` refs, and operations). Each operation becomes a real tool in the
//! registry: searchable, described by get_tool_schema and run by execute_tools with the same
//! validation, audit, scrubbing and caps as a plugin tool.
//!
//! Requests go through the engine's one send path (`send::deliver`): the address guard
//! (a private or loopback base URL only if the user listed its origin in `private_hosts`), the
//! app's own rate-limit budget (`custom:<name>`), 429 handling and the body cap.
//!
//! Definitions live in SQLite (`custom_app`) with a generation counter that every change bumps;
//! `App::registry()` compares it on use, so an app created by another workbench process shows up
//! without a restart. A definition is checked whole before it is stored: every problem is listed.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use plugins::api::{ArgProblem, Effect, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::error::ToolFailure;
use crate::secrets::Secret;
use crate::template;

/// Most operations one app may define.
pub const MAX_OPERATIONS: usize = 50;
/// A custom app's request budget unless the user sets `WORKBENCH_<APP>_RATE_LIMIT`.
pub const CUSTOM_RATE_LIMIT: plugins::api::RateLimit = plugins::api::RateLimit { requests: 10, per_seconds: 1 };
/// Longest tool name (portable to strict clients).
const MAX_TOOL_NAME: usize = 64;

/// A custom app as the agent defines it (the `custom_create_app` arguments).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppDef {
    /// The app's name: 2-30 lowercase letters and digits, starting with a letter (e.g. "acme").
    /// Its tools are named `<name>_<verb>_<object>`.
    pub name: String,
    /// What the service is, in a sentence (indexed by search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The API's base URL, http or https, e.g. "https://api.acme.com/v2". Operation paths are
    /// appended to it.
    pub base_url: String,
    /// How requests authenticate; secret parts must be `{{vault:NAME}}` refs. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthDef>,
    /// Extra headers sent with every request (values may contain `{{vault:NAME}}` refs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The operations; each becomes one tool.
    pub operations: Vec<OperationDef>,
}

/// The auth scheme: `none`; `bearer` (token); `header` (name, value); `basic` (username,
/// password); `query` (name, value).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthDef {
    /// One of none, bearer, header, basic, query.
    #[serde(rename = "type")]
    pub kind: AuthScheme,
    /// bearer: the token, as a vault ref, e.g. "{{vault:ACME_TOKEN}}".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// header/query: the header or query parameter name, e.g. "X-Api-Key".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// header/query: the value, containing a vault ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// basic: the user name (plain text or a vault ref).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// basic: the password, as a vault ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthScheme {
    None,
    Bearer,
    Header,
    Basic,
    Query,
}

/// One operation: one HTTP request shape, one tool.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationDef {
    /// The tool's name: `<app>_<verb>_<object>`, lowercase, e.g. "acme_list_invoices".
    pub tool_name: String,
    /// GET, POST, PUT, PATCH or DELETE.
    pub method: String,
    /// Path under base_url, starting with "/"; `{param}` placeholders are filled from the
    /// arguments (each must be a required parameter), e.g. "/invoices/{invoice_id}".
    pub path: String,
    /// What the tool does, for the agent (indexed by search).
    pub description: String,
    /// JSON Schema of the arguments: an object schema with `properties` and `required`.
    /// Arguments not used by the path or the body template go in the query string (GET,
    /// DELETE) or the JSON body (POST, PUT, PATCH without a body template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Optional JSON body template: a string that is exactly "{{param}}" becomes that
    /// argument's value; "{{param}}" inside a longer string is replaced by its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// Whether the operation changes anything. Every method but GET always counts as a change;
    /// set true to mark a GET that changes something too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutating: Option<bool>,
}

/// A checked operation, ready to run.
#[derive(Debug)]
pub struct Operation {
    pub app: Arc<CheckedApp>,
    pub tool_name: String,
    pub method: reqwest::Method,
    pub path: String,
    pub path_params: Vec<String>,
    pub body: Option<Value>,
    pub body_params: Vec<String>,
    pub schema: Value,
    pub effect: Effect,
    pub description: String,
}

/// A checked app: what its operations share.
#[derive(Debug)]
pub struct CheckedApp {
    pub def: AppDef,
    /// The base URL without a trailing slash.
    pub base_url: String,
    /// The host every request of this app goes to.
    pub host: String,
    /// The origin every request of this app goes to (vault refs must allow it): scheme, host, port.
    pub origin: String,
}

/// Names that are not free for custom apps and their tools.
pub struct ReservedNames<'a> {
    /// Catalogue integrations and built-in namespaces (and meta-tool names).
    pub namespaces: &'a dyn Fn(&str) -> bool,
    /// Catalogue and built-in tool names.
    pub tools: &'a dyn Fn(&str) -> bool,
}

fn problem(path: impl Into<String>, text: impl Into<String>) -> ArgProblem {
    ArgProblem { path: path.into(), problem: text.into() }
}

/// Checks a definition whole; every problem is listed with its path.
pub fn check(def: &AppDef, taken: &ReservedNames<'_>) -> Result<Vec<Operation>, Vec<ArgProblem>> {
    let mut problems = Vec::new();
    let name_ok = def.name.len() >= 2
        && def.name.len() <= 30
        && def.name.starts_with(|c: char| c.is_ascii_lowercase())
        && def.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !name_ok {
        problems
            .push(problem("/name", "use 2-30 lowercase letters and digits, starting with a letter (no '_' or '-')"));
    } else if (taken.namespaces)(&def.name) {
        problems.push(problem(
            "/name",
            format!("'{}' is the name of a built-in integration or namespace; choose another", def.name),
        ));
    }
    if let Some(d) = &def.description
        && d.chars().count() > 1000
    {
        problems.push(problem("/description", "at most 1000 characters"));
    }
    let (base_url, host, origin) = match check_base_url(&def.base_url) {
        Ok(v) => v,
        Err(p) => {
            problems.push(problem("/base_url", p.to_string()));
            (String::new(), String::new(), String::new())
        }
    };
    check_auth(def.auth.as_ref(), &mut problems);
    for (k, v) in &def.headers {
        let path = format!("/headers/{k}");
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)) {
            problems.push(problem(&path, "not a valid header name"));
        }
        if matches!(k.to_ascii_lowercase().as_str(), "host" | "content-length" | "transfer-encoding" | "connection") {
            problems.push(problem(&path, "workbench sets this header itself"));
        }
        if v.contains(['\r', '\n']) {
            problems.push(problem(&path, "header values cannot contain line breaks"));
        }
        if let Err(f) = template::vault_names(&Value::String(v.clone())) {
            problems.push(problem(&path, f.message));
        }
    }
    if def.operations.is_empty() {
        problems.push(problem("/operations", "needs at least 1 operation"));
    }
    if def.operations.len() > MAX_OPERATIONS {
        problems.push(problem("/operations", format!("at most {MAX_OPERATIONS} operations")));
    }
    let mut seen = HashSet::new();
    let mut checked = Vec::new();
    for (i, op) in def.operations.iter().enumerate() {
        if let Some(op) = check_operation(def, i, op, taken, &mut seen, &mut problems) {
            checked.push(op);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let app = Arc::new(CheckedApp { def: def.clone(), base_url, host, origin });
    Ok(checked
        .into_iter()
        .map(|(op, def)| Operation { app: app.clone(), description: def.description.trim().to_string(), ..op })
        .collect())
}

/// Why a custom app's `base_url` is refused (the problem text the agent sees).
#[derive(Debug, thiserror::Error)]
enum BaseUrlError {
    #[error("not a URL ({0})")]
    NotUrl(#[source] <reqwest::Url as std::str::FromStr>::Err),
    #[error("use http or https, not {0}")]
    Scheme(String),
    #[error("no user name or password in the URL; use auth with vault refs")]
    UserInfo,
    #[error("no query string or fragment in base_url; operations add their own")]
    Query,
    #[error("the URL has no host")]
    NoHost,
}

fn check_base_url(raw: &str) -> Result<(String, String, String), BaseUrlError> {
    let url = reqwest::Url::parse(raw.trim()).map_err(BaseUrlError::NotUrl)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(BaseUrlError::Scheme(url.scheme().to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(BaseUrlError::UserInfo);
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(BaseUrlError::Query);
    }
    let host = url.host_str().ok_or(BaseUrlError::NoHost)?.to_ascii_lowercase();
    let origin = crate::net::Origin::of(&url).ok_or(BaseUrlError::NoHost)?.to_string();
    Ok((url.as_str().trim_end_matches('/').to_string(), host, origin))
}

fn check_auth(auth: Option<&AuthDef>, problems: &mut Vec<ArgProblem>) {
    let Some(auth) = auth else { return };
    let secret = |field: &str, value: &Option<String>, problems: &mut Vec<ArgProblem>| {
        let path = format!("/auth/{field}");
        match value {
            None => problems.push(problem(path, format!("{:?} auth needs {field}", auth.kind).to_lowercase())),
            Some(v) => match template::vault_names(&Value::String(v.clone())) {
                Err(f) => problems.push(problem(path, f.message)),
                Ok(names) if names.is_empty() => problems.push(problem(
                    path,
                    "must be a {{vault:NAME}} ref, never the secret itself: store it with vault_set_secret first",
                )),
                Ok(_) => {}
            },
        }
    };
    let plain = |field: &str, value: &Option<String>, problems: &mut Vec<ArgProblem>| {
        if value.as_deref().is_none_or(|v| v.trim().is_empty()) {
            problems
                .push(problem(format!("/auth/{field}"), format!("{:?} auth needs {field}", auth.kind).to_lowercase()));
        }
    };
    let unused = |fields: &[(&str, &Option<String>)], problems: &mut Vec<ArgProblem>| {
        for (f, v) in fields {
            if v.is_some() {
                problems
                    .push(problem(format!("/auth/{f}"), format!("not used by {:?} auth", auth.kind).to_lowercase()));
            }
        }
    };
    match auth.kind {
        AuthScheme::None => unused(
            &[
                ("token", &auth.token),
                ("name", &auth.name),
                ("value", &auth.value),
                ("username", &auth.username),
                ("password", &auth.password),
            ],
            problems,
        ),
        AuthScheme::Bearer => {
            secret("token", &auth.token, problems);
            unused(
                &[
                    ("name", &auth.name),
                    ("value", &auth.value),
                    ("username", &auth.username),
                    ("password", &auth.password),
                ],
                problems,
            );
        }
        AuthScheme::Header | AuthScheme::Query => {
            plain("name", &auth.name, problems);
            if let Some(n) = &auth.name
                && (n.contains(['\r', '\n', ':', ' ']) || n.is_empty())
            {
                problems.push(problem("/auth/name", "not a valid name"));
            }
            secret("value", &auth.value, problems);
            unused(&[("token", &auth.token), ("username", &auth.username), ("password", &auth.password)], problems);
        }
        AuthScheme::Basic => {
            plain("username", &auth.username, problems);
            secret("password", &auth.password, problems);
            unused(&[("token", &auth.token), ("name", &auth.name), ("value", &auth.value)], problems);
        }
    }
}

type Checked = (Operation, OperationDef);

fn check_operation(
    app: &AppDef,
    i: usize,
    op: &OperationDef,
    taken: &ReservedNames<'_>,
    seen: &mut HashSet<String>,
    problems: &mut Vec<ArgProblem>,
) -> Option<Checked> {
    let at = |field: &str| format!("/operations/{i}/{field}");
    let before = problems.len();
    let name = &op.tool_name;
    let shape_ok = !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.contains("__")
        && !name.ends_with('_');
    let prefix = format!("{}_", app.name);
    if !shape_ok {
        problems.push(problem(at("tool_name"), "use lowercase letters, digits and single '_' (at most 64 characters)"));
    } else if !name.starts_with(&prefix) || name[prefix.len()..].split('_').count() < 2 {
        problems.push(problem(at("tool_name"), format!("name it {prefix}<verb>_<object>, e.g. {prefix}list_items")));
    } else if (taken.tools)(name) {
        problems.push(problem(at("tool_name"), format!("'{name}' is already a catalogue or built-in tool")));
    } else if !seen.insert(name.clone()) {
        problems.push(problem(at("tool_name"), format!("'{name}' is used by two operations")));
    }
    let method = op.method.trim().to_ascii_uppercase();
    let method = match method.as_str() {
        "GET" | "POST" | "PUT" | "PATCH" | "DELETE" => reqwest::Method::from_bytes(method.as_bytes()).ok(),
        _ => {
            problems.push(problem(at("method"), "use GET, POST, PUT, PATCH or DELETE"));
            None
        }
    };
    let description = op.description.trim();
    if description.is_empty() {
        problems.push(problem(at("description"), "say what the operation does; the agent finds tools by it"));
    } else if description.chars().count() > 1000 {
        problems.push(problem(at("description"), "at most 1000 characters"));
    }

    // The parameters' schema: an object schema within the subset the validator understands.
    let mut schema = op.params.clone().unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
    let mut properties: Map<String, Value> = Map::new();
    let mut required: Vec<String> = Vec::new();
    match &mut schema {
        Value::Object(root) => {
            match root.get("type") {
                None => {
                    root.insert("type".into(), json!("object"));
                }
                Some(t) if t == "object" => {}
                Some(_) => problems.push(problem(at("params/type"), "the parameters schema must have type \"object\"")),
            }
            match root.get("properties") {
                None => {
                    root.insert("properties".into(), json!({}));
                }
                Some(Value::Object(p)) => properties = p.clone(),
                Some(_) => problems.push(problem(at("params/properties"), "must be an object of parameter schemas")),
            }
            match root.get("required") {
                None => {}
                Some(Value::Array(r)) if r.iter().all(Value::is_string) => {
                    required = r.iter().filter_map(Value::as_str).map(str::to_string).collect();
                    for r in &required {
                        if !properties.contains_key(r) {
                            problems.push(problem(
                                at("params/required"),
                                format!("'{r}' is required but not in properties"),
                            ));
                        }
                    }
                }
                Some(_) => problems.push(problem(at("params/required"), "must be an array of parameter names")),
            }
            root.entry("additionalProperties").or_insert(Value::Bool(false));
            let mut unknown = Vec::new();
            unsupported_keywords(&Value::Object(root.clone()), "", &mut unknown);
            for (path, key) in unknown {
                problems.push(problem(
                    at(&format!("params{path}")),
                    format!(
                        "keyword '{key}' is not supported; use only {}",
                        plugins::schema::SUPPORTED_KEYWORDS.join(", ")
                    ),
                ));
            }
            for p in properties.keys() {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                    problems.push(problem(
                        at(&format!("params/properties/{p}")),
                        "use letters, digits and '_' in parameter names",
                    ));
                }
            }
        }
        _ => problems.push(problem(at("params"), "must be a JSON Schema object")),
    }

    // Path: placeholders name required parameters; nothing that could leave base_url.
    let mut path_params = Vec::new();
    if !op.path.starts_with('/') {
        problems.push(problem(at("path"), "start the path with '/'"));
    }
    if op.path.contains(['?', '#', '\\'])
        || op.path.contains("://")
        || op.path.split('/').any(|s| s == ".." || s == ".")
    {
        problems.push(problem(
            at("path"),
            "no '?', '#', '\\', '..' or absolute URLs in the path; parameters fill the query",
        ));
    }
    let mut rest = op.path.as_str();
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            problems.push(problem(at("path"), "a '{' without its '}'"));
            break;
        };
        let p = &rest[start + 1..start + len];
        if !properties.contains_key(p) || !required.iter().any(|r| r == p) {
            problems.push(problem(at("path"), format!("placeholder {{{p}}} must be a required parameter in params")));
        }
        path_params.push(p.to_string());
        rest = &rest[start + len + 1..];
    }
    if rest.contains('}') {
        problems.push(problem(at("path"), "a '}' without its '{'"));
    }

    // Body template: only for methods with a body; refs name parameters.
    let mut body_params = Vec::new();
    if let Some(body) = &op.body {
        if matches!(method, Some(ref m) if *m == reqwest::Method::GET || *m == reqwest::Method::DELETE) {
            problems.push(problem(at("body"), "GET and DELETE operations send no body"));
        }
        collect_body_refs(body, &mut body_params);
        for p in &body_params {
            if !properties.contains_key(p) {
                problems.push(problem(at("body"), format!("{{{{{p}}}}} is not a parameter in params")));
            }
        }
        if template::mentions_step(body) || template::vault_names(body).map(|v| !v.is_empty()).unwrap_or(true) {
            problems.push(problem(at("body"), "body templates cannot hold {{step:...}} or {{vault:...}} refs"));
        }
    }

    if problems.len() > before {
        return None;
    }
    let method = method?;
    // Whether an operation changes anything follows from its method: only GET is a read. A
    // definition may mark a GET as mutating, never lower a write to a read.
    let mutating = op.mutating.unwrap_or(false) || method != reqwest::Method::GET;
    let effect = match (mutating, method == reqwest::Method::DELETE) {
        (false, _) => Effect::Read,
        (true, true) => Effect::Destructive,
        (true, false) => Effect::Write,
    };
    if let Value::Object(root) = &mut schema {
        root.entry("properties").or_insert_with(|| json!({}));
    }
    Some((
        Operation {
            app: Arc::new(CheckedApp {
                def: app.clone(),
                base_url: String::new(),
                host: String::new(),
                origin: String::new(),
            }),
            tool_name: name.clone(),
            method,
            path: op.path.clone(),
            path_params,
            body: op.body.clone(),
            body_params,
            schema,
            effect,
            description: String::new(),
        },
        op.clone(),
    ))
}

fn unsupported_keywords(schema: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let Value::Object(map) = schema else { return };
    for (k, v) in map {
        if !plugins::schema::SUPPORTED_KEYWORDS.contains(&k.as_str()) {
            out.push((path.to_string(), k.clone()));
            continue;
        }
        match k.as_str() {
            "properties" => {
                if let Value::Object(props) = v {
                    for (name, sub) in props {
                        unsupported_keywords(sub, &format!("{path}/properties/{name}"), out);
                    }
                }
            }
            "items" | "additionalProperties" => unsupported_keywords(v, &format!("{path}/{k}"), out),
            "anyOf" | "oneOf" | "allOf" => {
                if let Value::Array(subs) = v {
                    for (i, sub) in subs.iter().enumerate() {
                        unsupported_keywords(sub, &format!("{path}/{k}/{i}"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `{{name}}` refs of a body template (not step or vault refs).
fn collect_body_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{") {
                let Some(len) = rest[start..].find("}}") else { break };
                let name = rest[start + 2..start + len].trim();
                if !name.contains(':') && !out.iter().any(|o| o == name) {
                    out.push(name.to_string());
                }
                rest = &rest[start + len + 2..];
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_body_refs(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_body_refs(x, out)),
        _ => {}
    }
}

fn fill_body(v: &Value, args: &Map<String, Value>) -> Value {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if let Some(name) = t.strip_prefix("{{").and_then(|r| r.strip_suffix("}}"))
                && !name.contains("{{")
                && !name.contains(':')
            {
                return args.get(name.trim()).cloned().unwrap_or(Value::Null);
            }
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{") {
                let Some(len) = rest[start..].find("}}") else { break };
                out.push_str(&rest[..start]);
                let name = rest[start + 2..start + len].trim();
                match args.get(name) {
                    Some(Value::String(x)) => out.push_str(x),
                    Some(Value::Null) | None => {}
                    Some(other) => out.push_str(&other.to_string()),
                }
                rest = &rest[start + len + 2..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill_body(x, args)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), fill_body(x, args))).collect()),
        other => other.clone(),
    }
}

pub use crate::ids::intern;

/// The custom apps as loaded from SQLite: checked operations, plus apps that no longer check
/// (a catalogue tool took their name in an upgrade) with their problems.
#[derive(Default)]
pub struct Loaded {
    pub generation: i64,
    pub apps: Vec<LoadedApp>,
}

pub struct LoadedApp {
    pub name: String,
    pub def: Option<AppDef>,
    pub operations: Vec<Arc<Operation>>,
    pub problems: Vec<ArgProblem>,
    pub created_at: String,
    pub updated_at: String,
}

/// Reads and checks every stored app.
pub fn load(
    storage: &crate::storage::Storage,
    taken: &ReservedNames<'_>,
) -> Result<Loaded, crate::storage::StorageError> {
    let (generation, rows) = storage.custom_apps()?;
    let apps = rows
        .into_iter()
        .map(|row| {
            let parsed: Result<AppDef, _> = serde_json::from_str(&row.definition);
            let (def, operations, problems) = match parsed {
                Err(e) => (None, Vec::new(), vec![problem("", format!("the stored definition no longer parses: {e}"))]),
                Ok(def) => match check(&def, taken) {
                    Ok(ops) => (Some(def), ops.into_iter().map(Arc::new).collect(), Vec::new()),
                    Err(p) => (Some(def), Vec::new(), p),
                },
            };
            if !problems.is_empty() {
                tracing::warn!(app = row.name, "a stored custom app no longer checks; its tools are hidden");
            }
            LoadedApp {
                name: row.name,
                def,
                operations,
                problems,
                created_at: row.created_at,
                updated_at: row.updated_at,
            }
        })
        .collect();
    Ok(Loaded { generation, apps })
}

/// Every vault name an app's auth and headers refer to.
pub fn vault_refs(def: &AppDef) -> Vec<String> {
    let mut texts: Vec<&String> = def.headers.values().collect();
    if let Some(a) = &def.auth {
        texts.extend([&a.token, &a.value, &a.username, &a.password].into_iter().flatten());
    }
    let mut names = Vec::new();
    for t in texts {
        for n in template::vault_names(&Value::String(t.clone())).unwrap_or_default() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// The app's auth and headers with vault refs resolved (for its own host only).
pub struct Prepared {
    pub headers: Vec<(String, Secret<String>)>,
    pub query: Vec<(String, Secret<String>)>,
    pub basic: Option<(String, Secret<String>)>,
    /// Every resolved secret value, for the call's scrubber.
    pub secrets: Vec<String>,
}

/// Resolves the app's vault refs; refused unless each secret allows the app's origin.
pub async fn prepare(app: &Arc<App>, op: &Operation) -> Result<Prepared, ToolFailure> {
    let values = app.vault.resolve(&vault_refs(&op.app.def), std::slice::from_ref(&op.app.origin)).await?;
    let lookup = |name: &str| values.lookup(name);
    let scope = template::Scope {
        steps: None,
        vault: Some(&lookup),
        no_steps_reason: "",
        no_vault_reason: "",
        resolving: "the custom app's request",
        max_bytes: template::MAX_RESOLVED_BYTES,
    };
    let fill = |s: &str| -> Result<String, ToolFailure> {
        match template::resolve(&Value::String(s.to_string()), &scope)?.value {
            Value::String(v) => Ok(v),
            other => Ok(other.to_string()),
        }
    };
    let mut headers = Vec::new();
    let mut query = Vec::new();
    let mut basic = None;
    for (k, v) in &op.app.def.headers {
        headers.push((k.clone(), Secret::new(fill(v)?)));
    }
    if let Some(auth) = &op.app.def.auth {
        let get = |v: &Option<String>| fill(v.as_deref().unwrap_or_default());
        match auth.kind {
            AuthScheme::None => {}
            AuthScheme::Bearer => {
                headers.push(("authorization".into(), Secret::new(format!("Bearer {}", get(&auth.token)?))))
            }
            AuthScheme::Header => headers.push((auth.name.clone().unwrap_or_default(), Secret::new(get(&auth.value)?))),
            AuthScheme::Query => query.push((auth.name.clone().unwrap_or_default(), Secret::new(get(&auth.value)?))),
            AuthScheme::Basic => basic = Some((get(&auth.username)?, Secret::new(get(&auth.password)?))),
        }
    }
    let secrets = values.values().map(str::to_string).collect();
    Ok(Prepared { headers, query, basic, secrets })
}

/// The request an operation sends for some arguments, before credentials are attached: what the
/// approval question shows the user and what [`send`] sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub method: reqwest::Method,
    /// The full URL without the query string.
    pub url: String,
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Planned {
    /// "DELETE https://api.acme.com/v2/items/42?force=true" and the JSON body, for a person.
    pub fn describe(&self) -> String {
        let mut line = format!("{} {}", self.method, self.url);
        if !self.query.is_empty()
            && let Ok(q) = reqwest::Url::parse_with_params("http://x/", &self.query)
            && let Some(q) = q.query()
        {
            line.push('?');
            line.push_str(q);
        }
        if let Some(body) = &self.body {
            line.push_str(&format!("\nBody: {}", plugins::api::truncate_chars(&body.to_string(), 600).0));
        }
        line
    }
}

/// Fills an operation's path, query and body from (validated) arguments.
pub fn plan(op: &Operation, args: &Map<String, Value>) -> Result<Planned, ToolError> {
    let mut path = op.path.clone();
    for p in &op.path_params {
        let value = match args.get(p) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => {
                return Err(ToolError::invalid(format!("{p} is required (it is part of the path)")));
            }
            Some(other) => other.to_string(),
        };
        if value.is_empty() {
            return Err(ToolError::invalid(format!("{p} cannot be empty (it is part of the path)")));
        }
        path = path.replace(&format!("{{{p}}}"), &plugins::api::encode_segment(&value));
    }
    let rest: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| !op.path_params.contains(k) && !op.body_params.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let has_body_method = matches!(op.method, reqwest::Method::POST | reqwest::Method::PUT | reqwest::Method::PATCH);
    let (body, query_args) = match (&op.body, has_body_method) {
        (Some(template), _) => (Some(fill_body(template, args)), rest),
        (None, true) => (Some(Value::Object(rest)), Map::new()),
        (None, false) => (None, rest),
    };
    let query = query_args
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s,
                Value::Array(a) => a
                    .iter()
                    .map(|x| x.as_str().map(str::to_string).unwrap_or(x.to_string()))
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            (k, v)
        })
        .collect();
    Ok(Planned { method: op.method.clone(), url: format!("{}{}", op.app.base_url, path), query, body })
}

/// Sends one operation's request and shapes the answer.
pub async fn send(
    app: Arc<App>,
    op: Arc<Operation>,
    prepared: Prepared,
    args: Value,
    deadline: Instant,
) -> Result<Value, ToolError> {
    let args = match args {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    let Planned { url, query, body, .. } = plan(&op, &args)?;
    let url =
        reqwest::Url::parse(&url).map_err(|e| ToolError::invalid(format!("the request URL is not valid: {e}")))?;
    // Parameters fill path segments (encoded); the request never leaves the app's origin.
    if crate::net::Origin::of(&url).map(|o| o.to_string()).as_deref() != Some(op.app.origin.as_str()) {
        return Err(ToolError::invalid(format!("the request would leave {}; it is not sent", op.app.origin)));
    }
    let mut secret_headers = prepared.headers;
    if let Some((user, pass)) = &prepared.basic {
        let encoded = plugins::codec::base64_encode(format!("{user}:{}", pass.expose()).as_bytes());
        secret_headers.push(("authorization".into(), Secret::new(format!("Basic {encoded}"))));
    }
    let out = crate::send::Outgoing {
        method: op.method.clone(),
        url,
        // The definition is the agent's: only the user's private_hosts widen the guard.
        user_origin: false,
        query,
        secret_query: prepared.query,
        headers: vec![("accept".into(), "application/json".into())],
        secret_headers,
        body: match body {
            Some(b) => plugins::api::Body::Json(b),
            None => plugins::api::Body::None,
        },
    };
    let key = format!("custom:{}", op.app.def.name);
    let budget = crate::send::Budget {
        key: &key,
        display: &op.app.def.name,
        limit: crate::send::configured_rate_limit(&app, &op.app.def.name, CUSTOM_RATE_LIMIT)?,
    };
    let reply = crate::send::deliver(&app, &budget, deadline, &out).await?;
    let status = reply.status;
    let retry_after = reply.header("retry-after").and_then(crate::send::retry_after_secs);
    let bytes = reply.body;
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    if !(200..300).contains(&status) {
        let message = parsed
            .as_ref()
            .and_then(|j| {
                ["message", "error_description", "error", "detail", "title"].iter().find_map(|k| {
                    j.get(*k).and_then(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .or_else(|| v.get("message").and_then(Value::as_str).map(str::to_string))
                    })
                })
            })
            .unwrap_or_else(|| {
                let text = String::from_utf8_lossy(&bytes);
                let text = text.trim();
                if text.is_empty() || text.starts_with('<') {
                    format!("HTTP {status}")
                } else {
                    plugins::api::truncate_chars(text, 300).0
                }
            });
        return Err(ToolError::Upstream { status, message, retry_after });
    }
    Ok(match parsed {
        Some(v) => v,
        None if bytes.is_empty() => json!({ "ok": true, "status": status }),
        None => {
            let text = String::from_utf8_lossy(&bytes);
            json!({ "status": status, "text": plugins::api::truncate_chars(&text, 50_000).0 })
        }
    })
}
