//! Google Drive against a fake of `www.googleapis.com/drive/v3` and `/upload/drive/v3` that checks
//! the bearer token, `q`/`fields`/`supportsAllDrives`, export vs `alt=media` (and refuses the wrong
//! one like Drive does), byte ranges and multipart/related uploads, and answers with Drive's file,
//! permission and error resources. (Resumable uploads of files over 5 MB cannot pass the fake's
//! 2 MB request-body limit; `plugins/src/google_drive/transfer.rs` tests them in process.)

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with, files_dir};

pub(crate) const TOKEN: &str = "ya29.a0AfB_drive-test-access-token";
pub(crate) const DOC: &str = "1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789docQ3";
const SHEET: &str = "1ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210sheet";
pub(crate) const PDF_ID: &str = "1PdfFileIdAbCdEfGhIjKlMnOpQrSt";
const BIG: &str = "1BigLogFileIdAbCdEfGhIjKlMnOp";
const FOLDER: &str = "1FolderIdAbCdEfGhIjKlMnOpQrSt";
const PAGE_2: &str = "~!!~AI9FV7Qx3PageTwoToken";
const PDF: &str = "%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n";
const MARKDOWN: &str = "# Q3 plan\n\n- Ship the **Drive** integration\n- Hire two engineers\n";
const CSV: &str = "\u{feff}region,revenue\nEMEA,1250000\nAPAC,980000\n";
const BIG_LEN: usize = 9 * 1024 * 1024 + 123;

fn drive_error(code: u16, message: &str, reason: &str, location: Option<&str>) -> Reply {
    let mut e = json!({"message": message, "domain": "global", "reason": reason});
    if let Some(l) = location {
        e["location"] = json!(l);
        e["locationType"] = json!("parameter");
    }
    Reply::json(code, json!({"error": {"code": code, "message": message, "errors": [e]}}))
}

fn big_content() -> String {
    let mut s = String::with_capacity(BIG_LEN);
    let mut i = 0u64;
    while s.len() < BIG_LEN {
        s.push_str(&format!("2026-03-02T08:{:02}:{:02}Z INFO request {i} served\n", (i / 60) % 60, i % 60));
        i += 1;
    }
    s.truncate(BIG_LEN);
    s
}

fn owner() -> Value {
    json!([{"displayName": "Ada Lovelace", "emailAddress": "ada@example.com"}])
}

fn file(id: &str) -> Option<Value> {
    let base = |name: &str, mime: &str| {
        json!({
            "id": id, "name": name, "mimeType": mime, "parents": [FOLDER], "owners": owner(),
            "createdTime": "2026-01-05T10:00:00.000Z", "modifiedTime": "2026-03-01T16:20:11.512Z",
            "webViewLink": format!("https://docs.google.com/d/{id}/view"), "starred": false, "trashed": false, "shared": true,
            "lastModifyingUser": {"displayName": "Bob Smith", "emailAddress": "bob@example.com"},
            "permissions": [
                {"id": "07431298461839201234", "type": "user", "role": "owner", "emailAddress": "ada@example.com", "displayName": "Ada Lovelace"},
                {"id": "anyoneWithLink", "type": "anyone", "role": "reader"}
            ]
        })
    };
    Some(match id {
        DOC => base("Q3 plan", "application/vnd.google-apps.document"),
        SHEET => base("Ada's budget 2026", "application/vnd.google-apps.spreadsheet"),
        PDF_ID => {
            let mut f = base("invoice-0042.pdf", "application/pdf");
            f["size"] = json!(PDF.len().to_string());
            f
        }
        BIG => {
            let mut f = base("server.log", "text/plain");
            f["size"] = json!(BIG_LEN.to_string());
            f
        }
        FOLDER => base("Finance", "application/vnd.google-apps.folder"),
        _ => return None,
    })
}

/// Drive returns only the fields asked for (top-level names of the selector).
fn select(f: &Value, fields: &str) -> Value {
    let mut names = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in fields.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => names.push(std::mem::take(&mut cur)),
            c if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    names.push(cur);
    let mut out = serde_json::Map::new();
    for n in names {
        if let Some(v) = f.get(n.trim()) {
            out.insert(n.trim().to_string(), v.clone());
        }
    }
    Value::Object(out)
}

fn list_files(token: Option<&str>) -> Value {
    match token {
        None => {
            json!({"incompleteSearch": false, "nextPageToken": PAGE_2, "files": [file(SHEET).unwrap(), file(PDF_ID).unwrap()]})
        }
        Some(_) => json!({"incompleteSearch": false, "files": [file(DOC).unwrap()]}),
    }
}

