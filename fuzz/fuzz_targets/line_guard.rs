//! The stdio line guard and its id scanner (`src/mcp/transport.rs`) on arbitrary byte streams and
//! limits: lines within the limit pass byte for byte; nothing longer than the limit (plus the NUL
//! that spoils a cut line) reaches rmcp except the short stand-in request; and on every line that
//! is a JSON object (of up to 770 bytes, the scanner's longest id text), the scanner finds the same
//! `id` serde_json does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use workbench::mcp::transport::{IdScan, LineGuard, TOO_LARGE_METHOD};

thread_local! {
    static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
}

fuzz_target!(|data: &[u8]| {
    let Some((&m, input)) = data.split_first() else { return };
    let max = 1 + m as usize;
    let (tx, _rx) = tokio::sync::watch::channel(false);
    let mut guard = LineGuard::new(input, max, tx);
    let mut out = Vec::new();
    RT.with(|rt| rt.block_on(guard.read_to_end(&mut out))).unwrap();

    if input.split(|b| *b == b'\n').all(|l| l.len() <= max) {
        assert_eq!(out, input, "lines within the limit pass unchanged");
    }
    for line in out.split(|b| *b == b'\n') {
        if line.len() > max + 1 {
            let v: Value = serde_json::from_slice(line).expect("a long line out is the stand-in request");
            assert_eq!(v["method"], TOO_LARGE_METHOD);
        }
    }
    for line in input.split(|b| *b == b'\n').filter(|l| l.len() <= 770) {
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(line) else { continue };
        let want = match obj.get("id") {
            Some(v @ Value::Number(_)) => v.clone(),
            Some(Value::String(s)) if s.len() <= 128 => Value::String(s.clone()),
            _ => continue,
        };
        let mut scan = IdScan::default();
        line.iter().for_each(|b| scan.push(*b));
        assert_eq!(scan.id(), Some(want), "id of {}", String::from_utf8_lossy(line));
    }
});
