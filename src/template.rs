//! `{{step:<ref_id>.<path>}}` and `{{vault:NAME}}` resolution, in one pass over the agent's own
//! template.
//!
//! The one-pass rule is a security property: text that came out of a step result is inserted as it
//! is and never scanned again, so a PR title or CSV cell containing `{{vault:x}}` reaches the next
//! tool as that literal text, never as the secret. Anything that opens `{{step:` or `{{vault:` but
//! does not parse is a BAD_REF; it is never passed on literally. Other `{{...}}` text (templating
//! languages in message bodies) is left alone.
//!
//! Memory is budgeted *while* substituting: every piece is weighed (an estimate of the memory it
//! takes, [`weight`]) before it is copied in, so a value over [`Scope::max_bytes`] is refused
//! before it is built, whatever fan-out of refs the template has. A compose's kept step results
//! have their own budget ([`Kept`]), per call and process-wide.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::error::{ErrorCode, ToolFailure};

/// What a step left behind for later refs.
#[derive(Debug, Clone)]
pub enum StepOutcome {
    Ok(Value),
    Failed,
}

/// Looks up a vault secret by name for the tool being called; errors are agent-facing.
pub type VaultLookup<'a> = &'a (dyn Fn(&str) -> Result<String, ToolFailure> + Sync);

/// Where refs may point for one resolution.
pub struct Scope<'a> {
    /// Step results by ref_id; `None` when step refs are not allowed here.
    pub steps: Option<&'a HashMap<String, StepOutcome>>,
    /// Vault access for this tool; `None` when vault refs are not allowed here.
    pub vault: Option<VaultLookup<'a>>,
    /// Explains why step refs are not allowed (shown in the BAD_REF message).
    pub no_steps_reason: &'static str,
    /// Explains why vault refs are not allowed.
    pub no_vault_reason: &'static str,
    /// What is being resolved, for the budget's error ("the arguments of step 's3'").
    pub resolving: &'a str,
    /// Most bytes the resolved value may take ([`weight`]); [`MAX_RESOLVED_BYTES`] normally.
    pub max_bytes: usize,
}

/// Most bytes ([`weight`]) one resolved value may take: an execution's arguments with their refs
/// filled in, or a `return` projection.
pub const MAX_RESOLVED_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes ([`weight`]) of step results one compose keeps for later refs (all steps together).
pub const MAX_KEPT_BYTES: usize = 24 * 1024 * 1024;

/// Most bytes ([`weight`]) of step results all compose runs of this process keep at once.
pub const MAX_KEPT_BYTES_ALL: usize = 64 * 1024 * 1024;

/// What a serde_json value costs besides its text (the enum itself, or a map entry's slot).
const NODE_BYTES: usize = 32;

/// An estimate of the memory `value` takes: [`NODE_BYTES`] per value and per object entry, plus
/// the bytes of every string and key. `None` as soon as it passes `limit` (so weighing a huge
/// value costs at most `limit`'s worth of work).
pub fn weight(value: &Value, limit: usize) -> Option<usize> {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total += NODE_BYTES;
        match v {
            Value::String(s) => total += s.len(),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => {
                for (k, item) in map {
                    total += NODE_BYTES + k.len();
                    stack.push(item);
                }
            }
            _ => {}
        }
        if total > limit {
            return None;
        }
    }
    Some(total)
}

/// Megabytes for messages.
fn mib(bytes: usize) -> String {
    format!("{} MiB", bytes / (1024 * 1024))
}

/// The bytes of step results kept process-wide ([`MAX_KEPT_BYTES_ALL`]).
static KEPT_ALL: AtomicUsize = AtomicUsize::new(0);

/// The step results one compose keeps, weighed against [`MAX_KEPT_BYTES`] and the process-wide
/// [`MAX_KEPT_BYTES_ALL`]; its share of the latter is given back when it drops.
#[derive(Debug)]
pub struct Kept {
    used: usize,
    max: usize,
}

impl Default for Kept {
    fn default() -> Self {
        Kept::new(MAX_KEPT_BYTES)
    }
}

impl Kept {
    pub fn new(max: usize) -> Kept {
        Kept { used: 0, max }
    }

