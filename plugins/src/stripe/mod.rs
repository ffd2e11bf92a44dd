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

// ---------------------------------------------------------------- customers

fn shape_customer(c: &Value) -> Value {
    if c["deleted"].as_bool() == Some(true) {
        return json!({"id": c["id"], "deleted": true});
    }
    let pm = &c["invoice_settings"]["default_payment_method"];
    let payment_method = match pm {
        Value::Object(_) => shape_payment_method(pm),
        other => other.clone(),
    };
    let balance = c["balance"].as_i64().filter(|b| *b != 0);
    compact(json!({
        "id": c["id"],
        "name": c["name"],
        "email": c["email"],
        "phone": c["phone"],
        "description": c["description"],
        "created": time(&c["created"]),
        "currency": c["currency"],
        "balance": balance,
        "balance_display": balance.map(|b| display(&json!(b), &c["currency"])),
        "delinquent": c["delinquent"].as_bool().filter(|d| *d),
        "default_payment_method": payment_method,
        "default_source": c["default_source"].as_str(),
        "metadata": metadata(&c["metadata"]),
    }))
}

fn shape_payment_method(pm: &Value) -> Value {
    compact(json!({
        "id": pm["id"],
        "type": pm["type"],
        "brand": pm["card"]["brand"],
        "last4": pm["card"]["last4"],
        "exp": pm["card"]["exp_month"].as_u64().zip(pm["card"]["exp_year"].as_u64()).map(|(m, y)| format!("{m:02}/{y}")),
    }))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchCustomers {
    /// Stripe search query, e.g. name~'jen' (contains), email:'a@b.com' (exact), metadata['crm_id']:'42', created>1700000000; combine with AND / OR. Give this or email.
    query: Option<String>,
    /// Exact email address to look up, instead of query.
    email: Option<String>,
    /// Customers per page (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the query the same.
    cursor: Option<String>,
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

/// A Stripe search string literal.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

pub(crate) const SEARCH_CUSTOMERS: ToolSpec = tool! {
    name: "stripe_search_customers",
    effect: Read,
    results: Private,
    args: SearchCustomers,
    run: search_customers,
    keywords: ["find customer", "lookup by email", "client", "payer", "buyer", "search customers"],
    description: "Find Stripe customers by email, or with a Stripe search query such as name~'jen' or metadata['crm_id']:'42'. Newly created customers can take about a minute to become searchable.",
};

async fn search_customers(up: Arc<dyn Upstream>, args: SearchCustomers) -> Result<Value, ToolError> {
    let query = match (args.query.as_deref().filter(|q| !q.trim().is_empty()), args.email.as_deref()) {
        (Some(q), None) => q.to_string(),
        (None, Some(e)) => format!("email:{}", quoted(e)),
        _ => {
            return Err(invalid(
                "",
                "give either query or email (one of them)",
                "expected exactly one of query, email",
            ));
        }
    };
    let req = HttpRequest::get("/v1/customers/search")
        .query("query", &query)
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("page", args.cursor.as_deref());
    let body = call(&*up, req).await?;
    let customers: Vec<Value> = body["data"].as_array().into_iter().flatten().map(shape_customer).collect();
    let next = if body["has_more"].as_bool() == Some(true) { body["next_page"].as_str() } else { None };
    let mut out = compact(json!({"query": query, "customers": customers, "next_cursor": next}));
    if args.include_raw {
        out["raw"] = body;
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetCustomer {
    /// The customer id (cus_…).
    #[schemars(length(min = 1))]
    customer_id: String,
    /// Related objects to include in full, e.g. ["invoice_settings.default_payment_method", "subscriptions"]. Default: the default payment method.
    expand: Option<Vec<String>>,
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_CUSTOMER: ToolSpec = tool! {
    name: "stripe_get_customer",
    effect: Read,
    results: Private,
    args: GetCustomer,
    run: get_customer,
    keywords: ["customer details", "default payment method", "card on file", "credit balance", "customer address"],
    description: "Get one Stripe customer by id (cus_…): contact details, default payment method, account credit balance, currency and metadata.",
};

async fn get_customer(up: Arc<dyn Upstream>, args: GetCustomer) -> Result<Value, ToolError> {
    let expand = args.expand.clone().unwrap_or_else(|| vec!["invoice_settings.default_payment_method".into()]);
    let mut req = HttpRequest::get(format!("/v1/customers/{}", id_segment(&args.customer_id)));
    for e in &expand {
        req = req.query("expand[]", e);
    }
    let body = call(&*up, req).await?;
    let mut out = shape_customer(&body);
    if body["deleted"].as_bool() != Some(true) {
        let extra = compact(json!({
            "address": compact_address(&body["address"]),
            "tax_exempt": body["tax_exempt"].as_str().filter(|t| *t != "none"),
            "invoice_prefix": body["invoice_prefix"],
            "livemode": body["livemode"],
            "subscriptions": body["subscriptions"]["data"].as_array().map(|s| s.iter().map(shape_subscription).collect::<Vec<_>>()),
        }));
        if let (Value::Object(o), Value::Object(e)) = (&mut out, extra) {
            o.extend(e);
        }
    }
    if args.include_raw {
        out["raw"] = body;
    }
    Ok(out)
}

fn compact_address(a: &Value) -> Value {
    let Some(o) = a.as_object() else { return Value::Null };
    let parts: Vec<&str> = ["line1", "line2", "postal_code", "city", "state", "country"]
        .iter()
        .filter_map(|k| o.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .collect();
    if parts.is_empty() { Value::Null } else { Value::String(parts.join(", ")) }
}

// ---------------------------------------------------------------- payments and refunds

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListPayments {
    /// Only payments of this customer (cus_…).
    customer: Option<String>,
    /// Only payments created at or after this time: YYYY-MM-DD (UTC midnight), YYYY-MM-DDTHH:MM:SSZ or unix seconds.
    created_gte: Option<String>,
    /// Only payments created at or before this time, same formats.
    created_lte: Option<String>,
    /// Payments per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the filters the same.
    cursor: Option<String>,
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

fn shape_payment(p: &Value) -> Value {
    compact(json!({
        "id": p["id"],
        "amount": p["amount"],
        "amount_display": display(&p["amount"], &p["currency"]),
        "amount_received": p["amount_received"].as_i64().filter(|r| Some(*r) != p["amount"].as_i64()),
        "currency": p["currency"],
        "status": p["status"],
        "customer": p["customer"],
        "description": p["description"],
        "created": time(&p["created"]),
        "payment_method": p["payment_method"],
        "latest_charge": p["latest_charge"],
        "receipt_email": p["receipt_email"],
        "failure": p["last_payment_error"]["message"],
        "canceled_at": time(&p["canceled_at"]),
        "metadata": metadata(&p["metadata"]),
    }))
}

pub(crate) const LIST_PAYMENTS: ToolSpec = tool! {
    name: "stripe_list_payments",
    effect: Read,
    results: Private,
    args: ListPayments,
    run: list_payments,
    keywords: ["payments", "charges", "transactions", "payment intents", "sales", "revenue", "who paid", "recent charges", "list payments"],
    description: "List Stripe payments (PaymentIntents, i.e. charges/transactions), newest first, optionally for one customer or a date range, with amount, status and customer.",
};

async fn list_payments(up: Arc<dyn Upstream>, args: ListPayments) -> Result<Value, ToolError> {
    let gte = args.created_gte.as_deref().map(|v| parse_time("/created_gte", v)).transpose()?;
    let lte = args.created_lte.as_deref().map(|v| parse_time("/created_lte", v)).transpose()?;
    let req = HttpRequest::get("/v1/payment_intents")
        .query_opt("customer", args.customer.as_deref())
        .query_opt("created[gte]", gte)
        .query_opt("created[lte]", lte)
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("starting_after", args.cursor.as_deref());
    let body = call(&*up, req).await?;
    Ok(list_page(body, "payments", shape_payment, args.include_raw))
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum RefundReason {
    Duplicate,
    Fraudulent,
    RequestedByCustomer,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateRefund {
    /// The payment to refund (PaymentIntent id, pi_…). Give this or charge.
    payment_intent: Option<String>,
    /// The charge to refund (ch_…), instead of payment_intent.
    charge: Option<String>,
    /// Amount to refund in the smallest currency unit (e.g. cents: 500 = $5.00). Omit for a full refund of what remains.
    #[schemars(range(min = 1))]
    amount: Option<u64>,
    /// Why: duplicate, fraudulent (also blocks the card in Radar) or requested_by_customer.
    reason: Option<RefundReason>,
    /// Key-value notes stored on the refund, e.g. {"ticket": "SUP-123"}.
    metadata: Option<Map<String, Value>>,
}

fn metadata_pairs(path: &str, m: &Option<Map<String, Value>>) -> Result<Vec<(String, String)>, ToolError> {
    let mut out = Vec::new();
    for (k, v) in m.iter().flatten() {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                return Err(invalid(&format!("{path}/{k}"), "metadata values are short texts", "expected a string"));
            }
        };
        out.push((format!("metadata[{k}]"), text));
    }
    Ok(out)
}

pub(crate) const CREATE_REFUND: ToolSpec = tool! {
    name: "stripe_create_refund",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Outside("a refund moves money to the customer"),
    args: CreateRefund,
    run: create_refund,
    keywords: ["refund", "money back", "reimburse", "return payment", "partial refund", "chargeback"],
    description: "Refund a Stripe payment in full or in part (amount in the smallest currency unit, e.g. cents). Moves money back to the customer and cannot be undone.",
};

async fn create_refund(up: Arc<dyn Upstream>, args: CreateRefund) -> Result<Value, ToolError> {
    let target = match (args.payment_intent.as_deref(), args.charge.as_deref()) {
        (Some(pi), None) => pair("payment_intent", pi),
        (None, Some(ch)) => pair("charge", ch),
        _ => {
            return Err(invalid(
                "",
                "give either payment_intent or charge (one of them)",
                "expected exactly one of payment_intent, charge",
            ));
        }
    };
    let mut form = vec![target];
    if let Some(a) = args.amount {
        form.push(pair("amount", a));
    }
    if let Some(r) = args.reason {
        let reason = match r {
            RefundReason::Duplicate => "duplicate",
            RefundReason::Fraudulent => "fraudulent",
            RefundReason::RequestedByCustomer => "requested_by_customer",
        };
        form.push(pair("reason", reason));
    }
    form.extend(metadata_pairs("/metadata", &args.metadata)?);
    let r = post(&*up, "/v1/refunds".into(), form).await?;
    Ok(compact(json!({
        "id": r["id"],
        "status": r["status"],
        "amount": r["amount"],
        "amount_display": display(&r["amount"], &r["currency"]),
        "currency": r["currency"],
        "payment_intent": r["payment_intent"],
        "charge": r["charge"],
        "reason": r["reason"],
        "failure_reason": r["failure_reason"],
        "created": time(&r["created"]),
        "metadata": metadata(&r["metadata"]),
    })))
}

// ---------------------------------------------------------------- invoices

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum InvoiceStatus {
    Draft,
    Open,
    Paid,
    Uncollectible,
    Void,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListInvoices {
    /// Only invoices of this customer (cus_…).
    customer: Option<String>,
    /// Only invoices in this state: draft, open (finalized, unpaid), paid, uncollectible or void.
    status: Option<InvoiceStatus>,
    /// Only invoices of this subscription (sub_…).
    subscription: Option<String>,
    /// Invoices per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the filters the same.
    cursor: Option<String>,
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

fn status_str(s: InvoiceStatus) -> &'static str {
    match s {
        InvoiceStatus::Draft => "draft",
        InvoiceStatus::Open => "open",
        InvoiceStatus::Paid => "paid",
        InvoiceStatus::Uncollectible => "uncollectible",
        InvoiceStatus::Void => "void",
    }
}

fn shape_invoice(i: &Value) -> Value {
    let cur = &i["currency"];
    let subscription = i["parent"]["subscription_details"]["subscription"].as_str().or(i["subscription"].as_str());
    compact(json!({
        "id": i["id"],
        "number": i["number"],
        "status": i["status"],
        "customer": i["customer"],
        "customer_email": i["customer_email"],
        "customer_name": i["customer_name"],
        "currency": cur,
        "total": i["total"],
        "total_display": display(&i["total"], cur),
        "amount_due": i["amount_due"],
        "amount_paid": i["amount_paid"],
        "amount_remaining": i["amount_remaining"],
        "amount_remaining_display": display(&i["amount_remaining"], cur),
        "collection_method": i["collection_method"],
        "created": time(&i["created"]),
        "due_date": time(&i["due_date"]),
        "subscription": subscription,
        "description": i["description"],
        "hosted_invoice_url": i["hosted_invoice_url"],
        "invoice_pdf": i["invoice_pdf"],
    }))
}

pub(crate) const LIST_INVOICES: ToolSpec = tool! {
    name: "stripe_list_invoices",
    effect: Read,
    results: Private,
    args: ListInvoices,
    run: list_invoices,
    keywords: ["invoices", "bills", "unpaid", "overdue", "open invoices", "receivables", "billing history"],
    description: "List Stripe invoices, newest first, by customer, status (draft, open/unpaid, paid, void, uncollectible) or subscription, with amounts due and paid and the hosted invoice link.",
};

async fn list_invoices(up: Arc<dyn Upstream>, args: ListInvoices) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/v1/invoices")
        .query_opt("customer", args.customer.as_deref())
        .query_opt("status", args.status.map(status_str))
        .query_opt("subscription", args.subscription.as_deref())
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("starting_after", args.cursor.as_deref());
    let body = call(&*up, req).await?;
    Ok(list_page(body, "invoices", shape_invoice, args.include_raw))
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CollectionMethod {
    SendInvoice,
    ChargeAutomatically,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct InvoiceLine {
    /// What the line is for, shown on the invoice, e.g. "Consulting, March".
    #[schemars(length(min = 1))]
    description: String,
    /// Line amount in the smallest currency unit (e.g. cents: 150000 = $1,500.00); negative for a credit.
    amount: i64,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateInvoice {
    /// The customer to bill (cus_…).
    #[schemars(length(min = 1))]
    customer_id: String,
    /// Three-letter currency code of the invoice and all its lines, e.g. usd, eur.
    #[schemars(length(min = 3, max = 3))]
    currency: String,
    /// Required: the invoice lines (1-50), each a description and an amount in the smallest currency unit.
    #[schemars(length(min = 1, max = 50))]
    items: Option<Vec<InvoiceLine>>,
    /// send_invoice (the customer pays from an emailed link; default) or charge_automatically (Stripe charges the customer's default payment method).
    #[serde_inline_default(CollectionMethod::SendInvoice)]
    collection_method: CollectionMethod,
    /// Days the customer has to pay, for send_invoice (default 30).
    #[schemars(range(min = 0, max = 365))]
    days_until_due: Option<u32>,
    /// Memo shown on the invoice.
    description: Option<String>,
    /// Finalize the draft (gives it a number; it can no longer be edited, only voided). With charge_automatically Stripe then charges the customer automatically.
    #[serde(default)]
    finalize: bool,
    /// Finalize and email the invoice to the customer now (send_invoice only).
    #[serde(default)]
    auto_send: bool,
}

pub(crate) const CREATE_INVOICE: ToolSpec = tool! {
    name: "stripe_create_invoice",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Decide(invoice_audience),
    args: CreateInvoice,
    run: create_invoice,
    keywords: ["bill a customer", "billing", "new invoice", "send invoice", "invoice line items", "charge customer"],
    description: "Create a Stripe invoice for a customer with line items (amounts in the smallest currency unit, e.g. cents). Stays a draft unless finalize is set; auto_send finalizes and emails it to the customer.",
};

async fn create_invoice(up: Arc<dyn Upstream>, args: CreateInvoice) -> Result<Value, ToolError> {
    let items = match args.items {
        Some(i) if !i.is_empty() => i,
        _ => {
            return Err(invalid(
                "/items",
                "items is required: at least one invoice line",
                "required, with at least one line",
            ));
        }
    };
    let currency = currency_code("/currency", &args.currency)?;
    let send = args.collection_method == CollectionMethod::SendInvoice;
    if !send && args.days_until_due.is_some() {
        return Err(invalid(
            "/days_until_due",
            "days_until_due applies only to collection_method send_invoice",
            "not allowed with charge_automatically",
        ));
    }
    if !send && args.auto_send {
        return Err(invalid(
            "/auto_send",
            "auto_send emails the invoice, which needs collection_method send_invoice; use finalize to have Stripe charge automatically",
            "needs send_invoice",
        ));
    }
    let mut form = vec![
        pair("customer", &args.customer_id),
        pair("currency", &currency),
        pair("collection_method", if send { "send_invoice" } else { "charge_automatically" }),
        pair("auto_advance", false),
        pair("pending_invoice_items_behavior", "exclude"),
    ];
    if send {
        form.push(pair("days_until_due", args.days_until_due.unwrap_or(30)));
    }
    if let Some(d) = &args.description {
        form.push(pair("description", d));
    }
    let draft = post(&*up, "/v1/invoices".into(), form).await?;
    let Some(invoice_id) = draft["id"].as_str().map(str::to_string) else {
        return Err(ToolError::Internal("Stripe created an invoice without an id".into()));
    };
    let left_behind = |e: ToolError, step: &str| match e {
        ToolError::Upstream { status, message, retry_after } => ToolError::Upstream {
            status,
            message: format!(
                "{message}; the draft invoice {invoice_id} was created and {step}; finish or delete it in Stripe"
            ),
            retry_after,
        },
        other => other,
    };
    for (i, line) in items.iter().enumerate() {
        let form = vec![
            pair("customer", &args.customer_id),
            pair("invoice", &invoice_id),
            pair("amount", line.amount),
            pair("currency", &currency),
            pair("description", &line.description),
        ];
        post(&*up, "/v1/invoiceitems".into(), form)
            .await
            .map_err(|e| left_behind(e, &format!("holds the first {i} of {} lines", items.len())))?;
    }
    let path = format!("/v1/invoices/{}", id_segment(&invoice_id));
    let mut invoice = if args.finalize || args.auto_send {
        let form = vec![pair("auto_advance", !send)];
        post(&*up, format!("{path}/finalize"), form)
            .await
            .map_err(|e| left_behind(e, "holds all lines but is not finalized"))?
    } else {
        call(&*up, HttpRequest::get(path.clone())).await?
    };
    if args.auto_send {
        invoice = post(&*up, format!("{path}/send"), Vec::new())
            .await
            .map_err(|e| left_behind(e, "is finalized but was not emailed"))?;
    }
    let mut out = shape_invoice(&invoice);
    let lines: Vec<Value> = invoice["lines"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| compact(json!({"description": l["description"], "amount": l["amount"], "amount_display": display(&l["amount"], &l["currency"])})))
        .collect();
    out["lines"] = Value::Array(lines);
    out["emailed"] = json!(args.auto_send);
    Ok(out)
}

// ---------------------------------------------------------------- subscriptions

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SubscriptionStatus {
    Active,
    Trialing,
    PastDue,
    Unpaid,
    Paused,
    Incomplete,
    IncompleteExpired,
    Canceled,
    Ended,
    All,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListSubscriptions {
    /// Only subscriptions of this customer (cus_…).
    customer: Option<String>,
    /// Only this status; all includes canceled ones, which are left out by default.
    status: Option<SubscriptionStatus>,
    /// Only subscriptions to this price (price_…).
    price: Option<String>,
    /// Subscriptions per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the filters the same.
    cursor: Option<String>,
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

fn subscription_status(s: SubscriptionStatus) -> &'static str {
    match s {
        SubscriptionStatus::Active => "active",
        SubscriptionStatus::Trialing => "trialing",
        SubscriptionStatus::PastDue => "past_due",
        SubscriptionStatus::Unpaid => "unpaid",
        SubscriptionStatus::Paused => "paused",
        SubscriptionStatus::Incomplete => "incomplete",
        SubscriptionStatus::IncompleteExpired => "incomplete_expired",
        SubscriptionStatus::Canceled => "canceled",
        SubscriptionStatus::Ended => "ended",
        SubscriptionStatus::All => "all",
    }
}

fn shape_subscription(s: &Value) -> Value {
    let items: Vec<Value> = s["items"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            let p = &i["price"];
            compact(json!({
                "price": p["id"],
                "product": p["product"],
                "nickname": p["nickname"],
                "quantity": i["quantity"],
                "unit_amount": p["unit_amount"],
                "unit_amount_display": display(&p["unit_amount"], &p["currency"]),
                "interval": p["recurring"]["interval"],
                "interval_count": p["recurring"]["interval_count"].as_u64().filter(|c| *c != 1),
            }))
        })
        .collect();
    // Since 2025-03-31.basil the billing period lives on the items.
    let period_end = s["items"]["data"][0]["current_period_end"].as_i64().or(s["current_period_end"].as_i64());
    compact(json!({
        "id": s["id"],
        "customer": s["customer"],
        "status": s["status"],
        "items": items,
        "current_period_end": time(&json!(period_end)),
        "cancel_at_period_end": s["cancel_at_period_end"],
        "cancel_at": time(&s["cancel_at"]),
        "canceled_at": time(&s["canceled_at"]),
        "trial_end": time(&s["trial_end"]),
        "created": time(&s["created"]),
        "collection_method": s["collection_method"],
        "latest_invoice": s["latest_invoice"],
        "metadata": metadata(&s["metadata"]),
    }))
}

pub(crate) const LIST_SUBSCRIPTIONS: ToolSpec = tool! {
    name: "stripe_list_subscriptions",
    effect: Read,
    results: Private,
    args: ListSubscriptions,
    run: list_subscriptions,
    keywords: ["subscriptions", "recurring", "plans", "mrr", "renewals", "trials", "active subscribers"],
    description: "List Stripe subscriptions by customer, status (active, trialing, past_due, canceled, all…) or price, with plan items, renewal date and cancellation state.",
};

async fn list_subscriptions(up: Arc<dyn Upstream>, args: ListSubscriptions) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/v1/subscriptions")
        .query_opt("customer", args.customer.as_deref())
        .query_opt("status", args.status.map(subscription_status))
        .query_opt("price", args.price.as_deref())
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("starting_after", args.cursor.as_deref());
    let body = call(&*up, req).await?;
    Ok(list_page(body, "subscriptions", shape_subscription, args.include_raw))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteSubscription {
    /// The subscription id (sub_…).
    #[schemars(length(min = 1))]
    subscription_id: String,
    /// Keep it running until the end of the paid period and cancel then (can be reverted in Stripe until that date). Default: cancel now.
    #[serde(default)]
    at_period_end: bool,
    /// For an immediate cancellation: credit the unused time (proration) to the customer.
    prorate: Option<bool>,
    /// For an immediate cancellation: invoice pending usage and prorations now.
    invoice_now: Option<bool>,
}

pub(crate) const DELETE_SUBSCRIPTION: ToolSpec = tool! {
    name: "stripe_delete_subscription",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: DeleteSubscription,
    run: delete_subscription,
    keywords: ["cancel subscription", "unsubscribe", "stop billing", "end plan", "churn"],
    description: "Cancel a Stripe subscription: immediately, or at the end of the current billing period (at_period_end). Immediate cancellation cannot be undone.",
};

async fn delete_subscription(up: Arc<dyn Upstream>, args: DeleteSubscription) -> Result<Value, ToolError> {
    let path = format!("/v1/subscriptions/{}", id_segment(&args.subscription_id));
    let sub = if args.at_period_end {
        if args.prorate.is_some() || args.invoice_now.is_some() {
            let field = if args.prorate.is_some() { "/prorate" } else { "/invoice_now" };
            return Err(invalid(
                field,
                "prorate and invoice_now apply only to an immediate cancellation, not at_period_end",
                "not used with at_period_end",
            ));
        }
        post(&*up, path, vec![pair("cancel_at_period_end", true)]).await?
    } else {
        // Stripe's OpenAPI declares these as form fields of the DELETE's body, not query parameters.
        let form: Vec<(String, String)> = [("prorate", args.prorate), ("invoice_now", args.invoice_now)]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| pair(k, v)))
            .collect();
        let mut req = HttpRequest::new(Method::Delete, path);
        if !form.is_empty() {
            req = req.form(form);
        }
        call(&*up, req).await?
    };
    Ok(shape_subscription(&sub))
}

// ---------------------------------------------------------------- balance

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetBalance {
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

fn funds(list: &Value) -> Vec<Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|f| json!({"currency": f["currency"], "amount": f["amount"], "display": display(&f["amount"], &f["currency"])}))
        .collect()
}

pub(crate) const GET_BALANCE: ToolSpec = tool! {
    name: "stripe_get_balance",
    effect: Read,
    results: Private,
    args: GetBalance,
    run: get_balance,
    keywords: ["balance", "available funds", "pending", "payout", "how much money", "account balance"],
    description: "Get the Stripe account balance: available and pending funds per currency, and whether the key is in live or test mode.",
};

async fn get_balance(up: Arc<dyn Upstream>, args: GetBalance) -> Result<Value, ToolError> {
    let body = call(&*up, HttpRequest::get("/v1/balance")).await?;
    let instant = funds(&body["instant_available"]);
    let mut out = compact(json!({
        "mode": if body["livemode"].as_bool() == Some(true) { "live" } else { "test" },
        "available": funds(&body["available"]),
        "pending": funds(&body["pending"]),
        "instant_available": (!instant.is_empty()).then_some(instant),
    }));
    if args.include_raw {
        out["raw"] = body;
    }
    Ok(out)
}

// ---------------------------------------------------------------- payment links

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreatePaymentLink {
    /// An existing price to sell (price_…). Give this, or amount + currency + product_name.
    price_id: Option<String>,
    /// One-off price in the smallest currency unit (e.g. cents: 2500 = $25.00), instead of price_id.
    #[schemars(range(min = 1))]
    amount: Option<u64>,
    /// Three-letter currency code for amount, e.g. usd.
    currency: Option<String>,
    /// Product name shown on the checkout page, for amount.
    product_name: Option<String>,
    /// How many units the link sells (default 1).
    #[serde_inline_default(1)]
    #[schemars(range(min = 1, max = 1000))]
    quantity: u32,
    /// Let customers enter promotion (discount) codes at checkout.
    #[serde(default)]
    allow_promotion_codes: bool,
    /// Send the customer to this URL after paying (default: Stripe's confirmation page).
    after_completion_url: Option<String>,
}

pub(crate) const CREATE_PAYMENT_LINK: ToolSpec = tool! {
    name: "stripe_create_payment_link",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Outside("a payment link is a public page anyone with its URL opens"),
    args: CreatePaymentLink,
    run: create_payment_link,
    keywords: ["payment link", "checkout link", "pay link", "buy button", "collect payment", "share link"],
    description: "Create a shareable Stripe payment link (hosted checkout page) for an existing price, or for a one-off amount (smallest currency unit, e.g. cents) and product name. Anyone with the link can pay.",
};

async fn create_payment_link(up: Arc<dyn Upstream>, args: CreatePaymentLink) -> Result<Value, ToolError> {
    let adhoc = (args.amount, args.currency.as_deref(), args.product_name.as_deref());
    let price = match (args.price_id.as_deref(), adhoc) {
        (Some(p), (None, None, None)) => p.to_string(),
        (None, (Some(amount), Some(currency), Some(name))) => {
            let currency = currency_code("/currency", currency)?;
            let form = vec![pair("currency", currency), pair("unit_amount", amount), pair("product_data[name]", name)];
            let created = post(&*up, "/v1/prices".into(), form).await?;
            created["id"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| ToolError::Internal("Stripe created a price without an id".into()))?
        }
        _ => {
            return Err(invalid(
                "",
                "give either price_id, or amount + currency + product_name",
                "expected price_id, or all of amount, currency, product_name",
            ));
        }
    };
    let mut form = vec![pair("line_items[0][price]", &price), pair("line_items[0][quantity]", args.quantity)];
    if args.allow_promotion_codes {
        form.push(pair("allow_promotion_codes", true));
    }
    if let Some(url) = &args.after_completion_url {
        form.push(pair("after_completion[type]", "redirect"));
        form.push(pair("after_completion[redirect][url]", url));
    }
    let link = post(&*up, "/v1/payment_links".into(), form).await?;
    Ok(compact(json!({
        "id": link["id"],
        "url": link["url"],
        "active": link["active"],
        "price": price,
        "quantity": args.quantity,
        "amount_display": args.amount.zip(args.currency.as_deref()).map(|(a, c)| display(&json!(a), &json!(c))),
        "livemode": link["livemode"],
    })))
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
