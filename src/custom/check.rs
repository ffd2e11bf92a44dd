//! Checking a definition whole: the base URL, the auth scheme and its vault refs, each operation
//! (name, method, path and query templates, argument schema, body template); every problem is
//! listed with its path.

use super::*;

pub(super) fn problem(path: impl Into<String>, text: impl Into<String>) -> ArgProblem {
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
pub(super) enum BaseUrlError {
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

pub(super) fn check_base_url(raw: &str) -> Result<(String, String, String), BaseUrlError> {
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

pub(super) fn check_auth(auth: Option<&AuthDef>, problems: &mut Vec<ArgProblem>) {
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

pub(super) fn check_operation(
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

pub(super) fn unsupported_keywords(schema: &Value, path: &str, out: &mut Vec<(String, String)>) {
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
pub(super) fn collect_body_refs(v: &Value, out: &mut Vec<String>) {
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

pub(super) fn fill_body(v: &Value, args: &Map<String, Value>) -> Value {
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
