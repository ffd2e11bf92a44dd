//! Gmail against a fake of `gmail.googleapis.com/gmail/v1/users/me` that checks the OAuth bearer
//! token, the query parameters and the `raw` MIME the way Gmail does, and answers with Gmail's
//! message resources (full and metadata formats, base64url part bodies, attachment ids).

use std::collections::HashMap;

use plugins::codec::{base64_decode, base64url_encode};
use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with, files_dir};

pub(crate) const TOKEN: &str = "ya29.a0AfB_gmail-test-access-token";
pub(crate) const BASE: &str = "/gmail/v1/users/me";
pub(crate) const MSG_A: &str = "18f3c2a9b1d4e5f6";
const MSG_B: &str = "18f3c2a9b1d4e5f7";
const MSG_C: &str = "18f3c2a9b1d4e5f8";
const THREAD: &str = "18f3c2a9b1d4e5f0";
const PAGE_2: &str = "09876543210987654321";
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <</Type /Catalog>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n";
const CSV: &[u8] = b"region,revenue\nEMEA,1250000\nAPAC,980000\n";

fn google_error(code: u16, status: &str, message: &str, reason: &str) -> Reply {
    Reply::json(
        code,
        json!({"error": {"code": code, "message": message, "errors": [{"message": message, "domain": "global", "reason": reason}], "status": status}}),
    )
}

fn headers(pairs: &[(&str, &str)]) -> Value {
    Value::Array(pairs.iter().map(|(n, v)| json!({"name": n, "value": v})).collect())
}

fn text_part(part_id: &str, mime: &str, charset: &str, text: &[u8]) -> Value {
    json!({
        "partId": part_id, "mimeType": mime, "filename": "",
        "headers": headers(&[("Content-Type", &format!("{mime}; charset=\"{charset}\"")), ("Content-Transfer-Encoding", "quoted-printable")]),
        "body": {"size": text.len(), "data": base64url_encode(text)}
    })
}

fn attachment_part(part_id: &str, mime: &str, name: &str, attachment_id: &str, size: usize) -> Value {
    json!({
        "partId": part_id, "mimeType": mime, "filename": name,
        "headers": headers(&[
            ("Content-Type", &format!("{mime}; name=\"{name}\"")),
            ("Content-Disposition", &format!("attachment; filename=\"{name}\"")),
            ("Content-Transfer-Encoding", "base64"),
            ("X-Attachment-Id", "f_lx2k9a0b1"),
        ]),
        "body": {"attachmentId": attachment_id, "size": size}
    })
}

const NOISE: &[(&str, &str)] = &[
    ("Delivered-To", "bob@example.com"),
    (
        "Received",
        "by 2002:a05:7300:5c83:b0:1a4:1b2c:9f3 with SMTP id ab3csp123456dyc; Mon, 2 Mar 2026 00:00:01 -0800 (PST)",
    ),
    (
        "X-Google-Smtp-Source",
        "AGHT+IFq8m3uX0mB2Lw9v1Xj0yQ4p7Zr5cD6eF7gH8iJ9kL0mN1oP2qR3sT4uV5wX6yZ7aB8cD9eF0gH1iJ2kL3m==",
    ),
    (
        "ARC-Seal",
        "i=1; a=rsa-sha256; t=1772438401; cv=none; d=google.com; s=arc-20240605; b=Qm9ndXMgc2lnbmF0dXJlIGZvciB0ZXN0cyBvbmx5LCBub3QgYSByZWFsIHNlYWwuIFRoaXMgaXMgcGFkZGluZyB0byBsb29rIHJlYWxpc3RpYy4=",
    ),
    (
        "DKIM-Signature",
        "v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=google; t=1772438401; h=to:subject:message-id:date:from:mime-version; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=ZmFrZSBES0lNIHNpZ25hdHVyZSBmb3IgdGVzdHMgb25seQ==",
    ),
    ("MIME-Version", "1.0"),
];

