//! Google Drive tools on `MockUpstream`: the exact request of reads and writes (search clauses
//! with quoted literals, all-drives flags, field masks, file ids as one segment, trash by PATCH)
//! and the files as an agent reads them.

use serde_json::json;

use super::transfer::{DOWNLOAD_FILE, UPLOAD_FILE};
use super::*;
use crate::mock::{MockUpstream, message, sent};

fn file() -> Value {
    json!({"kind": "drive#file", "id": "1AbCdEf", "name": "Q1 plan", "mimeType": "application/vnd.google-apps.document",
        "modifiedTime": "2026-01-05T10:00:00.000Z", "parents": ["0Bfolder"], "webViewLink": "https://docs.google.com/document/d/1AbCdEf/edit",
        "owners": [{"displayName": "Ann Lee", "emailAddress": "ann@acme.example", "kind": "drive#user"}], "starred": false, "trashed": false})
}

/// search_files: each filter a clause, literals quoted (a quote in a name cannot close the
/// literal), trashed files left out, newest first.
#[test]
fn search_files_builds_the_query_from_clauses() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"files": [file(), {"id": "2Zz", "name": "scan.pdf", "mimeType": "application/pdf", "size": "2048"}], "nextPageToken": "n2"}))
        .ok(&SEARCH_FILES, json!({"name": "Ann's plan", "mime_type": "document", "folder_id": "0Bfolder", "limit": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/files", "body": null, "query": [
            ["q", format!("name contains 'Ann\\'s plan' and {} and '0Bfolder' in parents and trashed = false", type_clause("document"))],
            ["pageSize", "2"], ["orderBy", "modifiedTime desc"], ["fields", LIST_FIELDS], ["supportsAllDrives", "true"],
            ["includeItemsFromAllDrives", "true"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "n2", "files": [
            {"id": "1AbCdEf", "name": "Q1 plan", "kind": "google_doc", "modified": "2026-01-05T10:00:00.000Z",
             "owners": ["Ann Lee <ann@acme.example>"], "parents": ["0Bfolder"], "url": "https://docs.google.com/document/d/1AbCdEf/edit"},
            {"id": "2Zz", "name": "scan.pdf", "kind": "file", "mime_type": "application/pdf", "size_bytes": 2048}]})
    );
}

#[test]
fn create_folder_posts_the_folder_with_its_parent() {
    let mut folder = file();
    folder["mimeType"] = json!(FOLDER);
    folder["name"] = json!("Reports");
    let (out, reqs) =
        MockUpstream::new().json(folder).ok(&CREATE_FOLDER, json!({"name": "Reports", "parent_id": "0Bfolder"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/files", "query": [["supportsAllDrives", "true"], ["fields", FILE_FIELDS]],
               "body": {"name": "Reports", "mimeType": FOLDER, "parents": ["0Bfolder"]}})
    );
    assert_eq!((out["kind"].clone(), out["name"].clone()), (json!("folder"), json!("Reports")));
}

/// delete_file trashes by default (PATCH trashed) and deletes only when asked; the id is one segment.
#[test]
fn delete_file_trashes_unless_permanent() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "1AbCdEf", "name": "Q1 plan", "trashed": true}))
        .ok(&DELETE_FILE, json!({"file_id": "1AbCdEf"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": "/files/1AbCdEf", "query": [["supportsAllDrives", "true"], ["fields", "id,name,trashed"]],
               "body": {"trashed": true}})
    );
    assert_eq!(out, json!({"file_id": "1AbCdEf", "name": "Q1 plan", "trashed": true}));
    let (out, reqs) = MockUpstream::new()
        .answer(204, Vec::new())
        .ok(&DELETE_FILE, json!({"file_id": "../about?x=", "permanent": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "DELETE", "path": "/files/..%2Fabout%3Fx%3D", "query": [["supportsAllDrives", "true"]], "body": null})
    );
    assert_eq!(out["deleted"], true);
}

/// A search answer without `files` is an empty list; an unknown field mask is the agent's to give.
#[test]
fn search_files_survives_an_odd_answer() {
    let (out, _) = MockUpstream::new().json(json!({"files": {"not": "a list"}})).ok(&SEARCH_FILES, json!({}));
    assert_eq!(out, json!({"files": []}));
    let (r, _) = MockUpstream::new()
        .error(ToolError::Upstream { status: 400, message: "Invalid Value".into(), retry_after: None })
        .call(&SEARCH_FILES, json!({"query": "bogus ="}));
    assert!(message(&r.unwrap_err()).contains("Invalid Value"));
}

