//! http_send_request: fetch an auth-free public URL. Every hop passes the SSRF guard
//! ([`crate::net`]); redirects are followed here (at most [`MAX_REDIRECTS`]), each re-checked; the
//! body is capped ([`MAX_BYTES`]) and the whole exchange bounded by the call's time limit. JSON comes
//! back parsed, HTML as its title and readable text, other text as text, binary only described.
//! Nothing of ours is sent: no credential, no cookie (the client keeps none), no vault value (the
//! engine refuses vault refs for built-ins).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use plugins::api::{ArgProblem, ToolError};
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::builtin;
use crate::app::App;
use crate::net;
use crate::registry::BuiltinSpec;

/// Largest response body accepted (and the default of `max_bytes`).
pub const MAX_BYTES: u64 = 2 * 1024 * 1024;
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;
/// Longest text returned; the rest is cut with a note.
const MAX_TEXT_CHARS: usize = 40_000;

pub const SEND_REQUEST: BuiltinSpec = builtin! {
    name: "http_send_request",
    namespace: "http",
    effect: Write,
    results: Public,
    audience: plugins::flow::Audience::Outside("an HTTP request to any URL: its path, query, headers and body reach that server"),
    args: SendRequest,
    run: send_request,
    keywords: ["fetch url", "fetch a url", "grab", "contents of a url", "page contents", "readable text", "web page", "webpage", "website", "download page", "read page", "open link", "link", "http request", "http get", "get request", "post request", "rest api", "public api", "endpoint", "url", "html", "curl", "scrape", "http", "https"],
    description: "Send an HTTP request to an auth-free public URL (GET by default; HEAD, POST, PUT, PATCH, DELETE) and get the status, headers and body: JSON parsed, a web page (HTML) reduced to its title and readable text, other text as is, binary only described. Refuses loopback, private, link-local and cloud-metadata addresses (also after redirects); at most 2 MiB within the call's time limit. For services that need a login use their integration, curl_session or a custom app.",
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum AllowedMethod {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
}

impl AllowedMethod {
    fn name(self) -> &'static str {
        match self {
            AllowedMethod::Get => "GET",
            AllowedMethod::Head => "HEAD",
            AllowedMethod::Post => "POST",
            AllowedMethod::Put => "PUT",
            AllowedMethod::Patch => "PATCH",
            AllowedMethod::Delete => "DELETE",
        }
    }

    fn as_reqwest(self) -> reqwest::Method {
        match self {
            AllowedMethod::Get => reqwest::Method::GET,
            AllowedMethod::Head => reqwest::Method::HEAD,
            AllowedMethod::Post => reqwest::Method::POST,
            AllowedMethod::Put => reqwest::Method::PUT,
            AllowedMethod::Patch => reqwest::Method::PATCH,
            AllowedMethod::Delete => reqwest::Method::DELETE,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum As {
    #[default]
    Auto,
    Json,
    Text,
    Markdown,
    Raw,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendRequest {
    /// The absolute http or https URL, e.g. "https://example.com/page".
    #[schemars(length(min = 1, max = 8192))]
    url: String,
    /// The HTTP method.
    #[serde(default)]
    method: AllowedMethod,
    /// Extra request headers by name, e.g. {"accept": "application/json"}. Authorization, Cookie and Host are refused.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Query parameters appended to the URL, e.g. {"q": "rust", "page": 2}; values are strings, numbers or booleans.
    #[serde(default)]
    query: BTreeMap<String, Value>,
    /// The request body (not with GET or HEAD): an object or array is sent as JSON, a string as text (set content-type in headers to change that).
    body: Option<Value>,
    /// How to return the body: auto (JSON parsed, HTML as title and text, other text as is), json, text, markdown (HTML with headings, lists and links), raw (the text unprocessed).
    #[serde(default, rename = "as")]
    as_: As,
    /// Largest response body to accept, in bytes (at most 2 MiB, the default); a bigger one is an error.
    #[schemars(range(min = 1, max = 2_097_152))]
    max_bytes: Option<u64>,
    /// Seconds to wait for the whole response, redirects included (at most the call's time limit, the default).
    #[schemars(range(min = 1, max = 3600))]
    timeout_s: Option<u64>,
}

/// Request headers the tool will not send: credentials and cookies (this tool is for auth-free
/// URLs), and the ones the client owns.
const REFUSED_HEADERS: &[(&str, &str)] = &[
    (
        "authorization",
        "credentials are not sent by this tool; use the service's integration, curl_session or a custom app",
    ),
    ("proxy-authorization", "credentials are not sent by this tool"),
    ("cookie", "cookies are not sent by this tool"),
    ("host", "the host comes from the URL"),
    ("content-length", "the length comes from the body"),
    ("transfer-encoding", "the client sets the framing"),
    ("connection", "the client manages connections"),
    ("te", "the client sets the framing"),
    ("upgrade", "protocol upgrades are not supported"),
];

fn invalid(path: &str, problem: impl Into<String>) -> ToolError {
    let problem = problem.into();
    ToolError::InvalidArguments {
        message: problem.clone(),
        problems: vec![ArgProblem { path: path.to_string(), problem }],
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

async fn send_request(app: Arc<App>, args: SendRequest) -> Result<Value, ToolError> {
    let call_limit = app.settings.call_timeout;
    let limit = args.timeout_s.map(Duration::from_secs).unwrap_or(call_limit).min(call_limit);
    let deadline = Instant::now() + limit;
    let max_bytes = args.max_bytes.unwrap_or(MAX_BYTES).clamp(1, MAX_BYTES);
    let ports = app.listener_ports();
    let guard = net::Guard::public(&app.settings.http_reachable_for_tests, &ports);
    let reachable = &guard;

    let (mut url, _) = net::check_url(&args.url, reachable).map_err(|r| invalid("/url", r.0))?;
    url.set_fragment(None);
    if !args.query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in &args.query {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    return Err(invalid(
                        &format!("/query/{}", escape_pointer(k)),
                        format!(
                            "query values are strings, numbers or booleans, got {}",
                            crate::validate::describe(other)
                        ),
                    ));
                }
            };
            pairs.append_pair(k, &value);
        }
    }

    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in &args.headers {
        let path = format!("/headers/{}", escape_pointer(name));
        let lower = name.to_ascii_lowercase();
        if let Some((_, why)) = REFUSED_HEADERS.iter().find(|(h, _)| *h == lower) {
            return Err(invalid(&path, format!("the header '{name}' is refused: {why}")));
        }
        let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(&path, format!("'{name}' is not a valid header name")))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| invalid(&path, "header values are single-line visible text"))?;
        headers.append(header, value);
    }

    let mut method = args.method;
    let mut body: Option<(Vec<u8>, &'static str)> = match &args.body {
        None | Some(Value::Null) => None,
        Some(_) if matches!(method, AllowedMethod::Get | AllowedMethod::Head) => {
            return Err(invalid("/body", format!("a {} request has no body; use POST, PUT or PATCH", method.name())));
        }
        Some(Value::String(s)) => Some((s.clone().into_bytes(), "text/plain; charset=utf-8")),
        Some(v) => Some((v.to_string().into_bytes(), "application/json")),
    };

    let client = net::client();
    // Every URL requested so far, the first one first, and the status that led to the last one.
    let mut hops: Vec<Url> = vec![url.clone()];
    let mut redirect_status = 0u16;
    let timed_out = || ToolError::Timeout { seconds: limit.as_secs() };
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(timed_out());
        }
        let mut request = client.request(method.as_reqwest(), url.clone()).timeout(remaining).headers(headers.clone());
        if let Some((bytes, content_type)) = &body {
            if !headers.contains_key(reqwest::header::CONTENT_TYPE) {
                request = request.header(reqwest::header::CONTENT_TYPE, *content_type);
            }
            request = request.body(bytes.clone());
        }
        let response = match tokio::time::timeout_at(deadline.into(), request.send()).await {
            Err(_) => return Err(timed_out()),
            Ok(Err(e)) => {
                return Err(match net::refusal_in(&e) {
                    // A host name whose addresses the resolver refused.
                    Some(r) if hops.len() == 1 => invalid("/url", r.0),
                    Some(r) => ToolError::Upstream {
                        status: redirect_status,
                        message: format!("{} redirected to {url}, which was refused: {r}", hops[hops.len() - 2]),
                        retry_after: None,
                    },
                    None if e.is_timeout() => timed_out(),
                    None => ToolError::Network(format!("could not reach {}: {}", host_of(&url), root_cause(&e))),
                });
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status().as_u16();
        if matches!(status, 301 | 302 | 303 | 307 | 308)
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
            if hops.len() > MAX_REDIRECTS {
                return Err(ToolError::Upstream {
                    status,
                    message: format!("stopped after {MAX_REDIRECTS} redirects (the next one pointed to {location})"),
                    retry_after: None,
                });
            }
            let next = next_hop(&url, &location, reachable).map_err(|r| ToolError::Upstream {
                status,
                message: format!("{url} redirected to {location}, which was refused: {r}"),
                retry_after: None,
            })?;
            // 303 always, and 301/302 after a POST (as browsers do), continue as a GET without body.
            if status == 303 || (matches!(status, 301 | 302) && method == AllowedMethod::Post) {
                if method != AllowedMethod::Head {
                    method = AllowedMethod::Get;
                }
                body = None;
            }
            redirect_status = status;
            hops.push(next.clone());
            url = next;
            continue;
        }
        let redirects: Vec<String> = hops[1..].iter().map(Url::to_string).collect();
        return read_response(response, &url, redirects, method, args.as_, max_bytes, deadline, limit).await;
    }
}