fn message_a() -> Value {
    let mut h = NOISE.to_vec();
    h.extend([
        ("From", "Ada Lovelace <ada@example.com>"),
        ("Date", "Mon, 2 Mar 2026 09:00:00 +0100"),
        ("Message-ID", "<CAF=q3numbers@mail.gmail.com>"),
        ("References", "<kickoff-1@mail.example.com>"),
        ("Subject", "Q3 numbers"),
        ("To", "Bob Smith <bob@example.com>"),
        ("Cc", "carol@example.com"),
        ("Content-Type", "multipart/mixed; boundary=\"000000000000f1e2d3\""),
    ]);
    json!({
        "id": MSG_A, "threadId": THREAD, "labelIds": ["UNREAD", "IMPORTANT", "CATEGORY_PERSONAL", "INBOX"],
        "snippet": "Hi Bob, attached are the Q3 numbers &amp; the invoice. Let me know if anything&#39;s off.",
        "sizeEstimate": 68021, "historyId": "1234567", "internalDate": "1772438400000",
        "payload": {
            "partId": "", "mimeType": "multipart/mixed", "filename": "", "headers": headers(&h), "body": {"size": 0},
            "parts": [
                {"partId": "0", "mimeType": "multipart/alternative", "filename": "",
                 "headers": headers(&[("Content-Type", "multipart/alternative; boundary=\"000000000000a1b2c3\"")]), "body": {"size": 0},
                 "parts": [
                    text_part("0.0", "text/plain", "UTF-8", "Hi Bob,\r\n\r\nattached are the Q3 numbers & the invoice. Grüße!\r\n\r\nAda\r\n-- \r\nAda Lovelace · Analytical Engines Ltd · +44 20 7946 0000\r\n".as_bytes()),
                    text_part("0.1", "text/html", "UTF-8", "<div dir=\"ltr\">Hi Bob,<br><br>attached are the Q3 numbers &amp; the invoice. Grüße!<br><br>Ada</div>".as_bytes()),
                 ]},
                attachment_part("1", "application/pdf", "invoice-0042.pdf", "ANGjdJ9fX2-q_pdf", PDF.len()),
                attachment_part("2", "text/csv", "q3.csv", "ANGjdJ8csv_Yy-2", CSV.len()),
            ]
        }
    })
}

fn message_b() -> Value {
    let mut h = NOISE.to_vec();
    h.extend([
        ("From", "=?UTF-8?B?SsO8cmdlbiBNw7xsbGVy?= <juergen@example.de>"),
        ("Date", "Mon, 2 Mar 2026 10:30:00 +0100"),
        ("Message-ID", "<reply-2@mail.example.de>"),
        ("Subject", "=?UTF-8?Q?Re:_Q3_numbers_=E2=80=94_Gr=C3=BC=C3=9Fe?="),
        ("To", "Ada Lovelace <ada@example.com>"),
        ("Content-Type", "text/html; charset=\"ISO-8859-1\""),
    ]);
    json!({
        "id": MSG_B, "threadId": THREAD, "labelIds": ["INBOX"], "snippet": "Looks good", "sizeEstimate": 4100,
        "historyId": "1234590", "internalDate": "1772443800000",
        "payload": {"partId": "", "mimeType": "text/html", "filename": "", "headers": headers(&h),
                    "body": {"size": 60, "data": base64url_encode(b"<p>Looks good &ndash; danke, J\xfcrgen</p><p>Sent from my phone</p>")}}
    })
}

fn message_c() -> Value {
    json!({
        "id": MSG_C, "threadId": "18f3c2a9b1d4e5c0", "labelIds": ["CATEGORY_UPDATES", "INBOX"], "snippet": "Your build passed",
        "sizeEstimate": 2100, "historyId": "1234600", "internalDate": "1772449200000",
        "payload": {"partId": "", "mimeType": "text/plain", "filename": "",
                    "headers": headers(&[("From", "CI <ci@example.com>"), ("To", "bob@example.com"), ("Subject", "Build #812 passed"), ("Content-Type", "text/plain; charset=UTF-8")]),
                    "body": {"size": 17, "data": base64url_encode(b"Your build passed")}}
    })
}

/// Gmail's `format=metadata`: the payload keeps only the asked-for headers and loses its parts.
fn metadata(full: &Value, wanted: &[&str]) -> Value {
    let mut m = full.clone();
    let keep: Vec<Value> = full["payload"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| wanted.is_empty() || wanted.iter().any(|w| w.eq_ignore_ascii_case(h["name"].as_str().unwrap())))
        .cloned()
        .collect();
    m["payload"] = json!({"partId": "", "mimeType": full["payload"]["mimeType"], "filename": "", "headers": keep, "body": {"size": 0}});
    m
}

fn list_page(token: Option<&str>) -> Value {
    match token {
        None => {
            json!({"messages": [{"id": MSG_A, "threadId": THREAD}, {"id": MSG_B, "threadId": THREAD}], "nextPageToken": PAGE_2, "resultSizeEstimate": 3})
        }
        Some(_) => json!({"messages": [{"id": MSG_C, "threadId": "18f3c2a9b1d4e5c0"}], "resultSizeEstimate": 3}),
    }
}

fn labels() -> Value {
    json!({"labels": [
        {"id": "Label_34", "name": "Travel/2026", "type": "user", "messageListVisibility": "show", "labelListVisibility": "labelShow"},
        {"id": "INBOX", "name": "INBOX", "messageListVisibility": "hide", "labelListVisibility": "labelShow", "type": "system"},
        {"id": "Label_12", "name": "Receipts", "type": "user", "messageListVisibility": "show", "labelListVisibility": "labelShow", "color": {"textColor": "#ffffff", "backgroundColor": "#16a766"}},
        {"id": "UNREAD", "name": "UNREAD", "type": "system"},
        {"id": "STARRED", "name": "STARRED", "messageListVisibility": "hide", "labelListVisibility": "labelShow", "type": "system"},
        {"id": "TRASH", "name": "TRASH", "messageListVisibility": "hide", "labelListVisibility": "labelHide", "type": "system"}
    ]})
}

