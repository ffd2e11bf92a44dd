//! HubSpot tools on `MockUpstream`: the exact request of the CRM search and of writes (search
//! bodies, properties as HubSpot's strings, associations by type id, email lookups) and the record
//! as an agent reads it.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn contact() -> Value {
    json!({"id": "151", "properties": {"email": "ann@acme.example", "firstname": "Ann", "lastname": "Lee", "phone": "",
        "company": null, "hs_object_id": "151", "createdate": "2026-01-01T00:00:00.000Z", "lastmodifieddate": "2026-01-02T00:00:00.000Z"},
        "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z", "archived": false})
}

const SHAPED: &str = r#"{"id": "151", "email": "ann@acme.example", "firstname": "Ann", "lastname": "Lee",
    "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-02T00:00:00.000Z"}"#;

#[test]
fn search_contacts_sends_the_search_body_and_shapes_the_page() {
    let reply = json!({"total": 2, "results": [contact()], "paging": {"next": {"after": "1", "link": "?after=1"}}});
    let (out, reqs) = MockUpstream::new().json(reply).ok(
        &SEARCH_CONTACTS,
        json!({"query": "acme", "filters": [{"property": "lifecyclestage", "operator": "in", "values": ["lead", "customer"]}],
               "properties": ["city", "email"], "limit": 1}),
    );
    let mut properties: Vec<&str> = CONTACT_PROPERTIES.to_vec();
    properties.push("city");
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/crm/v3/objects/contacts/search", "query": [], "body": {
            "properties": properties, "sorts": [{"propertyName": "createdate", "direction": "DESCENDING"}], "limit": 1,
            "query": "acme", "filterGroups": [{"filters": [{"propertyName": "lifecyclestage", "operator": "IN", "values": ["lead", "customer"]}]}]}})
    );
    let shaped: Value = serde_json::from_str(SHAPED).unwrap();
    assert_eq!(out, json!({"total": 2, "contacts": [shaped], "next_cursor": "1"}));
}

/// HubSpot's search stops at 10,000: a cursor beyond it is not offered, a note says how to narrow.
#[test]
fn search_deals_says_when_the_search_cap_is_reached() {
    let reply = json!({"total": 25000, "results": [], "paging": {"next": {"after": "10000"}}});
    let (out, reqs) =
        MockUpstream::new().json(reply).ok(&SEARCH_DEALS, json!({"cursor": "9900", "sort_direction": "asc"}));
    assert_eq!(sent(&reqs[0])["body"]["after"], "9900");
    assert_eq!(sent(&reqs[0])["body"]["sorts"][0]["direction"], "ASCENDING");
    assert!(out.get("next_cursor").is_none());
    assert!(out["note"].as_str().unwrap().contains("at most 10000 of the 25000"));
}

/// A filter that needs values and has none is refused, naming the filter, before sending.
#[test]
fn search_refuses_an_incomplete_filter() {
    let (r, reqs) =
        MockUpstream::new().call(&SEARCH_COMPANIES, json!({"filters": [{"property": "domain", "operator": "eq"}]}));
    let Err(ToolError::InvalidArguments { problems, .. }) = r else { panic!("{r:?}") };
    assert_eq!(problems[0].path, "/filters/0/value");
    assert!(reqs.is_empty());
}

#[test]
fn create_contact_sends_properties_and_associations() {
    let (out, reqs) = MockUpstream::new().json(contact()).ok(
        &CREATE_CONTACT,
        json!({"email": "ann@acme.example", "firstname": "Ann", "properties": {"seats": 12, "vip": true},
               "company_ids": ["9001"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/crm/v3/objects/contacts", "query": [], "body": {
            "properties": {"seats": "12", "vip": "true", "email": "ann@acme.example", "firstname": "Ann"},
            "associations": [{"to": {"id": "9001"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 279}]}]}})
    );
    assert_eq!(out, serde_json::from_str::<Value>(SHAPED).unwrap());
}

/// update_contact by email: the address is one encoded segment with `idProperty=email`; null
/// clears a property; both id and email, or neither, is refused.
#[test]
fn update_contact_by_email_encodes_it() {
    let (_, reqs) = MockUpstream::new()
        .json(contact())
        .ok(&UPDATE_CONTACT, json!({"email": "ann/../x@acme.example", "properties": {"phone": null}}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": "/crm/v3/objects/contacts/ann%2F..%2Fx%40acme.example",
               "query": [["idProperty", "email"]], "body": {"properties": {"phone": ""}}})
    );
    let (r, reqs) = MockUpstream::new()
        .call(&UPDATE_CONTACT, json!({"contact_id": "1", "email": "a@b.example", "properties": {"a": 1}}));
    assert!(message(&r.unwrap_err()).contains("either contact_id or email"));
    assert!(reqs.is_empty());
}

/// An answer without properties is still a record (its id), not a panic.
#[test]
fn a_bare_answer_shapes_to_its_id() {
    let (out, _) = MockUpstream::new().json(json!({"id": "151"})).ok(&GET_CONTACT, json!({"contact_id": "151"}));
    assert_eq!(out["id"], "151");
}

