//! Stripe tools on `MockUpstream`: the exact request of reads and writes (the pinned
//! Stripe-Version, search queries with quoted values, form posts with an Idempotency-Key,
//! ids as one segment) and the shapes an agent reads, money in the currency's units.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, header, message, sent};

/// search_customers by email: the address is quoted inside Stripe's search language (a quote in
/// it cannot end the string), the next page token becomes the cursor.
#[test]
fn search_customers_quotes_the_email() {
    let page = json!({"object": "search_result", "url": "/v1/customers/search", "has_more": true, "next_page": "WzE3MDBd",
        "data": [{"id": "cus_NffrFeUfNV2Hib", "object": "customer", "name": "Jenny Rosen", "email": "jenny.rosen@example.com",
                  "phone": null, "created": 1680893993, "currency": "eur", "balance": -2500, "delinquent": false,
                  "invoice_settings": {"default_payment_method": "pm_1"}, "metadata": {}, "livemode": false}]});
    let (out, reqs) =
        MockUpstream::new().json(page).ok(&SEARCH_CUSTOMERS, json!({"email": "o'brien@example.com", "limit": 5}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/v1/customers/search", "body": null,
               "query": [["query", "email:'o\\'brien@example.com'"], ["limit", "5"]]})
    );
    assert_eq!(header(&reqs[0], "stripe-version"), Some(STRIPE_VERSION));
    assert_eq!(
        out,
        json!({"query": "email:'o\\'brien@example.com'", "next_cursor": "WzE3MDBd", "customers": [{"id": "cus_NffrFeUfNV2Hib",
            "name": "Jenny Rosen", "email": "jenny.rosen@example.com", "created": "2023-04-07T18:59:53Z", "currency": "eur",
            "balance": -2500, "balance_display": "-25.00 EUR", "default_payment_method": "pm_1"}]})
    );
    let (r, reqs) = MockUpstream::new().call(&SEARCH_CUSTOMERS, json!({"email": "a@b.example", "query": "name:'x'"}));
    assert!(message(&r.unwrap_err()).contains("either query or email"));
    assert!(reqs.is_empty());
}

/// create_refund: a form post with an Idempotency-Key, metadata as bracketed keys.
#[test]
fn create_refund_posts_a_form_with_an_idempotency_key() {
    let refund = json!({"id": "re_1Nispe2eZvKYlo2Cd31jOCgZ", "object": "refund", "amount": 1000, "currency": "usd",
        "payment_intent": "pi_1", "charge": "ch_1", "reason": "requested_by_customer", "status": "succeeded",
        "created": 1692942318, "metadata": {"ticket": "42"}, "balance_transaction": "txn_1"});
    let (out, reqs) = MockUpstream::new().json(refund).ok(
        &CREATE_REFUND,
        json!({"payment_intent": "pi_1", "amount": 1000, "reason": "requested_by_customer", "metadata": {"ticket": 42}}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/v1/refunds", "query": [], "body": {"form": [
            ["payment_intent", "pi_1"], ["amount", "1000"], ["reason", "requested_by_customer"], ["metadata[ticket]", "42"]]}})
    );
    assert_eq!(header(&reqs[0], "idempotency-key"), Some("00000000000000000000000000000001"));
    assert_eq!(
        out,
        json!({"id": "re_1Nispe2eZvKYlo2Cd31jOCgZ", "status": "succeeded", "amount": 1000, "amount_display": "10.00 USD",
            "currency": "usd", "payment_intent": "pi_1", "charge": "ch_1", "reason": "requested_by_customer",
            "created": "2023-08-25T05:45:18Z", "metadata": {"ticket": "42"}})
    );
    for (args, why) in [
        (json!({"payment_intent": "pi_1", "charge": "ch_1"}), "either payment_intent or charge"),
        (json!({"charge": "ch_1", "metadata": {"deep": {"x": 1}}}), "short texts"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&CREATE_REFUND, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}

/// A customer id is one segment; a deleted customer is said so; an odd answer does not panic.
#[test]
fn get_customer_encodes_the_id() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "cus_1", "object": "customer", "deleted": true}))
        .ok(&GET_CUSTOMER, json!({"customer_id": "cus_1/../../v1/balance"}));
    assert!(reqs[0].path.starts_with("/v1/customers/cus_1%2F..%2F..%2Fv1%2Fbalance"), "{}", reqs[0].path);
    assert_eq!(out["deleted"], true);
    let (out, _) = MockUpstream::new().json(json!([1, 2])).ok(&GET_CUSTOMER, json!({"customer_id": "cus_1"}));
    assert!(out.is_object());
}

