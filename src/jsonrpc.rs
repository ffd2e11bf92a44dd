//! JSON-RPC framing help shared by both sides of MCP: [`IdScan`] finds a message's `id` in a byte
//! stream as it passes, in constant memory (the server transport, `crate::mcp::transport`, tells
//! which request an over-long line answered; the MCP client, `crate::mcp_client`, which request an
//! upstream server's over-long line answered). It names no module of the crate.

use serde_json::Value;

/// Finds the `id` member of a top-level JSON object, fed one byte at a time, in constant memory.
/// Only a string (up to 128 bytes) or a number counts; anything else is no id.
#[derive(Default)]
pub struct IdScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a member name.
    expect_key: bool,
    /// The member name being read, raw (quotes and escapes included), while it still could spell
    /// `id` or `method` (at most `method` in `\u` escapes, 38 bytes).
    key: Vec<u8>,
    key_too_long: bool,
    /// The last member name read at depth 1 was `id`.
    key_is_id: bool,
    /// The object has a `method` member (with an id: a request).
    pub has_method: bool,
    /// Reading the value of `id`.
    capturing: bool,
    value: Vec<u8>,
    value_bad: bool,
    found: Option<Value>,
    /// The values started so far, weighed ([`MAX_LINE_VALUES`]): `,` 1, `[` 2, `{` 8.
    pub values: usize,
}

const MAX_ID_BYTES: usize = 128;
/// Longest raw id text read: a 128-character string written entirely in six-byte `\u` escapes (such as `\u0041`).
const MAX_ID_RAW: usize = 6 * MAX_ID_BYTES + 2;
/// Longest raw member name read: `method` written entirely in six-byte `\u` escapes.
const MAX_KEY_RAW: usize = 6 * 6 + 2;

impl IdScan {
    pub fn push(&mut self, b: u8) {
        if self.capturing && self.depth == 1 && !self.in_string && matches!(b, b',' | b'}') {
            self.finish_value();
        }
        if self.capturing {
            if self.value.len() >= MAX_ID_RAW {
                self.value_bad = true;
            } else {
                self.value.push(b);
            }
        }
        if self.in_string {
            let reading_key = self.depth == 1 && self.expect_key;
            if reading_key {
                if self.key.len() < MAX_KEY_RAW {
                    self.key.push(b);
                } else {
                    self.key_too_long = true;
                }
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if reading_key {
                    self.expect_key = false;
                    let key = if self.key_too_long { None } else { serde_json::from_slice::<String>(&self.key).ok() };
                    self.key_is_id = key.as_deref() == Some("id");
                    self.has_method |= key.as_deref() == Some("method");
                }
            }
            return;
        }
        self.values += match b {
            b',' => 1,
            b'[' => 2,
            b'{' => 8,
            _ => 0,
        };
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.key.clear();
                    self.key.push(b'"');
                    self.key_too_long = false;
                }
            }
            b'{' | b'[' => {
                if self.capturing {
                    self.value_bad = true;
                }
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 && self.key_is_id => {
                self.key_is_id = false;
                self.capturing = true;
                self.value.clear();
                self.value_bad = false;
            }
            _ => {}
        }
    }

    fn finish_value(&mut self) {
        self.capturing = false;
        if self.value_bad {
            return;
        }
        match serde_json::from_slice::<Value>(&self.value) {
            Ok(v @ Value::Number(_)) => self.found = Some(v),
            Ok(Value::String(s)) if s.len() <= MAX_ID_BYTES => self.found = Some(Value::String(s)),
            _ => {}
        }
    }

    /// The id, once the object's end (or at least the member after `id`) has been seen.
    pub fn id(&self) -> Option<Value> {
        self.found.clone()
    }
}