fn list_fields_of(v: &Value) -> Value {
    let mut v = v.clone();
    let fields = "id,name,mimeType,size,modifiedTime,parents,webViewLink,owners,starred,trashed";
    if let Some(files) = v["files"].as_array_mut() {
        for f in files {
            *f = select(f, fields);
        }
    }
    v
}

/// Splits a multipart/related body the way Drive reads it: metadata part, then media part.
fn multipart(r: &Recorded) -> Result<(Value, String, Vec<u8>), Reply> {
    let bad = |m: &str| drive_error(400, m, "badContent", None);
    let ct = r.header("content-type").unwrap_or("");
    let Some(boundary) = ct.strip_prefix("multipart/related; boundary=") else {
        return Err(bad("Bad content type. Please use multipart."));
    };
    let delim = format!("--{boundary}");
    let body = &r.body;
    let find = |from: usize, pat: &[u8]| body[from..].windows(pat.len()).position(|w| w == pat).map(|p| p + from);
    let first = find(0, delim.as_bytes()).ok_or_else(|| bad("Missing boundary"))?;
    let meta_start = find(first, b"\r\n\r\n").ok_or_else(|| bad("Missing part headers"))? + 4;
    let meta_head = String::from_utf8_lossy(&body[first..meta_start]).to_string();
    if !meta_head.contains("Content-Type: application/json") {
        return Err(bad("Metadata part must be JSON"));
    }
    let second = find(meta_start, format!("\r\n{delim}").as_bytes()).ok_or_else(|| bad("Missing media part"))?;
    let metadata: Value =
        serde_json::from_slice(&body[meta_start..second]).map_err(|_| bad("Invalid metadata JSON"))?;
    let media_start = find(second + 2, b"\r\n\r\n").ok_or_else(|| bad("Missing media headers"))? + 4;
    let media_head = String::from_utf8_lossy(&body[second..media_start]).to_string();
    let media_type = media_head.split("Content-Type: ").nth(1).unwrap_or("").trim().to_string();
    let end = find(media_start, format!("\r\n{delim}--").as_bytes()).ok_or_else(|| bad("Missing closing boundary"))?;
    Ok((metadata, media_type, body[media_start..end].to_vec()))
}

fn uploaded(id: &str, metadata: &Value, media_type: &str, len: usize) -> Value {
    let mime = metadata["mimeType"].as_str().unwrap_or(media_type);
    let mut f = json!({
        "id": id, "name": metadata["name"], "mimeType": mime, "parents": metadata["parents"].as_array().cloned().unwrap_or(vec![json!("0AMyDriveRoot")]),
        "owners": [{"displayName": "Bob Smith", "emailAddress": "bob@example.com"}],
        "createdTime": "2026-03-02T09:00:00.000Z", "modifiedTime": "2026-03-02T09:00:00.000Z",
        "webViewLink": format!("https://drive.google.com/file/d/{id}/view"), "starred": false, "trashed": false, "shared": false
    });
    if !mime.starts_with("application/vnd.google-apps.") {
        f["size"] = json!(len.to_string());
    }
    if let Some(d) = metadata.get("description") {
        f["description"] = d.clone();
    }
    f
}