    /// Counts `value`, the result of step `ref_id`, or says why it cannot be kept.
    pub fn keep(&mut self, ref_id: &str, value: &Value) -> Result<(), ToolFailure> {
        let room = self.max.saturating_sub(self.used);
        let too_large = || {
            ToolFailure::new(
                ErrorCode::ResultTooLarge,
                format!(
                    "step '{ref_id}' returned more than a compose keeps: its result and the earlier steps' together pass the budget of {} for kept step results; ask the tool for less (a filter, a smaller page) or split the work into separate calls",
                    mib(self.max)
                ),
            )
            .with("ref", ref_id)
            .with("budget_bytes", self.max)
        };
        let w = weight(value, room).ok_or_else(too_large)?;
        let before = KEPT_ALL.fetch_add(w, Ordering::SeqCst);
        if before + w > MAX_KEPT_BYTES_ALL {
            KEPT_ALL.fetch_sub(w, Ordering::SeqCst);
            return Err(ToolFailure::new(
                ErrorCode::ResultTooLarge,
                format!(
                    "step '{ref_id}' cannot be kept: calls running at the same time already keep {} of step results (the budget of this process); retry when they are done, or ask the tool for less",
                    mib(MAX_KEPT_BYTES_ALL)
                ),
            )
            .with("ref", ref_id)
            .with("budget_bytes", MAX_KEPT_BYTES_ALL));
        }
        self.used += w;
        Ok(())
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        KEPT_ALL.fetch_sub(self.used, Ordering::SeqCst);
    }
}

/// What one resolution has used of its budget.
struct Budget<'s> {
    used: usize,
    max: usize,
    resolving: &'s str,
}

impl Budget<'_> {
    fn room(&self) -> usize {
        self.max.saturating_sub(self.used)
    }

    fn over(&self, at: &str) -> ToolFailure {
        ToolFailure::new(
            ErrorCode::ResultTooLarge,
            format!(
                "{} would take more than {} with {at} filled in (the budget for resolved values); refer to a smaller part of the step's result (a longer path such as {{{{step:id.items.0}}}}) or project it with data_query_json first",
                self.resolving,
                mib(self.max)
            ),
        )
        .with("budget_bytes", self.max)
    }

    /// Adds `n` bytes, or fails naming `at`.
    fn charge(&mut self, n: usize, at: &str) -> Result<(), ToolFailure> {
        if n > self.room() {
            return Err(self.over(at));
        }
        self.used += n;
        Ok(())
    }
}

