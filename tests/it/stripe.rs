//! Stripe against a fake on 127.0.0.1 that behaves like api.stripe.com where it matters: the Bearer
//! secret key, the pinned `Stripe-Version`, form-encoded bodies with bracketed keys, unknown
//! parameters refused (`parameter_unknown`), `{error:{type,code,message}}` errors, `starting_after`
//! and search `page` cursors, and idempotency: every POST needs an `Idempotency-Key`, a repeated
//! key replays the stored answer, and a reused key with other parameters is an `idempotency_error`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const KEY: &str = "sk_test_51NfakeKeyAbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
const VERSION: &str = "2025-03-31.basil";
const JENNY: &str = "cus_NffrFeUfNV2Hib";
const PI: &str = "pi_3MtwBwLkdIwHu7ix28a3tqPa";

fn stripe_err(status: u16, kind: &str, code: Option<&str>, message: &str, param: Option<&str>) -> Reply {
    let mut e =
        json!({"type": kind, "message": message, "request_log_url": "https://dashboard.stripe.com/test/logs/req_fake"});
    if let Some(c) = code {
        e["code"] = json!(c);
        e["doc_url"] = json!(format!("https://stripe.com/docs/error-codes/{}", c.replace('_', "-")));
    }
    if let Some(p) = param {
        e["param"] = json!(p);
    }
    Reply::json(status, json!({"error": e}))
}

fn unknown_param(p: &str) -> Reply {
    stripe_err(
        400,
        "invalid_request_error",
        Some("parameter_unknown"),
        &format!("Received unknown parameter: {p}"),
        Some(p),
    )
}

fn missing(kind: &str, id: &str, param: &str) -> Reply {
    stripe_err(404, "invalid_request_error", Some("resource_missing"), &format!("No such {kind}: '{id}'"), Some(param))
}