/// list_payments: dates become Stripe's created[gte]/[lte] seconds; the last id is the cursor.
#[test]
fn list_payments_filters_by_date_and_pages_by_the_last_id() {
    let page = json!({"object": "list", "has_more": true, "data": [{"id": "pi_3MtwBwLkdIwHu7ix28a3tqPa", "object": "payment_intent",
        "amount": 2000, "amount_received": 2000, "currency": "jpy", "status": "succeeded", "customer": "cus_1", "created": 1680800504,
        "payment_method": "pm_1", "latest_charge": "ch_1", "metadata": {}}]});
    let (out, reqs) = MockUpstream::new()
        .json(page)
        .ok(&LIST_PAYMENTS, json!({"customer": "cus_1", "created_gte": "2026-01-31", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/v1/payment_intents", "body": null,
               "query": [["customer", "cus_1"], ["created[gte]", "1769817600"], ["limit", "1"]]})
    );
    assert_eq!(out["next_cursor"], "pi_3MtwBwLkdIwHu7ix28a3tqPa");
    assert_eq!(out["payments"][0]["amount_display"], "2000 JPY");
    assert!(out["payments"][0].get("amount_received").is_none(), "equal to amount, so left out");
    let (r, reqs) = MockUpstream::new().call(&LIST_PAYMENTS, json!({"created_gte": "31/01/2026"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
    assert!(reqs.is_empty());
}

/// delete_subscription: at period end is a POST flag; now is a DELETE with form fields;
/// prorate with at_period_end is refused unsent.
#[test]
fn delete_subscription_now_or_at_period_end() {
    let sub = json!({"id": "sub_1", "object": "subscription", "status": "canceled", "customer": "cus_1",
        "items": {"data": [{"quantity": 1, "price": {"id": "price_1", "product": "prod_1", "unit_amount": 1500, "currency": "usd",
                   "recurring": {"interval": "month", "interval_count": 1}}}]}});
    let (out, reqs) = MockUpstream::new()
        .json(sub.clone())
        .ok(&DELETE_SUBSCRIPTION, json!({"subscription_id": "sub_1", "prorate": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "DELETE", "path": "/v1/subscriptions/sub_1", "query": [], "body": {"form": [["prorate", "true"]]}})
    );
    assert_eq!(out["items"][0]["unit_amount_display"], "15.00 USD");
    let (_, reqs) = MockUpstream::new()
        .json(sub)
        .ok(&DELETE_SUBSCRIPTION, json!({"subscription_id": "sub_1", "at_period_end": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/v1/subscriptions/sub_1", "query": [], "body": {"form": [["cancel_at_period_end", "true"]]}})
    );
    let (r, reqs) = MockUpstream::new()
        .call(&DELETE_SUBSCRIPTION, json!({"subscription_id": "sub_1", "at_period_end": true, "invoice_now": true}));
    assert!(message(&r.unwrap_err()).contains("only to an immediate cancellation"));
    assert!(reqs.is_empty());
}

/// create_payment_link with an ad-hoc price: the price is created first, then the link.
#[test]
fn create_payment_link_creates_the_price_then_the_link() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "price_1MoBy5LkdIwHu7ixZhnattbh", "object": "price"}))
        .json(json!({"id": "plink_1", "object": "payment_link", "url": "https://buy.stripe.com/test_123", "active": true, "livemode": false}))
        .ok(&CREATE_PAYMENT_LINK, json!({"amount": 4900, "currency": "EUR", "product_name": "Workshop", "quantity": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/v1/prices", "query": [], "body": {"form": [["currency", "eur"], ["unit_amount", "4900"],
            ["product_data[name]", "Workshop"]]}})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/v1/payment_links", "query": [], "body": {"form": [
            ["line_items[0][price]", "price_1MoBy5LkdIwHu7ixZhnattbh"], ["line_items[0][quantity]", "2"]]}})
    );
    assert_ne!(header(&reqs[0], "idempotency-key"), header(&reqs[1], "idempotency-key"), "each post has its own key");
    assert_eq!(
        out,
        json!({"id": "plink_1", "url": "https://buy.stripe.com/test_123", "active": true, "price": "price_1MoBy5LkdIwHu7ixZhnattbh",
            "quantity": 2, "amount_display": "49.00 EUR", "livemode": false})
    );
    let (r, reqs) = MockUpstream::new().call(&CREATE_PAYMENT_LINK, json!({"price_id": "price_1", "amount": 5}));
    assert!(message(&r.unwrap_err()).contains("either price_id, or amount + currency + product_name"));
    assert!(reqs.is_empty());
}