/// The next hop of a redirect, checked like the first URL.
fn next_hop(current: &Url, location: &str, reachable: &net::Guard<'_>) -> Result<Url, net::Refusal> {
    let absolute = location.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    let mut next = if absolute {
        net::check_url(location, reachable)?.0
    } else {
        let next = current
            .join(location)
            .map_err(|e| net::Refusal(format!("'{location}' is not a valid redirect target: {e}")))?;
        net::check_parsed(&next, None, reachable)?;
        next
    };
    if next.fragment().is_some() {
        next.set_fragment(None);
    }
    Ok(next)
}

fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or("the host").to_string()
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

#[allow(clippy::too_many_arguments)]
async fn read_response(
    mut response: reqwest::Response,
    url: &Url,
    redirects: Vec<String>,
    method: AllowedMethod,
    as_: As,
    max_bytes: u64,
    deadline: Instant,
    limit: Duration,
) -> Result<Value, ToolError> {
    let status = response.status().as_u16();
    let too_large = |what: String| ToolError::Upstream {
        status,
        message: format!(
            "the response body is {what}, more than max_bytes ({max_bytes} bytes); fetch something smaller (the cap is {} MiB)",
            MAX_BYTES / (1024 * 1024)
        ),
        retry_after: None,
    };
    if let Some(n) = response.content_length()
        && n > max_bytes
    {
        return Err(too_large(format!("{n} bytes")));
    }
    let mut headers = Map::new();
    for (name, value) in response.headers() {
        if name == reqwest::header::SET_COOKIE {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match headers.get_mut(name.as_str()) {
            Some(Value::String(prev)) => {
                prev.push_str(", ");
                prev.push_str(&value);
            }
            _ => {
                headers.insert(name.as_str().to_string(), Value::String(value));
            }
        }
    }
    let content_type = headers.get("content-type").and_then(Value::as_str).unwrap_or("").to_string();
    let mut bytes = Vec::new();
    loop {
        let chunk = match tokio::time::timeout_at(deadline.into(), response.chunk()).await {
            Err(_) => return Err(ToolError::Timeout { seconds: limit.as_secs() }),
            Ok(Err(e)) if e.is_timeout() => return Err(ToolError::Timeout { seconds: limit.as_secs() }),
            Ok(Err(e)) => {
                return Err(ToolError::Network(format!(
                    "{} broke off the response after {} bytes: {}",
                    host_of(url),
                    bytes.len(),
                    root_cause(&e)
                )));
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(c))) => c,
        };
        if (bytes.len() + chunk.len()) as u64 > max_bytes {
            return Err(too_large(format!("over {} bytes", bytes.len() + chunk.len())));
        }
        bytes.extend_from_slice(&chunk);
    }

    let mut out = Map::new();
    out.insert("url".into(), json!(url.as_str()));
    out.insert("status".into(), json!(status));
    out.insert("ok".into(), json!((200..300).contains(&status)));
    if !redirects.is_empty() {
        out.insert("redirects".into(), json!(redirects));
    }
    out.insert("content_type".into(), json!(content_type));
    out.insert("bytes".into(), json!(bytes.len()));
    out.insert("headers".into(), Value::Object(headers));
    for (k, v) in shape_body(&bytes, &content_type, url, method, as_, status)? {
        out.insert(k, v);
    }
    Ok(Value::Object(out))
}

