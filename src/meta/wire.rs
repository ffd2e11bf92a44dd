//! The wire form of every answer: the one place where a meta-tool's typed answer or failure, and a
//! batch's typed outcome ([`Batched`]), become the JSON the agent reads. Nothing else in the
//! engine, the meta-tools, the portal or the CLI builds or reads an answer's JSON (the tidy test
//! checks it); they pass types, and the MCP dispatch ([`super::Tool::call`]) and the CLI's JSON
//! output come here.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::{Failure, Finish, Hint, runstack::RunFailure};
use crate::app::App;
use crate::engine::{Batched, Missed, cap};
use crate::error::{ErrorCode, ToolFailure};

/// What goes back to the agent; `is_error` when the call as a whole failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub body: Value,
    pub is_error: bool,
}

/// A typed answer as the agent gets it.
pub fn answer<T: Serialize>(result: Result<T, Failure>) -> Answer {
    match result.and_then(|t| {
        serde_json::to_value(t).map_err(|e| {
            Failure::Tool(ToolFailure::new(ErrorCode::InternalError, format!("the answer could not be encoded: {e}")))
        })
    }) {
        Ok(body) => Answer { body, is_error: false },
        Err(f) => Answer { body: failure(&f), is_error: true },
    }
}

/// A batch's answer as execute_tools gives it: every secret known now, and the size cap.
pub fn batch(app: &App, outcome: &Batched) -> Answer {
    let is_error = outcome.is_error();
    let body = serde_json::to_value(outcome).unwrap_or_else(|e| {
        ToolFailure::new(ErrorCode::InternalError, format!("the answer could not be encoded: {e}")).to_value()
    });
    finish(app, Finish::ScrubbedAndCapped, Answer { body, is_error })
}

/// The whole answer through what its meta-tool asks for ([`Finish`]).
pub fn finish(app: &App, how: Finish, mut answer: Answer) -> Answer {
    if how == Finish::ScrubbedAndCapped {
        app.exposed.scrub(&mut answer.body);
    }
    if how != Finish::AsIs && cap::cap_response(&mut answer.body, cap::MAX_RESPONSE_CHARS) {
        tracing::info!("a meta-tool answer shrunk to the size cap");
    }
    answer
}

/// A failure as the agent reads it.
pub fn failure(f: &Failure) -> Value {
    match f {
        Failure::Tool(f) => f.to_value(),
        Failure::Plain { message, hints } => {
            let mut map = Map::new();
            map.insert("error".into(), json!(message));
            for hint in hints {
                write_hint(&mut map, hint);
            }
            Value::Object(map)
        }
        Failure::Batch(b) => serde_json::to_value(b).unwrap_or(Value::Null),
    }
}

fn write_hint(map: &mut Map<String, Value>, hint: &Hint) {
    match hint {
        Hint::ToolName(name) => {
            map.insert("toolName".into(), json!(name));
        }
        Hint::DidYouMean(names) => {
            map.insert("did_you_mean".into(), json!(names));
        }
        Hint::Nearest(name) => {
            map.insert("did_you_mean".into(), json!(name));
        }
        Hint::UnlockUrl(url) => {
            map.insert("unlock_url".into(), json!(url));
        }
        Hint::Pattern(pattern) => {
            map.insert("pattern".into(), json!(pattern));
        }
        Hint::Refusal(f) => {
            map.insert("code".into(), json!(f.code.as_str()));
            for (k, v) in &f.details {
                map.insert(k.clone(), v.clone());
            }
        }
        Hint::Run(RunFailure::InvalidArguments { expected, provided, problems }) => {
            map.insert("expectedParameters".into(), expected.clone());
            map.insert("providedParameters".into(), json!(provided));
            map.insert("problems".into(), problems.clone());
        }
        Hint::Run(RunFailure::NeedsConnection { required_auth, provider, accounts, message }) => {
            map.insert("requiredAuth".into(), json!(required_auth));
            map.insert("provider".into(), json!(provider));
            if let Some(accounts) = accounts {
                map.insert("accounts".into(), accounts.clone());
            }
            map.insert("message".into(), json!(message));
        }
        // The error object's fields after the ones the answer has.
        Hint::Run(RunFailure::Failed(f)) => {
            if let Value::Object(body) = f.body() {
                for (k, v) in body {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// `{results: [...]}`, `{result, errors?}`, or `{error: {...}, completed?, not_run?}`.
impl Serialize for Batched {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self {
            Batched::Refused(f) => map.serialize_entry("error", &f.body())?,
            Batched::Each(results) => map.serialize_entry("results", &Each(results))?,
            Batched::Projected { result, errors } => {
                match result {
                    Ok(v) => map.serialize_entry("result", v)?,
                    Err(f) => map.serialize_entry("error", &f.body())?,
                }
                if !errors.is_empty() {
                    map.serialize_entry("errors", &Errors(errors))?;
                }
            }
            Batched::Composed(v) => map.serialize_entry("result", v)?,
            Batched::StepFailed { index, ref_id, failure, completed, not_run } => {
                let mut body = failure.body();
                body["index"] = json!(index);
                body["ref_id"] = json!(ref_id);
                map.serialize_entry("error", &body)?;
                map.serialize_entry("completed", completed)?;
                map.serialize_entry("not_run", not_run)?;
            }
            Batched::ReturnFailed { failure, completed } => {
                map.serialize_entry("error", &failure.body())?;
                map.serialize_entry("completed", completed)?;
            }
        }
        map.end()
    }
}

/// One entry per execution: `{result}` or `{error: {...}}`.
struct Each<'a>(&'a [Result<Value, ToolFailure>]);

impl Serialize for Each<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            seq.serialize_element(&Item(r))?;
        }
        seq.end()
    }
}

struct Item<'a>(&'a Result<Value, ToolFailure>);

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        match self.0 {
            Ok(v) => map.serialize_entry("result", v)?,
            Err(f) => map.serialize_entry("error", &f.body())?,
        }
        map.end()
    }
}

/// `[{index, error: {...}, ref_id?}]`.
struct Errors<'a>(&'a [Missed]);

impl Serialize for Errors<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for m in self.0 {
            seq.serialize_element(&MissedEntry(m))?;
        }
        seq.end()
    }
}

struct MissedEntry<'a>(&'a Missed);

impl Serialize for MissedEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("index", &m.index)?;
        map.serialize_entry("error", &m.failure.body())?;
        if let Some(id) = &m.ref_id {
            map.serialize_entry("ref_id", id)?;
        }
        map.end()
    }
}
