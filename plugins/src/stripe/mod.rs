//! Stripe: customers, payments (PaymentIntents), refunds, invoices, subscriptions, balance and
//! payment links. A secret or restricted key as `Authorization: Bearer`; request bodies are
//! form-encoded with bracketed keys (`metadata[k]`, `line_items[0][price]`, `expand[]`); every POST
//! carries a fresh `Idempotency-Key` so a retried request never moves money twice; the API version
//! is pinned so response shapes do not drift with the account's default. Amounts are integers in
//! the currency's smallest unit (cents); results add a readable `*_display` next to them.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

mod format;
use format::{currency_code, display, parse_time, time};

mod billing;
mod customers;
mod payments;

use billing::*;
use customers::*;
use payments::*;

pub static INTEGRATION: Integration = Integration {
    name: "stripe",
    display_name: "Stripe",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "api_key",
            label: "Secret or restricted key",
            secret: true,
            required: true,
            help: "dashboard.stripe.com/apikeys — prefer a restricted key (rk_…) limited to what you use; sk_test_… for test mode",
        }],
        inject: Inject::Bearer("api_key"),
        identity: Some(Identity { request: || versioned(HttpRequest::get("/v1/balance")), label: identity_label }),
        oauth: None,
    },
    keywords: &["payments", "refund", "invoice", "subscription", "charge", "payment link", "checkout", "revenue"],
    hosts: &[Host { key: "base_url", default_url: "https://api.stripe.com" }],
    curl_proxy: crate::api::CurlProxy::ReadOnly,
    rate_limit: crate::api::RateLimit::per_second(25),
    side: Some(flow_side),
    tools: &[
        SEARCH_CUSTOMERS,
        GET_CUSTOMER,
        LIST_PAYMENTS,
        CREATE_REFUND,
        LIST_INVOICES,
        CREATE_INVOICE,
        LIST_SUBSCRIPTIONS,
        DELETE_SUBSCRIPTION,
        GET_BALANCE,
        CREATE_PAYMENT_LINK,
    ],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): the account (`GET /v1/account`: `id`, `email`).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(versioned(HttpRequest::get("/v1/account"))).await?.json()?;
        crate::flow::side_from(&me, &["/email"], &["/id"])
    })
}

/// `stripe_create_invoice`: a draft stays in the account (inside); a finalized invoice has a
/// hosted page the customer (anyone with its URL) opens, and `auto_send` emails it to the
/// customer: outside (flows.md section 3, "invoices sent to a customer").
fn invoice_audience(
    _up: Arc<dyn Upstream>,
    args: Value,
    _side: Arc<crate::flow::Side>,
) -> BoxFuture<Result<crate::flow::Verdict, ToolError>> {
    use crate::flow::{Party, Verdict};
    let on = |k: &str| args[k].as_bool() == Some(true);
    let customer = crate::flow::arg_str(&args, "customer_id").unwrap_or("?").to_string();
    crate::flow::ready(Ok(if on("auto_send") || on("finalize") {
        Verdict::outside(Party::Named(format!("customer {customer} (the invoice's page and email)")))
    } else {
        Verdict::Inside
    }))
}

/// The API version every request pins, so response shapes do not follow the account's default.
const STRIPE_VERSION: &str = "2025-03-31.basil";

fn versioned(req: HttpRequest) -> HttpRequest {
    req.header("Stripe-Version", STRIPE_VERSION)
}

fn identity_label(body: &Value) -> Option<String> {
    let mode = if body["livemode"].as_bool()? { "live" } else { "test" };
    Some(format!("Stripe account ({mode} mode)"))
}

/// `{error:{type, code, message, param}}`.
fn error_message(body: &Value) -> Option<String> {
    let e = &body["error"];
    let message = e["message"].as_str()?;
    Some(match e["code"].as_str().or(e["type"].as_str()) {
        Some(code) => format!("{message} ({code})"),
        None => message.to_string(),
    })
}

/// A GET or DELETE with the pinned version.
async fn call(up: &dyn Upstream, req: HttpRequest) -> Result<Value, ToolError> {
    up.send(versioned(req)).await?.json()
}

/// A form POST with its own Idempotency-Key: a retry of this exact request replays Stripe's stored
/// answer instead of acting twice.
async fn post(up: &dyn Upstream, path: String, form: Vec<(String, String)>) -> Result<Value, ToolError> {
    let req = versioned(HttpRequest::post(path)).header("Idempotency-Key", up.new_id()).form(form);
    up.send(req).await?.json()
}

fn pair(k: &str, v: impl ToString) -> (String, String) {
    (k.to_string(), v.to_string())
}

fn id_segment(id: &str) -> String {
    encode_segment(id)
}

// ---------------------------------------------------------------- pages

/// A list page: shaped items, and a cursor (the last id) when Stripe has more.
fn list_page(body: Value, key: &str, shape: fn(&Value) -> Value, include_raw: bool) -> Value {
    let data = body["data"].as_array().cloned().unwrap_or_default();
    let items: Vec<Value> = data.iter().map(shape).collect();
    let next = if body["has_more"].as_bool() == Some(true) { data.last().map(|d| d["id"].clone()) } else { None };
    let mut out = compact(json!({key: items, "next_cursor": next}));
    if include_raw {
        out["raw"] = body;
    }
    out
}

fn metadata(m: &Value) -> Value {
    match m.as_object() {
        Some(o) if !o.is_empty() => m.clone(),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_literals_are_escaped() {
        assert_eq!(quoted("o'neil@example.com"), r"'o\'neil@example.com'");
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        for t in INTEGRATION.tools {
            assert!(t.results.is_some(), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) =
            MockUpstream::new().json(serde_json::json!({"id": "acct_1", "email": "billing@acme.example"})).side(side);
        let s = s.unwrap();
        assert!(s.has_id("acct_1") && s.has_email("ann@acme.example"));
        assert_eq!(reqs[0].path, "/v1/account");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        let draft = serde_json::json!({"customer_id": "cus_1", "currency": "eur"});
        let v = |args: Value| MockUpstream::new().verdict(&CREATE_INVOICE, args, &s);
        assert_eq!(v(draft.clone()), crate::flow::Verdict::Inside);
        for k in ["finalize", "auto_send"] {
            let mut a = draft.clone();
            a[k] = serde_json::json!(true);
            assert!(matches!(v(a), crate::flow::Verdict::Outside { .. }), "{k}");
        }
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
