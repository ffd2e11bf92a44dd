//! Customer tools: search (by email, name or a raw Stripe query) and one customer with its default
//! payment method and address.

use super::*;

// ---------------------------------------------------------------- customers

pub(super) fn shape_customer(c: &Value) -> Value {
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

pub(super) fn shape_payment_method(pm: &Value) -> Value {
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
pub(super) struct SearchCustomers {
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
pub(super) fn quoted(s: &str) -> String {
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

pub(super) async fn search_customers(up: Arc<dyn Upstream>, args: SearchCustomers) -> Result<Value, ToolError> {
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
pub(super) struct GetCustomer {
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

pub(super) async fn get_customer(up: Arc<dyn Upstream>, args: GetCustomer) -> Result<Value, ToolError> {
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

pub(super) fn compact_address(a: &Value) -> Value {
    let Some(o) = a.as_object() else { return Value::Null };
    let parts: Vec<&str> = ["line1", "line2", "postal_code", "city", "state", "country"]
        .iter()
        .filter_map(|k| o.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .collect();
    if parts.is_empty() { Value::Null } else { Value::String(parts.join(", ")) }
}
