//! Approvals on 2026-07-28 sessions: the multi-round-trip flow (SEP-2322). Servers may not send
//! requests there, so a `tools/call` the safety policy holds answers `input_required` with one
//! form elicitation per held execution; the client asks the user and retries the same call with
//! `inputResponses` and the `requestState` echoed back.
//!
//! rmcp provides the wire types and the HMAC codec (`RequestStateCodec`, associated data + TTL).
//! What it leaves to the server, and this module adds, is the binding and single use:
//!
//! - the key is derived from the per-install curl proxy key (`proxy:signing_key`) under a
//!   domain-separation label, so nothing a client holds can forge a state;
//! - the associated data binds the state to this server session (a random id per process) and to
//!   the digest of the whole `tools/call` (tool name and arguments), so it works for no other call;
//! - each question carries a keyed tag over (tool, integration, digest of the resolved arguments),
//!   so an answer approves exactly the execution it was asked for, and the digest never leaves the
//!   process in the clear (arguments can hold resolved vault values);
//! - a nonce in the payload is spent on first use ([`Spent`]), and an expiry (five minutes) is
//!   checked, so a replayed or stale state is refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitationSchema, InputRequest, InputRequests, InputResponses,
    RequestStateCodec, RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::app::App;
use crate::engine::policy::{Approval, ApprovalRequest, ApproveFn};

/// How long a sealed request state is accepted.
pub const STATE_TTL: Duration = Duration::from_secs(300);

const KEY_LABEL: &[u8] = b"workbench/mrtr/request-state/key/v1\0";
const TAG_LABEL: &[u8] = b"workbench/mrtr/request-state/tag/v1\0";
const AD_LABEL: &str = "workbench/mrtr/request-state/v1";

/// Why a request state was refused (said to the caller as is; nothing was run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error(
        "the requestState does not belong to this call: it was altered, comes from another session, or the call's arguments changed"
    )]
    Altered,
    #[error(
        "the requestState expired (approvals are answered within 5 minutes); call the tool again to be asked again"
    )]
    Expired,
    #[error("the requestState was already used; an approval works once, so call the tool again to be asked again")]
    Replayed,
    #[error("the approval key could not be read from the secret store: {0}")]
    Key(String),
}

/// One question inside a sealed state: its `inputRequests` key and the keyed tag of the execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    pub tag: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    /// Single use.
    nonce: String,
    /// Unix milliseconds.
    exp: i64,
    entries: Vec<Entry>,
    /// A `connect` round: the answer the first round minted (its link), returned on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<Value>,
}

/// What a verified request state holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The approval questions of the round.
    pub entries: Vec<Entry>,
    /// A `connect` round's answer (none for approvals).
    pub link: Option<Value>,
}

/// Nonces of states already used, with their expiry (unix ms); pruned as they expire.
#[derive(Default)]
pub struct Spent(Mutex<HashMap<String, i64>>);

impl Spent {
    fn spend(&self, nonce: &str, exp: i64, now: i64) -> bool {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|_, e| *e > now);
        all.insert(nonce.to_string(), exp).is_none()
    }
}

/// Seals and opens request states under the per-install key.
pub struct Sealer {
    codec: RequestStateCodec,
    tag_key: [u8; 32],
}

fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The digest of a whole `tools/call`: its tool name and arguments in canonical JSON.
pub fn call_digest(tool: &str, args: &Value) -> String {
    crate::approval::args_digest(&json!({ "name": tool, "arguments": args }))
}

impl Sealer {
    /// A sealer whose keys are derived from `install_key` (the curl proxy key) under their own labels.
    pub fn new(install_key: &[u8]) -> Sealer {
        let derive = |label: &[u8]| -> [u8; 32] {
            let mut h = Sha256::new();
            h.update(label);
            h.update(install_key);
            h.finalize().into()
        };
        // Both keys are 32 bytes (SHA-256), the codec's minimum.
        Sealer { codec: RequestStateCodec::new_unchecked(derive(KEY_LABEL).to_vec()), tag_key: derive(TAG_LABEL) }
    }

    /// The keyed tag of one execution in one session.
    pub fn tag(&self, session: &str, request: &ApprovalRequest) -> String {
        let mut h = Sha256::new();
        h.update(self.tag_key);
        for part in [session, &request.action, &request.integration, &request.args_sha256] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        hex(&h.finalize())
    }