/// application/x-www-form-urlencoded, as Stripe parses it.
fn form_pairs(body: &[u8]) -> Vec<(String, String)> {
    let decode = |s: &str| {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                    i += 2;
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8(out).unwrap()
    };
    std::str::from_utf8(body)
        .unwrap()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn customers() -> Vec<Value> {
    vec![
        json!({"id": JENNY, "object": "customer", "address": {"city": "San Francisco", "country": "US", "line1": "510 Townsend St", "line2": null, "postal_code": "94103", "state": "CA"},
               "balance": -500, "created": 1680893993, "currency": "usd", "default_source": null, "delinquent": false, "description": null, "discount": null,
               "email": "jenny.rosen@example.com", "invoice_prefix": "0759376C",
               "invoice_settings": {"custom_fields": null, "default_payment_method": "pm_1NrWkq2eZvKYlo2CkLm", "footer": null, "rendering_options": null},
               "livemode": false, "metadata": {"crm_id": "151"}, "name": "Jenny Rosen", "next_invoice_sequence": 1, "phone": null, "preferred_locales": [],
               "shipping": null, "tax_exempt": "none", "test_clock": null}),
        json!({"id": "cus_PjwLu2XvYq7Tb1", "object": "customer", "address": null, "balance": 0, "created": 1700000000, "currency": "eur", "default_source": null,
               "delinquent": true, "description": "Imported from CRM", "email": "jwu@example.com", "invoice_prefix": "A1B2C3D4",
               "invoice_settings": {"custom_fields": null, "default_payment_method": null, "footer": null, "rendering_options": null},
               "livemode": false, "metadata": {}, "name": "Jennifer Wu", "phone": "+1 415 555 0100", "preferred_locales": ["en"], "shipping": null,
               "tax_exempt": "none", "test_clock": null}),
    ]
}

fn card_pm() -> Value {
    json!({"id": "pm_1NrWkq2eZvKYlo2CkLm", "object": "payment_method", "type": "card", "created": 1680894000, "customer": JENNY, "livemode": false,
           "billing_details": {"address": {"city": null, "country": "US", "line1": null, "line2": null, "postal_code": "94103", "state": null}, "email": null, "name": "Jenny Rosen", "phone": null},
           "card": {"brand": "visa", "checks": {"address_line1_check": null, "address_postal_code_check": "pass", "cvc_check": "pass"}, "country": "US",
                    "exp_month": 8, "exp_year": 2027, "fingerprint": "Xt5EWLLDS7FJjR1c", "funding": "credit", "last4": "4242",
                    "networks": {"available": ["visa"], "preferred": null}, "wallet": null}, "metadata": {}})
}

fn payment_intents() -> Vec<Value> {
    let pi = |id: &str, amount: i64, currency: &str, status: &str, customer: &str, created: i64, desc: &str| {
        json!({"id": id, "object": "payment_intent", "amount": amount, "amount_capturable": 0, "amount_details": {"tip": {}},
               "amount_received": if status == "succeeded" { amount } else { 0 }, "application": null, "application_fee_amount": null,
               "automatic_payment_methods": {"allow_redirects": "always", "enabled": true}, "canceled_at": null, "cancellation_reason": null,
               "capture_method": "automatic_async", "client_secret": format!("{id}_secret_YrKJUKribcBjcG8HVhfZluoGH"), "confirmation_method": "automatic",
               "created": created, "currency": currency, "customer": customer, "description": desc,
               "last_payment_error": if status == "succeeded" { Value::Null } else { json!({"code": "card_declined", "decline_code": "insufficient_funds", "message": "Your card has insufficient funds.", "type": "card_error"}) },
               "latest_charge": format!("ch_{}", &id[3..]), "livemode": false, "metadata": {}, "next_action": null, "on_behalf_of": null,
               "payment_method": "pm_1NrWkq2eZvKYlo2CkLm", "payment_method_configuration_details": {"id": "pmc_1MtwBwLkdIwHu7ix", "parent": null},
               "payment_method_options": {"card": {"installments": null, "mandate_options": null, "network": null, "request_three_d_secure": "automatic"}},
               "payment_method_types": ["card", "link"], "processing": null, "receipt_email": null, "review": null, "setup_future_usage": null,
               "shipping": null, "source": null, "statement_descriptor": null, "statement_descriptor_suffix": null, "status": status,
               "transfer_data": null, "transfer_group": null})
    };
    vec![
        pi(PI, 2000, "usd", "succeeded", JENNY, 1769821200, "Pro plan, January"),
        pi(
            "pi_3Mq2ZqLkdIwHu7ix0XyZ1234",
            4500,
            "eur",
            "requires_payment_method",
            "cus_PjwLu2XvYq7Tb1",
            1767225600,
            "Team plan",
        ),
        pi("pi_3Lb7AbLkdIwHu7ix1AbC5678", 1000, "usd", "succeeded", JENNY, 1764547200, "Add-on"),
    ]
}

fn invoice(id: &str, status: &str, customer: &str, total: i64, paid: i64, sub: Option<&str>) -> Value {
    json!({"id": id, "object": "invoice", "account_country": "US", "account_name": "Fake Co", "amount_due": total, "amount_paid": paid,
           "amount_remaining": total - paid, "attempt_count": 1, "auto_advance": status == "open", "billing_reason": if sub.is_some() { "subscription_cycle" } else { "manual" },
           "collection_method": if sub.is_some() { "charge_automatically" } else { "send_invoice" }, "created": 1767225600, "currency": "usd",
           "customer": customer, "customer_email": "jenny.rosen@example.com", "customer_name": "Jenny Rosen", "description": null,
           "due_date": if sub.is_some() { Value::Null } else { json!(1769817600) },
           "hosted_invoice_url": format!("https://invoice.stripe.com/i/acct_1Fake/test_{id}"), "invoice_pdf": format!("https://pay.stripe.com/invoice/acct_1Fake/test_{id}/pdf"),
           "lines": {"object": "list", "data": [{"id": "il_1", "object": "line_item", "amount": total, "currency": "usd", "description": "Pro plan"}], "has_more": false, "total_count": 1, "url": format!("/v1/invoices/{id}/lines")},
           "livemode": false, "metadata": {}, "number": format!("0759376C-{}", &id[id.len() - 4..]),
           "parent": sub.map(|s| json!({"type": "subscription_details", "quote_details": null, "subscription_details": {"metadata": {}, "subscription": s}})),
           "status": status, "status_transitions": {"finalized_at": 1767225600, "marked_uncollectible_at": null, "paid_at": null, "voided_at": null},
           "subtotal": total, "total": total, "webhooks_delivered_at": 1767225600})
}

fn invoices() -> Vec<Value> {
    vec![
        invoice("in_1MtHbELkdIwHu7ixl4OzzPMv", "paid", JENNY, 1500, 1500, Some("sub_1MowQVLkdIwHu7ixeRlqHVzs")),
        invoice("in_1NpHiG2eZvKYlo2C9kTq0001", "open", JENNY, 25000, 0, None),
        invoice("in_1NpHiG2eZvKYlo2C9kTq0002", "open", "cus_PjwLu2XvYq7Tb1", 9900, 0, None),
    ]
}

fn subscriptions() -> Vec<Value> {
    let sub = |id: &str, customer: &str, status: &str, price: &str, amount: i64, period_end: i64| {
        let price = json!({"id": price, "object": "price", "active": true, "billing_scheme": "per_unit", "currency": "usd", "livemode": false,
            "lookup_key": null, "metadata": {}, "nickname": "Pro monthly", "product": "prod_NWjs8kKbJWmuuc",
            "recurring": {"interval": "month", "interval_count": 1, "usage_type": "licensed"}, "tax_behavior": "unspecified",
            "type": "recurring", "unit_amount": amount, "unit_amount_decimal": amount.to_string()});
        let item = json!({"id": format!("si_{}", &id[4..]), "object": "subscription_item", "created": 1767225600,
            "current_period_end": period_end, "current_period_start": period_end - 2_678_400, "metadata": {},
            "price": price, "quantity": 1, "subscription": id, "tax_rates": []});
        json!({"id": id, "object": "subscription", "application": null, "automatic_tax": {"enabled": false, "liability": null},
               "billing_cycle_anchor": 1767225600, "cancel_at": null, "cancel_at_period_end": false, "canceled_at": if status == "canceled" { json!(1768000000) } else { Value::Null },
               "collection_method": "charge_automatically", "created": 1767225600, "currency": "usd", "customer": customer, "default_payment_method": null,
               "discounts": [], "ended_at": null, "invoice_settings": {"issuer": {"type": "self"}},
               "items": {"object": "list", "data": [item], "has_more": false, "total_count": 1, "url": "/v1/subscription_items"},
               "latest_invoice": "in_1MtHbELkdIwHu7ixl4OzzPMv", "livemode": false, "metadata": {}, "pause_collection": null,
               "start_date": 1767225600, "status": status, "trial_end": if status == "trialing" { json!(1770000000) } else { Value::Null }, "trial_start": null})
    };
    vec![
        sub("sub_1MowQVLkdIwHu7ixeRlqHVzs", JENNY, "active", "price_1MowQULkdIwHu7ixraBm864M", 1500, 1772323200),
        sub(
            "sub_1PqRsTLkdIwHu7ixTrial001",
            "cus_PjwLu2XvYq7Tb1",
            "trialing",
            "price_1MowQULkdIwHu7ixraBm864M",
            1500,
            1770000000,
        ),
        sub("sub_1OldOldLkdIwHu7ixCanc002", JENNY, "canceled", "price_1Legacy0LkdIwHu7ixOld0001", 900, 1768000000),
    ]
}

fn list(data: Vec<Value>, url: &str, limit: usize, starting_after: Option<&str>) -> Reply {
    let start = match starting_after {
        None => 0,
        Some(id) => match data.iter().position(|d| d["id"] == id) {
            Some(p) => p + 1,
            None => return missing("object", id, "starting_after"),
        },
    };
    let page: Vec<Value> = data.iter().skip(start).take(limit).cloned().collect();
    Reply::json(200, json!({"object": "list", "data": page, "has_more": start + limit < data.len(), "url": url}))
}

#[derive(Default)]
struct State {
    /// Idempotency-Key -> (request fingerprint, status, body).
    idempotency: HashMap<String, (String, u16, String)>,
    counter: u32,
    refunds_created: u32,
    invoices: HashMap<String, Value>,
    prices: Vec<String>,
    sent: Vec<String>,
    lost_once: bool,
}

fn limit_of(q: &[(String, String)]) -> Result<usize, Reply> {
    match q.iter().find(|(k, _)| k == "limit").map(|(_, v)| v.parse::<usize>()) {
        None => Ok(10),
        Some(Ok(n)) if (1..=100).contains(&n) => Ok(n),
        _ => Err(stripe_err(
            400,
            "invalid_request_error",
            Some("parameter_invalid_integer"),
            "Invalid integer: limit must be between 1 and 100",
            Some("limit"),
        )),
    }
}

fn only_params(q: &[(String, String)], allowed: &[&str]) -> Result<(), Reply> {
    for (k, _) in q {
        let ok = allowed.contains(&k.as_str())
            || (allowed.contains(&"metadata[*]") && k.starts_with("metadata[") && k.ends_with(']'));
        if !ok {
            return Err(unknown_param(k));
        }
    }
    Ok(())
}

fn get_q<'a>(q: &'a [(String, String)], key: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn stripe(state: &Mutex<State>, r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return stripe_err(400, "invalid_request_error", None, "missing user agent", None);
    }
    if r.header("authorization") != Some(&format!("Bearer {KEY}")) {
        return stripe_err(401, "invalid_request_error", None, "Invalid API Key provided: sk_test_********oops", None);
    }
    if r.header("stripe-version") != Some(VERSION) {
        return stripe_err(400, "invalid_request_error", None, "The fake expects the pinned Stripe-Version", None);
    }
    // Stripe's OpenAPI declares DELETE /v1/subscriptions/{id}'s fields as a form body.
    if r.method == "DELETE" && r.path.starts_with("/v1/subscriptions/") {
        if !r.query.is_empty() {
            return unknown_param(&r.query[0].0);
        }
        if !r.body.is_empty()
            && !r.header("content-type").is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"))
        {
            return stripe_err(
                400,
                "invalid_request_error",
                None,
                "Invalid request: bodies must be form-encoded",
                None,
            );
        }
        let form = form_pairs(&r.body);
        if let Err(e) = only_params(
            &form,
            &["prorate", "invoice_now", "cancellation_details[comment]", "cancellation_details[feedback]"],
        ) {
            return e;
        }
        return read(&Recorded { query: form, ..r.clone() });
    }
    if r.method != "POST" {
        if !r.body.is_empty() {
            return stripe_err(
                400,
                "invalid_request_error",
                None,
                "GET and DELETE parameters go in the query string",
                None,
            );
        }
        return read(r);
    }
    if !r.header("content-type").is_some_and(|c| c.starts_with("application/x-www-form-urlencoded")) {
        return stripe_err(
            400,
            "invalid_request_error",
            None,
            "Invalid request: bodies must be form-encoded (application/x-www-form-urlencoded)",
            None,
        );
    }
    let Some(key) = r.header("idempotency-key").map(str::to_string) else {
        return stripe_err(
            400,
            "invalid_request_error",
            None,
            "This fake requires an Idempotency-Key on every POST",
            None,
        );
    };
    let fingerprint = format!("{} {} {}", r.method, r.path, String::from_utf8_lossy(&r.body));
    let mut st = state.lock().unwrap();
    if let Some((fp, status, body)) = st.idempotency.get(&key).cloned() {
        if fp != fingerprint {
            return stripe_err(
                400,
                "idempotency_error",
                None,
                &format!(
                    "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '{key}' if you meant to execute a different request."
                ),
                None,
            );
        }
        return Reply { status, headers: vec![("content-type".into(), "application/json".into())], body }
            .with_header("idempotent-replayed", "true");
    }
    let form = form_pairs(&r.body);
    let reply = write(&mut st, r, &form);
    if reply.status != 401 && reply.status != 429 {
        st.idempotency.insert(key, (fingerprint, reply.status, reply.body.clone()));
    }
    // Simulates an answer lost on the way back (a proxy's 429 after Stripe acted): the client's
    // retry carries the same key and must get the stored refund, not a second one.
    if get_q(&form, "metadata[simulate]") == Some("lost_response") && !st.lost_once {
        st.lost_once = true;
        return stripe_err(429, "invalid_request_error", Some("rate_limit"), "Too many requests", None)
            .with_header("retry-after", "1");
    }
    reply
}