pub(crate) fn drive(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return drive_error(400, "Bad Request", "badRequest", None);
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return drive_error(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            "authError",
            Some("Authorization"),
        );
    }
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let all_drives = r.q("supportsAllDrives") == Some("true");
    let segs: Vec<&str> = r.path.trim_start_matches('/').split('/').collect();
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", ["drive", "v3", "about"]) => match r.q("fields") {
            Some("user") => Reply::json(
                200,
                json!({"user": {"kind": "drive#user", "displayName": "Bob Smith", "photoLink": "https://lh3.googleusercontent.com/a/x=s64", "me": true, "permissionId": "1234567890", "emailAddress": "bob@example.com"}}),
            ),
            _ => drive_error(400, "The 'fields' parameter is required for this operation.", "required", Some("fields")),
        },
        ("GET", ["drive", "v3", "files"]) => {
            if r.q("fields").is_none() || !all_drives || r.q("includeItemsFromAllDrives") != Some("true") {
                return drive_error(400, "Invalid request", "invalid", None);
            }
            if r.q("q").is_some_and(|q| q.contains("fullText")) && r.q("orderBy").is_some() {
                return drive_error(
                    403,
                    "Sorting is not supported for queries with fullText terms. Results are always in descending relevance order.",
                    "unsupportedQuery",
                    None,
                );
            }
            match r.q("pageToken") {
                None => Reply::json(200, list_fields_of(&list_files(None))),
                Some(PAGE_2) => Reply::json(200, list_fields_of(&list_files(Some(PAGE_2)))),
                Some(_) => drive_error(400, "Invalid Value", "invalid", Some("pageToken")),
            }
        }
        ("GET", ["drive", "v3", "files", "1Busy"]) => {
            drive_error(429, "User rate limit exceeded.", "userRateLimitExceeded", None)
                .with_header("retry-after", "120")
        }
        ("GET", ["drive", "v3", "files", id]) => {
            let Some(f) = file(id) else {
                return drive_error(404, &format!("File not found: {id}."), "notFound", Some("fileId"));
            };
            if r.q("alt") == Some("media") {
                let mime = f["mimeType"].as_str().unwrap();
                if mime.starts_with("application/vnd.google-apps.") {
                    return drive_error(
                        403,
                        "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                        "fileNotDownloadable",
                        Some("alt"),
                    );
                }
                let content = if *id == BIG { big_content() } else { PDF.to_string() };
                if let Some(range) = r.header("range") {
                    let (a, b) = range.trim_start_matches("bytes=").split_once('-').unwrap();
                    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
                    let b = b.min(content.len() - 1);
                    return Reply {
                        status: 206,
                        headers: vec![
                            ("content-type".into(), mime.into()),
                            ("content-range".into(), format!("bytes {a}-{b}/{}", content.len())),
                        ],
                        body: content[a..=b].to_string(),
                    };
                }
                return Reply { status: 200, headers: vec![("content-type".into(), mime.into())], body: content };
            }
            match r.q("fields") {
                Some(fields) if all_drives => Reply::json(200, select(&f, fields)),
                _ => Reply::json(200, select(&f, "kind,id,name,mimeType")),
            }
        }
        ("GET", ["drive", "v3", "files", id, "export"]) => {
            let Some(f) = file(id) else {
                return drive_error(404, &format!("File not found: {id}."), "notFound", Some("fileId"));
            };
            let content = match (f["mimeType"].as_str().unwrap(), r.q("mimeType").unwrap_or("")) {
                ("application/vnd.google-apps.document", "text/markdown") => MARKDOWN.to_string(),
                ("application/vnd.google-apps.document", "application/pdf") => PDF.to_string(),
                ("application/vnd.google-apps.spreadsheet", "text/csv") => CSV.to_string(),
                (m, _) if !m.starts_with("application/vnd.google-apps.") => {
                    return drive_error(403, "Export only supports Docs Editors files.", "fileNotExportable", None);
                }
                _ => {
                    return drive_error(
                        400,
                        "The requested conversion is not supported.",
                        "badRequest",
                        Some("convertTo"),
                    );
                }
            };
            Reply {
                status: 200,
                headers: vec![("content-type".into(), r.q("mimeType").unwrap().into())],
                body: content,
            }
        }
        ("POST", ["upload", "drive", "v3", "files"]) if all_drives => match r.q("uploadType") {
            Some("multipart") => match multipart(r) {
                Ok((meta, media_type, bytes)) => {
                    Reply::json(200, uploaded("1NewUploadIdAbCdEf", &meta, &media_type, bytes.len()))
                }
                Err(e) => e,
            },
            _ => drive_error(400, "Invalid uploadType", "invalid", Some("uploadType")),
        },
        ("PATCH", ["upload", "drive", "v3", "files", id]) if all_drives && r.q("uploadType") == Some("multipart") => {
            let Some(mut f) = file(id) else {
                return drive_error(404, &format!("File not found: {id}."), "notFound", Some("fileId"));
            };
            match multipart(r) {
                Ok((meta, media_type, bytes)) => {
                    f["size"] = json!(bytes.len().to_string());
                    f["mimeType"] = json!(media_type);
                    f["modifiedTime"] = json!("2026-03-02T09:30:00.000Z");
                    if let Some(n) = meta.get("name") {
                        f["name"] = n.clone();
                    }
                    Reply::json(200, f)
                }
                Err(e) => e,
            }
        }
        ("POST", ["drive", "v3", "files"]) if all_drives => {
            if body["mimeType"] != "application/vnd.google-apps.folder"
                || body["name"].as_str().is_none_or(str::is_empty)
            {
                return drive_error(400, "Bad Request", "badRequest", None);
            }
            Reply::json(200, uploaded("1NewFolderIdAbCdEf", &body, "", 0))
        }
        ("POST", ["drive", "v3", "files", id, "permissions"]) if all_drives => {
            if file(id).is_none() {
                return drive_error(404, &format!("File not found: {id}."), "notFound", Some("fileId"));
            }
            let t = body["type"].as_str().unwrap_or("");
            let needs_email = t == "user" || t == "group";
            if needs_email != body["emailAddress"].is_string() || (t == "domain") != body["domain"].is_string() {
                return drive_error(400, "The permission type field is invalid for the given fields.", "invalid", None);
            }
            if !needs_email && (r.q("sendNotificationEmail").is_some() || r.q("emailMessage").is_some()) {
                return drive_error(
                    400,
                    "Notification emails are only supported for user and group permissions.",
                    "badRequest",
                    None,
                );
            }
            let id = if t == "anyone" { "anyoneWithLink".to_string() } else { "12345678901234567890".to_string() };
            let mut p = json!({"kind": "drive#permission", "id": id, "type": t, "role": body["role"]});
            for (k, v) in
                [("emailAddress", "emailAddress"), ("domain", "domain"), ("allowFileDiscovery", "allowFileDiscovery")]
            {
                if let Some(x) = body.get(k) {
                    p[v] = x.clone();
                }
            }
            if t == "user" {
                p["displayName"] = json!("Carol Danvers");
            }
            Reply::json(200, p)
        }
        ("PATCH", ["drive", "v3", "files", id]) if all_drives => {
            let Some(mut f) = file(id) else {
                return drive_error(404, &format!("File not found: {id}."), "notFound", Some("fileId"));
            };
            for k in ["name", "starred", "description", "trashed"] {
                if let Some(v) = body.get(k) {
                    f[k] = v.clone();
                }
            }
            if let Some(add) = r.q("addParents") {
                let mut parents: Vec<String> =
                    f["parents"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
                let remove: Vec<&str> = r.q("removeParents").map(|s| s.split(',').collect()).unwrap_or_default();
                parents.retain(|p| !remove.contains(&p.as_str()));
                parents.extend(add.split(',').map(str::to_string));
                f["parents"] = json!(parents);
            }
            Reply::json(200, select(&f, r.q("fields").unwrap_or("id,name")))
        }
        ("DELETE", ["drive", "v3", "files", id]) if all_drives => match file(id) {
            Some(_) => Reply { status: 204, headers: vec![], body: String::new() },
            None => drive_error(404, &format!("File not found: {id}."), "notFound", Some("fileId")),
        },
        _ => drive_error(404, "Not Found", "notFound", None),
    }
}

