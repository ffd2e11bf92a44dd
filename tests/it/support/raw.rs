//! A raw TCP fake on 127.0.0.1:0 for faults an HTTP framework will not produce on purpose: headers
//! followed by a trickle (slow loris), a connection reset mid-response, a chunked body with no
//! Content-Length, a socket closed before any answer. Each connection reads the request head (and
//! a Content-Length body), then plays the steps the script returns for it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One thing the fake does on a connection, in order.
pub enum Step {
    /// Write these bytes (and flush).
    Send(Vec<u8>),
    /// Wait this long.
    Wait(Duration),
    /// Reset the connection (RST, not FIN) and stop.
    Reset,
}

pub struct RawFake {
    pub url: String,
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl RawFake {
    /// `script(n, head)` gets the connection's number (0 first) and the request head as text.
    pub async fn start(script: impl Fn(usize, &str) -> Vec<Step> + Send + Sync + 'static) -> RawFake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("addr");
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        let script = Arc::new(script);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let n = count.fetch_add(1, Ordering::SeqCst);
                let script = script.clone();
                tokio::spawn(async move {
                    let Some(head) = read_request(&mut stream).await else { return };
                    for step in script(n, &head) {
                        match step {
                            Step::Send(bytes) => {
                                if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
                                    return;
                                }
                            }
                            Step::Wait(d) => tokio::time::sleep(d).await,
                            Step::Reset => {
                                let _ = stream.set_zero_linger();
                                drop(stream);
                                return;
                            }
                        }
                    }
                    let _ = stream.shutdown().await;
                });
            }
        });
        RawFake { url: format!("http://{addr}"), addr, connections }
    }
}

impl RawFake {
    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>()))
        .and_then(Result::ok)
        .unwrap_or(0);
    let mut have = buf.len() - end;
    while have < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        have += n;
    }
    Some(head)
}

/// A response head: status line and headers, with the blank line that ends them.
pub fn head(status: u16, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Status\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// One chunk of a chunked body (an empty `data` is the last chunk).
pub fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}