fn full_message(id: &str) -> Option<Value> {
    match id {
        MSG_A => Some(message_a()),
        MSG_B => Some(message_b()),
        MSG_C => Some(message_c()),
        _ => None,
    }
}

fn not_found() -> Reply {
    google_error(404, "NOT_FOUND", "Requested entity was not found.", "notFound")
}

fn all(r: &Recorded, key: &str) -> Vec<String> {
    r.query.iter().filter(|(k, _)| k == key).map(|(_, v)| v.clone()).collect()
}

/// Checks a `raw` message like Gmail's send path does: base64url, CRLF lines, a recipient header.
fn check_raw(raw: &Value) -> Result<String, Reply> {
    let Some(raw) = raw.as_str() else {
        return Err(google_error(
            400,
            "INVALID_ARGUMENT",
            "'raw' RFC822 payload message string or uploading message via /upload/* URL required",
            "invalidArgument",
        ));
    };
    if raw.contains(['+', '/']) {
        return Err(google_error(400, "INVALID_ARGUMENT", "Invalid value for ByteString", "invalidArgument"));
    }
    let text = String::from_utf8(base64_decode(raw).unwrap()).unwrap();
    let head = text.split("\r\n\r\n").next().unwrap();
    if !head.lines().any(|l| l.starts_with("To: ") || l.starts_with("Cc: ") || l.starts_with("Bcc: ")) {
        return Err(google_error(400, "INVALID_ARGUMENT", "Recipient address required", "invalidArgument"));
    }
    if text.replace("\r\n", "").contains('\n') {
        return Err(google_error(400, "INVALID_ARGUMENT", "Invalid RFC 822 message: bare LF", "invalidArgument"));
    }
    Ok(text)
}

pub(crate) fn gmail(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return google_error(400, "INVALID_ARGUMENT", "bad request", "badRequest");
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return google_error(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            "authError",
        );
    }
    let Some(path) = r.path.strip_prefix(BASE) else { return not_found() };
    let body: Value =
        if r.body.is_empty() { Value::Null } else { serde_json::from_slice(&r.body).unwrap_or(Value::Null) };
    let json_body = r.header("content-type").is_some_and(|c| c.starts_with("application/json"));
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", ["profile"]) => Reply::json(
            200,
            json!({"emailAddress": "bob@example.com", "messagesTotal": 48213, "threadsTotal": 30114, "historyId": "1234601"}),
        ),
        ("GET", ["messages"]) => {
            if r.q("maxResults").and_then(|m| m.parse::<u32>().ok()).is_none_or(|m| m > 500) {
                return google_error(400, "INVALID_ARGUMENT", "Invalid maxResults", "invalidArgument");
            }
            match r.q("pageToken") {
                None => Reply::json(200, list_page(None)),
                Some(PAGE_2) => Reply::json(200, list_page(Some(PAGE_2))),
                Some(_) => google_error(400, "INVALID_ARGUMENT", "Invalid pageToken", "invalidArgument"),
            }
        }
        ("GET", ["messages", "busy"]) => {
            google_error(429, "RESOURCE_EXHAUSTED", "Too many concurrent requests for user", "rateLimitExceeded")
                .with_header("retry-after", "120")
        }
        ("GET", ["messages", id]) => {
            let Some(m) = full_message(id) else { return not_found() };
            match r.q("format") {
                Some("full") | None => Reply::json(200, m),
                Some("metadata") => {
                    let wanted = all(r, "metadataHeaders");
                    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
                    Reply::json(200, metadata(&m, &wanted))
                }
                Some(f) => google_error(
                    400,
                    "INVALID_ARGUMENT",
                    &format!("Invalid value at 'format' ({f})"),
                    "invalidArgument",
                ),
            }
        }
        ("GET", ["messages", MSG_A, "attachments", att]) => match *att {
            "ANGjdJ9fX2-q_pdf" => {
                Reply::json(200, json!({"attachmentId": att, "size": PDF.len(), "data": base64url_encode(PDF)}))
            }
            "ANGjdJ8csv_Yy-2" => {
                Reply::json(200, json!({"attachmentId": att, "size": CSV.len(), "data": base64url_encode(CSV)}))
            }
            _ => google_error(400, "INVALID_ARGUMENT", "Invalid attachment token", "invalidArgument"),
        },
        ("GET", ["threads", THREAD]) => {
            let msgs = [message_a(), message_b()];
            let msgs: Vec<Value> = match r.q("format") {
                Some("metadata") => msgs.iter().map(|m| metadata(m, &[])).collect(),
                _ => msgs.to_vec(),
            };
            Reply::json(200, json!({"id": THREAD, "historyId": "1234590", "messages": msgs}))
        }
        ("GET", ["threads", _]) => not_found(),
        ("POST", ["messages", "send"]) if json_body => match check_raw(&body["raw"]) {
            Ok(_) => Reply::json(
                200,
                json!({"id": "190a1b2c3d4e5f60", "threadId": body["threadId"].as_str().unwrap_or("190a1b2c3d4e5f60"), "labelIds": ["SENT"]}),
            ),
            Err(e) => e,
        },
        ("POST", ["drafts"]) if json_body => match check_raw(&body["message"]["raw"]) {
            Ok(_) => Reply::json(
                200,
                json!({"id": "r-5501938475011234567", "message": {"id": "190a1b2c3d4e5f61", "threadId": body["message"]["threadId"].as_str().unwrap_or("190a1b2c3d4e5f61"), "labelIds": ["DRAFT"]}}),
            ),
            Err(e) => e,
        },
        ("POST", ["messages", id, "modify"]) if json_body => {
            let Some(m) = full_message(id) else { return not_found() };
            let known: Vec<String> =
                labels()["labels"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap().to_string()).collect();
            let mut ids: Vec<String> =
                m["labelIds"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect();
            for l in body["addLabelIds"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(body["removeLabelIds"].as_array().into_iter().flatten())
            {
                let l = l.as_str().unwrap_or("");
                if !known.iter().any(|k| k == l) && !l.starts_with("CATEGORY_") && l != "IMPORTANT" {
                    return google_error(400, "INVALID_ARGUMENT", &format!("Invalid label: {l}"), "invalidArgument");
                }
            }
            for l in body["removeLabelIds"].as_array().into_iter().flatten() {
                ids.retain(|x| x != l.as_str().unwrap());
            }
            for l in body["addLabelIds"].as_array().into_iter().flatten() {
                ids.push(l.as_str().unwrap().to_string());
            }
            Reply::json(200, json!({"id": id, "threadId": m["threadId"], "labelIds": ids}))
        }
        ("POST", ["messages", id, "trash"]) if r.body.is_empty() => {
            let Some(m) = full_message(id) else { return not_found() };
            Reply::json(200, json!({"id": id, "threadId": m["threadId"], "labelIds": ["TRASH", "IMPORTANT"]}))
        }
        ("GET", ["labels"]) => Reply::json(200, labels()),
        _ => not_found(),
    }
}