#[test]
fn get_balance_shows_funds_in_units() {
    let body = json!({"object": "balance", "livemode": false,
        "available": [{"amount": 666670, "currency": "usd", "source_types": {"card": 666670}}],
        "pending": [{"amount": 61414, "currency": "usd"}], "instant_available": []});
    let (out, reqs) = MockUpstream::new().json(body).ok(&GET_BALANCE, json!({}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/v1/balance", "query": [], "body": null}));
    assert_eq!(
        out,
        json!({"mode": "test", "available": [{"currency": "usd", "amount": 666670, "display": "6666.70 USD"}],
            "pending": [{"currency": "usd", "amount": 61414, "display": "614.14 USD"}]})
    );
}

/// list_invoices: the subscription comes from the newer `parent` shape when present.
#[test]
fn list_invoices_reads_the_subscription_from_parent() {
    let page = json!({"object": "list", "has_more": false, "data": [{"id": "in_1", "number": "ABC-0001", "status": "open",
        "customer": "cus_1", "currency": "eur", "total": 1999, "amount_due": 1999, "amount_paid": 0, "amount_remaining": 1999,
        "collection_method": "send_invoice", "created": 1769817600,
        "parent": {"type": "subscription_details", "subscription_details": {"subscription": "sub_9"}}}]});
    let (out, reqs) = MockUpstream::new().json(page).ok(&LIST_INVOICES, json!({"customer": "cus_1", "status": "open"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/v1/invoices", "body": null, "query": [["customer", "cus_1"], ["status", "open"], ["limit", "25"]]})
    );
    let inv = &out["invoices"][0];
    assert_eq!((inv["subscription"].clone(), inv["total_display"].clone()), (json!("sub_9"), json!("19.99 EUR")));
    assert_eq!(inv["created"], "2026-01-31T00:00:00Z");
    assert!(out.get("next_cursor").is_none());
}

/// create_invoice: a draft invoice, one invoice item per line attached to it, then finalized;
/// each write a form post. No lines is refused before any request.
#[test]
fn create_invoice_drafts_adds_lines_and_finalizes() {
    let invoice = json!({"id": "in_1MtHbELkdIwHu7ix", "object": "invoice", "customer": "cus_NffrFeUfNV2Hib", "status": "open",
        "currency": "eur", "amount_due": 125000, "amount_paid": 0, "total": 125000, "collection_method": "send_invoice",
        "due_date": 1680220800, "created": 1680134400, "number": "ACME-0007",
        "hosted_invoice_url": "https://invoice.stripe.com/i/acct_1/test", "lines": {"object": "list", "data": [
            {"id": "il_1", "description": "Consulting, March", "amount": 125000, "currency": "eur"}]}});
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "in_1MtHbELkdIwHu7ix", "object": "invoice", "status": "draft"}))
        .json(json!({"id": "ii_1", "object": "invoiceitem", "invoice": "in_1MtHbELkdIwHu7ix"}))
        .json(invoice)
        .ok(
            &CREATE_INVOICE,
            json!({"customer_id": "cus_NffrFeUfNV2Hib", "currency": "EUR", "items": [{"description": "Consulting, March", "amount": 125000}],
                   "days_until_due": 14, "finalize": true}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/v1/invoices", "query": [], "body": {"form": [["customer", "cus_NffrFeUfNV2Hib"],
            ["currency", "eur"], ["collection_method", "send_invoice"], ["auto_advance", "false"],
            ["pending_invoice_items_behavior", "exclude"], ["days_until_due", "14"]]}})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/v1/invoiceitems", "query": [], "body": {"form": [["customer", "cus_NffrFeUfNV2Hib"],
            ["invoice", "in_1MtHbELkdIwHu7ix"], ["amount", "125000"], ["currency", "eur"], ["description", "Consulting, March"]]}})
    );
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "POST", "path": "/v1/invoices/in_1MtHbELkdIwHu7ix/finalize", "query": [], "body": {"form": [["auto_advance", "false"]]}})
    );
    assert_eq!(
        out,
        json!({"id": "in_1MtHbELkdIwHu7ix", "number": "ACME-0007", "status": "open", "customer": "cus_NffrFeUfNV2Hib", "currency": "eur",
            "total": 125000, "total_display": "1250.00 EUR", "amount_due": 125000, "amount_paid": 0, "collection_method": "send_invoice",
            "created": "2023-03-30T00:00:00Z", "due_date": "2023-03-31T00:00:00Z",
            "hosted_invoice_url": "https://invoice.stripe.com/i/acct_1/test",
            "lines": [{"description": "Consulting, March", "amount": 125000, "amount_display": "1250.00 EUR"}], "emailed": false})
    );
    let (r, reqs) =
        MockUpstream::new().call(&CREATE_INVOICE, json!({"customer_id": "cus_1", "currency": "eur", "items": []}));
    assert!(message(&r.unwrap_err()).contains("items is required"));
    assert!(reqs.is_empty());
}

