//! A fake upstream on 127.0.0.1:0: records every request and answers through a closure that checks
//! what the real service would check (method, path, headers, body) and replies like it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn q(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

/// What the fake answers.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply { status, headers: vec![("content-type".into(), "application/json".into())], body: body.to_string() }
    }
    pub fn with_header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

#[derive(Clone)]
struct Shared {
    handler: Arc<Handler>,
    log: Arc<Mutex<Vec<Recorded>>>,
}

pub struct Fake {
    pub url: String,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl Fake {
    pub async fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Fake {
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared { handler: Arc::new(handler), log: log.clone() };
        // Real APIs take large uploads (Drive, Slack files): no 2 MB default limit here.
        let app = axum::Router::new()
            .fallback(serve)
            .layer(axum::extract::DefaultBodyLimit::max(256 * 1024 * 1024))
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Fake { url: format!("http://{addr}"), log }
    }

    /// The socket address the fake listens on (127.0.0.1:port).
    pub fn addr(&self) -> std::net::SocketAddr {
        self.url.trim_start_matches("http://").parse().expect("fake address")
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    pub fn last(&self) -> Recorded {
        self.requests().pop().expect("the fake saw no request")
    }
}

async fn serve(State(s): State<Shared>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let query = uri.query().map(url_decode_pairs).unwrap_or_default();
    let rec = Recorded {
        method: method.to_string(),
        path: uri.path().to_string(),
        query,
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_ascii_lowercase(), v.to_str().unwrap_or_default().to_string()))
            .collect(),
        body: body.to_vec(),
    };
    s.log.lock().unwrap().push(rec.clone());
    let handler = s.handler.clone();
    let reply = tokio::task::spawn_blocking(move || handler(&rec)).await.expect("handler");
    let mut resp =
        (StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), reply.body).into_response();
    for (k, v) in reply.headers {
        if let (Ok(name), Ok(value)) =
            (axum::http::HeaderName::from_bytes(k.as_bytes()), axum::http::HeaderValue::from_str(&v))
        {
            resp.headers_mut().insert(name, value);
        }
    }
    resp
}

fn url_decode_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The check every fake makes first: workbench identifies itself.
/// (GET requests also carry no body, as real APIs expect.)
pub fn has_user_agent(r: &Recorded) -> bool {
    r.header("user-agent").is_some_and(|ua| ua.starts_with("workbench/")) && (r.method != "GET" || r.body.is_empty())
}