fn read(r: &Recorded) -> Reply {
    let q = &r.query;
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/v1/balance") => {
            if !q.is_empty() {
                return unknown_param(&q[0].0);
            }
            Reply::json(
                200,
                json!({"object": "balance", "available": [{"amount": 666670, "currency": "usd", "source_types": {"card": 666670}}, {"amount": -1200, "currency": "eur", "source_types": {"card": -1200}}],
                       "connect_reserved": [{"amount": 0, "currency": "usd"}], "livemode": false,
                       "pending": [{"amount": 61414, "currency": "usd", "source_types": {"card": 61414}}],
                       "refund_and_dispute_prefunding": {"available": [{"amount": 0, "currency": "usd"}], "pending": [{"amount": 0, "currency": "usd"}]}}),
            )
        }
        ("GET", "/v1/customers/search") => {
            if let Err(e) = only_params(q, &["query", "limit", "page"]) {
                return e;
            }
            let limit = match limit_of(q) {
                Ok(l) => l,
                Err(e) => return e,
            };
            let query = get_q(q, "query").unwrap_or_default();
            let matches: Vec<Value> = if let Some(v) = query.strip_prefix("email:'").and_then(|v| v.strip_suffix('\''))
            {
                customers().into_iter().filter(|c| c["email"] == v).collect()
            } else if let Some(v) = query.strip_prefix("name~'").and_then(|v| v.strip_suffix('\'')) {
                let v = v.to_lowercase();
                customers().into_iter().filter(|c| c["name"].as_str().unwrap().to_lowercase().contains(&v)).collect()
            } else {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    None,
                    &format!(
                        "Invalid search query: could not parse `{query}`. See https://stripe.com/docs/search#search-query-language"
                    ),
                    Some("query"),
                );
            };
            let start = match get_q(q, "page") {
                None => 0,
                Some(p) => match p.strip_prefix("page_") {
                    Some(n) => n.parse().unwrap_or(0),
                    None => return stripe_err(400, "invalid_request_error", None, "Invalid page token", Some("page")),
                },
            };
            let page: Vec<Value> = matches.iter().skip(start).take(limit).cloned().collect();
            let more = start + limit < matches.len();
            Reply::json(
                200,
                json!({"object": "search_result", "data": page, "has_more": more, "next_page": if more { json!(format!("page_{}", start + limit)) } else { Value::Null }, "url": "/v1/customers/search"}),
            )
        }
        ("GET", p) if p.starts_with("/v1/customers/") => {
            if let Err(e) = only_params(q, &["expand[]"]) {
                return e;
            }
            let id = &p["/v1/customers/".len()..];
            if id == "cus_Gone0000000001" {
                return Reply::json(200, json!({"id": id, "object": "customer", "deleted": true}));
            }
            let Some(mut c) = customers().into_iter().find(|c| c["id"] == id) else {
                return missing("customer", id, "id");
            };
            for (_, e) in q {
                match e.as_str() {
                    "invoice_settings.default_payment_method" => {
                        if c["invoice_settings"]["default_payment_method"].is_string() {
                            c["invoice_settings"]["default_payment_method"] = card_pm();
                        }
                    }
                    "subscriptions" => {
                        let subs: Vec<Value> = subscriptions()
                            .into_iter()
                            .filter(|s| s["customer"] == id && s["status"] != "canceled")
                            .collect();
                        c["subscriptions"] = json!({"object": "list", "data": subs, "has_more": false, "url": format!("/v1/customers/{id}/subscriptions")});
                    }
                    other => {
                        return stripe_err(
                            400,
                            "invalid_request_error",
                            None,
                            &format!("This property cannot be expanded ({other})."),
                            Some("expand"),
                        );
                    }
                }
            }
            Reply::json(200, c)
        }
        ("GET", "/v1/payment_intents") => {
            if let Err(e) = only_params(q, &["customer", "created[gte]", "created[lte]", "limit", "starting_after"]) {
                return e;
            }
            if get_q(q, "customer") == Some("cus_busy") {
                return stripe_err(429, "invalid_request_error", Some("rate_limit"), "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.", None)
                    .with_header("retry-after", "120");
            }
            let limit = match limit_of(q) {
                Ok(l) => l,
                Err(e) => return e,
            };
            let num = |k: &str| get_q(q, k).map(|v| v.parse::<i64>().unwrap_or(i64::MIN));
            let mut rows = payment_intents();
            if let Some(c) = get_q(q, "customer") {
                rows.retain(|p| p["customer"] == c);
            }
            if let Some(gte) = num("created[gte]") {
                rows.retain(|p| p["created"].as_i64().unwrap() >= gte);
            }
            if let Some(lte) = num("created[lte]") {
                rows.retain(|p| p["created"].as_i64().unwrap() <= lte);
            }
            list(rows, "/v1/payment_intents", limit, get_q(q, "starting_after"))
        }
        ("GET", "/v1/invoices") => {
            if let Err(e) = only_params(q, &["customer", "status", "subscription", "limit", "starting_after"]) {
                return e;
            }
            let limit = match limit_of(q) {
                Ok(l) => l,
                Err(e) => return e,
            };
            let mut rows = invoices();
            if let Some(s) = get_q(q, "status") {
                if !["draft", "open", "paid", "uncollectible", "void"].contains(&s) {
                    return stripe_err(
                        400,
                        "invalid_request_error",
                        None,
                        "Invalid status: must be one of draft, open, paid, uncollectible, or void",
                        Some("status"),
                    );
                }
                rows.retain(|i| i["status"] == s);
            }
            if let Some(c) = get_q(q, "customer") {
                rows.retain(|i| i["customer"] == c);
            }
            if let Some(s) = get_q(q, "subscription") {
                rows.retain(|i| i["parent"]["subscription_details"]["subscription"] == s);
            }
            list(rows, "/v1/invoices", limit, get_q(q, "starting_after"))
        }
        ("GET", "/v1/subscriptions") => {
            if let Err(e) = only_params(q, &["customer", "status", "price", "limit", "starting_after"]) {
                return e;
            }
            let limit = match limit_of(q) {
                Ok(l) => l,
                Err(e) => return e,
            };
            let mut rows = subscriptions();
            match get_q(q, "status") {
                None => rows.retain(|s| s["status"] != "canceled"),
                Some("all") => {}
                Some("ended") => rows.retain(|s| s["status"] == "canceled" || s["status"] == "incomplete_expired"),
                Some(s) => rows.retain(|x| x["status"] == s),
            }
            if let Some(c) = get_q(q, "customer") {
                rows.retain(|s| s["customer"] == c);
            }
            if let Some(p) = get_q(q, "price") {
                rows.retain(|s| s["items"]["data"][0]["price"]["id"] == p);
            }
            list(rows, "/v1/subscriptions", limit, get_q(q, "starting_after"))
        }
        ("DELETE", p) if p.starts_with("/v1/subscriptions/") => {
            if let Err(e) = only_params(q, &["prorate", "invoice_now"]) {
                return e;
            }
            let id = &p["/v1/subscriptions/".len()..];
            let Some(mut s) = subscriptions().into_iter().find(|s| s["id"] == id) else {
                return missing("subscription", id, "id");
            };
            s["status"] = json!("canceled");
            s["canceled_at"] = json!(1770000000);
            s["ended_at"] = json!(1770000000);
            Reply::json(200, s)
        }
        ("GET", p) if p.starts_with("/v1/invoices/") => {
            // Invoices created through this fake are read back by the tool; they live in the state,
            // which read() does not see, so the write path answers those (see write()).
            missing("invoice", &p["/v1/invoices/".len()..], "invoice")
        }
        (m, p) => stripe_err(
            404,
            "invalid_request_error",
            None,
            &format!(
                "Unrecognized request URL ({m}: {p}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/."
            ),
            None,
        ),
    }
}

