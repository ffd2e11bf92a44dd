//! Gmail: search, read (MIME decoded to text, attachments saved to local files), send and draft
//! (RFC 2822 built here, sent base64url as `raw`), labels and trash. OAuth through the shared
//! Google client; every path is below `https://gmail.googleapis.com/gmail/v1/users/me`.

pub mod mime;

use std::sync::Arc;

use futures_util::{StreamExt, stream};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
use crate::codec::{base64_decode, base64url_encode};
use crate::flow::{Audience, Side, Verdict};
use crate::google::{self, file_name, format_datetime, invalid, mime_for, safe_file_name};
use crate::text::decode_entities;
use crate::tool;

use mime::{AttachmentRef, Outgoing};

pub static INTEGRATION: Integration = Integration {
    name: "gmail",
    display_name: "Gmail",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::OAuth2,
        fields: &[],
        inject: Inject::Bearer("token"),
        identity: Some(Identity {
            request: || HttpRequest::get("/profile"),
            label: |b| b["emailAddress"].as_str().map(str::to_string),
        }),
        oauth: Some(google::oauth(&["https://www.googleapis.com/auth/gmail.modify", "openid", "email"])),
    },
    keywords: &["email", "e-mail", "mail", "inbox", "google mail", "gmail", "mailbox"],
    hosts: &[Host { key: "base_url", default_url: "https://gmail.googleapis.com/gmail/v1/users/me" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_second(10),
    side: Some(side),
    tools: &[SEARCH_EMAILS, GET_EMAIL, GET_THREAD, SEND_EMAIL, CREATE_DRAFT, UPDATE_LABELS, LIST_LABELS, DELETE_EMAIL],
    error_message: google::error_message,
};

const FAN_OUT: usize = 8;
/// Gmail's own cap on a message with attachments.
const MAX_ATTACHMENT_BYTES: usize = 25 * 1024 * 1024;

fn message_path(id: &str) -> String {
    format!("/messages/{}", encode_segment(id))
}

/// internalDate (milliseconds since the epoch, as a string) as RFC 3339 UTC.
fn internal_date(m: &Value) -> Value {
    match google::int64(&m["internalDate"]).as_i64() {
        Some(ms) => Value::String(format_datetime(ms.div_euclid(1000), 0)),
        None => Value::Null,
    }
}

fn labels_of(m: &Value) -> Vec<&str> {
    m["labelIds"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// The fields a person looks at in a message list.
fn shape_summary(m: &Value) -> Value {
    let p = &m["payload"];
    let labels = labels_of(m);
    compact(json!({
        "id": m["id"],
        "thread_id": m["threadId"],
        "date": internal_date(m),
        "from": mime::header(p, "From"),
        "to": mime::header(p, "To"),
        "cc": mime::header(p, "Cc"),
        "subject": mime::header(p, "Subject"),
        "snippet": m["snippet"].as_str().map(decode_entities),
        "unread": labels.contains(&"UNREAD"),
        "labels": labels,
    }))
}

/// A whole message: headers, decoded body (cut to `max_chars`) and attachments.
fn shape_message(m: &Value, max_chars: usize) -> (Value, Vec<AttachmentRef>) {
    let mut out = shape_summary(m);
    let p = &m["payload"];
    let extracted = mime::extract(p);
    let obj = out.as_object_mut().expect("shape_summary returns an object");
    if let Some(reply_to) = mime::header(p, "Reply-To") {
        obj.insert("reply_to".into(), json!(reply_to));
    }
    if let Some(text) = &extracted.text {
        let (body, cut) = truncate_chars(text, max_chars);
        obj.remove("snippet");
        obj.insert("body".into(), json!(body));
        obj.insert("body_source".into(), json!(extracted.source));
        if cut {
            obj.insert("truncated".into(), json!(true));
        }
    }
    if !extracted.attachments.is_empty() {
        let list: Vec<Value> = extracted
            .attachments
            .iter()
            .map(|a| json!({"part_id": a.part_id, "filename": a.filename, "mime_type": a.mime_type, "size_bytes": a.size}))
            .collect();
        obj.insert("attachments".into(), Value::Array(list));
    }
    (out, extracted.attachments)
}

// ------------------------------------------------------------------------------------ search

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchEmails {
    /// Gmail search query, the same syntax as the Gmail search box, e.g. "from:alice@example.com is:unread", "subject:invoice newer_than:30d", "has:attachment in:inbox". Omit to list the newest mail.
    query: Option<String>,
    /// Only messages carrying all of these label ids (e.g. ["INBOX", "UNREAD"]; user label ids from gmail_list_labels).
    label_ids: Option<Vec<String>>,
    /// Also search Spam and Trash.
    #[serde(default)]
    include_spam_trash: bool,
    /// How many emails to return (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Gmail's message resources (metadata format) as `raw`.
    #[serde(default)]
    include_raw: bool,
}

const SUMMARY_HEADERS: &[&str] = &["From", "To", "Cc", "Subject", "Date"];

pub(crate) const SEARCH_EMAILS: ToolSpec = tool! {
    name: "gmail_search_emails",
    effect: Read,
    results: Private,
    args: SearchEmails,
    run: search_emails,
    keywords: ["find email", "list emails", "inbox", "unread", "mail from", "messages", "check email", "recent mail", "search mail", "emails from"],
    description: "Search or list emails in the Gmail inbox/mailbox with Gmail search syntax (from:, to:, subject:, is:unread, has:attachment, newer_than:7d, label:, in:inbox); returns sender, recipients, subject, date, snippet and the ids for reading a message or its thread.",
};

async fn search_emails(up: Arc<dyn Upstream>, args: SearchEmails) -> Result<Value, ToolError> {
    let mut req = HttpRequest::get("/messages")
        .query_opt("q", args.query.as_deref().filter(|q| !q.trim().is_empty()))
        .query("maxResults", args.limit.clamp(1, 100))
        .query_opt("pageToken", args.cursor.as_deref());
    for label in args.label_ids.iter().flatten() {
        req = req.query("labelIds", label);
    }
    if args.include_spam_trash {
        req = req.query("includeSpamTrash", "true");
    }
    let list = up.send(req).await?.json()?;
    let ids: Vec<String> = list["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    let fetched: Vec<Result<Value, ToolError>> = stream::iter(ids)
        .map(|id| {
            let up = up.clone();
            async move {
                let mut req = HttpRequest::get(message_path(&id)).query("format", "metadata");
                for h in SUMMARY_HEADERS {
                    req = req.query("metadataHeaders", h);
                }
                up.send(req).await?.json()
            }
        })
        .buffered(FAN_OUT)
        .collect()
        .await;
    let mut emails = Vec::new();
    let mut raw = Vec::new();
    for m in fetched {
        let m = m?;
        emails.push(shape_summary(&m));
        if args.include_raw {
            raw.push(m);
        }
    }
    let mut out = compact(json!({
        "emails": emails,
        "result_size_estimate": list["resultSizeEstimate"],
        "next_cursor": list["nextPageToken"],
    }));
    if args.include_raw {
        out["raw"] = Value::Array(raw);
    }
    Ok(out)
}

// -------------------------------------------------------------------------------------- read

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum MessageFormat {
    // Headers, body and attachment list.
    #[default]
    Full,
    // Headers, labels and snippet only (smaller, faster).
    Metadata,
}

impl MessageFormat {
    fn as_str(self) -> &'static str {
        match self {
            MessageFormat::Full => "full",
            MessageFormat::Metadata => "metadata",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetEmail {
    /// The message id (the `id` from gmail_search_emails, not the Message-ID header).
    #[schemars(length(min = 1))]
    message_id: String,
    /// full (headers, body, attachments; default) or metadata (headers, labels and snippet only).
    #[serde(default)]
    format: MessageFormat,
    /// Cut the body to this many characters (100-100000); `truncated: true` says it was cut.
    #[serde_inline_default(10_000)]
    #[schemars(range(min = 100, max = 100_000))]
    max_chars: usize,
    /// Absolute path of an existing local folder to save the attachments into, e.g. "/home/me/Downloads". Files keep their attachment names.
    save_attachments_to: Option<String>,
    /// With save_attachments_to: only these attachments (their part_id from the attachment list); default all.
    attachment_part_ids: Option<Vec<String>>,
    /// With save_attachments_to: replace files that already exist.
    #[serde(default)]
    overwrite: bool,
    /// Also return Gmail's full message resource as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_EMAIL: ToolSpec = tool! {
    name: "gmail_get_email",
    effect: Read,
    files: Writes(&["save_attachments_to"]),
    results: Private,
    args: GetEmail,
    run: get_email,
    keywords: ["read email", "open message", "email body", "attachments", "download attachment", "mail content", "show email", "full email"],
    description: "Read one email (Gmail message) by id: from, to, cc, subject, date, labels, the body as plain text (HTML mail converted to text) and the attachment list; can save the attachments to a local folder.",
};

async fn get_email(up: Arc<dyn Upstream>, args: GetEmail) -> Result<Value, ToolError> {
    if args.save_attachments_to.is_some() && matches!(args.format, MessageFormat::Metadata) {
        return Err(invalid("/format", "saving attachments needs format full"));
    }
    if args.attachment_part_ids.is_some() && args.save_attachments_to.is_none() {
        return Err(invalid("/save_attachments_to", "attachment_part_ids needs save_attachments_to (a local folder)"));
    }
    let m = up
        .send(HttpRequest::get(message_path(&args.message_id)).query("format", args.format.as_str()))
        .await?
        .json()?;
    let (mut out, attachments) = shape_message(&m, args.max_chars);
    if let Some(dir) = &args.save_attachments_to {
        let id = m["id"].as_str().unwrap_or(&args.message_id).to_string();
        let saved =
            save_attachments(&*up, &id, &attachments, dir, args.attachment_part_ids.as_deref(), args.overwrite).await?;
        out["attachments"] = Value::Array(saved);
    }
    if args.include_raw {
        out["raw"] = m;
    }
    Ok(out)
}

/// Downloads attachments (inline data or by attachment id) and writes them to `dir`.
async fn save_attachments(
    up: &dyn Upstream,
    message_id: &str,
    attachments: &[AttachmentRef],
    dir: &str,
    only: Option<&[String]>,
    overwrite: bool,
) -> Result<Vec<Value>, ToolError> {
    if let Some(only) = only {
        for (i, wanted) in only.iter().enumerate() {
            if !attachments.iter().any(|a| &a.part_id == wanted) {
                let known: Vec<&str> = attachments.iter().map(|a| a.part_id.as_str()).collect();
                return Err(invalid(
                    &format!("/attachment_part_ids/{i}"),
                    format!("this email has no attachment with part_id '{wanted}'; it has {known:?}"),
                ));
            }
        }
    }
    let dir = dir.trim_end_matches(['/', '\\']);
    let mut used: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for a in attachments {
        let selected = only.is_none_or(|o| o.contains(&a.part_id));
        let mut entry =
            json!({"part_id": a.part_id, "filename": a.filename, "mime_type": a.mime_type, "size_bytes": a.size});
        if selected {
            let data = match (&a.data, &a.attachment_id) {
                (Some(d), _) => d.clone(),
                (None, Some(att)) => {
                    let path = format!("{}/attachments/{}", message_path(message_id), encode_segment(att));
                    let body = up.send(HttpRequest::get(path)).await?.json()?;
                    body["data"].as_str().unwrap_or_default().to_string()
                }
                (None, None) => String::new(),
            };
            let bytes = base64_decode(&data).ok_or_else(|| {
                ToolError::Internal(format!("Gmail sent attachment '{}' in an unreadable encoding", a.filename))
            })?;
            let name = unique_name(&safe_file_name(&a.filename), &mut used);
            let path = format!("{dir}/{name}");
            let written = up.write_local_file(&path, bytes, overwrite).await?;
            entry["saved_to"] = json!(path);
            entry["size_bytes"] = json!(written);
        }
        out.push(entry);
    }
    Ok(out)
}

/// `report.pdf`, then `report (2).pdf` for a second attachment of the same name.
fn unique_name(name: &str, used: &mut Vec<String>) -> String {
    let mut candidate = name.to_string();
    let mut n = 2;
    while used.contains(&candidate) {
        candidate = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => format!("{stem} ({n}).{ext}"),
            _ => format!("{name} ({n})"),
        };
        n += 1;
    }
    used.push(candidate.clone());
    candidate
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetThread {
    /// The thread id (`thread_id` from gmail_search_emails or gmail_get_email).
    #[schemars(length(min = 1))]
    thread_id: String,
    /// full (bodies; default) or metadata (headers and snippets only).
    #[serde(default)]
    format: MessageFormat,
    /// Cut each message body to this many characters (100-50000).
    #[serde_inline_default(4_000)]
    #[schemars(range(min = 100, max = 50_000))]
    max_chars_per_message: usize,
    /// Also return Gmail's full thread resource as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_THREAD: ToolSpec = tool! {
    name: "gmail_get_thread",
    effect: Read,
    results: Private,
    args: GetThread,
    run: get_thread,
    keywords: ["conversation", "email thread", "email chain", "replies", "read thread"],
    description: "Read a whole Gmail conversation (thread, email chain with its replies) by thread id: every message with sender, recipients, date and plain-text body, oldest first.",
};

async fn get_thread(up: Arc<dyn Upstream>, args: GetThread) -> Result<Value, ToolError> {
    let t = up
        .send(
            HttpRequest::get(format!("/threads/{}", encode_segment(&args.thread_id)))
                .query("format", args.format.as_str()),
        )
        .await?
        .json()?;
    let messages: Vec<Value> = t["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| shape_message(m, args.max_chars_per_message).0)
        .collect();
    let mut out = compact(json!({
        "thread_id": t["id"],
        "subject": messages.first().and_then(|m| m.get("subject")).cloned(),
        "message_count": messages.len(),
        "messages": messages,
    }));
    if args.include_raw {
        out["raw"] = t;
    }
    Ok(out)
}

// ------------------------------------------------------------------------------ send / draft

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Compose {
    /// Recipients: email addresses, optionally with a name, e.g. ["ada@example.com", "Bob Smith <bob@example.com>"].
    #[schemars(length(min = 1))]
    to: Vec<String>,
    /// Subject line (any language; encoded for you). For a reply use "Re: " plus the original subject so Gmail keeps the thread.
    subject: String,
    /// The message text. Plain text, or HTML when html is true.
    body: String,
    /// Carbon-copy (CC) recipients.
    cc: Option<Vec<String>>,
    /// Blind carbon-copy (BCC) recipients.
    bcc: Option<Vec<String>>,
    /// The body is HTML; a plain-text version is added for mail clients that want one.
    #[serde(default)]
    html: bool,
    /// Gmail message id being replied to: sets In-Reply-To and References and files the reply in that message's thread.
    reply_to_message_id: Option<String>,
    /// Gmail thread id to put the message in (taken from reply_to_message_id when that is given).
    thread_id: Option<String>,
    /// Absolute paths of local files to attach, e.g. ["/home/me/report.pdf"] (25 MB in total at most).
    attachments: Option<Vec<String>>,
}

/// The RFC 2822 message and its thread for a compose request.
async fn build_raw(up: &dyn Upstream, args: &Compose) -> Result<(String, Option<String>), ToolError> {
    if args.to.is_empty() {
        return Err(invalid("/to", "give at least one recipient"));
    }
    let (cc, bcc) = (args.cc.clone().unwrap_or_default(), args.bcc.clone().unwrap_or_default());
    for (field, list) in [("to", &args.to), ("cc", &cc), ("bcc", &bcc)] {
        for (i, a) in list.iter().enumerate() {
            mime::encode_address(a).map_err(|e| invalid(&format!("/{field}/{i}"), e.to_string()))?;
        }
    }
    let mut thread_id = args.thread_id.clone();
    let (mut in_reply_to, mut references) = (None, None);
    if let Some(reply_to) = &args.reply_to_message_id {
        let original = up
            .send(
                HttpRequest::get(message_path(reply_to))
                    .query("format", "metadata")
                    .query("metadataHeaders", "Message-ID")
                    .query("metadataHeaders", "References")
                    .query("metadataHeaders", "Subject"),
            )
            .await?
            .json()?;
        let p = &original["payload"];
        if let Some(id) = mime::header(p, "Message-ID") {
            references = Some(match mime::header(p, "References") {
                Some(r) if !r.is_empty() => format!("{r} {id}"),
                _ => id.clone(),
            });
            in_reply_to = Some(id);
        }
        if thread_id.is_none() {
            thread_id = original["threadId"].as_str().map(str::to_string);
        }
    }
    let mut files = Vec::new();
    let mut total = 0usize;
    for (i, path) in args.attachments.iter().flatten().enumerate() {
        let bytes = up.read_local_file(path).await.map_err(|e| match e {
            ToolError::InvalidArguments { message, .. } => invalid(&format!("/attachments/{i}"), message),
            other => other,
        })?;
        total += bytes.len();
        if total > MAX_ATTACHMENT_BYTES {
            return Err(invalid(
                &format!("/attachments/{i}"),
                "the attachments exceed Gmail's 25 MB limit; share large files with google_drive_upload_file and send the link",
            ));
        }
        let name = file_name(path).to_string();
        files.push(mime::Attachment { mime_type: mime_for(&name).to_string(), name, bytes });
    }
    let msg = Outgoing {
        to: &args.to,
        cc: &cc,
        bcc: &bcc,
        subject: &args.subject,
        body: &args.body,
        html: args.html,
        in_reply_to,
        references,
        attachments: files,
    };
    let raw = mime::build(&msg, &format!("wb{}", up.new_id())).map_err(|e| invalid("/to", e.to_string()))?;
    Ok((base64url_encode(&raw), thread_id))
}

pub(crate) const SEND_EMAIL: ToolSpec = tool! {
    name: "gmail_send_email",
    effect: Write,
    files: Reads(&["attachments"]),
    results: Private,
    audience: Audience::Decide(recipients),
    args: Compose,
    run: send_email,
    keywords: ["send mail", "email someone", "write email", "reply", "compose", "forward file", "attach"],
    description: "Send an email from Gmail: compose new mail or reply in a thread (reply_to_message_id), to/cc/bcc recipients, plain-text or HTML body, local files as attachments.",
};

async fn send_email(up: Arc<dyn Upstream>, args: Compose) -> Result<Value, ToolError> {
    let (raw, thread_id) = build_raw(&*up, &args).await?;
    let mut body = json!({ "raw": raw });
    if let Some(t) = &thread_id {
        body["threadId"] = json!(t);
    }
    let sent = up.send(HttpRequest::post("/messages/send").json(body)).await?.json()?;
    Ok(compact(json!({
        "sent": true,
        "id": sent["id"],
        "thread_id": sent["threadId"],
        "labels": sent["labelIds"],
    })))
}

pub(crate) const CREATE_DRAFT: ToolSpec = tool! {
    name: "gmail_create_draft",
    effect: Write,
    files: Reads(&["attachments"]),
    results: Private,
    audience: Audience::Decide(recipients),
    args: Compose,
    run: create_draft,
    keywords: ["draft", "save email", "compose later", "prepare email", "write reply"],
    description: "Save an email as a Gmail draft without sending it (compose for later review): recipients, subject, plain-text or HTML body, a reply in a thread, local files as attachments.",
};

async fn create_draft(up: Arc<dyn Upstream>, args: Compose) -> Result<Value, ToolError> {
    let (raw, thread_id) = build_raw(&*up, &args).await?;
    let mut message = json!({ "raw": raw });
    if let Some(t) = &thread_id {
        message["threadId"] = json!(t);
    }
    let draft = up.send(HttpRequest::post("/drafts").json(json!({ "message": message }))).await?.json()?;
    Ok(compact(json!({
        "draft_id": draft["id"],
        "message_id": draft["message"]["id"],
        "thread_id": draft["message"]["threadId"],
    })))
}

/// The user's side of a Gmail account: the profile's `emailAddress` (and its domain unless it
/// is a public mail provider's).
fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let profile = up.send(HttpRequest::get("/profile")).await?.json()?;
        match profile["emailAddress"].as_str().filter(|e| e.contains('@')) {
            Some(email) => Ok(Side::from_email(email)),
            None => Err(crate::flow::undecided("Gmail's profile named no emailAddress")),
        }
    })
}

/// A mail's audience: every `to`, `cc` and `bcc` recipient (the attachments go to all of them).
/// A draft counts like a send: one click in Gmail sends it to the same recipients. A reply goes
/// only to the recipients given (Gmail adds none), so no lookup is needed.
fn recipients(_up: Arc<dyn Upstream>, args: Value, side: Arc<Side>) -> BoxFuture<Result<Verdict, ToolError>> {
    let all: Vec<String> = ["to", "cc", "bcc"].iter().flat_map(|f| crate::flow::arg_strings(&args, f)).collect();
    crate::flow::ready(Ok(Verdict::for_emails(&side, all.iter().map(String::as_str))))
}

// ------------------------------------------------------------------------------------ labels

const SYSTEM_LABELS: &[&str] = &[
    "INBOX",
    "UNREAD",
    "STARRED",
    "IMPORTANT",
    "SPAM",
    "TRASH",
    "SENT",
    "DRAFT",
    "CHAT",
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateLabels {
    /// The message id (from gmail_search_emails).
    #[schemars(length(min = 1))]
    message_id: String,
    /// Labels to add: system ids (UNREAD = mark unread, STARRED = star, IMPORTANT, INBOX = move back to inbox) or a user label's id or name (e.g. "Receipts").
    add_label_ids: Option<Vec<String>>,
    /// Labels to remove: UNREAD = mark as read, INBOX = archive, STARRED = unstar, or a user label's id or name.
    remove_label_ids: Option<Vec<String>>,
}

/// Label ids for ids or names: system ids and `Label_…` ids pass as they are; names are looked up.
async fn resolve_labels(up: &dyn Upstream, lists: [(&str, &[String]); 2]) -> Result<[Vec<String>; 2], ToolError> {
    let is_id = |l: &str| SYSTEM_LABELS.contains(&l.to_ascii_uppercase().as_str()) || l.starts_with("Label_");
    let needs_lookup = lists.iter().any(|(_, l)| l.iter().any(|x| !is_id(x)));
    let known = if needs_lookup { up.send(HttpRequest::get("/labels")).await?.json()? } else { Value::Null };
    let mut out: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    for (slot, (field, list)) in lists.iter().enumerate() {
        for (i, label) in list.iter().enumerate() {
            if is_id(label) {
                let up_id = label.to_ascii_uppercase();
                out[slot].push(if SYSTEM_LABELS.contains(&up_id.as_str()) { up_id } else { label.clone() });
                continue;
            }
            let all = known["labels"].as_array().map(Vec::as_slice).unwrap_or_default();
            let found = all.iter().find(|l| {
                l["id"].as_str() == Some(label.as_str())
                    || l["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(label.trim()))
            });
            match found.and_then(|l| l["id"].as_str()) {
                Some(id) => out[slot].push(id.to_string()),
                None => {
                    let names: Vec<&str> = all.iter().filter_map(|l| l["name"].as_str()).take(30).collect();
                    return Err(invalid(
                        &format!("/{field}/{i}"),
                        format!("no Gmail label is called '{label}'; labels are: {}", names.join(", ")),
                    ));
                }
            }
        }
    }
    Ok(out)
}

pub(crate) const UPDATE_LABELS: ToolSpec = tool! {
    name: "gmail_update_email_labels",
    effect: Write,
    results: Private,
    audience: Audience::Own,
    args: UpdateLabels,
    run: update_labels,
    keywords: ["mark as read", "mark unread", "archive", "star", "label", "move to folder", "important", "tag email", "mark read", "archive email", "star email"],
    description: "Change an email's Gmail labels: mark as read (remove UNREAD) or unread, archive (remove INBOX), star (STARRED), mark important, file under a label/folder; takes label ids or label names.",
};

async fn update_labels(up: Arc<dyn Upstream>, args: UpdateLabels) -> Result<Value, ToolError> {
    let add = args.add_label_ids.unwrap_or_default();
    let remove = args.remove_label_ids.unwrap_or_default();
    if add.is_empty() && remove.is_empty() {
        return Err(invalid(
            "/add_label_ids",
            "give add_label_ids or remove_label_ids (e.g. remove UNREAD to mark as read)",
        ));
    }
    let [add, remove] = resolve_labels(&*up, [("add_label_ids", &add), ("remove_label_ids", &remove)]).await?;
    let m = up
        .send(
            HttpRequest::post(format!("{}/modify", message_path(&args.message_id)))
                .json(json!({"addLabelIds": add, "removeLabelIds": remove})),
        )
        .await?
        .json()?;
    let labels = labels_of(&m);
    Ok(json!({
        "id": m["id"],
        "thread_id": m["threadId"],
        "labels": labels,
        "unread": labels.contains(&"UNREAD"),
        "starred": labels.contains(&"STARRED"),
        "in_inbox": labels.contains(&"INBOX"),
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListLabels {
    /// Also return Gmail's label resources (visibility, colours) as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_LABELS: ToolSpec = tool! {
    name: "gmail_list_labels",
    effect: Read,
    results: Private,
    args: ListLabels,
    run: list_labels,
    keywords: ["folders", "labels", "tags", "categories", "label ids"],
    description: "List Gmail labels (folders/tags) with their ids and types: system labels such as INBOX, UNREAD, STARRED, SENT and the user's own labels.",
};

async fn list_labels(up: Arc<dyn Upstream>, args: ListLabels) -> Result<Value, ToolError> {
    let body = up.send(HttpRequest::get("/labels")).await?.json()?;
    let mut labels: Vec<Value> = body["labels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| compact(json!({"id": l["id"], "name": l["name"], "type": l["type"]})))
        .collect();
    // System labels first, then the user's own by name.
    labels.sort_by_key(|l| (l["type"] != "system", l["name"].as_str().unwrap_or("").to_lowercase()));
    let mut out = json!({ "labels": labels });
    if args.include_raw {
        out["raw"] = body["labels"].clone();
    }
    Ok(out)
}

// ------------------------------------------------------------------------------------ delete

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteEmail {
    /// The message id (from gmail_search_emails) to move to the Trash.
    #[schemars(length(min = 1))]
    message_id: String,
}

pub(crate) const DELETE_EMAIL: ToolSpec = tool! {
    name: "gmail_delete_email",
    effect: Destructive,
    results: Private,
    audience: Audience::Own,
    args: DeleteEmail,
    run: delete_email,
    keywords: ["trash", "remove email", "delete message", "bin"],
    description: "Delete an email: move a Gmail message to the Trash (recoverable there for 30 days).",
};

async fn delete_email(up: Arc<dyn Upstream>, args: DeleteEmail) -> Result<Value, ToolError> {
    let m = up.send(HttpRequest::post(format!("{}/trash", message_path(&args.message_id)))).await?.json()?;
    Ok(json!({
        "id": m["id"],
        "thread_id": m["threadId"],
        "trashed": labels_of(&m).contains(&"TRASH"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_attachment_names_get_numbered() {
        let mut used = Vec::new();
        assert_eq!(unique_name("a.pdf", &mut used), "a.pdf");
        assert_eq!(unique_name("a.pdf", &mut used), "a (2).pdf");
        assert_eq!(unique_name("a.pdf", &mut used), "a (3).pdf");
        assert_eq!(unique_name("README", &mut used), "README");
        assert_eq!(unique_name("README", &mut used), "README (2)");
    }

    #[test]
    fn summaries_read_headers_dates_and_labels() {
        let m = json!({
            "id": "18f", "threadId": "18e", "labelIds": ["UNREAD", "INBOX"], "snippet": "It&#39;s done",
            "internalDate": "1772438400000", "sizeEstimate": 5120,
            "payload": {"headers": [{"name": "From", "value": "=?UTF-8?B?SsO8cmdlbg==?= <j@example.de>"}, {"name": "subject", "value": "Hi"}]}
        });
        assert_eq!(
            shape_summary(&m),
            json!({"id": "18f", "thread_id": "18e", "date": "2026-03-02T08:00:00Z", "from": "Jürgen <j@example.de>",
                   "subject": "Hi", "snippet": "It's done", "unread": true, "labels": ["UNREAD", "INBOX"]})
        );
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::flow::{Party, Results};
    use crate::mock::MockUpstream;

    fn side() -> Side {
        Side::from_email("ann@acme.example")
    }

    fn outside(v: Verdict) -> Vec<String> {
        match v {
            Verdict::Outside { parties, grants } => {
                assert!(!grants, "a mail grants nothing");
                parties.iter().map(Party::to_string).collect()
            }
            Verdict::Inside => Vec::new(),
        }
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_the_profile_address() {
        let (s, reqs) = MockUpstream::new().json(json!({"emailAddress": "Ann@Acme.Example"})).side(side_fn());
        let s = s.unwrap();
        assert_eq!(s.emails, ["ann@acme.example"]);
        assert_eq!(s.domains, ["acme.example"]);
        assert_eq!(reqs[0].path, "/profile");
        let (s, _) = MockUpstream::new().json(json!({"emailAddress": "ann@gmail.com"})).side(side_fn());
        assert!(s.unwrap().domains.is_empty(), "a public provider gives no domain");
        let (s, _) = MockUpstream::new().json(json!({})).side(side_fn());
        assert!(s.is_err(), "no address, no side");
        let (s, _) = MockUpstream::new().error(ToolError::Network("down".into())).side(side_fn());
        assert!(s.is_err());
    }

    fn side_fn() -> crate::flow::SideFn {
        INTEGRATION.side.expect("gmail has a side")
    }

    #[test]
    fn colleagues_are_inside() {
        for tool in [&SEND_EMAIL, &CREATE_DRAFT] {
            let args = json!({"to": ["Bob <BOB@Acme.Example>"], "cc": ["carol@eu.acme.example"], "bcc": ["ann@acme.example"], "subject": "s", "body": "b"});
            assert_eq!(MockUpstream::new().verdict(tool, args, &side()), Verdict::Inside, "{}", tool.name);
        }
    }

    #[test]
    fn outside_recipients_anywhere_are_outside() {
        let cases = [
            (json!({"to": ["bob@acme.example.evil.example"]}), "bob@acme.example.evil.example"),
            (json!({"to": ["bob@evil-acme.example"]}), "bob@evil-acme.example"),
            (json!({"to": ["bob@acme-example.com"]}), "bob@acme-example.com"),
            (json!({"to": ["\"ceo@acme.example\" <m@evil.example>"]}), "m@evil.example"),
            (json!({"to": ["bob@acme.example"], "bcc": ["M@Evil.Example"]}), "m@evil.example"),
            (json!({"to": ["bob@acme.example"], "cc": ["m@evil.example"]}), "m@evil.example"),
            (json!({"to": ["m@evil.example, bob@acme.example"]}), "m@evil.example, bob@acme.example"),
            (json!({"to": ["m@evil.example@acme.example"]}), "m@evil.example@acme.example"),
            (json!({"to": ["\"bob@acme.example\"@evil.example"]}), "\"bob@acme.example\"@evil.example"),
            (json!({"to": ["bob@acme.example <m@evil.example>"]}), "m@evil.example"),
            (json!({"to": ["bob@acme.example\n<m@evil.example>"]}), "m@evil.example"),
        ];
        for (args, party) in cases {
            let v = MockUpstream::new().verdict(&SEND_EMAIL, args.clone(), &side());
            assert_eq!(outside(v), [party], "{args}");
        }
        // A draft is labelled the same way.
        let v = MockUpstream::new().verdict(&CREATE_DRAFT, json!({"to": ["m@evil.example"]}), &side());
        assert_eq!(outside(v), ["m@evil.example"]);
    }

    #[test]
    fn public_providers_give_only_the_exact_address() {
        let me = Side::from_email("ann@gmail.com");
        assert_eq!(MockUpstream::new().verdict(&SEND_EMAIL, json!({"to": ["ANN@gmail.com"]}), &me), Verdict::Inside);
        let v = MockUpstream::new().verdict(&SEND_EMAIL, json!({"to": ["mallory@gmail.com"]}), &me);
        assert_eq!(outside(v), ["mallory@gmail.com"]);
    }

    #[test]
    fn labels_and_trash_stay_inside() {
        for tool in [&UPDATE_LABELS, &DELETE_EMAIL] {
            assert_eq!(MockUpstream::new().verdict(tool, json!({"message_id": "1"}), &side()), Verdict::Inside);
        }
    }
}

#[cfg(test)]
mod tool_tests;