/// create_deal: the default pipeline's first stage unless given, money as HubSpot's string,
/// a date as midnight UTC, associations by type id; another pipeline without a stage is refused.
#[test]
fn create_deal_fills_the_default_stage() {
    let deal = json!({"id": "9001", "properties": {"dealname": "Acme renewal", "amount": "12000", "dealstage": "appointmentscheduled",
        "pipeline": "default", "createdate": "2026-01-01T00:00:00.000Z"}, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"});
    let (out, reqs) = MockUpstream::new().json(deal).ok(
        &CREATE_DEAL,
        json!({"dealname": "Acme renewal", "amount": 12000.0, "closedate": "2026-06-30", "contact_ids": ["151"], "company_ids": ["77"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/crm/v3/objects/deals", "query": [], "body": {
            "properties": {"dealname": "Acme renewal", "pipeline": "default", "dealstage": "appointmentscheduled", "amount": "12000",
                           "closedate": "2026-06-30T00:00:00.000Z"},
            "associations": [
                {"to": {"id": "151"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 3}]},
                {"to": {"id": "77"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 341}]}]}})
    );
    assert_eq!((out["id"].clone(), out["amount"].clone()), (json!("9001"), json!("12000")));
    let (r, reqs) = MockUpstream::new().call(&CREATE_DEAL, json!({"dealname": "x", "pipeline": "888"}));
    assert!(message(&r.unwrap_err()).contains("give its dealstage id"));
    assert!(reqs.is_empty());
}

/// create_note: the body is escaped into HubSpot's HTML (no markup from the agent survives as
/// markup) and attached to its record.
#[test]
fn create_note_escapes_the_body_and_attaches_it() {
    let note = json!({"id": "3001", "properties": {"hs_note_body": "Call &lt;b&gt;went&lt;/b&gt; well<br>Next: demo",
        "hs_timestamp": "2026-03-02T15:30:00Z"}, "createdAt": "2026-03-02T15:31:00.000Z"});
    let (out, reqs) = MockUpstream::new().json(note).ok(
        &CREATE_NOTE,
        json!({"object_type": "deal", "object_id": "9001", "body": "Call <b>went</b> well\nNext: demo", "timestamp": "2026-03-02T15:30:00Z"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/crm/v3/objects/notes", "query": [], "body": {
            "properties": {"hs_note_body": "Call &lt;b&gt;went&lt;/b&gt; well<br>Next: demo", "hs_timestamp": "2026-03-02T15:30:00Z"},
            "associations": [{"to": {"id": "9001"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 214}]}]}})
    );
    assert_eq!(out["attached_to"], json!({"object_type": "deal", "object_id": "9001"}));
    assert_eq!(out["id"], "3001");
}

/// update_deal: a PATCH of the deal's properties in HubSpot's string form (numbers as text, null
/// clears, a bare close date at midnight UTC); the updated deal as an agent reads it.
#[test]
fn update_deal_patches_properties_as_hubspot_strings() {
    let updated = json!({"id": "9001", "properties": {"dealname": "Acme — 50 seats", "dealstage": "closedwon", "amount": "18000.5",
        "closedate": "2026-06-30T00:00:00.000Z", "hubspot_owner_id": "", "pipeline": "default", "hs_object_id": "9001",
        "createdate": "2026-01-01T00:00:00.000Z", "hs_lastmodifieddate": "2026-03-01T00:00:00.000Z"},
        "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-03-01T00:00:00.000Z", "archived": false});
    let (out, reqs) = MockUpstream::new().json(updated).ok(
        &UPDATE_DEAL,
        json!({"deal_id": "9001", "properties": {"dealstage": "closedwon", "amount": 18000.5, "closedate": "2026-06-30", "hubspot_owner_id": null}}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": "/crm/v3/objects/deals/9001", "query": [], "body": {"properties": {
            "dealstage": "closedwon", "amount": "18000.5", "closedate": "2026-06-30T00:00:00.000Z", "hubspot_owner_id": ""}}})
    );
    assert_eq!(
        out,
        json!({"id": "9001", "dealname": "Acme — 50 seats", "dealstage": "closedwon", "amount": "18000.5",
            "closedate": "2026-06-30T00:00:00.000Z", "pipeline": "default", "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-03-01T00:00:00.000Z"})
    );
}

/// The deal id is one path segment; no properties, a bad close date or an object value is refused
/// before anything is sent.
#[test]
fn update_deal_refuses_bad_properties_unsent() {
    let (_, reqs) = MockUpstream::new()
        .json(json!({"id": "9001", "properties": {}}))
        .ok(&UPDATE_DEAL, json!({"deal_id": "9001/../../contacts", "properties": {"dealstage": "closedlost"}}));
    assert_eq!(sent(&reqs[0])["path"], "/crm/v3/objects/deals/9001%2F..%2F..%2Fcontacts");
    for (props, path) in [
        (json!({}), "/properties"),
        (json!({"closedate": "June 30"}), "/properties/closedate"),
        (json!({"amount": {"value": 1}}), "/properties/amount"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&UPDATE_DEAL, json!({"deal_id": "9001", "properties": props}));
        let Err(ToolError::InvalidArguments { problems, .. }) = r else { panic!("{r:?}") };
        assert_eq!(problems[0].path, path);
        assert!(reqs.is_empty());
    }
}