async fn setup() -> (TestApp, Fake) {
    setup_with(&[]).await
}

/// Gmail's fake and the settings that connect an App to it.
pub(crate) async fn fake_and_env() -> (Fake, Vec<(&'static str, String)>) {
    let fake = Fake::start(gmail).await;
    let env =
        vec![("WORKBENCH_GMAIL_BASE_URL", format!("{}{BASE}", fake.url)), ("WORKBENCH_GMAIL_TOKEN", TOKEN.into())];
    (fake, env)
}

/// Gmail's fake and an App connected to it, with extra settings (a files folder).
async fn setup_with(extra: &[(&'static str, String)]) -> (TestApp, Fake) {
    let (fake, mut env) = fake_and_env().await;
    env.extend(extra.iter().cloned());
    (app_with(&env), fake)
}

fn raw_of(r: &Recorded, pointer: &str) -> String {
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    String::from_utf8(base64_decode(body.pointer(pointer).unwrap().as_str().unwrap()).unwrap()).unwrap()
}

#[tokio::test]
async fn gmail_search_emails_fetches_metadata_and_pages() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "gmail_search_emails",
            json!({"query": "from:ada@example.com has:attachment", "label_ids": ["INBOX", "IMPORTANT"], "limit": 2}),
        )
        .await;
    let reqs = fake.requests();
    let list = &reqs[0];
    assert_eq!((list.method.as_str(), list.path.as_str()), ("GET", "/gmail/v1/users/me/messages"));
    assert_eq!(list.q("q"), Some("from:ada@example.com has:attachment"));
    assert_eq!(list.q("maxResults"), Some("2"));
    assert_eq!(all(list, "labelIds"), ["INBOX", "IMPORTANT"]);
    assert_eq!(list.q("pageToken"), None);
    assert_eq!(list.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(reqs.len(), 3, "one list call and one metadata call per message");
    for (req, id) in reqs[1..].iter().zip([MSG_A, MSG_B]) {
        assert_eq!(req.path, format!("/gmail/v1/users/me/messages/{id}"));
        assert_eq!(req.q("format"), Some("metadata"));
        assert_eq!(all(req, "metadataHeaders"), ["From", "To", "Cc", "Subject", "Date"]);
    }
    assert_eq!(
        r["emails"][0],
        json!({
            "id": MSG_A, "thread_id": THREAD, "date": "2026-03-02T08:00:00Z", "from": "Ada Lovelace <ada@example.com>",
            "to": "Bob Smith <bob@example.com>", "cc": "carol@example.com", "subject": "Q3 numbers",
            "snippet": "Hi Bob, attached are the Q3 numbers & the invoice. Let me know if anything's off.",
            "unread": true, "labels": ["UNREAD", "IMPORTANT", "CATEGORY_PERSONAL", "INBOX"]
        })
    );
    assert_eq!(r["emails"][1]["from"], "Jürgen Müller <juergen@example.de>", "encoded-word headers are decoded");
    assert_eq!(r["emails"][1]["subject"], "Re: Q3 numbers — Grüße");
    assert_eq!(r["result_size_estimate"], 3);
    assert_eq!(r["next_cursor"], PAGE_2);

    let raw_bytes = list_page(None).to_string().len()
        + [message_a(), message_b()].iter().map(|m| metadata(m, SUMMARY).to_string().len()).sum::<usize>();
    let shaped = r.to_string().len();
    eprintln!("gmail_search_emails: raw {raw_bytes} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw_bytes);

    assert!(r.get("raw").is_none());
    let r2 =
        t.ok("gmail_search_emails", json!({"cursor": PAGE_2, "include_spam_trash": true, "include_raw": true})).await;
    assert_eq!(r2["raw"][0]["sizeEstimate"], 2100, "raw carries Gmail's own resource");
    let list = fake.requests()[3].clone();
    assert_eq!(list.q("pageToken"), Some(PAGE_2));
    assert_eq!(list.q("q"), None, "no query means the newest mail");
    assert_eq!(list.q("maxResults"), Some("20"));
    assert_eq!(list.q("includeSpamTrash"), Some("true"));
    assert_eq!(r2["emails"][0]["subject"], "Build #812 passed");
    assert!(r2.get("next_cursor").is_none(), "the last page has no cursor");

    let bad = t.err("gmail_search_emails", json!({"cursor": "stale"})).await;
    assert_eq!(bad["code"], "UPSTREAM_ERROR");
    assert!(bad["message"].as_str().unwrap().contains("Invalid pageToken"), "{bad}");
}

const SUMMARY: &[&str] = &["From", "To", "Cc", "Subject", "Date"];

#[tokio::test]
async fn gmail_get_email_decodes_the_body_and_saves_attachments_locally() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = setup_with(&[files_dir(dir.path())]).await;
    let folder = dir.path().to_str().unwrap().to_string();
    let r = t.ok("gmail_get_email", json!({"message_id": MSG_A, "save_attachments_to": folder})).await;
    let reqs = fake.requests();
    assert_eq!(reqs[0].path, format!("{BASE}/messages/{MSG_A}"));
    assert_eq!(reqs[0].q("format"), Some("full"));
    assert_eq!(reqs[1].path, format!("{BASE}/messages/{MSG_A}/attachments/ANGjdJ9fX2-q_pdf"));
    assert_eq!(reqs[2].path, format!("{BASE}/messages/{MSG_A}/attachments/ANGjdJ8csv_Yy-2"));
    assert_eq!(
        r["body"],
        "Hi Bob,\n\nattached are the Q3 numbers & the invoice. Grüße!\n\nAda\n-- \nAda Lovelace · Analytical Engines Ltd · +44 20 7946 0000"
    );
    assert_eq!(r["body_source"], "text/plain");
    assert_eq!(r["subject"], "Q3 numbers");
    assert!(r.get("snippet").is_none() && r.get("truncated").is_none());
    let pdf_path = format!("{folder}/invoice-0042.pdf");
    assert_eq!(
        r["attachments"],
        json!([
            {"part_id": "1", "filename": "invoice-0042.pdf", "mime_type": "application/pdf", "size_bytes": PDF.len(), "saved_to": pdf_path},
            {"part_id": "2", "filename": "q3.csv", "mime_type": "text/csv", "size_bytes": CSV.len(), "saved_to": format!("{folder}/q3.csv")}
        ])
    );
    assert_eq!(std::fs::read(&pdf_path).unwrap(), PDF, "binary bytes arrive intact");
    assert_eq!(std::fs::read(dir.path().join("q3.csv")).unwrap(), CSV);
    assert!(!r.to_string().contains(&base64url_encode(PDF)), "no base64 blobs go back to the agent");

    // Existing files are not replaced silently; one attachment can be picked and overwritten.
    let e = t.err("gmail_get_email", json!({"message_id": MSG_A, "save_attachments_to": folder})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert!(e["message"].as_str().unwrap().contains("already exists"), "{e}");
    std::fs::write(dir.path().join("q3.csv"), "old").unwrap();
    let before = fake.requests().len();
    let r = t
        .ok("gmail_get_email", json!({"message_id": MSG_A, "save_attachments_to": folder, "attachment_part_ids": ["2"], "overwrite": true}))
        .await;
    let fetched: Vec<String> = fake.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        fetched,
        [format!("{BASE}/messages/{MSG_A}"), format!("{BASE}/messages/{MSG_A}/attachments/ANGjdJ8csv_Yy-2")]
    );
    assert_eq!(std::fs::read(dir.path().join("q3.csv")).unwrap(), CSV);
    assert!(r["attachments"][0].get("saved_to").is_none(), "the PDF was not picked");
    let e = t
        .err(
            "gmail_get_email",
            json!({"message_id": MSG_A, "save_attachments_to": folder, "attachment_part_ids": ["9"]}),
        )
        .await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/attachment_part_ids/0");

    let shaped = t.ok("gmail_get_email", json!({"message_id": MSG_A})).await.to_string().len();
    let raw = message_a().to_string().len();
    eprintln!("gmail_get_email: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw);
}

#[tokio::test]
async fn gmail_get_email_reduces_html_and_cuts_long_bodies() {
    let (t, fake) = setup().await;
    let r = t.ok("gmail_get_email", json!({"message_id": MSG_B, "include_raw": true})).await;
    assert_eq!(r["body"], "Looks good – danke, Jürgen\n\nSent from my phone", "Latin-1 HTML reduced to text");
    assert_eq!(r["body_source"], "text/html");
    assert_eq!(r["from"], "Jürgen Müller <juergen@example.de>");
    assert_eq!(r["raw"]["id"], MSG_B);
    assert!(r.get("attachments").is_none());

    let cut = t.ok("gmail_get_email", json!({"message_id": MSG_A, "max_chars": 100})).await;
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["body"].as_str().unwrap().chars().count(), 100);

    let meta = t.ok("gmail_get_email", json!({"message_id": MSG_A, "format": "metadata"})).await;
    assert_eq!(fake.last().q("format"), Some("metadata"));
    assert!(meta.get("body").is_none());
    assert_eq!(meta["snippet"], "Hi Bob, attached are the Q3 numbers & the invoice. Let me know if anything's off.");

    let e = t.err("gmail_get_email", json!({"message_id": "does-not-exist"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("Requested entity was not found."), "{e}");
}

#[tokio::test]
async fn gmail_get_thread_returns_every_message_as_text() {
    let (t, fake) = setup().await;
    let r = t.ok("gmail_get_thread", json!({"thread_id": THREAD, "max_chars_per_message": 100})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/gmail/v1/users/me/threads/18f3c2a9b1d4e5f0"));
    assert_eq!(req.q("format"), Some("full"));
    assert_eq!(r["thread_id"], THREAD);
    assert_eq!(r["subject"], "Q3 numbers");
    assert_eq!(r["message_count"], 2);
    assert_eq!(r["messages"][0]["from"], "Ada Lovelace <ada@example.com>");
    assert_eq!(r["messages"][0]["attachments"][0]["filename"], "invoice-0042.pdf");
    assert_eq!(r["messages"][1]["body"], "Looks good – danke, Jürgen\n\nSent from my phone");
    assert!(r.get("raw").is_none());
    let e = t.err("gmail_get_thread", json!({"thread_id": "nope"})).await;
    assert_eq!(e["status"], 404);
}

#[tokio::test]
async fn gmail_send_email_builds_rfc2822_with_encoded_headers() {
    let (t, fake) = setup_with(&[("WORKBENCH_FLOW", "off".into())]).await;
    let r = t
        .ok(
            "gmail_send_email",
            json!({
                "to": ["Bob Smith <bob@example.com>", "Jürgen Müller <juergen@example.de>"],
                "cc": ["carol@example.com"], "bcc": ["audit@example.com"],
                "subject": "Grüße — Quartalszahlen", "body": "Hi all,\nnumbers attached soon.\n"
            }),
        )
        .await;
    assert_eq!(r, json!({"sent": true, "id": "190a1b2c3d4e5f60", "thread_id": "190a1b2c3d4e5f60", "labels": ["SENT"]}));
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/gmail/v1/users/me/messages/send"));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert!(body.get("threadId").is_none(), "a new conversation");
    let raw = raw_of(&req, "/raw");
    let subject = format!("=?UTF-8?B?{}?=", plugins::codec::base64_encode("Grüße — Quartalszahlen".as_bytes()));
    let juergen = format!("=?UTF-8?B?{}?=", plugins::codec::base64_encode("Jürgen Müller".as_bytes()));
    assert_eq!(
        raw,
        format!(
            "To: Bob Smith <bob@example.com>,\r\n {juergen} <juergen@example.de>\r\nCc: carol@example.com\r\nBcc: audit@example.com\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\nHi all,\r\nnumbers attached soon.\r\n\r\n"
        )
    );

    let before = fake.requests().len();
    let e = t.err("gmail_send_email", json!({"to": ["bob at example"], "subject": "x", "body": "y"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/to/0");
    assert_eq!(fake.requests().len(), before, "nothing is sent for a bad address");
}

#[tokio::test]
async fn gmail_send_email_replies_in_thread_with_html_and_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = setup_with(&[files_dir(dir.path()), ("WORKBENCH_FLOW", "off".into())]).await;
    let file = dir.path().join("forecast Q4.csv");
    std::fs::write(&file, "month,forecast\nOct,1.1\n").unwrap();
    let r = t
        .ok(
            "gmail_send_email",
            json!({
                "to": ["ada@example.com"], "subject": "Re: Q3 numbers", "html": true,
                "body": "<p>Thanks <b>Ada</b>!</p><p>Forecast attached.</p>",
                "reply_to_message_id": MSG_A, "attachments": [file.to_str().unwrap()]
            }),
        )
        .await;
    assert_eq!(r["thread_id"], THREAD, "the reply lands in the original thread");
    let reqs = fake.requests();
    assert_eq!(reqs[0].path, format!("{BASE}/messages/{MSG_A}"));
    assert_eq!(reqs[0].q("format"), Some("metadata"));
    assert_eq!(all(&reqs[0], "metadataHeaders"), ["Message-ID", "References", "Subject"]);
    let send = &reqs[1];
    let body: Value = serde_json::from_slice(&send.body).unwrap();
    assert_eq!(body["threadId"], THREAD);
    let raw = raw_of(send, "/raw");
    assert!(raw.starts_with("To: ada@example.com\r\nSubject: Re: Q3 numbers\r\nIn-Reply-To: <CAF=q3numbers@mail.gmail.com>\r\nReferences: <kickoff-1@mail.example.com> <CAF=q3numbers@mail.gmail.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\""), "{raw}");
    let boundary = raw.split("boundary=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    assert!(boundary.len() > 20, "a random boundary: {boundary}");
    assert!(
        raw.contains("Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\nThanks Ada!\r\n\r\nForecast attached.\r\n--"),
        "a plain-text alternative derived from the HTML: {raw}"
    );
    assert!(raw.contains("Content-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n<p>Thanks <b>Ada</b>!</p><p>Forecast attached.</p>\r\n"));
    assert!(raw.contains("Content-Type: text/csv; name=\"forecast Q4.csv\"\r\nContent-Disposition: attachment; filename=\"forecast Q4.csv\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"));
    assert!(raw.contains(&plugins::codec::base64_encode(b"month,forecast\nOct,1.1\n")));
    assert!(raw.ends_with(&format!("--{boundary}--\r\n")));

    let e = t
        .err(
            "gmail_send_email",
            json!({"to": ["ada@example.com"], "subject": "x", "body": "y", "attachments": ["relative/file.txt"]}),
        )
        .await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/attachments/0");
}

#[tokio::test]
async fn gmail_create_draft_saves_without_sending() {
    let (t, fake) = setup().await;
    let r = t
        .ok("gmail_create_draft", json!({"to": ["bob@example.com"], "subject": "Draft: offsite", "body": "Ideas:\n- Lisbon", "thread_id": THREAD}))
        .await;
    assert_eq!(r, json!({"draft_id": "r-5501938475011234567", "message_id": "190a1b2c3d4e5f61", "thread_id": THREAD}));
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/gmail/v1/users/me/drafts"));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["message"]["threadId"], THREAD);
    let raw = raw_of(&req, "/message/raw");
    assert!(raw.starts_with("To: bob@example.com\r\nSubject: Draft: offsite\r\nMIME-Version: 1.0\r\n"), "{raw}");
    assert!(raw.ends_with("\r\n\r\nIdeas:\r\n- Lisbon\r\n"));
    assert!(fake.requests().iter().all(|r| !r.path.ends_with("/send")));
}

#[tokio::test]
async fn gmail_update_email_labels_resolves_names_and_marks_read() {
    let (t, fake) = setup().await;
    let r = t
        .ok("gmail_update_email_labels", json!({"message_id": MSG_A, "add_label_ids": ["receipts", "starred"], "remove_label_ids": ["UNREAD", "INBOX"]}))
        .await;
    let reqs = fake.requests();
    assert_eq!(reqs[0].path, format!("{BASE}/labels"), "a label name is looked up");
    let modify = &reqs[1];
    assert_eq!(
        (modify.method.as_str(), modify.path.as_str()),
        ("POST", "/gmail/v1/users/me/messages/18f3c2a9b1d4e5f6/modify")
    );
    let body: Value = serde_json::from_slice(&modify.body).unwrap();
    assert_eq!(body, json!({"addLabelIds": ["Label_12", "STARRED"], "removeLabelIds": ["UNREAD", "INBOX"]}));
    assert_eq!(
        r,
        json!({"id": MSG_A, "thread_id": THREAD, "labels": ["IMPORTANT", "CATEGORY_PERSONAL", "Label_12", "STARRED"], "unread": false, "starred": true, "in_inbox": false})
    );

    // Ids alone need no lookup.
    let before = fake.requests().len();
    t.ok("gmail_update_email_labels", json!({"message_id": MSG_C, "add_label_ids": ["UNREAD"]})).await;
    assert_eq!(fake.requests().len(), before + 1);

    let e = t.err("gmail_update_email_labels", json!({"message_id": MSG_A, "add_label_ids": ["Nope"]})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert!(e["message"].as_str().unwrap().contains("Receipts"), "names the labels that exist: {e}");
    let e = t.err("gmail_update_email_labels", json!({"message_id": MSG_A})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    let e = t.err("gmail_update_email_labels", json!({"message_id": MSG_A, "add_label_ids": ["Label_99"]})).await;
    assert!(e["message"].as_str().unwrap().contains("Invalid label: Label_99"), "{e}");
}

#[tokio::test]
async fn gmail_list_labels_puts_system_labels_first() {
    let (t, fake) = setup().await;
    let r = t.ok("gmail_list_labels", json!({})).await;
    assert!(r.get("raw").is_none());
    let raw = t.ok("gmail_list_labels", json!({"include_raw": true})).await;
    assert_eq!(raw["raw"][2]["color"]["backgroundColor"], "#16a766");
    assert_eq!(fake.last().path, "/gmail/v1/users/me/labels");
    assert_eq!(
        r["labels"],
        json!([
            {"id": "INBOX", "name": "INBOX", "type": "system"}, {"id": "STARRED", "name": "STARRED", "type": "system"},
            {"id": "TRASH", "name": "TRASH", "type": "system"}, {"id": "UNREAD", "name": "UNREAD", "type": "system"},
            {"id": "Label_12", "name": "Receipts", "type": "user"}, {"id": "Label_34", "name": "Travel/2026", "type": "user"}
        ])
    );
}

#[tokio::test]
async fn gmail_delete_email_moves_to_trash() {
    let (t, fake) = setup().await;
    let r = t.ok("gmail_delete_email", json!({"message_id": MSG_B})).await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/gmail/v1/users/me/messages/18f3c2a9b1d4e5f7/trash")
    );
    assert!(req.body.is_empty());
    assert_eq!(r, json!({"id": MSG_B, "thread_id": THREAD, "trashed": true}));
    let e = t.err("gmail_delete_email", json!({"message_id": "gone"})).await;
    assert_eq!(e["status"], 404);
}

#[tokio::test]
async fn gmail_rejected_token_and_rate_limit() {
    let fake = Fake::start(gmail).await;
    let t = app_with(&[
        ("WORKBENCH_GMAIL_BASE_URL", format!("{}{BASE}", fake.url)),
        ("WORKBENCH_GMAIL_TOKEN", "ya29.expired".into()),
    ]);
    let e = t.err("gmail_list_labels", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("invalid authentication credentials"), "{e}");
    assert!(!e.to_string().contains("ya29.expired"));

    let (t, _fake) = setup().await;
    let e = t.err("gmail_get_email", json!({"message_id": "busy"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    assert_eq!(e["retry_after_seconds"], 120);
    assert!(e["message"].as_str().unwrap().contains("Too many concurrent requests for user"), "{e}");
}

#[tokio::test]
async fn gmail_identity_names_the_mailbox() {
    let (t, fake) = setup().await;
    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> = [("token".to_string(), Secret::new(token.to_string()))].into();
        workbench::auth::from_fields(&plugins::gmail::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::gmail::INTEGRATION, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("bob@example.com"));
    assert_eq!(fake.last().path, "/gmail/v1/users/me/profile");
    let err =
        workbench::send::verify_identity(&t.app, &plugins::gmail::INTEGRATION, conn("ya29.wrong")).await.unwrap_err();
    assert!(err.to_string().contains("Gmail rejected this credential"), "{err}");

    let spec = &plugins::gmail::INTEGRATION.auth;
    let oauth = spec.oauth.unwrap();
    assert_eq!(oauth.client, "google");
    assert!(oauth.scopes.contains(&"https://www.googleapis.com/auth/gmail.modify"));
    assert!(oauth.extra_params.contains(&("access_type", "offline")));
}

#[tokio::test]
async fn gmail_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("send an email to bob", "gmail_send_email"),
        ("reply to that mail", "gmail_send_email"),
        ("unread emails in my inbox", "gmail_search_emails"),
        ("read the email body and its attachments", "gmail_get_email"),
        ("whole email conversation", "gmail_get_thread"),
        ("save an email draft", "gmail_create_draft"),
        ("mark email as read", "gmail_update_email_labels"),
        ("archive this email", "gmail_update_email_labels"),
        ("gmail labels", "gmail_list_labels"),
        ("delete email", "gmail_delete_email"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
