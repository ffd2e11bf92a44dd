//! Invoices (listed, and created as a draft or finalized and sent) and subscriptions (listed and
//! cancelled).

use super::*;

// ---------------------------------------------------------------- invoices

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum InvoiceStatus {
    Draft,
    Open,
    Paid,
    Uncollectible,
    Void,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListInvoices {
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

pub(super) fn status_str(s: InvoiceStatus) -> &'static str {
    match s {
        InvoiceStatus::Draft => "draft",
        InvoiceStatus::Open => "open",
        InvoiceStatus::Paid => "paid",
        InvoiceStatus::Uncollectible => "uncollectible",
        InvoiceStatus::Void => "void",
    }
}

pub(super) fn shape_invoice(i: &Value) -> Value {
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

pub(super) async fn list_invoices(up: Arc<dyn Upstream>, args: ListInvoices) -> Result<Value, ToolError> {
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
pub(super) enum CollectionMethod {
    SendInvoice,
    ChargeAutomatically,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct InvoiceLine {
    /// What the line is for, shown on the invoice, e.g. "Consulting, March".
    #[schemars(length(min = 1))]
    description: String,
    /// Line amount in the smallest currency unit (e.g. cents: 150000 = $1,500.00); negative for a credit.
    amount: i64,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateInvoice {
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

pub(super) async fn create_invoice(up: Arc<dyn Upstream>, args: CreateInvoice) -> Result<Value, ToolError> {
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
pub(super) enum SubscriptionStatus {
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
pub(super) struct ListSubscriptions {
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

pub(super) fn subscription_status(s: SubscriptionStatus) -> &'static str {
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

pub(super) fn shape_subscription(s: &Value) -> Value {
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

pub(super) async fn list_subscriptions(up: Arc<dyn Upstream>, args: ListSubscriptions) -> Result<Value, ToolError> {
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
pub(super) struct DeleteSubscription {
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

pub(super) async fn delete_subscription(up: Arc<dyn Upstream>, args: DeleteSubscription) -> Result<Value, ToolError> {
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