    fn associated(session: &str, call: &str) -> Vec<u8> {
        format!("{AD_LABEL}\n{session}\n{call}").into_bytes()
    }

    /// Seals the questions of one round for this session and call.
    pub fn seal(&self, session: &str, call: &str, entries: Vec<Entry>, ttl: Duration) -> String {
        self.seal_payload(session, call, entries, None, ttl)
    }

    /// Seals a `connect` round: the link it minted, handed back on the retry.
    pub fn seal_link(&self, session: &str, call: &str, link: Value, ttl: Duration) -> String {
        self.seal_payload(session, call, Vec::new(), Some(link), ttl)
    }

    fn seal_payload(
        &self,
        session: &str,
        call: &str,
        entries: Vec<Entry>,
        link: Option<Value>,
        ttl: Duration,
    ) -> String {
        let payload =
            Payload { nonce: crate::ids::random_hex(16), exp: now_ms() + ttl.as_millis() as i64, entries, link };
        let bytes = serde_json::to_vec(&payload).unwrap_or_default();
        let ad = Self::associated(session, call);
        self.codec.seal_with(&bytes, &SealOptions::new().associated_data(&ad).ttl(ttl))
    }

    /// Opens a state echoed back for this session and call, at `now` (unix ms), spending it.
    pub fn open(&self, state: &str, session: &str, call: &str, now: i64, spent: &Spent) -> Result<Opened, StateError> {
        let ad = Self::associated(session, call);
        let bytes = self.codec.open_with(state, &ad).map_err(|e| match e {
            RequestStateError::Expired => StateError::Expired,
            _ => StateError::Altered,
        })?;
        let payload: Payload = serde_json::from_slice(&bytes).map_err(|_| StateError::Altered)?;
        if now >= payload.exp {
            return Err(StateError::Expired);
        }
        if !spent.spend(&payload.nonce, payload.exp, now) {
            return Err(StateError::Replayed);
        }
        Ok(Opened { entries: payload.entries, link: payload.link })
    }
}

/// The sealer of this install, built from the curl proxy key (read from, or created in, the
/// secret store on first use).
pub async fn sealer(app: &Arc<App>) -> Result<Sealer, StateError> {
    let key = crate::proxy::signing_key(app).await.map_err(|e| StateError::Key(e.to_string()))?;
    Ok(Sealer::new(key.expose()))
}

/// The user's answer to "allow this?" (the same form as 2025-11-25 elicitation).
#[derive(Debug, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Approve {
    /// Allow workbench to run it.
    pub approve: bool,
}

/// The form asking [`Approve`] as sent (both the 2025-11-25 elicitation and the input-required
/// round): what `ElicitationSchema::from_type::<Approve>()` makes, committed so the server runs
/// no schema generator (a test checks the two are the same; `Approve` derives `JsonSchema` in
/// tests only).
const APPROVE_FORM: &str = r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","title":"Approve","properties":{"approve":{"type":"boolean","description":"Allow workbench to run it."}},"required":["approve"],"description":"The user's answer to \"allow this?\" (the same form as 2025-11-25 elicitation)."}"#;

/// The form asking [`Approve`], read from its committed text.
pub fn approve_form() -> Result<ElicitationSchema, serde_json::Error> {
    serde_json::from_str(APPROVE_FORM)
}

/// One `tools/call` on a 2026-07-28 session with form elicitation: what the retry brought (the
/// verified questions and the client's answers) and what this round still has to ask.
pub struct Round {
    app: Arc<App>,
    session: Arc<str>,
    answered: Mutex<Vec<(Entry, bool)>>,
    responses: InputResponses,
    asked: Mutex<Vec<(Entry, ApprovalRequest)>>,
    sealer: tokio::sync::OnceCell<Arc<Sealer>>,
}

impl Round {
    pub fn new(app: Arc<App>, session: Arc<str>, answered: Vec<Entry>, responses: InputResponses) -> Arc<Round> {
        Arc::new(Round {
            app,
            session,
            answered: Mutex::new(answered.into_iter().map(|e| (e, false)).collect()),
            responses,
            asked: Mutex::new(Vec::new()),
            sealer: tokio::sync::OnceCell::new(),
        })
    }

    async fn sealer(&self) -> Result<Arc<Sealer>, StateError> {
        self.sealer.get_or_try_init(|| async { sealer(&self.app).await.map(Arc::new) }).await.cloned()
    }

