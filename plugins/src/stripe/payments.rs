//! Money moving in and out: payments (PaymentIntents) listed, refunds created, the balance, and
//! payment links.

use super::*;

// ---------------------------------------------------------------- payments and refunds

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListPayments {
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

pub(super) fn shape_payment(p: &Value) -> Value {
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

pub(super) async fn list_payments(up: Arc<dyn Upstream>, args: ListPayments) -> Result<Value, ToolError> {
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
pub(super) enum RefundReason {
    Duplicate,
    Fraudulent,
    RequestedByCustomer,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateRefund {
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

pub(super) fn metadata_pairs(path: &str, m: &Option<Map<String, Value>>) -> Result<Vec<(String, String)>, ToolError> {
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

pub(super) async fn create_refund(up: Arc<dyn Upstream>, args: CreateRefund) -> Result<Value, ToolError> {
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

// ---------------------------------------------------------------- balance

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GetBalance {
    /// Also return Stripe's response as raw.
    #[serde(default)]
    include_raw: bool,
}

pub(super) fn funds(list: &Value) -> Vec<Value> {
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

pub(super) async fn get_balance(up: Arc<dyn Upstream>, args: GetBalance) -> Result<Value, ToolError> {
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
pub(super) struct CreatePaymentLink {
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

pub(super) async fn create_payment_link(up: Arc<dyn Upstream>, args: CreatePaymentLink) -> Result<Value, ToolError> {
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