/// What the body is, judged by its content type and, when that says little, its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json,
    Html,
    Text,
    Binary,
}

fn kind_of(content_type: &str, bytes: &[u8]) -> Kind {
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).trim_start().to_ascii_lowercase();
    let looks_html = head.starts_with("<!doctype html") || head.starts_with("<html");
    let textual = !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok();
    match mime.as_str() {
        "application/json" | "text/json" => Kind::Json,
        m if m.ends_with("+json") => Kind::Json,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        m if m.starts_with("text/") => Kind::Text,
        "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-www-form-urlencoded"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-ndjson"
        | "application/csv"
        | "application/sql"
        | "application/graphql" => Kind::Text,
        m if m.ends_with("+xml") => Kind::Text,
        "" | "application/octet-stream" | "binary/octet-stream" if textual => {
            if looks_html {
                Kind::Html
            } else if matches!(head.chars().next(), Some('{' | '[')) && serde_json::from_slice::<Value>(bytes).is_ok() {
                Kind::Json
            } else {
                Kind::Text
            }
        }
        _ => Kind::Binary,
    }
}

/// Decodes text by the content type's charset: UTF-8 unless it names Latin-1/Windows-1252.
fn decode(bytes: &[u8], content_type: &str) -> String {
    let lower = content_type.to_ascii_lowercase();
    let latin = ["iso-8859-1", "latin1", "latin-1", "windows-1252", "us-ascii"].iter().any(|c| lower.contains(c));
    if latin && std::str::from_utf8(bytes).is_err() {
        return bytes.iter().map(|&b| b as char).collect();
    }
    String::from_utf8_lossy(bytes).into_owned()
}