/// A writer that fails once more than `room` bytes were written (JSON text on a budget).
struct Bounded {
    out: Vec<u8>,
    room: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + buf.len() > self.room {
            return Err(std::io::Error::other("over budget"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The resolved value plus the secret values it now contains (so results can be scrubbed of them).
pub struct Resolved {
    pub value: Value,
    pub secrets: Vec<String>,
}

pub fn resolve(template: &Value, scope: &Scope<'_>) -> Result<Resolved, ToolFailure> {
    let mut secrets = Vec::new();
    let mut budget = Budget { used: 0, max: scope.max_bytes, resolving: scope.resolving };
    let value = walk(template, scope, &mut secrets, &mut budget)?;
    // Each part is at most serde_json's 128 levels, but a step's result placed inside nested
    // arguments is deeper than either, and a chain of steps could grow it without end; every later
    // walk over the value recurses, so the depth is bounded here, where values are combined.
    let max = crate::validate::MAX_VALUE_DEPTH;
    if crate::validate::nests_deeper_than(&value, max) {
        let depth_err = ToolFailure::new(
            ErrorCode::InvalidArguments,
            format!(
                "with its {{{{step:...}}}} refs filled in, this value nests arrays and objects more than {max} levels deep; refer to a smaller part of the step's result (a longer path such as {{{{step:id.items.0}}}}) or project it with data_query_json first"
            ),
        );
        crate::validate::dismantle(value);
        return Err(depth_err);
    }
    Ok(Resolved { value, secrets })
}

/// Whether a template mentions any step ref (used to reject them outside compose up front).
pub fn mentions_step(template: &Value) -> bool {
    match template {
        Value::String(s) => s.contains("{{step:"),
        Value::Array(a) => a.iter().any(mentions_step),
        Value::Object(o) => o.values().any(mentions_step),
        _ => false,
    }
}

/// Every step ref_id a template names, in order; malformed refs are errors.
pub fn step_refs(template: &Value) -> Result<Vec<String>, ToolFailure> {
    let mut out = Vec::new();
    collect_refs(template, &mut out)?;
    Ok(out)
}

/// Every vault secret name a template names, in order; malformed refs are errors.
pub fn vault_names(template: &Value) -> Result<Vec<String>, ToolFailure> {
    fn go(v: &Value, out: &mut Vec<String>) -> Result<(), ToolFailure> {
        match v {
            Value::String(s) if s.contains("{{") => {
                for piece in parse(s)? {
                    if let Piece::Vault { name } = piece
                        && !out.contains(&name)
                    {
                        out.push(name);
                    }
                }
            }
            Value::Array(a) => a.iter().try_for_each(|x| go(x, out))?,
            Value::Object(o) => o.values().try_for_each(|x| go(x, out))?,
            _ => {}
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(template, &mut out)?;
    Ok(out)
}

fn collect_refs(template: &Value, out: &mut Vec<String>) -> Result<(), ToolFailure> {
    match template {
        Value::String(s) => {
            for piece in parse(s)? {
                if let Piece::Step { ref_id, .. } = piece {
                    out.push(ref_id);
                }
            }
        }
        Value::Array(a) => a.iter().try_for_each(|v| collect_refs(v, out))?,
        Value::Object(o) => o.values().try_for_each(|v| collect_refs(v, out))?,
        _ => {}
    }
    Ok(())
}

fn walk(
    template: &Value,
    scope: &Scope<'_>,
    secrets: &mut Vec<String>,
    budget: &mut Budget<'_>,
) -> Result<Value, ToolFailure> {
    Ok(match template {
        Value::String(s) => resolve_string(s, scope, secrets, budget)?,
        Value::Array(items) => {
            budget.charge(NODE_BYTES, "its literal values")?;
            Value::Array(items.iter().map(|v| walk(v, scope, secrets, budget)).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => {
            budget.charge(NODE_BYTES, "its literal values")?;
            let mut out = serde_json::Map::with_capacity(map.len());
            for (k, v) in map {
                budget.charge(NODE_BYTES + k.len(), "its literal values")?;
                out.insert(k.clone(), walk(v, scope, secrets, budget)?);
            }
            Value::Object(out)
        }
        other => {
            budget.charge(NODE_BYTES, "its literal values")?;
            other.clone()
        }
    })
}

#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Step { ref_id: String, path: Vec<String>, raw: String },
    Vault { name: String },
}

fn bad_ref(message: String) -> ToolFailure {
    ToolFailure::new(ErrorCode::BadRef, message)
}

/// Splits a string into literal text and refs.
fn parse(s: &str) -> Result<Vec<Piece>, ToolFailure> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let kind = if after.starts_with("step:") {
            Some("step")
        } else if after.starts_with("vault:") {
            Some("vault")
        } else {
            None
        };
        let Some(kind) = kind else {
            text.push_str(&rest[..open + 2]);
            rest = after;
            continue;
        };
        text.push_str(&rest[..open]);
        let body_start = kind.len() + 1;
        let Some(close) = after.find("}}") else {
            return Err(bad_ref(format!(
                "'{}' opens a {kind} ref but never closes it with '}}}}'",
                preview(&rest[open..])
            )));
        };
        let raw = &rest[open..open + 2 + close + 2];
        let body = &after[body_start..close];
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        if kind == "step" {
            let segments: Vec<&str> = body.split('.').collect();
            let ref_id = segments[0];
            if !valid_ref_id(ref_id) {
                return Err(bad_ref(format!(
                    "'{raw}' is not a valid step ref: expected {{{{step:<ref_id>.<path>}}}} where ref_id uses letters, digits, '_' or '-'"
                )));
            }
            if segments[1..].iter().any(|seg| seg.is_empty() || seg.contains(['{', '}']) || seg.trim() != *seg) {
                return Err(bad_ref(format!(
                    "'{raw}' is not a valid step ref: path segments are keys or array indexes separated by single dots"
                )));
            }
            pieces.push(Piece::Step {
                ref_id: ref_id.to_string(),
                path: segments[1..].iter().map(|s| s.to_string()).collect(),
                raw: raw.to_string(),
            });
        } else {
            if body.is_empty() || !body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
                return Err(bad_ref(format!(
                    "'{raw}' is not a valid vault ref: expected {{{{vault:NAME}}}} with letters, digits, '_', '-' or '.'"
                )));
            }
            pieces.push(Piece::Vault { name: body.to_string() });
        }
        rest = &after[close + 2..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

pub fn valid_ref_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

fn preview(s: &str) -> String {
    let (cut, more) = plugins::api::truncate_chars(s, 60);
    if more { format!("{cut}…") } else { cut }
}

fn resolve_string(
    s: &str,
    scope: &Scope<'_>,
    secrets: &mut Vec<String>,
    budget: &mut Budget<'_>,
) -> Result<Value, ToolFailure> {
    if !s.contains("{{") {
        budget.charge(NODE_BYTES + s.len(), "its literal values")?;
        return Ok(Value::String(s.to_string()));
    }
    let pieces = parse(s)?;
    // A string that is exactly one ref is replaced by the value itself, keeping its type: weighed
    // before it is copied.
    if let [piece @ (Piece::Step { .. } | Piece::Vault { .. })] = pieces.as_slice() {
        return match piece {
            Piece::Step { ref_id, path, raw } => {
                let found = lookup_step(scope, ref_id, path, raw)?;
                let w = weight(found, budget.room()).ok_or_else(|| budget.over(raw))?;
                budget.charge(w, raw)?;
                Ok(found.clone())
            }
            Piece::Vault { name } => {
                let secret = vault_value(scope, name, secrets)?;
                budget.charge(NODE_BYTES + secret.len(), &format!("'{{{{vault:{name}}}}}'"))?;
                Ok(Value::String(secret))
            }
            Piece::Text(_) => unreachable!("matched a ref"),
        };
    }
    budget.charge(NODE_BYTES, "its literal values")?;
    let mut out = String::new();
    for piece in &pieces {
        match piece {
            Piece::Text(t) => {
                budget.charge(t.len(), "its literal values")?;
                out.push_str(t);
            }
            Piece::Step { ref_id, path, raw } => match lookup_step(scope, ref_id, path, raw)? {
                Value::String(t) => {
                    budget.charge(t.len(), raw)?;
                    out.push_str(t);
                }
                other => {
                    // Written as JSON text on the budget: never more than the room left.
                    let mut text = Bounded { out: Vec::new(), room: budget.room() };
                    serde_json::to_writer(&mut text, other).map_err(|_| budget.over(raw))?;
                    budget.charge(text.out.len(), raw)?;
                    out.push_str(&String::from_utf8_lossy(&text.out));
                }
            },
            Piece::Vault { name } => {
                let secret = vault_value(scope, name, secrets)?;
                budget.charge(secret.len(), &format!("'{{{{vault:{name}}}}}'"))?;
                out.push_str(&secret);
            }
        }
    }
    Ok(Value::String(out))
}

fn vault_value(scope: &Scope<'_>, name: &str, secrets: &mut Vec<String>) -> Result<String, ToolFailure> {
    let Some(vault) = scope.vault else {
        return Err(bad_ref(format!("'{{{{vault:{name}}}}}' cannot be used here: {}", scope.no_vault_reason)));
    };
    let secret = vault(name)?;
    secrets.push(secret.clone());
    Ok(secret)
}

fn lookup_step<'v>(scope: &Scope<'v>, ref_id: &str, path: &[String], raw: &str) -> Result<&'v Value, ToolFailure> {
    let Some(steps) = scope.steps else {
        return Err(bad_ref(format!("'{raw}' cannot be used here: {}", scope.no_steps_reason)));
    };
    let mut current = match steps.get(ref_id) {
        Some(StepOutcome::Ok(v)) => v,
        Some(StepOutcome::Failed) => {
            return Err(bad_ref(format!("'{raw}' refers to step '{ref_id}', which failed")).with("ref", ref_id));
        }
        None => {
            let known: Vec<&String> = steps.keys().collect();
            let mut msg = format!("'{raw}' refers to step '{ref_id}', which has no result here");
            if known.is_empty() {
                msg.push_str(" (no earlier step has run; a ref can only read steps before it)");
            } else {
                msg.push_str(&format!(
                    " (available: {})",
                    known.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
            return Err(bad_ref(msg).with("ref", ref_id));
        }
    };
    for (depth, seg) in path.iter().enumerate() {
        let next = match current {
            Value::Object(map) => map.get(seg.as_str()),
            Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        current = match next {
            Some(v) => v,
            None => {
                let at = if depth == 0 { format!("step '{ref_id}'") } else { format!("'{}'", path[..depth].join(".")) };
                let what = match current {
                    Value::Object(m) => {
                        let keys: Vec<&str> = m.keys().take(20).map(String::as_str).collect();
                        format!("its keys are: {}", keys.join(", "))
                    }
                    Value::Array(a) => format!("it is an array of {} item(s)", a.len()),
                    other => format!("it is {}", crate::validate::describe(other)),
                };
                return Err(bad_ref(format!("'{raw}': {at} has no '{seg}'; {what}")).with("ref", ref_id));
            }
        };
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn steps() -> HashMap<String, StepOutcome> {
        let mut m = HashMap::new();
        m.insert(
            "export".into(),
            StepOutcome::Ok(json!({"row_count": 1200, "files": [{"id": "f1"}], "title": "has {{vault:k}} inside"})),
        );
        m.insert("broken".into(), StepOutcome::Failed);
        m
    }

    fn vault(name: &str) -> Result<String, ToolFailure> {
        if name == "k" {
            Ok("s3cr3t".into())
        } else {
            Err(ToolFailure::new(ErrorCode::BadRef, format!("no secret {name}")))
        }
    }

    fn run(t: Value) -> Result<Value, ToolFailure> {
        let s = steps();
        let scope = Scope {
            steps: Some(&s),
            vault: Some(&vault),
            no_steps_reason: "",
            no_vault_reason: "",
            resolving: "the arguments",
            max_bytes: MAX_RESOLVED_BYTES,
        };
        resolve(&t, &scope).map(|r| r.value)
    }

    #[test]
    fn whole_value_refs_keep_their_type() {
        assert_eq!(run(json!("{{step:export.row_count}}")).unwrap(), json!(1200));
        assert_eq!(run(json!({"x": ["{{step:export.files}}"]})).unwrap(), json!({"x": [[{"id": "f1"}]]}));
        assert_eq!(run(json!("{{step:export.files.0.id}}")).unwrap(), json!("f1"));
    }

    #[test]
    fn embedded_refs_interpolate_and_non_strings_become_json() {
        assert_eq!(run(json!("rows: {{step:export.row_count}}!")).unwrap(), json!("rows: 1200!"));
        assert_eq!(run(json!("f={{step:export.files.0}}")).unwrap(), json!("f={\"id\":\"f1\"}"));
    }

    #[test]
    fn step_output_is_never_rescanned_for_vault_refs() {
        assert_eq!(run(json!("{{step:export.title}}")).unwrap(), json!("has {{vault:k}} inside"));
        assert_eq!(run(json!("t: {{step:export.title}}")).unwrap(), json!("t: has {{vault:k}} inside"));
    }

    #[test]
    fn vault_refs_resolve_and_are_reported() {
        let s = steps();
        let scope = Scope {
            steps: Some(&s),
            vault: Some(&vault),
            no_steps_reason: "",
            no_vault_reason: "",
            resolving: "the arguments",
            max_bytes: MAX_RESOLVED_BYTES,
        };
        let r = resolve(&json!({"auth": "Bearer {{vault:k}}"}), &scope).unwrap();
        assert_eq!(r.value, json!({"auth": "Bearer s3cr3t"}));
        assert_eq!(r.secrets, vec!["s3cr3t".to_string()]);
    }

    #[test]
    fn malformed_and_missing_refs_are_bad_refs() {
        for t in [
            "{{step:a.csv.}}",
            "{{step:export.row_count",
            "{{step:}}",
            "{{step:ex port.x}}",
            "{{vault:}}",
            "{{vault:a b}}",
        ] {
            let e = run(json!(t)).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadRef, "{t}");
        }
        let e = run(json!("{{step:export.constructor}}")).unwrap_err();
        assert!(e.message.contains("has no 'constructor'"), "{}", e.message);
        let e = run(json!("{{step:export.files.5}}")).unwrap_err();
        assert!(e.message.contains("array of 1"), "{}", e.message);
        let e = run(json!("{{step:broken.x}}")).unwrap_err();
        assert!(e.message.contains("failed"));
        let e = run(json!("{{step:later.x}}")).unwrap_err();
        assert!(e.message.contains("no result"));
    }

    #[test]
    fn other_braces_are_left_alone() {
        assert_eq!(run(json!("Hello {{name}} and {{ step }}")).unwrap(), json!("Hello {{name}} and {{ step }}"));
    }

    #[test]
    fn scopes_can_forbid_refs() {
        let scope = Scope {
            steps: None,
            vault: None,
            no_steps_reason: "needs compose",
            no_vault_reason: "return never resolves vault refs",
            resolving: "return",
            max_bytes: MAX_RESOLVED_BYTES,
        };
        let e = resolve(&json!("{{vault:k}}"), &scope).err().unwrap();
        assert!(e.message.contains("return never resolves vault refs"));
        let e = resolve(&json!("{{step:a.b}}"), &scope).err().unwrap();
        assert!(e.message.contains("needs compose"));
    }

    /// Attack (issue 26): every ref copies the whole earlier result, so 40 refs to a 100 KB
    /// result in each of a few levels multiply memory; the budget stops it while substituting.
    #[test]
    fn fan_out_refs_stop_at_the_budget_naming_what_and_the_budget() {
        let mut s = HashMap::new();
        s.insert("s1".to_string(), StepOutcome::Ok(Value::String("x".repeat(100_000))));
        s.insert("wide".to_string(), StepOutcome::Ok(Value::Array(vec![json!({"k": "v"}); 200_000])));
        let scope = Scope {
            steps: Some(&s),
            vault: None,
            no_steps_reason: "",
            no_vault_reason: "",
            resolving: "the arguments of step 's2'",
            max_bytes: 1024 * 1024,
        };
        // Ten copies fit in 1 MiB, forty do not: refused at the first ref past the budget.
        let ten = Value::Array(vec![json!("{{step:s1}}"); 10]);
        assert!(resolve(&ten, &scope).is_ok());
        for t in [
            Value::Array(vec![json!("{{step:s1}}"); 40]),
            Value::Array(vec![json!("a{{step:s1}}b"); 40]),
            json!({ "data": [Value::Array(vec![json!("{{step:s1}}"); 40])] }),
        ] {
            let e = resolve(&t, &scope).err().unwrap();
            assert_eq!(e.code, ErrorCode::ResultTooLarge);
            assert!(e.message.contains("the arguments of step 's2'") && e.message.contains("1 MiB"), "{}", e.message);
            assert!(e.message.contains("{{step:s1}}"), "names the ref: {}", e.message);
            assert_eq!(e.details["budget_bytes"], 1024 * 1024);
        }
        // A non-string result interpolated into text is written on the budget too.
        let e = resolve(&json!("all: {{step:wide}}"), &scope).err().unwrap();
        assert_eq!(e.code, ErrorCode::ResultTooLarge, "{}", e.message);
        let e = resolve(&json!("{{step:wide}}"), &scope).err().unwrap();
        assert_eq!(e.code, ErrorCode::ResultTooLarge, "{}", e.message);
    }

    #[test]
    fn weight_counts_nodes_and_text_and_stops_early() {
        assert_eq!(weight(&json!("abc"), usize::MAX), Some(NODE_BYTES + 3));
        assert_eq!(weight(&json!({"ab": 1}), usize::MAX), Some(NODE_BYTES * 3 + 2));
        assert_eq!(weight(&json!([1, 2]), usize::MAX), Some(NODE_BYTES * 3));
        assert_eq!(weight(&Value::Array(vec![json!(0); 1000]), 100), None);
    }

    /// A compose keeps at most its budget of step results, and gives the process-wide share back.
    #[test]
    fn kept_results_have_a_budget() {
        let big = Value::String("y".repeat(600_000));
        let mut kept = Kept::new(1024 * 1024);
        kept.keep("a", &big).unwrap();
        let e = kept.keep("b", &big).unwrap_err();
        assert_eq!(e.code, ErrorCode::ResultTooLarge);
        assert!(e.message.contains("step 'b'") && e.message.contains("1 MiB"), "{}", e.message);
        let held = KEPT_ALL.load(Ordering::SeqCst);
        assert!(held >= 600_000, "{held}");
        drop(kept);
    }
}
