//! Google Drive: find files, read metadata, download (export for Google Docs/Sheets/Slides, bytes
//! for everything else) to local paths, upload from local paths (multipart up to 5 MB, resumable
//! beyond) to the upload host, folders, sharing, rename/move/replace, trash. Shared drives are
//! included everywhere (`supportsAllDrives`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

pub(crate) mod flow;
mod transfer;

use crate::api::*;
use crate::flow::Audience;
use crate::google::{self, file_name, int64, invalid, mime_for};
use crate::tool;

use transfer::send_content;

pub static INTEGRATION: Integration = Integration {
    name: "google_drive",
    display_name: "Google Drive",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::OAuth2,
        fields: &[],
        inject: Inject::Bearer("token"),
        identity: Some(Identity {
            request: || HttpRequest::get("/about").query("fields", "user"),
            label: |b| b["user"]["emailAddress"].as_str().or(b["user"]["displayName"].as_str()).map(str::to_string),
        }),
        oauth: Some(google::oauth(&["https://www.googleapis.com/auth/drive"])),
    },
    keywords: &["drive", "gdrive", "google docs", "doc", "document", "file", "folder", "my drive", "shared drive"],
    hosts: &[
        Host { key: "base_url", default_url: "https://www.googleapis.com/drive/v3" },
        Host { key: "upload_base_url", default_url: "https://www.googleapis.com/upload/drive/v3" },
    ],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(1000),
    side: Some(flow::side),
    tools: &[
        SEARCH_FILES,
        GET_FILE,
        transfer::DOWNLOAD_FILE,
        transfer::UPLOAD_FILE,
        CREATE_FOLDER,
        CREATE_PERMISSION,
        UPDATE_FILE,
        DELETE_FILE,
    ],
    error_message: google::error_message,
};

pub(crate) const FOLDER: &str = "application/vnd.google-apps.folder";
pub(crate) const FILE_FIELDS: &str = "id,name,mimeType,size,createdTime,modifiedTime,parents,webViewLink,owners(displayName,emailAddress),starred,trashed,shared,description";
const LIST_FIELDS: &str = "nextPageToken,incompleteSearch,files(id,name,mimeType,size,modifiedTime,parents,webViewLink,owners(displayName,emailAddress),starred,trashed)";
const DETAIL_FIELDS: &str = "id,name,mimeType,size,createdTime,modifiedTime,parents,webViewLink,owners(displayName,emailAddress),lastModifyingUser(displayName,emailAddress),starred,trashed,shared,description,permissions(id,type,role,emailAddress,domain,displayName),shortcutDetails(targetId,targetMimeType)";

pub(crate) fn file_path(id: &str) -> String {
    format!("/files/{}", encode_segment(id))
}

/// A short name for the kinds of file people talk about.
fn kind(mime: &str) -> &'static str {
    match mime {
        FOLDER => "folder",
        "application/vnd.google-apps.document" => "google_doc",
        "application/vnd.google-apps.spreadsheet" => "google_sheet",
        "application/vnd.google-apps.presentation" => "google_slides",
        "application/vnd.google-apps.form" => "google_form",
        "application/vnd.google-apps.drawing" => "google_drawing",
        "application/vnd.google-apps.shortcut" => "shortcut",
        m if m.starts_with("application/vnd.google-apps.") => "google_other",
        _ => "file",
    }
}

fn person(p: &Value) -> Value {
    match (p["displayName"].as_str(), p["emailAddress"].as_str()) {
        (Some(n), Some(e)) => json!(format!("{n} <{e}>")),
        (None, Some(e)) => json!(e),
        (Some(n), None) => json!(n),
        _ => Value::Null,
    }
}

