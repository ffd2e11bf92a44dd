//! A custom app's definition as the agent writes it (`AppDef`, `AuthDef`, `OperationDef`) and
//! what checking makes of it (`Operation`, `CheckedApp`), plus the names apps may not take.

use super::*;

/// A custom app as the agent defines it (the `custom_create_app` arguments).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppDef {
    /// The app's name: 2-30 lowercase letters and digits, starting with a letter (e.g. "acme").
    /// Its tools are named `<name>_<verb>_<object>`.
    pub name: String,
    /// What the service is, in a sentence (indexed by search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The API's base URL, http or https, e.g. "https://api.acme.com/v2". Operation paths are
    /// appended to it.
    pub base_url: String,
    /// How requests authenticate; secret parts must be `{{vault:NAME}}` refs. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthDef>,
    /// Extra headers sent with every request (values may contain `{{vault:NAME}}` refs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The operations; each becomes one tool.
    pub operations: Vec<OperationDef>,
}

/// The auth scheme: `none`; `bearer` (token); `header` (name, value); `basic` (username,
/// password); `query` (name, value).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthDef {
    /// One of none, bearer, header, basic, query.
    #[serde(rename = "type")]
    pub kind: AuthScheme,
    /// bearer: the token, as a vault ref, e.g. "{{vault:ACME_TOKEN}}".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// header/query: the header or query parameter name, e.g. "X-Api-Key".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// header/query: the value, containing a vault ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// basic: the user name (plain text or a vault ref).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// basic: the password, as a vault ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthScheme {
    None,
    Bearer,
    Header,
    Basic,
    Query,
}

/// One operation: one HTTP request shape, one tool.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationDef {
    /// The tool's name: `<app>_<verb>_<object>`, lowercase, e.g. "acme_list_invoices".
    pub tool_name: String,
    /// GET, POST, PUT, PATCH or DELETE.
    pub method: String,
    /// Path under base_url, starting with "/"; `{param}` placeholders are filled from the
    /// arguments (each must be a required parameter), e.g. "/invoices/{invoice_id}".
    pub path: String,
    /// What the tool does, for the agent (indexed by search).
    pub description: String,
    /// JSON Schema of the arguments: an object schema with `properties` and `required`.
    /// Arguments not used by the path or the body template go in the query string (GET,
    /// DELETE) or the JSON body (POST, PUT, PATCH without a body template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Optional JSON body template: a string that is exactly "{{param}}" becomes that
    /// argument's value; "{{param}}" inside a longer string is replaced by its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// Whether the operation changes anything. Every method but GET always counts as a change;
    /// set true to mark a GET that changes something too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutating: Option<bool>,
}

/// A checked operation, ready to run.
#[derive(Debug)]
pub struct Operation {
    pub app: Arc<CheckedApp>,
    pub tool_name: String,
    pub method: reqwest::Method,
    pub path: String,
    pub path_params: Vec<String>,
    pub body: Option<Value>,
    pub body_params: Vec<String>,
    pub schema: Value,
    pub effect: Effect,
    pub description: String,
}

/// A checked app: what its operations share.
#[derive(Debug)]
pub struct CheckedApp {
    pub def: AppDef,
    /// The base URL without a trailing slash.
    pub base_url: String,
    /// The host every request of this app goes to.
    pub host: String,
    /// The origin every request of this app goes to (vault refs must allow it): scheme, host, port.
    pub origin: String,
}

/// Names that are not free for custom apps and their tools.
pub struct ReservedNames<'a> {
    /// Catalogue integrations and built-in namespaces (and meta-tool names).
    pub namespaces: &'a dyn Fn(&str) -> bool,
    /// Catalogue and built-in tool names.
    pub tools: &'a dyn Fn(&str) -> bool,
}