    /// The approver of this round: an answered question approves (or refuses) its execution; an
    /// execution nobody asked about yet is queued as a question and held.
    pub fn approver(self: &Arc<Self>) -> ApproveFn {
        let round = self.clone();
        Arc::new(move |request: ApprovalRequest| {
            let round = round.clone();
            Box::pin(async move {
                let sealer = match round.sealer().await {
                    Ok(s) => s,
                    Err(e) => return Approval::Unavailable(format!("the question could not be sealed ({e})")),
                };
                let tag = sealer.tag(&round.session, &request);
                let key = {
                    let mut answered = round.answered.lock().unwrap_or_else(|p| p.into_inner());
                    answered.iter_mut().find(|(e, used)| !*used && e.tag == tag).map(|(e, used)| {
                        *used = true;
                        e.key.clone()
                    })
                };
                if let Some(key) = key {
                    return answer(round.responses.get(&key));
                }
                let mut asked = round.asked.lock().unwrap_or_else(|p| p.into_inner());
                let key = format!("approve_{}", asked.len() + 1);
                asked.push((Entry { key, tag }, request));
                Approval::Declined("waiting for the user's answer in the client (input required)".into())
            })
        })
    }

    /// The `input_required` answer when this round queued questions: one form elicitation per
    /// held execution and the sealed state.
    pub fn input_required(&self, call: &str) -> Option<(InputRequests, String)> {
        let asked = std::mem::take(&mut *self.asked.lock().unwrap_or_else(|p| p.into_inner()));
        if asked.is_empty() {
            return None;
        }
        let sealer = self.sealer.get()?.clone();
        let schema = approve_form().ok()?;
        let mut requests = InputRequests::new();
        let mut entries = Vec::new();
        for (entry, request) in asked {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.summary.clone(),
                requested_schema: schema.clone(),
            };
            requests.insert(entry.key.clone(), InputRequest::Elicitation(ElicitRequest::new(params)));
            entries.push(entry);
        }
        Some((requests, sealer.seal(&self.session, call, entries, STATE_TTL)))
    }
}

/// The key of the one question of a `connect` round.
pub const OPEN_LINK: &str = "open_connect_page";

/// The `inputRequests` of a `connect` whose client opens links (URL-mode elicitation): "open this
/// loopback page for the user". The credential is typed on that page, never into the client.
pub fn link_request(message: String, url: &str, connection_id: &str) -> InputRequests {
    let params = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message,
        url: url.to_string(),
        elicitation_id: connection_id.to_string(),
    };
    let mut requests = InputRequests::new();
    requests.insert(OPEN_LINK.to_string(), InputRequest::Elicitation(ElicitRequest::new(params)));
    requests
}

/// Whether the client's answer to a `connect` round says the user agreed to open the page.
pub fn link_opened(responses: Option<&InputResponses>) -> bool {
    responses
        .and_then(|r| r.get(OPEN_LINK))
        .and_then(|r| r.get("action"))
        .and_then(Value::as_str)
        .is_some_and(|a| a == "accept")
}