pub(crate) fn shape_file(f: &Value) -> Value {
    let mime = f["mimeType"].as_str().unwrap_or("");
    let owners: Vec<Value> = f["owners"].as_array().into_iter().flatten().map(person).collect();
    compact(json!({
        "id": f["id"],
        "name": f["name"],
        "kind": kind(mime),
        // Google Docs/Sheets/Slides and folders are named by kind; other files keep their type.
        "mime_type": (kind(mime) == "file").then_some(mime),
        "size_bytes": int64(&f["size"]),
        "created": f["createdTime"],
        "modified": f["modifiedTime"],
        "owners": (!owners.is_empty()).then_some(owners),
        "parents": f["parents"],
        "url": f["webViewLink"],
        "description": f["description"],
        "starred": f["starred"].as_bool().filter(|s| *s),
        "shared": f["shared"].as_bool().filter(|s| *s),
        "trashed": f["trashed"].as_bool().filter(|t| *t),
    }))
}

// ----------------------------------------------------------------------------------- search

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchFiles {
    /// Part of the file or folder name (case-insensitive), e.g. "budget 2026".
    name: Option<String>,
    /// Words in the content, name or description (Drive full-text search).
    full_text: Option<String>,
    /// Only this type: folder, document (Google Doc), spreadsheet (Google Sheet), presentation (Slides), form, drawing, pdf, image, video, audio, or any MIME type like "text/csv".
    mime_type: Option<String>,
    /// Only items directly inside this folder (its id); "root" is the top of My Drive.
    folder_id: Option<String>,
    /// Extra raw Drive query, ANDed with the rest, e.g. "modifiedTime > '2026-01-01T00:00:00' and 'ada@example.com' in owners".
    query: Option<String>,
    /// Sort order, e.g. "modifiedTime desc" (default without full_text), "name", "createdTime desc", "viewedByMeTime desc".
    order_by: Option<String>,
    /// Also return files in the trash.
    #[serde(default)]
    include_trashed: bool,
    /// How many files to return (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Drive's file objects as `raw`.
    #[serde(default)]
    include_raw: bool,
}

/// A string literal in Drive's query language.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn type_clause(mime: &str) -> String {
    let m = mime.trim().to_ascii_lowercase();
    let exact = |t: &str| format!("mimeType = {}", quoted(t));
    match m.as_str() {
        "folder" => exact(FOLDER),
        "document" | "doc" | "google_doc" | "docs" => exact("application/vnd.google-apps.document"),
        "spreadsheet" | "sheet" | "google_sheet" | "sheets" => exact("application/vnd.google-apps.spreadsheet"),
        "presentation" | "slides" | "google_slides" => exact("application/vnd.google-apps.presentation"),
        "form" => exact("application/vnd.google-apps.form"),
        "drawing" => exact("application/vnd.google-apps.drawing"),
        "shortcut" => exact("application/vnd.google-apps.shortcut"),
        "pdf" => exact("application/pdf"),
        "image" | "video" | "audio" => format!("mimeType contains {}", quoted(&format!("{m}/"))),
        _ => exact(mime.trim()),
    }
}

pub(crate) const SEARCH_FILES: ToolSpec = tool! {
    name: "google_drive_search_files",
    effect: Read,
    results: Private,
    args: SearchFiles,
    run: search_files,
    keywords: ["find file", "list files", "find document", "folder contents", "recent files", "find spreadsheet", "docs", "search drive", "find a doc"],
    description: "Search or list Google Drive files and folders by name, full text (content), type (doc, spreadsheet, folder, pdf...) or parent folder; returns ids, names, types, owners, modified times and links. Use it to find a spreadsheet or doc by name.",
};