fn put_text(out: &mut Vec<(String, Value)>, text: String) {
    let total = text.chars().count();
    let (text, cut) = plugins::api::truncate_chars(&text, MAX_TEXT_CHARS);
    out.push(("text".into(), json!(text)));
    if cut {
        out.push(("truncated".into(), json!(true)));
        out.push((
            "note".into(),
            json!(format!("the text has {total} characters; the first {MAX_TEXT_CHARS} are shown")),
        ));
    }
}

fn shape_body(
    bytes: &[u8],
    content_type: &str,
    url: &Url,
    method: AllowedMethod,
    as_: As,
    status: u16,
) -> Result<Vec<(String, Value)>, ToolError> {
    let mut out = Vec::new();
    if bytes.is_empty() {
        let why =
            if method == AllowedMethod::Head { "HEAD responses have no body" } else { "the response has no body" };
        out.push(("format".into(), json!("empty")));
        out.push(("note".into(), json!(why)));
        return Ok(out);
    }
    let kind = kind_of(content_type, bytes);
    if kind == Kind::Binary {
        let shown = if content_type.is_empty() { "unknown type" } else { content_type };
        out.push(("format".into(), json!("binary")));
        out.push((
            "note".into(),
            json!(format!(
                "binary content ({shown}, {} bytes) is described, not returned; a tool that downloads files can save it",
                bytes.len()
            )),
        ));
        return Ok(out);
    }
    let text = decode(bytes, content_type);
    match (as_, kind) {
        (As::Json, _) | (As::Auto, Kind::Json) => match serde_json::from_str::<Value>(&text) {
            Ok(v) => {
                out.push(("format".into(), json!("json")));
                out.push(("body".into(), v));
            }
            Err(e) if as_ == As::Json => {
                return Err(ToolError::Upstream {
                    status,
                    message: format!(
                        "the body is not JSON ({e}; content-type '{content_type}'); ask for as: \"text\" to read it"
                    ),
                    retry_after: None,
                });
            }
            Err(e) => {
                out.push(("format".into(), json!("text")));
                out.push(("note".into(), json!(format!("declared as JSON but is not valid JSON: {e}"))));
                put_text(&mut out, text);
            }
        },
        (As::Raw, _) | (As::Text | As::Markdown | As::Auto, Kind::Text | Kind::Json) => {
            out.push(("format".into(), json!("text")));
            put_text(&mut out, text);
        }
        (As::Text | As::Markdown | As::Auto, _) => {
            let markdown = as_ == As::Markdown;
            let page = html_to_text(&text, markdown.then_some(url));
            out.push(("format".into(), json!(if markdown { "markdown" } else { "html" })));
            if let Some(title) = page.title {
                out.push(("title".into(), json!(title)));
            }
            put_text(&mut out, page.text);
        }
    }
    Ok(out)
}