/// download_file of a Google Sheet without save_to: metadata first, then the export as text
/// (its byte-order mark dropped); a PDF without save_to, a folder and a shortcut are refused
/// after the metadata, before any content is fetched.
#[test]
fn download_file_exports_a_sheet_as_text() {
    let sheet = "application/vnd.google-apps.spreadsheet";
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "1Sheet", "name": "Budget", "mimeType": sheet}))
        .reply_raw("\u{feff}Item,Cost\nCoffee,4.5\n".as_bytes().to_vec(), &[("content-type", "text/csv")])
        .ok(&DOWNLOAD_FILE, json!({"file_id": "1Sheet"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/files/1Sheet", "body": null, "query": [
            ["fields", "id,name,mimeType,size,shortcutDetails(targetId,targetMimeType)"], ["supportsAllDrives", "true"]]})
    );
    let export = "text/csv";
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/files/1Sheet/export", "body": null, "query": [["mimeType", export]]})
    );
    assert_eq!(
        out,
        json!({"file_id": "1Sheet", "name": "Budget", "mime_type": export, "exported_from": sheet, "size_bytes": 24,
               "content": "Item,Cost\nCoffee,4.5\n"})
    );
    for (meta, why) in [
        (json!({"id": "2", "name": "scan.pdf", "mimeType": "application/pdf", "size": "10"}), "give save_to"),
        (json!({"id": "3", "name": "Team", "mimeType": FOLDER}), "is a folder"),
        (
            json!({"id": "4", "name": "Link", "mimeType": "application/vnd.google-apps.shortcut", "shortcutDetails": {"targetId": "9"}}),
            "download its target, file_id '9'",
        ),
    ] {
        let (r, reqs) = MockUpstream::new().json(meta).call(&DOWNLOAD_FILE, json!({"file_id": "x"}));
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert_eq!(reqs.len(), 1);
    }
}

/// get_file: the detail field mask, shared-drive support, and who the file is shared with.
#[test]
fn get_file_reads_details_and_sharing() {
    let mut f = file();
    f["lastModifyingUser"] = json!({"displayName": "Bob Roe", "emailAddress": "bob@acme.example"});
    f["permissions"] = json!([{"id": "0923", "type": "user", "role": "owner", "emailAddress": "ann@acme.example", "displayName": "Ann Lee"},
        {"id": "anyoneWithLink", "type": "anyone", "role": "reader"}]);
    let (out, reqs) = MockUpstream::new().json(f).ok(&GET_FILE, json!({"file_id": "1AbCdEf"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/files/1AbCdEf", "body": null, "query": [["fields", DETAIL_FIELDS], ["supportsAllDrives", "true"]]})
    );
    assert_eq!(
        out,
        json!({"id": "1AbCdEf", "name": "Q1 plan", "kind": "google_doc", "modified": "2026-01-05T10:00:00.000Z",
            "owners": ["Ann Lee <ann@acme.example>"], "parents": ["0Bfolder"], "url": "https://docs.google.com/document/d/1AbCdEf/edit",
            "last_modified_by": "Bob Roe <bob@acme.example>", "shared_with": [
                {"permission_id": "0923", "type": "user", "role": "owner", "email": "ann@acme.example", "name": "Ann Lee"},
                {"permission_id": "anyoneWithLink", "type": "anyone", "role": "reader"}],
            "export_formats": ["markdown", "txt", "pdf", "docx", "odt", "rtf", "html", "epub"]})
    );
    // A field mask of the caller's own returns Drive's answer as it is.
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "1AbCdEf", "size": "10"}))
        .ok(&GET_FILE, json!({"file_id": "1AbCdEf", "fields": "id,size"}));
    assert_eq!(reqs[0].query[0], ("fields".to_string(), "id,size".to_string()));
    assert_eq!(out, json!({"id": "1AbCdEf", "size": "10"}));
}