async fn setup() -> (TestApp, Fake) {
    setup_with(&[]).await
}

/// Drive's fake and the settings that connect an App to it.
pub(crate) async fn fake_and_env() -> (Fake, Vec<(&'static str, String)>) {
    let fake = Fake::start(drive).await;
    let env = vec![
        ("WORKBENCH_GOOGLE_DRIVE_BASE_URL", format!("{}/drive/v3", fake.url)),
        ("WORKBENCH_GOOGLE_DRIVE_UPLOAD_BASE_URL", format!("{}/upload/drive/v3", fake.url)),
        ("WORKBENCH_GOOGLE_DRIVE_TOKEN", TOKEN.into()),
    ];
    (fake, env)
}

/// Drive's fake and an App connected to it, with extra settings (a files folder).
async fn setup_with(extra: &[(&'static str, String)]) -> (TestApp, Fake) {
    let (fake, mut env) = fake_and_env().await;
    env.extend(extra.iter().cloned());
    (app_with(&env), fake)
}

const LIST_FIELDS: &str = "nextPageToken,incompleteSearch,files(id,name,mimeType,size,modifiedTime,parents,webViewLink,owners(displayName,emailAddress),starred,trashed)";

#[tokio::test]
async fn google_drive_search_files_builds_the_query_and_pages() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_drive_search_files",
            json!({"name": "Ada's budget", "mime_type": "spreadsheet", "folder_id": FOLDER, "limit": 2}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/drive/v3/files"));
    assert_eq!(req.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(
        req.q("q"),
        Some(format!("name contains 'Ada\\'s budget' and mimeType = 'application/vnd.google-apps.spreadsheet' and '{FOLDER}' in parents and trashed = false").as_str())
    );
    assert_eq!(req.q("pageSize"), Some("2"));
    assert_eq!(req.q("orderBy"), Some("modifiedTime desc"));
    assert_eq!(req.q("fields"), Some(LIST_FIELDS));
    assert_eq!(req.q("pageToken"), None);
    assert_eq!(
        r["files"][0],
        json!({
            "id": SHEET, "name": "Ada's budget 2026", "kind": "google_sheet", "modified": "2026-03-01T16:20:11.512Z",
            "owners": ["Ada Lovelace <ada@example.com>"], "parents": [FOLDER], "url": format!("https://docs.google.com/d/{SHEET}/view")
        })
    );
    assert_eq!(r["files"][1]["mime_type"], "application/pdf");
    assert_eq!(r["files"][1]["size_bytes"], PDF.len());
    assert_eq!(r["next_cursor"], PAGE_2);
    let raw = list_fields_of(&list_files(None)).to_string().len();
    let shaped = r.to_string().len();
    eprintln!("google_drive_search_files: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw);

    let r2 = t.ok("google_drive_search_files", json!({"full_text": "quarterly revenue", "cursor": PAGE_2})).await;
    let req = fake.last();
    assert_eq!(req.q("pageToken"), Some(PAGE_2));
    assert_eq!(req.q("q"), Some("fullText contains 'quarterly revenue' and trashed = false"));
    assert_eq!(req.q("orderBy"), None, "full-text results come by relevance");
    assert_eq!(req.q("pageSize"), Some("25"));
    assert_eq!(r2["files"][0]["kind"], "google_doc");
    assert!(r2.get("next_cursor").is_none());

    let args = json!({"query": "'ada@example.com' in owners", "include_trashed": true, "order_by": "name", "include_raw": true});
    let r3 = t.ok("google_drive_search_files", args).await;
    assert_eq!(r3["raw"][0]["mimeType"], "application/vnd.google-apps.spreadsheet");
    assert!(r2.get("raw").is_none());
    let req = fake.last();
    assert_eq!(req.q("q"), Some("('ada@example.com' in owners)"));
    assert_eq!(req.q("orderBy"), Some("name"));
}

#[tokio::test]
async fn google_drive_get_file_shapes_sharing_and_export_formats() {
    let (t, fake) = setup().await;
    let r = t.ok("google_drive_get_file", json!({"file_id": DOC})).await;
    let req = fake.last();
    assert_eq!(req.path, format!("/drive/v3/files/{DOC}"));
    assert_eq!(req.q("supportsAllDrives"), Some("true"));
    assert!(req.q("fields").unwrap().contains("permissions(id,type,role,emailAddress,domain,displayName)"));
    assert_eq!(
        r,
        json!({
            "id": DOC, "name": "Q3 plan", "kind": "google_doc", "created": "2026-01-05T10:00:00.000Z", "modified": "2026-03-01T16:20:11.512Z",
            "owners": ["Ada Lovelace <ada@example.com>"], "parents": [FOLDER], "url": format!("https://docs.google.com/d/{DOC}/view"), "shared": true,
            "last_modified_by": "Bob Smith <bob@example.com>",
            "shared_with": [
                {"permission_id": "07431298461839201234", "type": "user", "role": "owner", "email": "ada@example.com", "name": "Ada Lovelace"},
                {"permission_id": "anyoneWithLink", "type": "anyone", "role": "reader"}
            ],
            "export_formats": ["markdown", "txt", "pdf", "docx", "odt", "rtf", "html", "epub"]
        })
    );
    let custom = t.ok("google_drive_get_file", json!({"file_id": PDF_ID, "fields": "id,size,owners"})).await;
    assert_eq!(fake.last().q("fields"), Some("id,size,owners"));
    assert_eq!(custom, json!({"id": PDF_ID, "size": PDF.len().to_string(), "owners": owner()}));

    let e = t.err("google_drive_get_file", json!({"file_id": "1Missing"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("File not found: 1Missing."), "{e}");
}

#[tokio::test]
async fn google_drive_download_exports_google_files_and_fetches_binaries() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = setup_with(&[files_dir(dir.path())]).await;
    // A Google Doc comes back as Markdown text by default.
    let r = t.ok("google_drive_download_file", json!({"file_id": DOC})).await;
    let reqs = fake.requests();
    assert_eq!(reqs[0].q("fields"), Some("id,name,mimeType,size,shortcutDetails(targetId,targetMimeType)"));
    assert_eq!(reqs[1].path, format!("/drive/v3/files/{DOC}/export"));
    assert_eq!(reqs[1].q("mimeType"), Some("text/markdown"));
    assert_eq!(
        r,
        json!({"file_id": DOC, "name": "Q3 plan", "mime_type": "text/markdown", "exported_from": "application/vnd.google-apps.document", "size_bytes": MARKDOWN.len(), "content": MARKDOWN})
    );
    // Sheets default to CSV (byte-order mark dropped).
    let r = t.ok("google_drive_download_file", json!({"file_id": SHEET})).await;
    assert_eq!(fake.last().q("mimeType"), Some("text/csv"));
    assert_eq!(r["content"], "region,revenue\nEMEA,1250000\nAPAC,980000\n");

    let pdf_out = dir.path().join("plan.pdf");
    let r = t
        .ok(
            "google_drive_download_file",
            json!({"file_id": DOC, "export_mime_type": "pdf", "save_to": pdf_out.to_str().unwrap()}),
        )
        .await;
    assert_eq!(fake.last().q("mimeType"), Some("application/pdf"));
    assert_eq!(r["saved_to"], pdf_out.to_str().unwrap());
    assert_eq!(std::fs::read_to_string(&pdf_out).unwrap(), PDF);

    // A binary file without save_to is refused before anything is downloaded.
    let before = fake.requests().len();
    let e = t.err("google_drive_download_file", json!({"file_id": PDF_ID})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/save_to");
    assert_eq!(fake.requests().len(), before + 1, "only the metadata was read");
    let out = dir.path().join("invoice.pdf");
    let r = t.ok("google_drive_download_file", json!({"file_id": PDF_ID, "save_to": out.to_str().unwrap()})).await;
    let req = fake.last();
    assert_eq!((req.path.as_str(), req.q("alt")), (format!("/drive/v3/files/{PDF_ID}").as_str(), Some("media")));
    assert_eq!(r["size_bytes"], PDF.len());
    assert_eq!(r["mime_type"], "application/pdf");
    assert!(r.get("exported_from").is_none());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), PDF);
    let e = t.err("google_drive_download_file", json!({"file_id": PDF_ID, "save_to": out.to_str().unwrap()})).await;
    assert!(e["message"].as_str().unwrap().contains("already exists"), "{e}");

    let e = t
        .err(
            "google_drive_download_file",
            json!({"file_id": PDF_ID, "export_mime_type": "docx", "save_to": "/tmp/x.docx"}),
        )
        .await;
    assert_eq!(e["problems"][0]["path"], "/export_mime_type");
    let e = t.err("google_drive_download_file", json!({"file_id": FOLDER})).await;
    assert!(e["message"].as_str().unwrap().contains("is a folder"), "{e}");
    let e = t
        .err(
            "google_drive_download_file",
            json!({"file_id": SHEET, "export_mime_type": "docx", "save_to": "/tmp/never.docx"}),
        )
        .await;
    assert_eq!(e["status"], 400);
    assert!(e["message"].as_str().unwrap().contains("The requested conversion is not supported."), "{e}");
}

#[tokio::test]
async fn google_drive_download_large_files_in_byte_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = setup_with(&[files_dir(dir.path())]).await;
    let out = dir.path().join("server.log");
    let r = t.ok("google_drive_download_file", json!({"file_id": BIG, "save_to": out.to_str().unwrap()})).await;
    assert_eq!(r["size_bytes"], BIG_LEN);
    let ranges: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.q("alt") == Some("media"))
        .map(|r| r.header("range").unwrap_or("none").to_string())
        .collect();
    assert_eq!(ranges, ["bytes=0-8323071", format!("bytes=8323072-{}", BIG_LEN - 1).as_str()]);
    assert!(std::fs::read_to_string(&out).unwrap() == big_content(), "the pieces join into the whole file");
    // Text files can also be read inline, cut to max_chars.
    let r = t.ok("google_drive_download_file", json!({"file_id": BIG, "max_chars": 100})).await;
    assert_eq!(r["truncated"], true);
    assert_eq!(r["content"].as_str().unwrap().len(), 100);
}

#[tokio::test]
async fn google_drive_upload_file_sends_multipart_related_and_converts() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = setup_with(&[files_dir(dir.path())]).await;
    let path = dir.path().join("forecast Q4.csv");
    std::fs::write(&path, "month,forecast\nOct,1.1\n").unwrap();
    let r = t
        .ok(
            "google_drive_upload_file",
            json!({"path": path.to_str().unwrap(), "folder_id": FOLDER, "convert_to_google_format": true, "description": "from the CFO"}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/upload/drive/v3/files"));
    assert_eq!(req.q("uploadType"), Some("multipart"));
    assert_eq!(req.q("supportsAllDrives"), Some("true"));
    let (meta, media_type, bytes) = multipart(&req).unwrap_or_else(|_| panic!("not multipart/related"));
    assert_eq!(
        meta,
        json!({"name": "forecast Q4", "mimeType": "application/vnd.google-apps.spreadsheet", "parents": [FOLDER], "description": "from the CFO"})
    );
    assert_eq!(media_type, "text/csv");
    assert_eq!(bytes, b"month,forecast\nOct,1.1\n");
    assert_eq!(
        r,
        json!({
            "id": "1NewUploadIdAbCdEf", "name": "forecast Q4", "kind": "google_sheet", "created": "2026-03-02T09:00:00.000Z",
            "modified": "2026-03-02T09:00:00.000Z", "owners": ["Bob Smith <bob@example.com>"], "parents": [FOLDER],
            "url": "https://drive.google.com/file/d/1NewUploadIdAbCdEf/view", "description": "from the CFO"
        })
    );

    // Binary content arrives byte for byte; no conversion keeps the name and type.
    let bin = dir.path().join("photo.png");
    let png: Vec<u8> = (0u8..=255).chain([0x89, b'P', b'N', b'G', 0, 0xff]).collect();
    std::fs::write(&bin, &png).unwrap();
    let r = t.ok("google_drive_upload_file", json!({"path": bin.to_str().unwrap(), "name": "team.png"})).await;
    let (meta, media_type, bytes) = multipart(&fake.last()).unwrap_or_else(|_| panic!("not multipart"));
    assert_eq!(meta, json!({"name": "team.png"}));
    assert_eq!(media_type, "image/png");
    assert_eq!(bytes, png);
    assert_eq!(r["size_bytes"], png.len());
    assert_eq!(r["mime_type"], "image/png");

    let e = t
        .err("google_drive_upload_file", json!({"path": bin.to_str().unwrap(), "convert_to_google_format": true}))
        .await;
    assert_eq!(e["problems"][0]["path"], "/convert_to_google_format");
    let e = t.err("google_drive_upload_file", json!({"path": "notes.txt"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/path");
}

#[tokio::test]
async fn google_drive_create_folder_and_share_it() {
    let (t, fake) = setup().await;
    let r = t.ok("google_drive_create_folder", json!({"name": "Board decks", "parent_id": FOLDER})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/drive/v3/files"));
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"name": "Board decks", "mimeType": "application/vnd.google-apps.folder", "parents": [FOLDER]})
    );
    assert_eq!(r["kind"], "folder");
    assert_eq!(r["id"], "1NewFolderIdAbCdEf");

    let r = t
        .ok(
            "google_drive_create_permission",
            json!({"file_id": DOC, "role": "writer", "type": "user", "email_address": "carol@example.com", "email_message": "Please review by Friday"}),
        )
        .await;
    let reqs = fake.requests();
    let create = &reqs[reqs.len() - 2];
    assert_eq!(
        (create.method.as_str(), create.path.as_str()),
        ("POST", format!("/drive/v3/files/{DOC}/permissions").as_str())
    );
    assert_eq!(create.q("emailMessage"), Some("Please review by Friday"));
    assert_eq!(create.q("sendNotificationEmail"), None, "Google's default (notify) applies");
    assert_eq!(
        serde_json::from_slice::<Value>(&create.body).unwrap(),
        json!({"type": "user", "role": "writer", "emailAddress": "carol@example.com"})
    );
    assert_eq!(
        r,
        json!({"permission_id": "12345678901234567890", "type": "user", "role": "writer", "email": "carol@example.com", "name": "Carol Danvers",
               "file_id": DOC, "file_name": "Q3 plan", "url": format!("https://docs.google.com/d/{DOC}/view")})
    );

    let r = t
        .ok(
            "google_drive_create_permission",
            json!({"file_id": DOC, "role": "reader", "type": "anyone", "allow_file_discovery": false}),
        )
        .await;
    assert_eq!(r["permission_id"], "anyoneWithLink");
    assert_eq!(r["allow_file_discovery"], false);

    let before = fake.requests().len();
    let e = t.err("google_drive_create_permission", json!({"file_id": DOC, "role": "reader", "type": "user"})).await;
    assert_eq!(e["problems"][0]["path"], "/email_address");
    let e = t
        .err(
            "google_drive_create_permission",
            json!({"file_id": DOC, "role": "reader", "type": "anyone", "send_notification_email": true}),
        )
        .await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    let e = t
        .err(
            "google_drive_create_permission",
            json!({"file_id": DOC, "role": "owner", "type": "user", "email_address": "x@y.z"}),
        )
        .await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS", "ownership transfer is not offered");
    assert_eq!(fake.requests().len(), before);
}

#[tokio::test]
async fn google_drive_update_file_renames_moves_and_replaces_content() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = setup_with(&[files_dir(dir.path())]).await;
    let r = t
        .ok("google_drive_update_file", json!({"file_id": PDF_ID, "name": "invoice-0042 (paid).pdf", "add_parents": ["1ArchiveFolder"], "remove_parents": [FOLDER], "starred": true}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PATCH", format!("/drive/v3/files/{PDF_ID}").as_str()));
    assert_eq!(req.q("addParents"), Some("1ArchiveFolder"));
    assert_eq!(req.q("removeParents"), Some(FOLDER));
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"name": "invoice-0042 (paid).pdf", "starred": true})
    );
    assert_eq!(r["name"], "invoice-0042 (paid).pdf");
    assert_eq!(r["parents"], json!(["1ArchiveFolder"]));
    assert_eq!(r["starred"], true);

    let path = dir.path().join("invoice-v2.pdf");
    std::fs::write(&path, "%PDF-1.7 v2").unwrap();
    let r = t.ok("google_drive_update_file", json!({"file_id": PDF_ID, "path": path.to_str().unwrap()})).await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("PATCH", format!("/upload/drive/v3/files/{PDF_ID}").as_str())
    );
    assert_eq!(req.q("uploadType"), Some("multipart"));
    let (meta, media_type, bytes) = multipart(&req).unwrap_or_else(|_| panic!("not multipart"));
    assert_eq!(
        (meta, media_type.as_str(), bytes.as_slice()),
        (json!({}), "application/pdf", b"%PDF-1.7 v2".as_slice())
    );
    assert_eq!(r["size_bytes"], 11);
    assert_eq!(r["modified"], "2026-03-02T09:30:00.000Z");

    let e = t.err("google_drive_update_file", json!({"file_id": PDF_ID})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn google_drive_delete_file_trashes_or_deletes() {
    let (t, fake) = setup().await;
    let r = t.ok("google_drive_delete_file", json!({"file_id": PDF_ID})).await;
    let req = fake.last();
    assert_eq!(req.method, "PATCH");
    assert_eq!(serde_json::from_slice::<Value>(&req.body).unwrap(), json!({"trashed": true}));
    assert_eq!(r, json!({"file_id": PDF_ID, "name": "invoice-0042.pdf", "trashed": true}));
    let r = t.ok("google_drive_delete_file", json!({"file_id": PDF_ID, "permanent": true})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("DELETE", format!("/drive/v3/files/{PDF_ID}").as_str()));
    assert_eq!(r, json!({"file_id": PDF_ID, "deleted": true}));
    let e = t.err("google_drive_delete_file", json!({"file_id": "1Gone", "permanent": true})).await;
    assert_eq!(e["status"], 404);
}

#[tokio::test]
async fn google_drive_rejected_token_rate_limit_and_identity() {
    let (t, fake) = setup().await;

    let bad = app_with(&[
        ("WORKBENCH_GOOGLE_DRIVE_BASE_URL", format!("{}/drive/v3", fake.url)),
        ("WORKBENCH_GOOGLE_DRIVE_TOKEN", "ya29.revoked".into()),
    ]);
    let e = bad.err("google_drive_search_files", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");

    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> = [("token".to_string(), Secret::new(token.to_string()))].into();
        workbench::auth::from_fields(&plugins::google_drive::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let integration = &plugins::google_drive::INTEGRATION;
    let label = workbench::send::verify_identity(&t.app, integration, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("bob@example.com"));
    assert_eq!(fake.last().path, "/drive/v3/about");
    assert!(workbench::send::verify_identity(&t.app, integration, conn("ya29.nope")).await.is_err());

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let e = t.err("google_drive_get_file", json!({"file_id": "1Busy"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    assert_eq!(e["retry_after_seconds"], 120);
    assert!(e["message"].as_str().unwrap().contains("User rate limit exceeded. (userRateLimitExceeded)"), "{e}");
}

#[tokio::test]
async fn google_drive_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("find a file in google drive", "google_drive_search_files"),
        ("who has access to this drive file", "google_drive_get_file"),
        ("download a google doc as pdf", "google_drive_download_file"),
        ("export google doc to markdown", "google_drive_download_file"),
        ("upload a file to drive", "google_drive_upload_file"),
        ("new folder in drive", "google_drive_create_folder"),
        ("share a file with carol", "google_drive_create_permission"),
        ("rename a drive file", "google_drive_update_file"),
        ("move file to another folder", "google_drive_update_file"),
        ("trash a drive file", "google_drive_delete_file"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