pub use plugins::text::Page;

/// Reduces HTML to its title and text ([`plugins::text::html_page`]); with `markdown` (the page's
/// URL), links are resolved against it and only http(s) targets are kept.
pub fn html_to_text(html: &str, markdown: Option<&Url>) -> Page {
    match markdown {
        None => plugins::text::html_page(html, None),
        Some(base) => {
            let resolve = |href: &str| {
                let target = base.join(href).ok()?;
                matches!(target.scheme(), "http" | "https").then(|| target.to_string())
            };
            plugins::text::html_page(html, Some(&resolve))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_title_and_readable_text() {
        let html = r#"<!DOCTYPE html><html><head><title> Rust &amp; Friends </title>
            <style>body { color: red }</style><script>alert("<p>no</p>")</script></head>
            <body><!-- a comment --><h1>Hello&nbsp;world</h1><p>First   paragraph
            with <b>bold</b> and <a href="/docs?a=1&amp;b=2">a link</a>.</p>
            <ul><li>one</li><li>two &#8212; &#x2764;</li></ul><noscript>enable js</noscript>
            <pre>  indented
  code</pre><p>5 &lt; 6 &unknown; &</p></body></html>"#;
        let page = html_to_text(html, None);
        assert_eq!(page.title.as_deref(), Some("Rust & Friends"));
        assert_eq!(
            page.text,
            "Hello world\n\nFirst paragraph with bold and a link.\n\n- one\n- two — ❤\n\n  indented\n  code\n\n5 < 6 &unknown; &"
        );
        let base = Url::parse("https://example.com/guide/").unwrap();
        let md = html_to_text(html, Some(&base));
        assert!(md.text.starts_with("# Hello world\n\n"), "{}", md.text);
        assert!(md.text.contains("with bold and [a link](https://example.com/docs?a=1&b=2)."), "{}", md.text);
        assert!(md.text.contains("```\n  indented\n  code\n```"), "{}", md.text);
        assert!(!md.text.contains("alert") && !md.text.contains("color"));
    }

    /// A page nested 100,000 levels deep (divs, links, lists, pre) is read in one pass: the reader
    /// is a loop over tags, so no page can overflow the stack.
    #[test]
    fn deeply_nested_html_is_read_without_recursion() {
        let base = Url::parse("https://example.com/").unwrap();
        let n = 100_000;
        for (open, close) in
            [("<div>", "</div>"), ("<a href='/x'>", "</a>"), ("<ul><li>", "</li></ul>"), ("<pre>", "</pre>")]
        {
            let html = format!("<title>T</title>{}deep{}<p>after</p>", open.repeat(n), close.repeat(n));
            for markdown in [None, Some(&base)] {
                let page = html_to_text(&html, markdown);
                assert!(page.text.contains("deep") && page.text.contains("after"), "{open}");
            }
        }
    }

    #[test]
    fn bodies_are_recognised_by_type_and_content() {
        assert_eq!(kind_of("application/json; charset=utf-8", b"{}"), Kind::Json);
        assert_eq!(kind_of("application/problem+json", b"{}"), Kind::Json);
        assert_eq!(kind_of("text/html", b"<p>x"), Kind::Html);
        assert_eq!(kind_of("text/plain", b"hi"), Kind::Text);
        assert_eq!(kind_of("", b"<!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(kind_of("", b"[1,2]"), Kind::Json);
        assert_eq!(kind_of("image/png", b"\x89PNG\r\n"), Kind::Binary);
        assert_eq!(kind_of("application/octet-stream", b"\x00\x01"), Kind::Binary);
        assert_eq!(decode(b"caf\xe9", "text/plain; charset=ISO-8859-1"), "café");
    }
}