async fn search_files(up: Arc<dyn Upstream>, args: SearchFiles) -> Result<Value, ToolError> {
    let mut clauses = Vec::new();
    if let Some(n) = args.name.as_deref().filter(|n| !n.trim().is_empty()) {
        clauses.push(format!("name contains {}", quoted(n.trim())));
    }
    if let Some(t) = args.full_text.as_deref().filter(|t| !t.trim().is_empty()) {
        clauses.push(format!("fullText contains {}", quoted(t.trim())));
    }
    if let Some(m) = args.mime_type.as_deref().filter(|m| !m.trim().is_empty()) {
        clauses.push(type_clause(m));
    }
    if let Some(f) = args.folder_id.as_deref().filter(|f| !f.trim().is_empty()) {
        clauses.push(format!("{} in parents", quoted(f.trim())));
    }
    if let Some(q) = args.query.as_deref().filter(|q| !q.trim().is_empty()) {
        clauses.push(format!("({})", q.trim()));
    }
    if !args.include_trashed {
        clauses.push("trashed = false".to_string());
    }
    // Drive ranks full-text matches by relevance and refuses to sort them.
    let order = args.order_by.clone().or_else(|| args.full_text.is_none().then(|| "modifiedTime desc".to_string()));
    let req = HttpRequest::get("/files")
        .query("q", clauses.join(" and "))
        .query("pageSize", args.limit.clamp(1, 100))
        .query_opt("pageToken", args.cursor.as_deref())
        .query_opt("orderBy", order)
        .query("fields", LIST_FIELDS)
        .query("supportsAllDrives", "true")
        .query("includeItemsFromAllDrives", "true");
    let body = up.send(req).await?.json()?;
    let files: Vec<Value> = body["files"].as_array().into_iter().flatten().map(shape_file).collect();
    let mut out = compact(json!({
        "files": files,
        "incomplete_search": body["incompleteSearch"].as_bool().filter(|b| *b),
        "next_cursor": body["nextPageToken"],
    }));
    if args.include_raw {
        out["raw"] = body["files"].clone();
    }
    Ok(out)
}

// -------------------------------------------------------------------------------------- get

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetFile {
    /// The file or folder id (from google_drive_search_files, or the long id in a docs.google.com / drive.google.com link).
    #[schemars(length(min = 1))]
    file_id: String,
    /// Drive `fields` selector for exactly the metadata you want, e.g. "id,name,capabilities,exportLinks"; the answer is then Drive's own object.
    fields: Option<String>,
    /// Also return Drive's metadata object as `raw`.
    #[serde(default)]
    include_raw: bool,
}

/// Export formats worth offering per Google file type (short names accepted by download_file).
fn export_formats(mime: &str) -> Option<&'static [&'static str]> {
    match mime {
        "application/vnd.google-apps.document" => {
            Some(&["markdown", "txt", "pdf", "docx", "odt", "rtf", "html", "epub"])
        }
        "application/vnd.google-apps.spreadsheet" => Some(&["csv", "tsv", "xlsx", "ods", "pdf"]),
        "application/vnd.google-apps.presentation" => Some(&["txt", "pdf", "pptx", "odp"]),
        "application/vnd.google-apps.drawing" => Some(&["png", "jpeg", "svg", "pdf"]),
        _ => None,
    }
}

pub(crate) const GET_FILE: ToolSpec = tool! {
    name: "google_drive_get_file",
    effect: Read,
    results: Private,
    args: GetFile,
    run: get_file,
    keywords: ["file info", "metadata", "who has access", "sharing", "owner", "file size", "link"],
    description: "Get a Google Drive file's metadata: name, type, size, owners, created/modified times, folder, web link, who it is shared with, and the formats a Google Doc/Sheet/Slides file can be exported to.",
};