fn write(st: &mut State, r: &Recorded, f: &[(String, String)]) -> Reply {
    st.counter += 1;
    let n = st.counter;
    match r.path.as_str() {
        "/v1/refunds" => {
            if let Err(e) = only_params(f, &["payment_intent", "charge", "amount", "reason", "metadata[*]"]) {
                return e;
            }
            let pi = get_q(f, "payment_intent");
            if pi == Some("pi_3AlreadyRefunded0000000") {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("charge_already_refunded"),
                    "Charge ch_3AlreadyRefunded0000000 has already been refunded.",
                    None,
                );
            }
            let payment = match (pi, get_q(f, "charge")) {
                (Some(id), None) => payment_intents().into_iter().find(|p| p["id"] == id),
                (None, Some(ch)) => payment_intents().into_iter().find(|p| p["latest_charge"] == ch),
                _ => {
                    return stripe_err(
                        400,
                        "invalid_request_error",
                        Some("parameter_missing"),
                        "One of `charge` or `payment_intent` is required.",
                        None,
                    );
                }
            };
            let Some(payment) = payment else {
                return missing("payment_intent", pi.unwrap_or_default(), "payment_intent");
            };
            let total = payment["amount_received"].as_i64().unwrap();
            let amount = get_q(f, "amount").map(|a| a.parse::<i64>().unwrap()).unwrap_or(total);
            if amount > total {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("amount_too_large"),
                    &format!(
                        "Refund amount (${:.2}) is greater than charge amount (${:.2})",
                        amount as f64 / 100.0,
                        total as f64 / 100.0
                    ),
                    Some("amount"),
                );
            }
            if let Some(reason) = get_q(f, "reason")
                && !["duplicate", "fraudulent", "requested_by_customer"].contains(&reason)
            {
                return stripe_err(400, "invalid_request_error", None, "Invalid reason", Some("reason"));
            }
            let meta: serde_json::Map<String, Value> = f
                .iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("metadata[").and_then(|k| k.strip_suffix(']')).map(|k| (k.to_string(), json!(v)))
                })
                .collect();
            st.refunds_created += 1;
            Reply::json(
                200,
                json!({"id": format!("re_3MtwBwLkdIwHu7ix{n:010}"), "object": "refund", "amount": amount, "balance_transaction": format!("txn_{n}"),
                       "charge": payment["latest_charge"], "created": 1770000000 + i64::from(n), "currency": payment["currency"],
                       "destination_details": {"card": {"reference_status": "pending", "reference_type": "acquirer_reference_number", "type": "refund"}, "type": "card"},
                       "metadata": meta, "payment_intent": payment["id"], "reason": get_q(f, "reason"), "receipt_number": null,
                       "source_transfer_reversal": null, "status": "succeeded", "transfer_reversal": null}),
            )
        }
        "/v1/invoices" => {
            if let Err(e) = only_params(
                f,
                &[
                    "customer",
                    "currency",
                    "collection_method",
                    "days_until_due",
                    "auto_advance",
                    "pending_invoice_items_behavior",
                    "description",
                    "metadata[*]",
                ],
            ) {
                return e;
            }
            let Some(customer) = get_q(f, "customer") else {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("parameter_missing"),
                    "Missing required param: customer.",
                    Some("customer"),
                );
            };
            if !customers().iter().any(|c| c["id"] == customer) {
                return missing("customer", customer, "customer");
            }
            let method = get_q(f, "collection_method").unwrap_or("charge_automatically");
            let days = get_q(f, "days_until_due").map(|d| d.parse::<i64>().unwrap());
            if method == "send_invoice" && days.is_none() {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("parameter_missing"),
                    "Missing required param: days_until_due.",
                    Some("days_until_due"),
                );
            }
            if method != "send_invoice" && days.is_some() {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    None,
                    "You can only set `days_until_due` when `collection_method` is `send_invoice`.",
                    Some("days_until_due"),
                );
            }
            let id = format!("in_1FakeInv{n:010}");
            let inv = json!({"id": id, "object": "invoice", "amount_due": 0, "amount_paid": 0, "amount_remaining": 0, "auto_advance": get_q(f, "auto_advance") == Some("true"),
                             "collection_method": method, "created": 1770000000, "currency": get_q(f, "currency").unwrap_or("usd"), "customer": customer,
                             "customer_email": "jenny.rosen@example.com", "customer_name": "Jenny Rosen", "description": get_q(f, "description"),
                             "due_date": days.map(|d| 1770000000 + d * 86_400), "hosted_invoice_url": null, "invoice_pdf": null,
                             "lines": {"object": "list", "data": [], "has_more": false, "total_count": 0, "url": format!("/v1/invoices/{id}/lines")},
                             "livemode": false, "metadata": {}, "number": null, "parent": null, "status": "draft", "subtotal": 0, "total": 0});
            st.invoices.insert(id, inv.clone());
            Reply::json(200, inv)
        }
        "/v1/invoiceitems" => {
            if let Err(e) = only_params(f, &["customer", "invoice", "amount", "currency", "description", "metadata[*]"])
            {
                return e;
            }
            let inv_id = get_q(f, "invoice").unwrap_or_default().to_string();
            let Some(inv) = st.invoices.get_mut(&inv_id) else {
                return missing("invoice", &inv_id, "invoice");
            };
            if inv["status"] != "draft" {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("invoice_not_editable"),
                    "You can only add invoice items to draft invoices.",
                    Some("invoice"),
                );
            }
            if Some(inv["customer"].as_str().unwrap()) != get_q(f, "customer") {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    None,
                    "The invoice item's customer must match the invoice's customer.",
                    Some("customer"),
                );
            }
            let currency = get_q(f, "currency").unwrap_or_default();
            if inv["currency"] != currency {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    None,
                    &format!(
                        "The currency of the invoice item ({currency}) must match the currency of the invoice ({}).",
                        inv["currency"].as_str().unwrap()
                    ),
                    Some("currency"),
                );
            }
            let amount: i64 = get_q(f, "amount").and_then(|a| a.parse().ok()).unwrap_or(0);
            if amount > 99_999_999 {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("amount_too_large"),
                    "Amount must be no more than $999,999.99",
                    Some("amount"),
                );
            }
            let line = json!({"id": format!("il_fake{n}"), "object": "line_item", "amount": amount, "currency": currency, "description": get_q(f, "description")});
            inv["lines"]["data"].as_array_mut().unwrap().push(line);
            for k in ["total", "subtotal", "amount_due", "amount_remaining"] {
                inv[k] = json!(inv[k].as_i64().unwrap() + amount);
            }
            Reply::json(
                200,
                json!({"id": format!("ii_fake{n}"), "object": "invoiceitem", "amount": amount, "currency": currency, "customer": inv["customer"],
                       "date": 1770000000, "description": get_q(f, "description"), "discountable": true, "invoice": inv_id, "livemode": false,
                       "metadata": {}, "period": {"end": 1770000000, "start": 1770000000}, "proration": false, "quantity": 1}),
            )
        }
        p if p.starts_with("/v1/invoices/") && p.ends_with("/finalize") => {
            if let Err(e) = only_params(f, &["auto_advance"]) {
                return e;
            }
            let id = p.trim_start_matches("/v1/invoices/").trim_end_matches("/finalize").to_string();
            let Some(inv) = st.invoices.get_mut(&id) else {
                return missing("invoice", &id, "invoice");
            };
            if inv["status"] != "draft" {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("invoice_not_editable"),
                    "This invoice is already finalized.",
                    None,
                );
            }
            inv["status"] = json!("open");
            inv["auto_advance"] = json!(get_q(f, "auto_advance") == Some("true"));
            inv["number"] = json!("0759376C-0007");
            inv["hosted_invoice_url"] = json!(format!("https://invoice.stripe.com/i/acct_1Fake/test_{id}"));
            inv["invoice_pdf"] = json!(format!("https://pay.stripe.com/invoice/acct_1Fake/test_{id}/pdf"));
            Reply::json(200, inv.clone())
        }
        p if p.starts_with("/v1/invoices/") && p.ends_with("/send") => {
            if !f.is_empty() {
                return unknown_param(&f[0].0);
            }
            let id = p.trim_start_matches("/v1/invoices/").trim_end_matches("/send").to_string();
            let Some(inv) = st.invoices.get(&id).cloned() else {
                return missing("invoice", &id, "invoice");
            };
            if inv["status"] != "open" || inv["collection_method"] != "send_invoice" {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    None,
                    "You can only manually send an invoice if its collection method is 'send_invoice' and it is open.",
                    None,
                );
            }
            st.sent.push(id);
            Reply::json(200, inv)
        }
        p if p.starts_with("/v1/subscriptions/") => {
            if let Err(e) = only_params(f, &["cancel_at_period_end", "metadata[*]"]) {
                return e;
            }
            let id = &p["/v1/subscriptions/".len()..];
            let Some(mut s) = subscriptions().into_iter().find(|s| s["id"] == id) else {
                return missing("subscription", id, "id");
            };
            if get_q(f, "cancel_at_period_end") == Some("true") {
                s["cancel_at_period_end"] = json!(true);
                s["cancel_at"] = s["items"]["data"][0]["current_period_end"].clone();
            }
            Reply::json(200, s)
        }
        "/v1/prices" => {
            if let Err(e) = only_params(f, &["currency", "unit_amount", "product_data[name]", "product"]) {
                return e;
            }
            if get_q(f, "product_data[name]").is_none() {
                return stripe_err(
                    400,
                    "invalid_request_error",
                    Some("parameter_missing"),
                    "You must specify either `product` or `product_data` when creating a price.",
                    Some("product"),
                );
            }
            let id = format!("price_1Fake{n:010}");
            st.prices.push(id.clone());
            Reply::json(
                200,
                json!({"id": id, "object": "price", "active": true, "billing_scheme": "per_unit", "created": 1770000000, "currency": get_q(f, "currency"),
                       "livemode": false, "lookup_key": null, "metadata": {}, "nickname": null, "product": format!("prod_Fake{n}"), "recurring": null,
                       "tax_behavior": "unspecified", "type": "one_time", "unit_amount": get_q(f, "unit_amount").map(|a| a.parse::<i64>().unwrap()),
                       "unit_amount_decimal": get_q(f, "unit_amount")}),
            )
        }
        "/v1/payment_links" => {
            if let Err(e) = only_params(
                f,
                &[
                    "line_items[0][price]",
                    "line_items[0][quantity]",
                    "allow_promotion_codes",
                    "after_completion[type]",
                    "after_completion[redirect][url]",
                ],
            ) {
                return e;
            }
            let price = get_q(f, "line_items[0][price]").unwrap_or_default();
            if price != "price_1MoBy5LkdIwHu7ixZhnattbh" && !st.prices.iter().any(|p| p == price) {
                return missing("price", price, "line_items[0][price]");
            }
            let after = match get_q(f, "after_completion[type]") {
                Some("redirect") => match get_q(f, "after_completion[redirect][url]") {
                    Some(url) => json!({"type": "redirect", "redirect": {"url": url}}),
                    None => {
                        return stripe_err(
                            400,
                            "invalid_request_error",
                            Some("parameter_missing"),
                            "Missing required param: after_completion[redirect][url].",
                            Some("after_completion[redirect][url]"),
                        );
                    }
                },
                _ => json!({"hosted_confirmation": {"custom_message": null}, "type": "hosted_confirmation"}),
            };
            Reply::json(
                200,
                json!({"id": format!("plink_1Fake{n:010}"), "object": "payment_link", "active": true, "after_completion": after,
                       "allow_promotion_codes": get_q(f, "allow_promotion_codes") == Some("true"), "application": null, "automatic_tax": {"enabled": false},
                       "billing_address_collection": "auto", "currency": "usd", "livemode": false, "metadata": {}, "payment_method_types": null,
                       "url": format!("https://buy.stripe.com/test_fake{n}")}),
            )
        }
        p => stripe_err(404, "invalid_request_error", None, &format!("Unrecognized request URL (POST: {p})."), None),
    }
}