/// create_permission: the grant, with its notification, then the file's link; a domain share
/// without a domain is refused before anything is sent.
#[test]
fn create_permission_shares_then_reads_the_link() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"kind": "drive#permission", "id": "1357", "type": "user", "role": "writer", "emailAddress": "bob@acme.example", "displayName": "Bob Roe"}))
        .json(json!({"id": "1AbCdEf", "name": "Q1 plan", "webViewLink": "https://docs.google.com/document/d/1AbCdEf/edit"}))
        .ok(
            &CREATE_PERMISSION,
            json!({"file_id": "1AbCdEf", "role": "writer", "type": "user", "email_address": " bob@acme.example ",
                   "send_notification_email": true, "email_message": "Please review"}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/files/1AbCdEf/permissions", "body": {"type": "user", "role": "writer", "emailAddress": "bob@acme.example"},
            "query": [["supportsAllDrives", "true"], ["fields", "id,type,role,emailAddress,domain,displayName,allowFileDiscovery"],
                ["sendNotificationEmail", "true"], ["emailMessage", "Please review"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/files/1AbCdEf", "body": null, "query": [["fields", "id,name,webViewLink"], ["supportsAllDrives", "true"]]})
    );
    assert_eq!(
        out,
        json!({"permission_id": "1357", "type": "user", "role": "writer", "email": "bob@acme.example", "name": "Bob Roe",
               "file_id": "1AbCdEf", "file_name": "Q1 plan", "url": "https://docs.google.com/document/d/1AbCdEf/edit"})
    );
    let (r, reqs) =
        MockUpstream::new().call(&CREATE_PERMISSION, json!({"file_id": "1AbCdEf", "role": "reader", "type": "domain"}));
    assert!(message(&r.unwrap_err()).contains("sharing with a domain needs the domain"));
    assert!(reqs.is_empty());
}

/// update_file: a rename and a move in one PATCH (parents as query parameters); nothing to
/// change is refused before anything is sent.
#[test]
fn update_file_renames_and_moves_in_one_patch() {
    let mut moved = file();
    moved["name"] = json!("Q1 plan (final)");
    moved["parents"] = json!(["0Barchive"]);
    let (out, reqs) = MockUpstream::new().json(moved).ok(
        &UPDATE_FILE,
        json!({"file_id": "1AbCdEf", "name": "Q1 plan (final)", "add_parents": ["0Barchive"], "remove_parents": ["0Bfolder"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": "/files/1AbCdEf", "body": {"name": "Q1 plan (final)"}, "query": [["supportsAllDrives", "true"],
            ["fields", FILE_FIELDS], ["addParents", "0Barchive"], ["removeParents", "0Bfolder"]]})
    );
    assert_eq!(
        out,
        json!({"id": "1AbCdEf", "name": "Q1 plan (final)", "kind": "google_doc", "modified": "2026-01-05T10:00:00.000Z",
            "owners": ["Ann Lee <ann@acme.example>"], "parents": ["0Barchive"], "url": "https://docs.google.com/document/d/1AbCdEf/edit"})
    );
    let (r, reqs) = MockUpstream::new().call(&UPDATE_FILE, json!({"file_id": "1AbCdEf", "add_parents": []}));
    assert!(message(&r.unwrap_err()).contains("nothing to change"));
    assert!(reqs.is_empty());
}

/// upload_file: a small file goes as one multipart/related request, metadata part then content;
/// converting names the Google type and drops the extension.
#[test]
fn upload_file_sends_metadata_and_content_in_one_multipart() {
    let (out, reqs) = MockUpstream::new()
        .with_file("Downloads/budget.csv", b"month,total\nJan,10\n")
        .json(json!({"id": "3Sheet", "name": "budget", "mimeType": "application/vnd.google-apps.spreadsheet", "parents": ["0Bfolder"]}))
        .ok(&UPLOAD_FILE, json!({"path": "Downloads/budget.csv", "folder_id": "0Bfolder", "convert_to_google_format": true}));
    let req = sent(&reqs[0]);
    assert_eq!(
        (req["method"].clone(), req["path"].clone(), req["query"].clone()),
        (
            json!("POST"),
            json!("/files"),
            json!([["uploadType", "multipart"], ["supportsAllDrives", "true"], ["fields", FILE_FIELDS]])
        )
    );
    assert_eq!(reqs[0].host, "upload_base_url");
    let b = "wb00000000000000000000000000000001";
    assert_eq!(
        req["body"],
        json!({"content_type": format!("multipart/related; boundary={b}"), "text": format!(
            "--{b}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n\
             {{\"name\":\"budget\",\"mimeType\":\"application/vnd.google-apps.spreadsheet\",\"parents\":[\"0Bfolder\"]}}\r\n\
             --{b}\r\nContent-Type: text/csv\r\n\r\nmonth,total\nJan,10\n\r\n--{b}--\r\n")})
    );
    assert_eq!(out, json!({"id": "3Sheet", "name": "budget", "kind": "google_sheet", "parents": ["0Bfolder"]}));
    // A type Google cannot convert is refused before anything is read or sent.
    let (r, reqs) = MockUpstream::new()
        .with_file("a.zip", b"PK")
        .call(&UPLOAD_FILE, json!({"path": "a.zip", "convert_to_google_format": true}));
    assert!(message(&r.unwrap_err()).contains("cannot become Google Docs"));
    assert!(reqs.is_empty());
}