async fn get_file(up: Arc<dyn Upstream>, args: GetFile) -> Result<Value, ToolError> {
    let fields = args.fields.clone().filter(|f| !f.trim().is_empty());
    let req = HttpRequest::get(file_path(&args.file_id))
        .query("fields", fields.as_deref().unwrap_or(DETAIL_FIELDS))
        .query("supportsAllDrives", "true");
    let f = up.send(req).await?.json()?;
    if fields.is_some() {
        return Ok(f);
    }
    let mut out = shape_file(&f);
    let mime = f["mimeType"].as_str().unwrap_or("");
    if let Value::Object(o) = &mut out {
        if f["lastModifyingUser"].is_object() {
            o.insert("last_modified_by".into(), person(&f["lastModifyingUser"]));
        }
        if let Some(perms) = f["permissions"].as_array() {
            let perms: Vec<Value> = perms
                .iter()
                .map(|p| {
                    compact(json!({
                        "permission_id": p["id"], "type": p["type"], "role": p["role"],
                        "email": p["emailAddress"], "domain": p["domain"], "name": p["displayName"],
                    }))
                })
                .collect();
            o.insert("shared_with".into(), Value::Array(perms));
        }
        if let Some(formats) = export_formats(mime) {
            o.insert("export_formats".into(), json!(formats));
        }
        if f["shortcutDetails"].is_object() {
            o.insert("shortcut_target_id".into(), f["shortcutDetails"]["targetId"].clone());
        }
    }
    if args.include_raw {
        out["raw"] = f;
    }
    Ok(out)
}

// ------------------------------------------------------------------------------------ folder

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateFolder {
    /// Folder name.
    #[schemars(length(min = 1))]
    name: String,
    /// Id of the folder to create it in (default: top of My Drive).
    parent_id: Option<String>,
}

pub(crate) const CREATE_FOLDER: ToolSpec = tool! {
    name: "google_drive_create_folder",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::folder_audience),
    args: CreateFolder,
    run: create_folder,
    keywords: ["new folder", "make directory", "mkdir", "organize"],
    description: "Create a folder in Google Drive, at the top of My Drive or inside another folder.",
};

async fn create_folder(up: Arc<dyn Upstream>, args: CreateFolder) -> Result<Value, ToolError> {
    let mut body = json!({"name": args.name, "mimeType": FOLDER});
    if let Some(p) = &args.parent_id {
        body["parents"] = json!([p]);
    }
    let req = HttpRequest::post("/files").query("supportsAllDrives", "true").query("fields", FILE_FIELDS).json(body);
    let f = up.send(req).await?.json()?;
    Ok(shape_file(&f))
}

// -------------------------------------------------------------------------------- permission

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Role {
    Reader,
    Commenter,
    Writer,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Grantee {
    User,
    Group,
    Domain,
    Anyone,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreatePermission {
    /// The file or folder id to share.
    #[schemars(length(min = 1))]
    file_id: String,
    /// Access level: reader (view), commenter, or writer (edit).
    role: Role,
    /// Who gets access: user (one person), group (a Google group), domain (everyone in a Workspace domain) or anyone (anyone with the link).
    #[serde(rename = "type")]
    grantee: Grantee,
    /// The person's or group's email address (for type user or group).
    email_address: Option<String>,
    /// The domain, e.g. "example.com" (for type domain).
    domain: Option<String>,
    /// Email the person or group about the share (user/group only; Google's default is true).
    send_notification_email: Option<bool>,
    /// A note to include in the notification email.
    email_message: Option<String>,
    /// For domain/anyone: whether the file shows up in search (false = only people with the link).
    allow_file_discovery: Option<bool>,
}

fn role_str(r: Role) -> &'static str {
    match r {
        Role::Reader => "reader",
        Role::Commenter => "commenter",
        Role::Writer => "writer",
    }
}

fn grantee_str(g: Grantee) -> &'static str {
    match g {
        Grantee::User => "user",
        Grantee::Group => "group",
        Grantee::Domain => "domain",
        Grantee::Anyone => "anyone",
    }
}

pub(crate) const CREATE_PERMISSION: ToolSpec = tool! {
    name: "google_drive_create_permission",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::permission_audience),
    args: CreatePermission,
    run: create_permission,
    keywords: ["share", "share a file", "give access", "invite", "anyone with the link", "collaborator", "permission", "grant access", "edit access", "comment access", "view access", "share with"],
    description: "Share a Google Drive file or folder: give a person, group, domain or anyone with the link reader, commenter or writer (editor) access, optionally emailing them; returns the file's link.",
};

