//! Result and message scrubbing: known secret values and token-looking strings become a marker.
//!
//! Known values (credentials and vault secrets used by the call) are matched exactly. Token shapes
//! are matched by the prefixes providers put on their tokens, plus JWTs and `Bearer`/`Basic`
//! header values, so a secret echoed by a misbehaving service or pasted into arguments by a person
//! does not travel on into the agent's context, the audit log or a log line.

use std::sync::RwLock;

use serde_json::Value;

pub const MARKER: &str = "[redacted]";

/// Token prefixes and the least number of token characters that must follow them.
const PREFIXES: &[(&str, usize)] = &[
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    ("glpat-", 16),
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxa-", 10),
    ("xoxr-", 10),
    ("xoxe-", 10),
    ("xapp-", 10),
    ("sk_live_", 12),
    ("sk_test_", 12),
    ("rk_live_", 12),
    ("rk_test_", 12),
    ("whsec_", 12),
    ("lin_api_", 16),
    ("lin_oauth_", 16),
    ("ya29.", 16),
    ("1//", 30),
    ("AKIA", 16),
    ("ntn_", 20),
    ("secret_", 30),
    ("ATATT", 30),
    ("sntrys_", 20),
    ("sntryu_", 20),
];

/// Replaces secrets inside JSON values and strings.
#[derive(Debug, Default, Clone)]
pub struct Scrubber {
    known: Vec<String>,
}

impl Scrubber {
    pub fn new(known: impl IntoIterator<Item = String>) -> Self {
        // Very short values would redact ordinary words; secrets are never that short.
        let mut known: Vec<String> = known.into_iter().filter(|k| k.len() >= 6).collect();
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        known.dedup();
        Scrubber { known }
    }

    /// The secret values this scrubber removes, longest first.
    pub fn known(&self) -> &[String] {
        &self.known
    }

    pub fn add(&mut self, secret: &str) {
        if secret.len() >= 6 && !self.known.iter().any(|k| k == secret) {
            self.known.push(secret.to_string());
            self.known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        }
    }

    pub fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Some(clean) = self.changed(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    // Pagination cursors are opaque and often JWT-shaped (Asana): only known secret
                    // values are removed from them, or the agent could not page.
                    if k == "next_cursor" || k == "cursor" {
                        if let Value::String(s) = v {
                            for secret in &self.known {
                                if s.contains(secret.as_str()) {
                                    *s = s.replace(secret.as_str(), MARKER);
                                }
                            }
                        }
                        continue;
                    }
                    self.value(v);
                }
            }
            _ => {}
        }
    }

    pub fn text(&self, s: &str) -> String {
        self.changed(s).unwrap_or_else(|| s.to_string())
    }

    /// The scrubbed string, or `None` when nothing needed replacing (the common case, no copy).
    fn changed(&self, s: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for secret in &self.known {
            let current = out.as_deref().unwrap_or(s);
            if current.contains(secret.as_str()) {
                out = Some(current.replace(secret.as_str(), MARKER));
            }
        }
        let current = out.as_deref().unwrap_or(s);
        match redact_tokens(current) {
            Some(clean) => Some(clean),
            None => out,
        }
    }
}

/// Every secret value this process has resolved or attached: vault values, connection secrets,
/// session tokens, values given to `vault_set_secret`. Each execution's scrubber starts from it
/// and adds back what the execution used, and whatever leaves the server (results, `return`
/// projections, errors, progress and client log messages) is scrubbed with it, so a value used
/// by one call cannot come back in clear through another one (write it upstream, read it back).
#[derive(Debug, Default)]
pub struct Exposed {
    known: RwLock<Scrubber>,
}

impl Exposed {
    /// Remembers one secret value for the rest of the process's life.
    pub fn remember(&self, secret: &str) {
        let known = self.known.read().unwrap_or_else(|p| p.into_inner());
        if secret.len() < 6 || known.known.iter().any(|k| k == secret) {
            return;
        }
        drop(known);
        self.known.write().unwrap_or_else(|p| p.into_inner()).add(secret);
    }

    /// Remembers every value a call's scrubber knows.
    pub fn remember_all(&self, scrubber: &Scrubber) {
        for secret in scrubber.known() {
            self.remember(secret);
        }
    }

    /// A scrubber that knows every value remembered so far.
    pub fn scrubber(&self) -> Scrubber {
        self.known.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Scrubs a value in place with everything remembered so far.
    pub fn scrub(&self, value: &mut Value) {
        self.known.read().unwrap_or_else(|p| p.into_inner()).value(value);
    }

    /// Removes only the remembered values (no token shapes): for answers that carry a token on
    /// purpose, like the one `curl_session` mints.
    pub fn scrub_known(&self, value: &mut Value) {
        let scrubber = self.known.read().unwrap_or_else(|p| p.into_inner());
        if scrubber.known.is_empty() {
            return;
        }
        // Iterative, so no depth of value can overflow the stack.
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    for secret in &scrubber.known {
                        if s.contains(secret.as_str()) {
                            *s = s.replace(secret.as_str(), MARKER);
                        }
                    }
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
    }

    /// A string scrubbed with everything remembered so far (and of token shapes).
    pub fn text(&self, s: &str) -> String {
        self.known.read().unwrap_or_else(|p| p.into_inner()).text(s)
    }
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'+' | b'=')
}

