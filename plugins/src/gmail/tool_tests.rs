//! Gmail tools on `MockUpstream`: the exact request of reads and writes (search then one
//! metadata fetch per message, label names looked up to ids, the message sent as base64url
//! `raw`) and the shapes an agent reads.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn metadata(id: &str) -> Value {
    json!({"id": id, "threadId": "t1", "labelIds": ["UNREAD", "INBOX"], "snippet": "Lunch &amp; learn at noon",
        "internalDate": "1767261600000", "payload": {"mimeType": "multipart/alternative", "headers": [
            {"name": "From", "value": "Ann Lee <ann@acme.example>"}, {"name": "To", "value": "me@acme.example"},
            {"name": "Subject", "value": "Lunch"}, {"name": "Date", "value": "Thu, 1 Jan 2026 10:00:00 +0000"}]}})
}

#[test]
fn search_emails_lists_then_fetches_each_summary() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"messages": [{"id": "18c1", "threadId": "t1"}], "nextPageToken": "p2", "resultSizeEstimate": 12}))
        .json(metadata("18c1"))
        .ok(&SEARCH_EMAILS, json!({"query": "from:ann is:unread", "label_ids": ["INBOX"], "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/messages", "body": null,
               "query": [["q", "from:ann is:unread"], ["maxResults", "1"], ["labelIds", "INBOX"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/messages/18c1", "body": null, "query": [["format", "metadata"],
            ["metadataHeaders", "From"], ["metadataHeaders", "To"], ["metadataHeaders", "Cc"], ["metadataHeaders", "Subject"],
            ["metadataHeaders", "Date"]]})
    );
    assert_eq!(
        out,
        json!({"result_size_estimate": 12, "next_cursor": "p2", "emails": [{"id": "18c1", "thread_id": "t1",
            "date": "2026-01-01T10:00:00Z", "from": "Ann Lee <ann@acme.example>", "to": "me@acme.example", "subject": "Lunch",
            "snippet": "Lunch & learn at noon", "unread": true, "labels": ["UNREAD", "INBOX"]}]})
    );
    // No match: Gmail leaves `messages` out; nothing more is fetched.
    let (out, reqs) = MockUpstream::new().json(json!({"resultSizeEstimate": 0})).ok(&SEARCH_EMAILS, json!({}));
    assert_eq!((out, reqs.len()), (json!({"emails": [], "result_size_estimate": 0}), 1));
}

/// update_email_labels: a label name is looked up to its id, system labels go as they are; a
/// name nobody has is refused, listing the labels there are.
#[test]
fn update_labels_resolves_names_and_modifies() {
    let labels = json!({"labels": [{"id": "INBOX", "name": "INBOX", "type": "system"}, {"id": "Label_7", "name": "Receipts", "type": "user"}]});
    let (out, reqs) = MockUpstream::new()
        .json(labels.clone())
        .json(json!({"id": "18c1", "threadId": "t1", "labelIds": ["Label_7", "STARRED"]}))
        .ok(&UPDATE_LABELS, json!({"message_id": "18c1", "add_label_ids": ["receipts", "starred"], "remove_label_ids": ["INBOX", "unread"]}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/labels", "query": [], "body": null}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/messages/18c1/modify", "query": [],
               "body": {"addLabelIds": ["Label_7", "STARRED"], "removeLabelIds": ["INBOX", "UNREAD"]}})
    );
    assert_eq!(
        out,
        json!({"id": "18c1", "thread_id": "t1", "labels": ["Label_7", "STARRED"], "unread": false, "starred": true, "in_inbox": false})
    );
    let (r, reqs) = MockUpstream::new()
        .json(labels)
        .call(&UPDATE_LABELS, json!({"message_id": "18c1", "add_label_ids": ["Taxes"]}));
    let m = message(&r.unwrap_err());
    assert!(m.contains("no Gmail label is called 'Taxes'") && m.contains("Receipts"), "{m}");
    assert_eq!(reqs.len(), 1);
    // The message id is one segment.
    let (_, reqs) = MockUpstream::new()
        .json(json!({"id": "x"}))
        .ok(&UPDATE_LABELS, json!({"message_id": "../../drafts", "add_label_ids": ["STARRED"]}));
    assert_eq!(reqs[0].path, "/messages/..%2F..%2Fdrafts/modify");
}