async fn setup() -> (TestApp, Fake, Arc<Mutex<State>>) {
    let state = Arc::new(Mutex::new(State::default()));
    let s = state.clone();
    let fake = Fake::start(move |r| {
        // Invoices created earlier in the test are read back from the shared state.
        if r.method == "GET"
            && r.path.starts_with("/v1/invoices/")
            && r.header("authorization") == Some(&format!("Bearer {KEY}"))
        {
            let id = &r.path["/v1/invoices/".len()..];
            if let Some(inv) = s.lock().unwrap().invoices.get(id).cloned() {
                return Reply::json(200, inv);
            }
        }
        stripe(&s, r)
    })
    .await;
    let t = app_with(&[("WORKBENCH_STRIPE_BASE_URL", fake.url.clone()), ("WORKBENCH_STRIPE_API_KEY", KEY.into())]);
    (t, fake, state)
}

fn posts(fake: &Fake) -> Vec<Recorded> {
    fake.requests().into_iter().filter(|r| r.method == "POST").collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[tokio::test]
async fn stripe_search_customers_by_email_and_query_with_pages() {
    let (t, fake, _) = setup().await;
    let r = t.ok("stripe_search_customers", json!({"email": "jenny.rosen@example.com"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/v1/customers/search"));
    assert_eq!(req.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(req.query, pairs(&[("query", "email:'jenny.rosen@example.com'"), ("limit", "20")]));
    assert_eq!(
        r["customers"],
        json!([{"id": JENNY, "name": "Jenny Rosen", "email": "jenny.rosen@example.com", "created": "2023-04-07T18:59:53Z", "currency": "usd",
                "balance": -500, "balance_display": "-5.00 USD", "default_payment_method": "pm_1NrWkq2eZvKYlo2CkLm", "metadata": {"crm_id": "151"}}])
    );
    assert!(r.get("next_cursor").is_none());

    let p1 = t.ok("stripe_search_customers", json!({"query": "name~'jen'", "limit": 1})).await;
    assert_eq!(p1["customers"][0]["id"], JENNY);
    assert_eq!(p1["next_cursor"], "page_1");
    let p2 = t.ok("stripe_search_customers", json!({"query": "name~'jen'", "limit": 1, "cursor": "page_1"})).await;
    assert_eq!(fake.last().q("page"), Some("page_1"));
    assert_eq!(p2["customers"][0]["name"], "Jennifer Wu");
    assert_eq!(p2["customers"][0]["delinquent"], true);
    assert!(p2.get("next_cursor").is_none());

    let quote = t.ok("stripe_search_customers", json!({"email": "o'neil@example.com"})).await;
    assert_eq!(fake.last().q("query"), Some(r"email:'o\'neil@example.com'"));
    assert_eq!(quote["customers"], json!([]));
    let bad = t.err("stripe_search_customers", json!({"query": "jenny"})).await;
    assert_eq!(bad["status"], 400);
    assert!(bad["message"].as_str().unwrap().contains("Invalid search query: could not parse `jenny`"), "{bad}");
    let neither = t.err("stripe_search_customers", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn stripe_get_customer_expands_the_payment_method() {
    let (t, fake, _) = setup().await;
    let r = t.ok("stripe_get_customer", json!({"customer_id": JENNY})).await;
    let req = fake.last();
    assert_eq!(req.path, format!("/v1/customers/{JENNY}"));
    assert_eq!(req.query, pairs(&[("expand[]", "invoice_settings.default_payment_method")]));
    assert_eq!(req.header("stripe-version"), Some(VERSION));
    assert_eq!(
        r,
        json!({"id": JENNY, "name": "Jenny Rosen", "email": "jenny.rosen@example.com", "created": "2023-04-07T18:59:53Z", "currency": "usd",
               "balance": -500, "balance_display": "-5.00 USD",
               "default_payment_method": {"id": "pm_1NrWkq2eZvKYlo2CkLm", "type": "card", "brand": "visa", "last4": "4242", "exp": "08/2027"},
               "metadata": {"crm_id": "151"}, "address": "510 Townsend St, 94103, San Francisco, CA, US", "invoice_prefix": "0759376C", "livemode": false})
    );
    let subs = t.ok("stripe_get_customer", json!({"customer_id": JENNY, "expand": ["subscriptions"]})).await;
    assert_eq!(fake.last().query, pairs(&[("expand[]", "subscriptions")]));
    assert_eq!(subs["subscriptions"][0]["id"], "sub_1MowQVLkdIwHu7ixeRlqHVzs");
    assert_eq!(subs["default_payment_method"], "pm_1NrWkq2eZvKYlo2CkLm", "not expanded this time");

    let gone = t.ok("stripe_get_customer", json!({"customer_id": "cus_Gone0000000001"})).await;
    assert_eq!(gone, json!({"id": "cus_Gone0000000001", "deleted": true}));
    let e = t.err("stripe_get_customer", json!({"customer_id": "cus_nope"})).await;
    assert_eq!(e["status"], 404);
    assert_eq!(e["message"], "stripe answered 404: No such customer: 'cus_nope' (resource_missing)");
}

#[tokio::test]
async fn stripe_list_payments_filters_by_date_and_pages() {
    let (t, fake, _) = setup().await;
    let r = t.ok("stripe_list_payments", json!({"customer": JENNY, "created_gte": "2025-12-01", "limit": 1})).await;
    let req = fake.last();
    assert_eq!(req.path, "/v1/payment_intents");
    assert_eq!(req.query, pairs(&[("customer", JENNY), ("created[gte]", "1764547200"), ("limit", "1")]));
    assert_eq!(
        r["payments"],
        json!([{"id": PI, "amount": 2000, "amount_display": "20.00 USD", "currency": "usd", "status": "succeeded", "customer": JENNY,
                "description": "Pro plan, January", "created": "2026-01-31T01:00:00Z", "payment_method": "pm_1NrWkq2eZvKYlo2CkLm",
                "latest_charge": "ch_3MtwBwLkdIwHu7ix28a3tqPa"}])
    );
    assert_eq!(r["next_cursor"], PI);
    let r2 = t
        .ok("stripe_list_payments", json!({"customer": JENNY, "created_gte": "2025-12-01", "limit": 1, "cursor": PI}))
        .await;
    assert_eq!(fake.last().q("starting_after"), Some(PI));
    assert_eq!(r2["payments"][0]["id"], "pi_3Lb7AbLkdIwHu7ix1AbC5678");
    assert!(r2.get("next_cursor").is_none(), "the last page has no cursor");

    let failed =
        t.ok("stripe_list_payments", json!({"created_lte": "2026-01-01T00:00:00Z", "created_gte": "1767225600"})).await;
    assert_eq!(fake.last().q("created[lte]"), Some("1767225600"));
    assert_eq!(failed["payments"][0]["failure"], "Your card has insufficient funds.");
    assert_eq!(failed["payments"][0]["amount_received"], 0);
    let bad = t.err("stripe_list_payments", json!({"created_gte": "last week"})).await;
    assert_eq!(bad["problems"][0]["path"], "/created_gte");
}

#[tokio::test]
async fn stripe_list_payments_is_smaller_than_raw() {
    let (t, _fake, _) = setup().await;
    let r = t.ok("stripe_list_payments", json!({"include_raw": true})).await;
    assert_eq!(r["payments"].as_array().unwrap().len(), 3);
    let raw = serde_json::to_string(&r["raw"]).unwrap().len();
    let mut shaped = r.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped = serde_json::to_string(&shaped).unwrap().len();
    eprintln!("stripe_list_payments: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped * 2 < raw, "shaped {shaped} vs raw {raw}");
}

#[tokio::test]
async fn stripe_create_refund_is_form_encoded_with_a_fresh_idempotency_key() {
    let (t, fake, state) = setup().await;
    let r = t
        .ok("stripe_create_refund", json!({"payment_intent": PI, "amount": 500, "reason": "requested_by_customer", "metadata": {"ticket": "SUP-123", "agent": "workbench"}}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v1/refunds"));
    assert_eq!(req.header("content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        form_pairs(&req.body),
        pairs(&[
            ("payment_intent", PI),
            ("amount", "500"),
            ("reason", "requested_by_customer"),
            ("metadata[ticket]", "SUP-123"),
            ("metadata[agent]", "workbench")
        ])
    );
    let key1 = req.header("idempotency-key").unwrap().to_string();
    assert!(key1.len() == 32 && key1.bytes().all(|b| b.is_ascii_hexdigit()), "{key1}");
    assert_eq!(
        r,
        json!({"id": "re_3MtwBwLkdIwHu7ix0000000001", "status": "succeeded", "amount": 500, "amount_display": "5.00 USD", "currency": "usd",
               "payment_intent": PI, "charge": "ch_3MtwBwLkdIwHu7ix28a3tqPa", "reason": "requested_by_customer", "created": "2026-02-02T02:40:01Z",
               "metadata": {"agent": "workbench", "ticket": "SUP-123"}})
    );
    // A second refund is a second operation: it gets its own key and Stripe acts again.
    let r2 = t.ok("stripe_create_refund", json!({"charge": "ch_3MtwBwLkdIwHu7ix28a3tqPa"})).await;
    assert_ne!(fake.last().header("idempotency-key").unwrap(), key1);
    assert_eq!(form_pairs(&fake.last().body), pairs(&[("charge", "ch_3MtwBwLkdIwHu7ix28a3tqPa")]));
    assert_eq!(r2["amount"], 2000, "a full refund when no amount is given");
    assert_eq!(state.lock().unwrap().refunds_created, 2);

    let twice = t.err("stripe_create_refund", json!({"payment_intent": "pi_3AlreadyRefunded0000000"})).await;
    assert_eq!(twice["status"], 400);
    assert_eq!(
        twice["message"],
        "stripe answered 400: Charge ch_3AlreadyRefunded0000000 has already been refunded. (charge_already_refunded)"
    );
    let big = t.err("stripe_create_refund", json!({"payment_intent": PI, "amount": 5000})).await;
    assert!(
        big["message"].as_str().unwrap().contains("Refund amount ($50.00) is greater than charge amount ($20.00)"),
        "{big}"
    );
    let both = t.err("stripe_create_refund", json!({"payment_intent": PI, "charge": "ch_1"})).await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn stripe_retried_post_replays_instead_of_refunding_twice() {
    let (t, fake, state) = setup().await;
    let r = t
        .ok(
            "stripe_create_refund",
            json!({"payment_intent": PI, "amount": 700, "metadata": {"simulate": "lost_response"}}),
        )
        .await;
    let sent = posts(&fake);
    assert_eq!(sent.len(), 2, "the engine retried after the lost answer");
    assert_eq!(sent[0].header("idempotency-key"), sent[1].header("idempotency-key"), "the retry reuses its key");
    assert_eq!(state.lock().unwrap().refunds_created, 1, "Stripe acted once and replayed its answer");
    assert_eq!(r["amount"], 700);
    assert_eq!(r["id"], "re_3MtwBwLkdIwHu7ix0000000001");
}

#[tokio::test]
async fn stripe_list_invoices_by_status() {
    let (t, fake, _) = setup().await;
    let r = t.ok("stripe_list_invoices", json!({"status": "open", "customer": JENNY})).await;
    assert_eq!(fake.last().query, pairs(&[("customer", JENNY), ("status", "open"), ("limit", "25")]));
    assert_eq!(
        r["invoices"],
        json!([{"id": "in_1NpHiG2eZvKYlo2C9kTq0001", "number": "0759376C-0001", "status": "open", "customer": JENNY,
                "customer_email": "jenny.rosen@example.com", "customer_name": "Jenny Rosen", "currency": "usd", "total": 25000,
                "total_display": "250.00 USD", "amount_due": 25000, "amount_paid": 0, "amount_remaining": 25000, "amount_remaining_display": "250.00 USD",
                "collection_method": "send_invoice", "created": "2026-01-01T00:00:00Z", "due_date": "2026-01-31T00:00:00Z",
                "hosted_invoice_url": "https://invoice.stripe.com/i/acct_1Fake/test_in_1NpHiG2eZvKYlo2C9kTq0001",
                "invoice_pdf": "https://pay.stripe.com/invoice/acct_1Fake/test_in_1NpHiG2eZvKYlo2C9kTq0001/pdf"}])
    );
    let by_sub = t.ok("stripe_list_invoices", json!({"subscription": "sub_1MowQVLkdIwHu7ixeRlqHVzs"})).await;
    assert_eq!(fake.last().q("subscription"), Some("sub_1MowQVLkdIwHu7ixeRlqHVzs"));
    assert_eq!(
        by_sub["invoices"][0]["subscription"], "sub_1MowQVLkdIwHu7ixeRlqHVzs",
        "read from parent.subscription_details"
    );
    assert_eq!(by_sub["invoices"][0]["status"], "paid");
}

fn lines() -> Value {
    json!([{"description": "Consulting, March", "amount": 150000}, {"description": "Travel", "amount": 23450}])
}

#[tokio::test]
async fn stripe_create_invoice_adds_lines_finalizes_and_sends() {
    let (t, fake, state) = setup().await;
    let r = t.ok("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "USD", "items": lines(), "description": "March work", "auto_send": true})).await;
    let sent = posts(&fake);
    let paths: Vec<&str> = sent.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1/invoices",
            "/v1/invoiceitems",
            "/v1/invoiceitems",
            "/v1/invoices/in_1FakeInv0000000001/finalize",
            "/v1/invoices/in_1FakeInv0000000001/send"
        ]
    );
    assert_eq!(
        form_pairs(&sent[0].body),
        pairs(&[
            ("customer", JENNY),
            ("currency", "usd"),
            ("collection_method", "send_invoice"),
            ("auto_advance", "false"),
            ("pending_invoice_items_behavior", "exclude"),
            ("days_until_due", "30"),
            ("description", "March work")
        ])
    );
    assert_eq!(
        form_pairs(&sent[2].body),
        pairs(&[
            ("customer", JENNY),
            ("invoice", "in_1FakeInv0000000001"),
            ("amount", "23450"),
            ("currency", "usd"),
            ("description", "Travel")
        ])
    );
    assert_eq!(form_pairs(&sent[3].body), pairs(&[("auto_advance", "false")]));
    assert!(sent[4].body.is_empty());
    let mut keys: Vec<&str> = sent.iter().map(|r| r.header("idempotency-key").unwrap()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 5, "every POST has its own Idempotency-Key");
    assert_eq!(state.lock().unwrap().sent, ["in_1FakeInv0000000001"]);
    assert_eq!(r["status"], "open");
    assert_eq!(r["number"], "0759376C-0007");
    assert_eq!(r["total_display"], "1734.50 USD");
    assert_eq!(r["due_date"], "2026-03-04T02:40:00Z");
    assert_eq!(r["emailed"], true);
    assert_eq!(r["lines"][1], json!({"description": "Travel", "amount": 23450, "amount_display": "234.50 USD"}));
    assert!(r["hosted_invoice_url"].as_str().unwrap().starts_with("https://invoice.stripe.com/"));
}

#[tokio::test]
async fn stripe_create_invoice_as_a_draft_and_its_refusals() {
    let (t, fake, _) = setup().await;
    let d = t.ok("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "usd", "items": lines(), "collection_method": "charge_automatically"})).await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/v1/invoices/in_1FakeInv0000000001"),
        "a draft is read back for its totals"
    );
    assert!(!form_pairs(&posts(&fake)[0].body).iter().any(|(k, _)| k == "days_until_due"));
    assert_eq!(d["status"], "draft");
    assert_eq!(d["total"], 173450);
    assert_eq!(d["emailed"], false);

    let fin = t.ok("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "usd", "items": lines(), "collection_method": "charge_automatically", "finalize": true})).await;
    assert_eq!(fake.last().path, "/v1/invoices/in_1FakeInv0000000004/finalize");
    assert_eq!(form_pairs(&fake.last().body), pairs(&[("auto_advance", "true")]), "Stripe collects automatically");
    assert_eq!(fin["status"], "open");

    let e = t
        .err("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "usd", "items": [{"description": "ok", "amount": 100}, {"description": "huge", "amount": 100000000}]}))
        .await;
    let m = e["message"].as_str().unwrap();
    assert!(m.starts_with("stripe answered 400: Amount must be no more than $999,999.99 (amount_too_large)"), "{m}");
    assert!(m.contains("the draft invoice in_1FakeInv0000000008 was created and holds the first 1 of 2 lines"), "{m}");

    let before = fake.requests().len();
    let mixed = t.err("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "usd", "items": lines(), "collection_method": "charge_automatically", "days_until_due": 10})).await;
    assert_eq!(mixed["problems"][0]["path"], "/days_until_due");
    let email = t.err("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "usd", "items": lines(), "collection_method": "charge_automatically", "auto_send": true})).await;
    assert_eq!(email["problems"][0]["path"], "/auto_send");
    let none = t.err("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "usd"})).await;
    assert_eq!(none["problems"][0]["path"], "/items");
    let cur = t.err("stripe_create_invoice", json!({"customer_id": JENNY, "currency": "us1", "items": lines()})).await;
    assert_eq!(cur["problems"][0]["path"], "/currency");
    assert_eq!(fake.requests().len(), before, "refused before anything was sent");
    let who =
        t.err("stripe_create_invoice", json!({"customer_id": "cus_nope", "currency": "usd", "items": lines()})).await;
    assert_eq!(who["message"], "stripe answered 404: No such customer: 'cus_nope' (resource_missing)");
}

#[tokio::test]
async fn stripe_list_subscriptions_by_customer_status_and_price() {
    let (t, fake, _) = setup().await;
    let r = t.ok("stripe_list_subscriptions", json!({"customer": JENNY})).await;
    assert_eq!(fake.last().query, pairs(&[("customer", JENNY), ("limit", "25")]));
    assert_eq!(
        r["subscriptions"],
        json!([{"id": "sub_1MowQVLkdIwHu7ixeRlqHVzs", "customer": JENNY, "status": "active",
                "items": [{"price": "price_1MowQULkdIwHu7ixraBm864M", "product": "prod_NWjs8kKbJWmuuc", "nickname": "Pro monthly", "quantity": 1,
                           "unit_amount": 1500, "unit_amount_display": "15.00 USD", "interval": "month"}],
                "current_period_end": "2026-03-01T00:00:00Z", "cancel_at_period_end": false, "created": "2026-01-01T00:00:00Z",
                "collection_method": "charge_automatically", "latest_invoice": "in_1MtHbELkdIwHu7ixl4OzzPMv"}])
    );
    let all = t.ok("stripe_list_subscriptions", json!({"customer": JENNY, "status": "all"})).await;
    assert_eq!(fake.last().q("status"), Some("all"));
    assert_eq!(all["subscriptions"].as_array().unwrap().len(), 2);
    assert_eq!(all["subscriptions"][1]["canceled_at"], "2026-01-09T23:06:40Z");
    let trials = t
        .ok(
            "stripe_list_subscriptions",
            json!({"status": "trialing", "price": "price_1MowQULkdIwHu7ixraBm864M", "limit": 5}),
        )
        .await;
    assert_eq!(
        fake.last().query,
        pairs(&[("status", "trialing"), ("price", "price_1MowQULkdIwHu7ixraBm864M"), ("limit", "5")])
    );
    assert_eq!(trials["subscriptions"][0]["trial_end"], "2026-02-02T02:40:00Z");
}

#[tokio::test]
async fn stripe_delete_subscription_now_or_at_period_end() {
    let (t, fake, _) = setup().await;
    let now = t
        .ok(
            "stripe_delete_subscription",
            json!({"subscription_id": "sub_1MowQVLkdIwHu7ixeRlqHVzs", "prorate": true, "invoice_now": true}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("DELETE", "/v1/subscriptions/sub_1MowQVLkdIwHu7ixeRlqHVzs"));
    assert!(req.query.is_empty(), "Stripe's spec declares prorate and invoice_now as body fields");
    assert_eq!(form_pairs(&req.body), pairs(&[("prorate", "true"), ("invoice_now", "true")]));
    assert_eq!(now["status"], "canceled");
    assert_eq!(now["canceled_at"], "2026-02-02T02:40:00Z");

    let later = t
        .ok(
            "stripe_delete_subscription",
            json!({"subscription_id": "sub_1MowQVLkdIwHu7ixeRlqHVzs", "at_period_end": true}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v1/subscriptions/sub_1MowQVLkdIwHu7ixeRlqHVzs"));
    assert_eq!(form_pairs(&req.body), pairs(&[("cancel_at_period_end", "true")]));
    assert!(req.header("idempotency-key").is_some());
    assert_eq!(later["status"], "active");
    assert_eq!(later["cancel_at_period_end"], true);
    assert_eq!(later["cancel_at"], "2026-03-01T00:00:00Z");

    let mixed = t
        .err("stripe_delete_subscription", json!({"subscription_id": "sub_1", "at_period_end": true, "prorate": false}))
        .await;
    assert_eq!(mixed["problems"][0]["path"], "/prorate");
    let gone = t.err("stripe_delete_subscription", json!({"subscription_id": "sub_nope"})).await;
    assert_eq!(gone["message"], "stripe answered 404: No such subscription: 'sub_nope' (resource_missing)");
}

#[tokio::test]
async fn stripe_get_balance_per_currency() {
    let (t, fake, _) = setup().await;
    let r = t.ok("stripe_get_balance", json!({})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/v1/balance"));
    assert!(req.query.is_empty());
    assert_eq!(
        r,
        json!({"mode": "test",
               "available": [{"currency": "usd", "amount": 666670, "display": "6666.70 USD"}, {"currency": "eur", "amount": -1200, "display": "-12.00 EUR"}],
               "pending": [{"currency": "usd", "amount": 61414, "display": "614.14 USD"}]})
    );
}

#[tokio::test]
async fn stripe_create_payment_link_for_a_price_or_an_amount() {
    let (t, fake, _) = setup().await;
    let r = t
        .ok(
            "stripe_create_payment_link",
            json!({"price_id": "price_1MoBy5LkdIwHu7ixZhnattbh", "quantity": 2, "allow_promotion_codes": true,
                                                 "after_completion_url": "https://example.com/thanks?src=stripe"}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v1/payment_links"));
    assert_eq!(
        form_pairs(&req.body),
        pairs(&[
            ("line_items[0][price]", "price_1MoBy5LkdIwHu7ixZhnattbh"),
            ("line_items[0][quantity]", "2"),
            ("allow_promotion_codes", "true"),
            ("after_completion[type]", "redirect"),
            ("after_completion[redirect][url]", "https://example.com/thanks?src=stripe")
        ])
    );
    assert_eq!(
        r,
        json!({"id": "plink_1Fake0000000001", "url": "https://buy.stripe.com/test_fake1", "active": true, "price": "price_1MoBy5LkdIwHu7ixZhnattbh",
               "quantity": 2, "livemode": false})
    );

    let adhoc = t
        .ok("stripe_create_payment_link", json!({"amount": 2500, "currency": "EUR", "product_name": "Workshop ticket"}))
        .await;
    let sent = posts(&fake);
    let (price_req, link_req) = (&sent[sent.len() - 2], &sent[sent.len() - 1]);
    assert_eq!(price_req.path, "/v1/prices");
    assert_eq!(
        form_pairs(&price_req.body),
        pairs(&[("currency", "eur"), ("unit_amount", "2500"), ("product_data[name]", "Workshop ticket")])
    );
    assert_eq!(
        form_pairs(&link_req.body),
        pairs(&[("line_items[0][price]", "price_1Fake0000000002"), ("line_items[0][quantity]", "1")])
    );
    assert_ne!(price_req.header("idempotency-key"), link_req.header("idempotency-key"));
    assert_eq!(adhoc["price"], "price_1Fake0000000002");
    assert_eq!(adhoc["amount_display"], "25.00 EUR");

    let half = t.err("stripe_create_payment_link", json!({"amount": 2500, "currency": "eur"})).await;
    assert_eq!(half["code"], "INVALID_ARGUMENTS");
    let both = t
        .err(
            "stripe_create_payment_link",
            json!({"price_id": "price_1", "amount": 1, "currency": "usd", "product_name": "x"}),
        )
        .await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let unknown = t.err("stripe_create_payment_link", json!({"price_id": "price_nope"})).await;
    assert_eq!(unknown["message"], "stripe answered 404: No such price: 'price_nope' (resource_missing)");
}

#[tokio::test]
async fn stripe_rejected_key_rate_limit_and_identity() {
    let (t, fake, _) = setup().await;
    let wrong = app_with(&[
        ("WORKBENCH_STRIPE_BASE_URL", fake.url.clone()),
        ("WORKBENCH_STRIPE_API_KEY", "sk_test_oops".into()),
    ]);
    let e = wrong.err("stripe_get_balance", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");

    let integration = &plugins::stripe::INTEGRATION;
    let connection = |key: &str| {
        let fields = HashMap::from([("api_key".to_string(), Secret::new(key.to_string()))]);
        workbench::auth::from_fields(integration, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, integration, connection(KEY)).await.unwrap();
    assert_eq!(label.as_deref(), Some("Stripe account (test mode)"));
    assert_eq!(fake.last().path, "/v1/balance");
    let bad = workbench::send::verify_identity(&t.app, integration, connection("sk_test_oops")).await.unwrap_err();
    assert!(bad.to_string().contains("Stripe rejected this credential: Invalid API Key provided"), "{bad}");

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let rl = t.err("stripe_list_payments", json!({"customer": "cus_busy"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn stripe_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("refund the customer's payment", "stripe_create_refund"),
        ("cancel a subscription", "stripe_delete_subscription"),
        ("create a payment link for 25 euros", "stripe_create_payment_link"),
        ("how much money is available in stripe", "stripe_get_balance"),
        ("show unpaid invoices", "stripe_list_invoices"),
        ("bill a customer for consulting", "stripe_create_invoice"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