async fn create_permission(up: Arc<dyn Upstream>, args: CreatePermission) -> Result<Value, ToolError> {
    let to_person = matches!(args.grantee, Grantee::User | Grantee::Group);
    let mut body = json!({"type": grantee_str(args.grantee), "role": role_str(args.role)});
    match args.grantee {
        Grantee::User | Grantee::Group => {
            let email =
                args.email_address.as_deref().filter(|e| e.contains('@')).ok_or_else(|| {
                    invalid("/email_address", "sharing with a user or group needs their email_address")
                })?;
            body["emailAddress"] = json!(email.trim());
        }
        Grantee::Domain => {
            let domain = args
                .domain
                .as_deref()
                .filter(|d| d.contains('.'))
                .ok_or_else(|| invalid("/domain", "sharing with a domain needs the domain, e.g. example.com"))?;
            body["domain"] = json!(domain.trim());
        }
        Grantee::Anyone => {}
    }
    if !to_person && (args.send_notification_email.is_some() || args.email_message.is_some()) {
        return Err(invalid("/send_notification_email", "notification emails only go to a user or group"));
    }
    if let Some(d) = args.allow_file_discovery {
        if to_person {
            return Err(invalid("/allow_file_discovery", "allow_file_discovery applies to domain and anyone shares"));
        }
        body["allowFileDiscovery"] = json!(d);
    }
    let req = HttpRequest::post(format!("{}/permissions", file_path(&args.file_id)))
        .query("supportsAllDrives", "true")
        .query("fields", "id,type,role,emailAddress,domain,displayName,allowFileDiscovery")
        .query_opt("sendNotificationEmail", args.send_notification_email)
        .query_opt("emailMessage", args.email_message.as_deref())
        .json(body);
    let p = up.send(req).await?.json()?;
    let file = up
        .send(
            HttpRequest::get(file_path(&args.file_id))
                .query("fields", "id,name,webViewLink")
                .query("supportsAllDrives", "true"),
        )
        .await?
        .json()?;
    Ok(compact(json!({
        "permission_id": p["id"],
        "type": p["type"],
        "role": p["role"],
        "email": p["emailAddress"],
        "domain": p["domain"],
        "name": p["displayName"],
        "allow_file_discovery": p["allowFileDiscovery"],
        "file_id": file["id"],
        "file_name": file["name"],
        "url": file["webViewLink"],
    })))
}

// ------------------------------------------------------------------------------------ update

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateFile {
    /// The file or folder id to change.
    #[schemars(length(min = 1))]
    file_id: String,
    /// New name (rename).
    name: Option<String>,
    /// Folder ids to add the file to (move: add the new folder and remove the old one).
    add_parents: Option<Vec<String>>,
    /// Folder ids to take the file out of (its current parents are in google_drive_get_file).
    remove_parents: Option<Vec<String>>,
    /// Star (true) or unstar (false).
    starred: Option<bool>,
    /// New description.
    description: Option<String>,
    /// Absolute path of a local file whose content replaces the file's content (a new version).
    path: Option<String>,
    /// MIME type of the new content (default: from the local file's extension).
    mime_type: Option<String>,
}

pub(crate) const UPDATE_FILE: ToolSpec = tool! {
    name: "google_drive_update_file",
    effect: Write,
    files: Reads(&["path"]),
    results: Private,
    audience: Audience::Decide(flow::update_audience),
    args: UpdateFile,
    run: update_file,
    keywords: ["rename", "move", "move to folder", "star", "replace content", "new version", "edit description", "move file", "rename file"],
    description: "Change a Google Drive file: rename it, move it between folders (add/remove parents), star or unstar it, change its description, or replace its content with a local file (new version).",
};