/// send_email: the message goes as base64url `raw` with its recipients and subject; a recipient
/// that is not an address is refused before anything is sent.
#[test]
fn send_email_sends_raw_mime() {
    let (out, reqs) = MockUpstream::new().json(json!({"id": "18c2", "threadId": "t2", "labelIds": ["SENT"]})).ok(
        &SEND_EMAIL,
        json!({"to": ["bob@example.com"], "cc": ["carol@example.com"], "subject": "Quarterly numbers", "body": "See below."}),
    );
    let req = sent(&reqs[0]);
    assert_eq!((req["method"].clone(), req["path"].clone()), (json!("POST"), json!("/messages/send")));
    let raw = req["body"]["raw"].as_str().unwrap();
    let mime = String::from_utf8(crate::codec::base64_decode(raw).expect("base64url")).unwrap();
    assert!(mime.contains("bob@example.com") && mime.contains("carol@example.com"), "{mime}");
    assert!(mime.contains("Subject: Quarterly numbers") && mime.contains("See below."), "{mime}");
    assert_eq!(out, json!({"sent": true, "id": "18c2", "thread_id": "t2", "labels": ["SENT"]}));
    let (r, reqs) = MockUpstream::new()
        .call(&SEND_EMAIL, json!({"to": ["bob@example.com\r\nBcc: eve@evil.example"], "subject": "x", "body": "y"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}

/// list_labels: system labels first, then the user's own by name.
#[test]
fn list_labels_puts_system_labels_first() {
    let body = json!({"labels": [{"id": "Label_7", "name": "receipts", "type": "user", "messageListVisibility": "show"},
        {"id": "Label_3", "name": "Archive 2025", "type": "user"}, {"id": "INBOX", "name": "INBOX", "type": "system"}]});
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_LABELS, json!({}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/labels", "query": [], "body": null}));
    assert_eq!(
        out,
        json!({"labels": [{"id": "INBOX", "name": "INBOX", "type": "system"}, {"id": "Label_3", "name": "Archive 2025", "type": "user"},
            {"id": "Label_7", "name": "receipts", "type": "user"}]})
    );
}

/// get_email refuses option combinations that cannot work before anything is sent.
#[test]
fn get_email_refuses_what_cannot_work() {
    for (args, why) in [
        (json!({"message_id": "18c1", "format": "metadata", "save_attachments_to": "Downloads"}), "needs format full"),
        (json!({"message_id": "18c1", "attachment_part_ids": ["1"]}), "needs save_attachments_to"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&GET_EMAIL, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
    let (_, reqs) = MockUpstream::new()
        .json(json!({"id": "18c1", "payload": {}}))
        .ok(&GET_EMAIL, json!({"message_id": "18c1/../../profile"}));
    assert_eq!(reqs[0].path, "/messages/18c1%2F..%2F..%2Fprofile");
}

/// get_thread: one request for the whole thread; each message shaped with its plain-text body,
/// the subject taken from the first.
#[test]
fn get_thread_reads_every_message() {
    let part = |id: &str, from: &str, text: &str| {
        json!({"id": id, "threadId": "t1", "labelIds": ["INBOX"], "snippet": text, "internalDate": "1767261600000",
            "payload": {"mimeType": "text/plain", "headers": [{"name": "From", "value": from},
                {"name": "To", "value": "team@acme.example"}, {"name": "Subject", "value": "Offsite"}],
                "body": {"size": text.len(), "data": crate::codec::base64url_encode(text.as_bytes())}}})
    };
    let (out, reqs) = MockUpstream::new()
        .json(
            json!({"id": "t1", "historyId": "991", "messages": [part("18c1", "Ann <ann@acme.example>", "Friday works?"),
            part("18c2", "Bob <bob@acme.example>", "Friday is good.")]}),
        )
        .ok(&GET_THREAD, json!({"thread_id": "t1"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/threads/t1", "query": [["format", "full"]], "body": null})
    );
    let shaped = |id: &str, from: &str, body: &str| {
        json!({"id": id, "thread_id": "t1", "date": "2026-01-01T10:00:00Z", "from": from, "to": "team@acme.example",
            "subject": "Offsite", "labels": ["INBOX"], "unread": false, "body": body, "body_source": "text/plain"})
    };
    assert_eq!(
        out,
        json!({"thread_id": "t1", "subject": "Offsite", "message_count": 2, "messages": [
            shaped("18c1", "Ann <ann@acme.example>", "Friday works?"), shaped("18c2", "Bob <bob@acme.example>", "Friday is good.")]})
    );
    let (out, _) = MockUpstream::new().json(json!({"id": "t9"})).ok(&GET_THREAD, json!({"thread_id": "t9"}));
    assert_eq!(out, json!({"thread_id": "t9", "message_count": 0, "messages": []}));
}

/// create_draft: the message goes as base64url `raw` inside `message`, in the thread of the mail
/// it replies to, with that mail's Message-ID as In-Reply-To.
#[test]
fn create_draft_saves_a_reply_in_its_thread() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "18c1", "threadId": "t1", "payload": {"headers": [
            {"name": "Message-ID", "value": "<abc@mail.acme.example>"}, {"name": "Subject", "value": "Offsite"}]}}))
        .json(json!({"id": "r-42", "message": {"id": "18c9", "threadId": "t1", "labelIds": ["DRAFT"]}}))
        .ok(&CREATE_DRAFT, json!({"to": ["ann@acme.example"], "subject": "Re: Offsite", "body": "Friday is good.", "reply_to_message_id": "18c1"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/messages/18c1", "body": null, "query": [["format", "metadata"],
            ["metadataHeaders", "Message-ID"], ["metadataHeaders", "References"], ["metadataHeaders", "Subject"]]})
    );
    let req = sent(&reqs[1]);
    assert_eq!(
        (req["method"].clone(), req["path"].clone(), req["query"].clone()),
        (json!("POST"), json!("/drafts"), json!([]))
    );
    assert_eq!(req["body"]["message"]["threadId"], json!("t1"));
    let raw = req["body"]["message"]["raw"].as_str().unwrap();
    let mime = String::from_utf8(crate::codec::base64_decode(raw).expect("base64url")).unwrap();
    let (head, body) = mime.split_once("\r\n\r\n").expect("headers, then body");
    // Each header once, by name, holding its value (how a builder quotes an address may vary).
    for (name, value) in [
        ("To", "ann@acme.example"),
        ("Subject", "Re: Offsite"),
        ("In-Reply-To", "<abc@mail.acme.example>"),
        ("References", "<abc@mail.acme.example>"),
    ] {
        let found: Vec<&str> =
            head.lines().filter_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(": "))).collect();
        assert!(matches!(found[..], [v] if v.contains(value)), "{name}: {value} in {head}");
    }
    assert!(!head.contains("Bcc"), "{head}");
    assert!(body.contains("Friday is good."), "{mime}");
    assert_eq!(out, json!({"draft_id": "r-42", "message_id": "18c9", "thread_id": "t1"}));
}

/// delete_email moves the message to the Trash and says whether Gmail put it there.
#[test]
fn delete_email_trashes_the_message() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "18c1", "threadId": "t1", "labelIds": ["TRASH", "UNREAD"]}))
        .ok(&DELETE_EMAIL, json!({"message_id": "18c1"}));
    assert_eq!(sent(&reqs[0]), json!({"method": "POST", "path": "/messages/18c1/trash", "query": [], "body": null}));
    assert_eq!(out, json!({"id": "18c1", "thread_id": "t1", "trashed": true}));
}
