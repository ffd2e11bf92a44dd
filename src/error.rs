//! The one error object agents see: `{error: {code, message, ...}}`.
//!
//! Codes are stable strings an agent can branch on; the message says what happened and what to do
//! next; extra fields carry what the agent needs to fix the call (problems, the integration to
//! connect, the upstream status). Every message passes the scrubber before it leaves the engine.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// Stable error codes; each is documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    ToolNotFound,
    InvalidArguments,
    NotConnected,
    UpstreamError,
    RateLimited,
    NetworkError,
    Timeout,
    BadRef,
    VaultDenied,
    ResultTooLarge,
    SecretStoreUnavailable,
    Cancelled,
    PolicyDenied,
    ConfirmationRequired,
    InternalError,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ErrorCode::NotConnected => "NOT_CONNECTED",
            ErrorCode::UpstreamError => "UPSTREAM_ERROR",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::NetworkError => "NETWORK_ERROR",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::BadRef => "BAD_REF",
            ErrorCode::VaultDenied => "VAULT_DENIED",
            ErrorCode::ResultTooLarge => "RESULT_TOO_LARGE",
            ErrorCode::SecretStoreUnavailable => "SECRET_STORE_UNAVAILABLE",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::PolicyDenied => "POLICY_DENIED",
            ErrorCode::ConfirmationRequired => "CONFIRMATION_REQUIRED",
            ErrorCode::InternalError => "INTERNAL_ERROR",
        }
    }
}

/// `{code, message, ...details}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
}

impl ToolFailure {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolFailure { code, message: message.into(), details: Map::new() }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// The inner object: `{code, message, ...}`.
    pub fn body(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), json!(self.code.as_str()));
        map.insert("message".into(), json!(self.message));
        for (k, v) in &self.details {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }

    /// The wrapped form `{error: {...}}`.
    pub fn to_value(&self) -> Value {
        json!({ "error": self.body() })
    }
}

impl std::fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}