async fn update_file(up: Arc<dyn Upstream>, args: UpdateFile) -> Result<Value, ToolError> {
    let mut metadata = json!({});
    if let Some(n) = &args.name {
        metadata["name"] = json!(n);
    }
    if let Some(s) = args.starred {
        metadata["starred"] = json!(s);
    }
    if let Some(d) = &args.description {
        metadata["description"] = json!(d);
    }
    let join = |v: &Option<Vec<String>>| v.as_ref().filter(|v| !v.is_empty()).map(|v| v.join(","));
    let (add, remove) = (join(&args.add_parents), join(&args.remove_parents));
    let nothing = metadata.as_object().is_some_and(|m| m.is_empty()) && add.is_none() && remove.is_none();
    if nothing && args.path.is_none() {
        return Err(invalid(
            "",
            "nothing to change: give name, add_parents/remove_parents, starred, description or path",
        ));
    }
    if args.mime_type.is_some() && args.path.is_none() {
        return Err(invalid("/mime_type", "mime_type describes new content; give path too"));
    }
    let mut extra: Vec<(&str, String)> = Vec::new();
    if let Some(a) = add {
        extra.push(("addParents", a));
    }
    if let Some(r) = remove {
        extra.push(("removeParents", r));
    }
    let f = match &args.path {
        Some(path) => {
            let bytes = up.read_local_file(path).await.map_err(|e| match e {
                ToolError::InvalidArguments { message, .. } => invalid("/path", message),
                other => other,
            })?;
            let content_type = args.mime_type.clone().unwrap_or_else(|| mime_for(file_name(path)).to_string());
            send_content(&*up, Method::Patch, &file_path(&args.file_id), &metadata, &content_type, bytes, &extra)
                .await?
        }
        None => {
            let mut req = HttpRequest::new(Method::Patch, file_path(&args.file_id))
                .query("supportsAllDrives", "true")
                .query("fields", FILE_FIELDS);
            for (k, v) in &extra {
                req = req.query(k, v);
            }
            up.send(req.json(metadata)).await?.json()?
        }
    };
    Ok(shape_file(&f))
}

// ------------------------------------------------------------------------------------ delete

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteFile {
    /// The file or folder id.
    #[schemars(length(min = 1))]
    file_id: String,
    /// Delete for good, skipping the trash (cannot be undone; a folder takes its contents with it).
    #[serde(default)]
    permanent: bool,
}

pub(crate) const DELETE_FILE: ToolSpec = tool! {
    name: "google_drive_delete_file",
    effect: Destructive,
    results: Private,
    audience: Audience::Own,
    args: DeleteFile,
    run: delete_file,
    keywords: ["trash", "remove file", "delete folder", "bin"],
    description: "Delete a Google Drive file or folder: move it to the trash (default, restorable for 30 days) or delete it permanently.",
};

async fn delete_file(up: Arc<dyn Upstream>, args: DeleteFile) -> Result<Value, ToolError> {
    if args.permanent {
        up.send(HttpRequest::new(Method::Delete, file_path(&args.file_id)).query("supportsAllDrives", "true")).await?;
        return Ok(json!({"file_id": args.file_id, "deleted": true}));
    }
    let req = HttpRequest::new(Method::Patch, file_path(&args.file_id))
        .query("supportsAllDrives", "true")
        .query("fields", "id,name,trashed")
        .json(json!({"trashed": true}));
    let f = up.send(req).await?.json()?;
    Ok(json!({"file_id": f["id"], "name": f["name"], "trashed": f["trashed"]}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_literals_are_escaped() {
        assert_eq!(quoted("Ada's \\ notes"), "'Ada\\'s \\\\ notes'");
        assert_eq!(type_clause("Spreadsheet"), "mimeType = 'application/vnd.google-apps.spreadsheet'");
        assert_eq!(type_clause("image"), "mimeType contains 'image/'");
        assert_eq!(type_clause("text/csv"), "mimeType = 'text/csv'");
    }
}

#[cfg(test)]
mod tool_tests;