/// list_subscriptions: filters as Stripe's parameters, the last id as the cursor, the billing
/// period read from the items.
#[test]
fn list_subscriptions_filters_and_pages() {
    let body = json!({"object": "list", "has_more": true, "url": "/v1/subscriptions", "data": [{"id": "sub_1MowQVLkdIwHu7ix",
        "object": "subscription", "customer": "cus_NffrFeUfNV2Hib", "status": "active", "cancel_at_period_end": false,
        "cancel_at": null, "canceled_at": null, "trial_end": null, "created": 1680134400, "collection_method": "charge_automatically",
        "latest_invoice": "in_1", "metadata": {},
        "items": {"object": "list", "data": [{"id": "si_1", "quantity": 3, "current_period_end": 1682812800,
            "price": {"id": "price_1", "product": "prod_1", "nickname": "Team", "unit_amount": 1500, "currency": "usd",
                "recurring": {"interval": "month", "interval_count": 1}}}]}}]});
    let (out, reqs) = MockUpstream::new().json(body).ok(
        &LIST_SUBSCRIPTIONS,
        json!({"customer": "cus_NffrFeUfNV2Hib", "status": "past_due", "limit": 1, "cursor": "sub_0"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/v1/subscriptions", "body": null, "query": [["customer", "cus_NffrFeUfNV2Hib"],
            ["status", "past_due"], ["limit", "1"], ["starting_after", "sub_0"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "sub_1MowQVLkdIwHu7ix", "subscriptions": [{"id": "sub_1MowQVLkdIwHu7ix", "customer": "cus_NffrFeUfNV2Hib",
            "status": "active", "items": [{"price": "price_1", "product": "prod_1", "nickname": "Team", "quantity": 3, "unit_amount": 1500,
                "unit_amount_display": "15.00 USD", "interval": "month"}],
            "current_period_end": "2023-04-30T00:00:00Z", "cancel_at_period_end": false, "created": "2023-03-30T00:00:00Z",
            "collection_method": "charge_automatically", "latest_invoice": "in_1"}]})
    );
}