/// Finds token-shaped substrings; returns the redacted string when any were found.
pub fn redact_tokens(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'-' | b'.'));
        if boundary {
            if let Some(end) = token_end(bytes, i) {
                let o = out.get_or_insert_with(String::new);
                o.push_str(&s[copied..i]);
                o.push_str(MARKER);
                copied = end;
                i = end;
                continue;
            }
            if let Some((value_start, end)) = auth_header_value(bytes, i) {
                let o = out.get_or_insert_with(String::new);
                o.push_str(&s[copied..value_start]);
                o.push_str(MARKER);
                copied = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out.map(|mut o| {
        o.push_str(&s[copied..]);
        o
    })
}

fn run_len(bytes: &[u8], from: usize) -> usize {
    bytes[from..].iter().take_while(|b| is_token_byte(**b)).count()
}

fn token_end(bytes: &[u8], i: usize) -> Option<usize> {
    let rest = &bytes[i..];
    for (prefix, min) in PREFIXES {
        if rest.starts_with(prefix.as_bytes()) {
            let after = i + prefix.len();
            let n = run_len(bytes, after);
            // A real token mixes letters and digits; "secret_santa_party_planning" does not.
            let tail = &bytes[after..after + n];
            let has_digit = tail.iter().any(u8::is_ascii_digit);
            if n >= *min && has_digit {
                return Some(after + n);
            }
        }
    }
    // JWT: three base64url parts, the first two starting with eyJ.
    if rest.starts_with(b"eyJ") {
        let n = run_len(bytes, i);
        let token = &bytes[i..i + n];
        let parts: Vec<&[u8]> = token.split(|b| *b == b'.').collect();
        if parts.len() >= 3 && parts[1].starts_with(b"eyJ") && n >= 30 {
            return Some(i + n);
        }
    }
    None
}

/// `Bearer <token>` / `Basic <b64>` / `Token token=<t>`: returns (start of value, end).
fn auth_header_value(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    for scheme in [&b"Bearer "[..], b"bearer ", b"Basic ", b"Token token=", b"Bot "] {
        if bytes[i..].starts_with(scheme) {
            let start = i + scheme.len();
            let n = run_len(bytes, start);
            if n >= 16 {
                return Some((start, start + n));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_values_are_replaced_everywhere() {
        let s = Scrubber::new(["hunter2-very-secret".to_string()]);
        let mut v = json!({"a": ["x hunter2-very-secret y"], "b": {"c": "hunter2-very-secret"}});
        s.value(&mut v);
        assert_eq!(v, json!({"a": ["x [redacted] y"], "b": {"c": "[redacted]"}}));
    }

    #[test]
    fn token_shapes_are_redacted() {
        let cases = [
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok", "token [redacted] ok"),
            ("xoxp-1234567890-abcdef", "[redacted]"),
            ("key=sk_live_51Habcdefghijklmnop", "key=[redacted]"),
            ("Authorization: Bearer abcdefghijklmnop1234", "Authorization: Bearer [redacted]"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
                "jwt [redacted] end",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact_tokens(input).as_deref(), Some(want), "{input}");
        }
    }

    #[test]
    fn cursors_keep_their_jwt_shape_but_lose_known_secrets() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJvZmZzZXQiOjEwMH0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let s = Scrubber::new(["secret-token-123".to_string()]);
        let mut v = json!({"next_cursor": jwt, "other": jwt, "cursor": "a secret-token-123 b"});
        s.value(&mut v);
        assert_eq!(v["next_cursor"], jwt);
        assert_eq!(v["other"], "[redacted]");
        assert_eq!(v["cursor"], "a [redacted] b");
    }

    #[test]
    fn exposed_values_outlive_the_call_that_used_them() {
        let exposed = Exposed::default();
        let mut call = exposed.scrubber();
        call.add("deploy-password-42");
        exposed.remember_all(&call);
        let mut later = json!({"body": "the password is deploy-password-42"});
        exposed.scrub(&mut later);
        assert_eq!(later["body"], "the password is [redacted]");
        assert_eq!(exposed.text("x deploy-password-42 y"), "x [redacted] y");
        exposed.remember("short");
        assert_eq!(exposed.text("short"), "short", "values under 6 characters would redact words");
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in [
            "secret_santa_party_planning",
            "the sk_ prefix is for keys",
            "skipped Bearer token",
            "an eyJ thing",
            "ghp_short1",
            "github_pat_",
        ] {
            assert_eq!(redact_tokens(text), None, "{text}");
        }
    }
}