/// The client's answer to one question.
fn answer(response: Option<&Value>) -> Approval {
    let Some(r) = response else {
        return Approval::Declined("the client sent no answer to the question".into());
    };
    match r.get("action").and_then(Value::as_str) {
        Some("accept") => match r.pointer("/content/approve").and_then(Value::as_bool) {
            Some(true) => Approval::Approved,
            Some(false) => Approval::Declined("the user answered no".into()),
            None => Approval::Declined("the user gave no answer".into()),
        },
        Some("decline") => Approval::Declined("the user declined".into()),
        Some("cancel") => Approval::Declined("the user dismissed the question".into()),
        _ => Approval::Declined("the client's answer could not be read".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_approve_form_is_the_generated_one() {
        let generated = ElicitationSchema::from_type::<Approve>().unwrap();
        assert_eq!(serde_json::to_string(&generated).unwrap(), APPROVE_FORM, "update APPROVE_FORM");
        let read = approve_form().unwrap();
        assert_eq!(read, generated);
        assert_eq!(serde_json::to_string(&read).unwrap(), APPROVE_FORM);
    }

    fn request(args: Value) -> ApprovalRequest {
        ApprovalRequest {
            action: "vault_delete_secret".into(),
            integration: "vault".into(),
            summary: "delete K".into(),
            args_sha256: crate::approval::args_digest(&args),
            shown: args,
        }
    }

    fn sealed(s: &Sealer, session: &str, call: &str) -> String {
        let tag = s.tag(session, &request(json!({"name": "K"})));
        s.seal(session, call, vec![Entry { key: "approve_1".into(), tag }], STATE_TTL)
    }

    #[test]
    fn a_state_opens_once_for_its_session_and_call() {
        let s = Sealer::new(&[7u8; 32]);
        let call = call_digest("execute_tools", &json!({"executions": [{"tool": "vault_delete_secret"}]}));
        let state = sealed(&s, "session-a", &call);
        let spent = Spent::default();
        let entries = s.open(&state, "session-a", &call, now_ms(), &spent).unwrap().entries;
        assert_eq!(entries[0].tag, s.tag("session-a", &request(json!({"name": "K"}))));
        assert_ne!(entries[0].tag, s.tag("session-a", &request(json!({"name": "L"}))), "bound to the arguments");
        assert_ne!(entries[0].tag, s.tag("session-b", &request(json!({"name": "K"}))), "bound to the session");
        // Replay: a state works once.
        assert_eq!(s.open(&state, "session-a", &call, now_ms(), &spent), Err(StateError::Replayed));
    }

    /// Attack: a client edits the sealed state (say, to add a question it answers itself).
    #[test]
    fn a_tampered_state_is_refused() {
        let s = Sealer::new(&[7u8; 32]);
        let call = call_digest("execute_tools", &json!({}));
        let state = sealed(&s, "session-a", &call);
        let spent = Spent::default();
        let mut bytes = state.clone().into_bytes();
        let i = bytes.len() / 2;
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        assert_eq!(s.open(&tampered, "session-a", &call, now_ms(), &spent), Err(StateError::Altered));
        assert_eq!(s.open("rs1.garbage", "session-a", &call, now_ms(), &spent), Err(StateError::Altered));
        // Another install's key.
        let other = Sealer::new(&[8u8; 32]);
        assert_eq!(other.open(&state, "session-a", &call, now_ms(), &spent), Err(StateError::Altered));
    }

    /// Attack: a state from another session, or replayed against another call (other arguments).
    #[test]
    fn another_session_or_call_is_refused() {
        let s = Sealer::new(&[7u8; 32]);
        let call = call_digest(
            "execute_tools",
            &json!({"executions": [{"tool": "vault_delete_secret", "args": {"name": "K"}}]}),
        );
        let other_call = call_digest(
            "execute_tools",
            &json!({"executions": [{"tool": "vault_delete_secret", "args": {"name": "L"}}]}),
        );
        let state = sealed(&s, "session-a", &call);
        let spent = Spent::default();
        assert_eq!(s.open(&state, "session-b", &call, now_ms(), &spent), Err(StateError::Altered));
        assert_eq!(s.open(&state, "session-a", &other_call, now_ms(), &spent), Err(StateError::Altered));
        assert!(s.open(&state, "session-a", &call, now_ms(), &spent).is_ok(), "refusals spend nothing");
    }

    /// Attack: a state kept past its lifetime.
    #[test]
    fn an_expired_state_is_refused() {
        let s = Sealer::new(&[7u8; 32]);
        let call = call_digest("execute_tools", &json!({}));
        let state = sealed(&s, "session-a", &call);
        let later = now_ms() + STATE_TTL.as_millis() as i64 + 1;
        assert_eq!(s.open(&state, "session-a", &call, later, &Spent::default()), Err(StateError::Expired));
        let short = s.seal("session-a", &call, vec![], Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(s.open(&short, "session-a", &call, now_ms(), &Spent::default()), Err(StateError::Expired));
    }

    #[test]
    fn answers_are_read_strictly() {
        assert_eq!(answer(Some(&json!({"action": "accept", "content": {"approve": true}}))), Approval::Approved);
        for r in [
            json!({"action": "accept", "content": {"approve": false}}),
            json!({"action": "accept", "content": {"approve": "true"}}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"action": "cancel"}),
            json!({"approve": true}),
        ] {
            assert!(matches!(answer(Some(&r)), Approval::Declined(_)), "{r}");
        }
        assert!(matches!(answer(None), Approval::Declined(_)));
    }
}
