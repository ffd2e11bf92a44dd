//! Bytes in and out of Drive: downloads (export for Google Docs/Sheets/Slides, `alt=media` in byte
//! ranges for everything else) to local paths or as text, and uploads from local paths
//! (multipart/related up to 5 MB, a resumable session beyond) to the upload host.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::{FILE_FIELDS, FOLDER, file_path, shape_file};
use crate::api::*;
use crate::google::{file_name, int64, invalid, is_text_mime, mime_for, multipart_related};
use crate::tool;

/// Drive's "simple/multipart" limit; bigger files use a resumable session.
const MULTIPART_MAX: usize = 5 * 1024 * 1024;
/// Byte ranges a little under the engine's per-response cap, for large downloads.
const RANGE_CHUNK: u64 = 8 * 1024 * 1024 - 64 * 1024;

// --------------------------------------------------------------------------------- download

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DownloadFile {
    /// The file id (from google_drive_search_files or a Drive/Docs link).
    #[schemars(length(min = 1))]
    file_id: String,
    /// Absolute local path to write the file to, including its name, e.g. "/home/me/Downloads/report.pdf". Without it, text content (and Google Docs/Sheets/Slides exported as text) is returned directly.
    save_to: Option<String>,
    /// For Google Docs/Sheets/Slides/Drawings: the format to export to, a short name (markdown, txt, pdf, docx, html, csv, tsv, xlsx, pptx, png...) or a MIME type. Default: Docs markdown, Sheets csv (first tab), Slides txt, Drawings png.
    export_mime_type: Option<String>,
    /// Replace the file at save_to if it exists.
    #[serde(default)]
    overwrite: bool,
    /// Without save_to: cut the returned text to this many characters (100-200000).
    #[serde_inline_default(20_000)]
    #[schemars(range(min = 100, max = 200_000))]
    max_chars: usize,
}

/// A MIME type for an export format's short name (or the MIME type itself).
fn export_mime(format: &str) -> Option<&'static str> {
    Some(match format.trim().trim_start_matches('.').to_ascii_lowercase().as_str() {
        "pdf" | "application/pdf" => "application/pdf",
        "docx" | "word" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "odt" => "application/vnd.oasis.opendocument.text",
        "rtf" => "application/rtf",
        "txt" | "text" | "plain" | "text/plain" => "text/plain",
        "md" | "markdown" | "text/markdown" => "text/markdown",
        "html" | "text/html" => "text/html",
        "zip" => "application/zip",
        "epub" => "application/epub+zip",
        "xlsx" | "excel" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ods" => "application/x-vnd.oasis.opendocument.spreadsheet",
        "csv" | "text/csv" => "text/csv",
        "tsv" | "text/tab-separated-values" => "text/tab-separated-values",
        "pptx" | "powerpoint" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odp" => "application/vnd.oasis.opendocument.presentation",
        "png" | "image/png" => "image/png",
        "jpg" | "jpeg" | "image/jpeg" => "image/jpeg",
        "svg" | "image/svg+xml" => "image/svg+xml",
        "json" | "application/vnd.google-apps.script+json" => "application/vnd.google-apps.script+json",
        _ => return None,
    })
}

fn default_export(google_mime: &str) -> &'static str {
    match google_mime {
        "application/vnd.google-apps.document" => "text/markdown",
        "application/vnd.google-apps.spreadsheet" => "text/csv",
        "application/vnd.google-apps.presentation" => "text/plain",
        "application/vnd.google-apps.drawing" => "image/png",
        "application/vnd.google-apps.script" => "application/vnd.google-apps.script+json",
        _ => "application/pdf",
    }
}

/// The file's bytes with `alt=media`, in byte ranges when it is larger than one response may be.
async fn fetch_media(up: &dyn Upstream, id: &str, size: Option<u64>) -> Result<Vec<u8>, ToolError> {
    let media = || HttpRequest::get(file_path(id)).query("alt", "media").query("supportsAllDrives", "true");
    let Some(size) = size.filter(|s| *s > RANGE_CHUNK) else {
        return Ok(up.send(media()).await?.body);
    };
    let mut bytes = Vec::with_capacity(size as usize);
    while (bytes.len() as u64) < size {
        let start = bytes.len() as u64;
        let end = (start + RANGE_CHUNK).min(size) - 1;
        let part = up.send(media().header("range", format!("bytes={start}-{end}"))).await?;
        if part.body.is_empty() {
            break;
        }
        let whole = part.status == 200;
        bytes.extend_from_slice(&part.body);
        if whole {
            // The server ignored the range and sent everything.
            break;
        }
    }
    Ok(bytes)
}

pub(crate) const DOWNLOAD_FILE: ToolSpec = tool! {
    name: "google_drive_download_file",
    effect: Read,
    files: Writes(&["save_to"]),
    results: Private,
    args: DownloadFile,
    run: download_file,
    keywords: ["download", "export", "save file", "read document", "doc to markdown", "sheet to csv", "pdf", "get content"],
    description: "Download a Google Drive file to a local path, or read a text file's content directly; Google Docs export to Markdown/text/PDF/Word, Sheets to CSV/Excel, Slides to text/PDF/PowerPoint.",
};

pub(super) async fn download_file(up: Arc<dyn Upstream>, args: DownloadFile) -> Result<Value, ToolError> {
    let meta = up
        .send(
            HttpRequest::get(file_path(&args.file_id))
                .query("fields", "id,name,mimeType,size,shortcutDetails(targetId,targetMimeType)")
                .query("supportsAllDrives", "true"),
        )
        .await?
        .json()?;
    let mime = meta["mimeType"].as_str().unwrap_or("application/octet-stream").to_string();
    let name = meta["name"].as_str().unwrap_or("").to_string();
    if mime == FOLDER {
        return Err(invalid(
            "/file_id",
            format!("'{name}' is a folder; list its files with google_drive_search_files and folder_id"),
        ));
    }
    if mime == "application/vnd.google-apps.shortcut" {
        let target = meta["shortcutDetails"]["targetId"].as_str().unwrap_or("?");
        return Err(invalid("/file_id", format!("'{name}' is a shortcut; download its target, file_id '{target}'")));
    }
    let google_native = mime.starts_with("application/vnd.google-apps.");
    let out_mime = if google_native {
        match &args.export_mime_type {
            Some(f) => export_mime(f).map(str::to_string).unwrap_or_else(|| f.trim().to_string()),
            None => default_export(&mime).to_string(),
        }
    } else {
        if let Some(f) = &args.export_mime_type {
            return Err(invalid(
                "/export_mime_type",
                format!(
                    "'{name}' is a {mime} file, not a Google Doc/Sheet/Slides file, so it downloads as it is and cannot be converted to {f}"
                ),
            ));
        }
        mime.clone()
    };
    if args.save_to.is_none() && !is_text_mime(&out_mime) {
        return Err(invalid(
            "/save_to",
            format!(
                "'{name}' comes as {out_mime}, which is not text; give save_to, a path in the user's files folder to write it to"
            ),
        ));
    }
    let bytes = if google_native {
        let req = HttpRequest::get(format!("{}/export", file_path(&args.file_id))).query("mimeType", &out_mime);
        up.send(req).await?.body
    } else {
        let size = int64(&meta["size"]).as_u64();
        fetch_media(&*up, &args.file_id, size).await?
    };
    let base = compact(json!({
        "file_id": meta["id"],
        "name": name,
        "mime_type": out_mime,
        "exported_from": google_native.then_some(mime.as_str()),
    }));
    let mut out = base;
    match &args.save_to {
        Some(path) => {
            let written = up.write_local_file(path, bytes, args.overwrite).await?;
            out["saved_to"] = json!(path);
            out["size_bytes"] = json!(written);
        }
        None => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let (content, cut) = truncate_chars(text, args.max_chars);
            out["size_bytes"] = json!(bytes.len());
            out["content"] = json!(content);
            if cut {
                out["truncated"] = json!(true);
            }
        }
    }
    Ok(out)
}

// ----------------------------------------------------------------------------------- upload

/// The Google type a local file converts to on upload.
fn google_type_for(mime: &str) -> Option<&'static str> {
    match mime {
        "text/plain"
        | "text/markdown"
        | "text/html"
        | "application/rtf"
        | "application/msword"
        | "application/vnd.oasis.opendocument.text"
        | "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => {
            Some("application/vnd.google-apps.document")
        }
        "text/csv"
        | "text/tab-separated-values"
        | "application/vnd.ms-excel"
        | "application/vnd.oasis.opendocument.spreadsheet"
        | "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => {
            Some("application/vnd.google-apps.spreadsheet")
        }
        "application/vnd.ms-powerpoint"
        | "application/vnd.openxmlformats-officedocument.presentationml.presentation" => {
            Some("application/vnd.google-apps.presentation")
        }
        _ => None,
    }
}

fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends file content with metadata: one multipart/related request up to 5 MB, a resumable
/// session (start, then one PUT of the bytes to the session URI) above that.
pub(super) async fn send_content(
    up: &dyn Upstream,
    method: Method,
    path: &str,
    metadata: &Value,
    content_type: &str,
    bytes: Vec<u8>,
    extra_query: &[(&str, String)],
) -> Result<Value, ToolError> {
    let with_query = |mut req: HttpRequest| {
        req = req.on("upload_base_url").query("supportsAllDrives", "true").query("fields", FILE_FIELDS);
        for (k, v) in extra_query {
            req = req.query(k, v);
        }
        req
    };
    if bytes.len() <= MULTIPART_MAX {
        let (ct, body) = multipart_related(&format!("wb{}", up.new_id()), metadata, content_type, &bytes);
        let mut req = with_query(HttpRequest::new(method, path).query("uploadType", "multipart"));
        req.body = Body::Raw { content_type: ct, bytes: body };
        return up.send(req).await?.json();
    }
    let start = with_query(HttpRequest::new(method, path).query("uploadType", "resumable"))
        .header("x-upload-content-type", content_type)
        .header("x-upload-content-length", bytes.len().to_string())
        .json(metadata.clone());
    let session = up.send(start).await?;
    let location = session
        .header("location")
        .ok_or_else(|| ToolError::Internal("Drive opened an upload session without a Location".into()))?
        .to_string();
    let query = location.split_once('?').map(|(_, q)| q).unwrap_or("");
    let mut put = HttpRequest::new(Method::Put, path).on("upload_base_url");
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        put = put.query(&url_decode(k), url_decode(v));
    }
    if !put.query.iter().any(|(k, _)| k == "upload_id") {
        return Err(ToolError::Internal(format!("Drive's upload session URI has no upload_id: {location}")));
    }
    put.body = Body::Raw { content_type: content_type.to_string(), bytes };
    up.send(put).await?.json()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct UploadFile {
    /// Absolute path of the local file to upload, e.g. "/home/me/report.pdf".
    #[schemars(length(min = 1))]
    path: String,
    /// Name on Drive (default: the local file name).
    name: Option<String>,
    /// Id of the folder to put it in (default: top of My Drive).
    folder_id: Option<String>,
    /// MIME type of the content (default: from the file extension).
    mime_type: Option<String>,
    /// Convert to a Google Doc (from .docx, .txt, .md, .html), Sheet (.xlsx, .csv) or Slides (.pptx).
    #[serde(default)]
    convert_to_google_format: bool,
    /// Description shown in Drive's details pane.
    description: Option<String>,
}

pub(crate) const UPLOAD_FILE: ToolSpec = tool! {
    name: "google_drive_upload_file",
    effect: Write,
    files: Reads(&["path"]),
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::folder_audience),
    args: UploadFile,
    run: upload_file,
    keywords: ["upload", "put file on drive", "save to drive", "import", "convert to google doc", "backup"],
    description: "Upload a local file to Google Drive (into a folder if given), optionally converting it to a Google Doc, Sheet or Slides (Word, Excel, CSV, Markdown, PowerPoint).",
};

pub(super) async fn upload_file(up: Arc<dyn Upstream>, args: UploadFile) -> Result<Value, ToolError> {
    let local_name = file_name(&args.path).to_string();
    let content_type = args.mime_type.clone().unwrap_or_else(|| mime_for(&local_name).to_string());
    let mut metadata = json!({ "name": args.name.clone().unwrap_or_else(|| local_name.clone()) });
    if args.convert_to_google_format {
        let target = google_type_for(&content_type).ok_or_else(|| {
            invalid(
                "/convert_to_google_format",
                format!("{content_type} files cannot become Google Docs, Sheets or Slides; upload without converting"),
            )
        })?;
        metadata["mimeType"] = json!(target);
        if args.name.is_none()
            && let Some((stem, _)) = local_name.rsplit_once('.')
        {
            metadata["name"] = json!(stem);
        }
    }
    if let Some(folder) = &args.folder_id {
        metadata["parents"] = json!([folder]);
    }
    if let Some(d) = &args.description {
        metadata["description"] = json!(d);
    }
    let bytes = up.read_local_file(&args.path).await.map_err(|e| match e {
        ToolError::InvalidArguments { message, .. } => invalid("/path", message),
        other => other,
    })?;
    let f = send_content(&*up, Method::Post, "/files", &metadata, &content_type, bytes, &[]).await?;
    Ok(shape_file(&f))
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::task::{Context, Poll, Waker};

    use super::*;

    /// An in-process upstream for the paths a loopback fake cannot take (bodies over its 2 MB
    /// request limit): records requests, answers from a queue, serves one local file.
    struct Mock {
        replies: Mutex<VecDeque<HttpResponse>>,
        sent: Mutex<Vec<HttpRequest>>,
        file: Vec<u8>,
    }

    impl Upstream for Mock {
        fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, ToolError>> {
            self.sent.lock().unwrap().push(request);
            let reply = self.replies.lock().unwrap().pop_front().expect("the mock has a reply queued");
            Box::pin(async move { Ok(reply) })
        }
        fn field(&self, _: &str) -> Option<String> {
            None
        }
        fn read_local_file(&self, _: &str) -> BoxFuture<Result<Vec<u8>, ToolError>> {
            let bytes = self.file.clone();
            Box::pin(async move { Ok(bytes) })
        }
        fn write_local_file(&self, _: &str, _: Vec<u8>, _: bool) -> BoxFuture<Result<u64, ToolError>> {
            Box::pin(async { Err(ToolError::Internal("not in this test".into())) })
        }
        fn new_id(&self) -> String {
            "b0".into()
        }
    }

    fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> HttpResponse {
        HttpResponse {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    #[test]
    fn files_over_5_mb_go_through_a_resumable_session() {
        let data: Vec<u8> = (0..MULTIPART_MAX + 7).map(|i| (i % 251) as u8).collect();
        let mock = Arc::new(Mock {
            replies: Mutex::new(VecDeque::from([
                reply(
                    200,
                    &[(
                        "Location",
                        "https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable&supportsAllDrives=true&upload_id=ADPy%2Bcdu_x-1",
                    )],
                    "",
                ),
                reply(
                    200,
                    &[],
                    r#"{"id": "1Up", "name": "dump.sql", "mimeType": "application/sql", "size": "5242887"}"#,
                ),
            ])),
            sent: Mutex::new(Vec::new()),
            file: data.clone(),
        });
        let args = UploadFile {
            path: "/data/dump.sql".into(),
            name: None,
            folder_id: Some("1Folder".into()),
            mime_type: Some("application/sql".into()),
            convert_to_google_format: false,
            description: None,
        };
        let out = block_on(upload_file(mock.clone(), args)).unwrap();
        assert_eq!(out["id"], "1Up");
        assert_eq!(out["size_bytes"], 5_242_887);
        let sent = mock.sent.lock().unwrap();
        let q = |r: &HttpRequest, k: &str| r.query.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let h = |r: &HttpRequest, k: &str| r.headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let start = &sent[0];
        assert_eq!((start.method, start.host, start.path.as_str()), (Method::Post, "upload_base_url", "/files"));
        assert_eq!(q(start, "uploadType").as_deref(), Some("resumable"));
        assert_eq!(h(start, "x-upload-content-type").as_deref(), Some("application/sql"));
        assert_eq!(h(start, "x-upload-content-length"), Some(data.len().to_string()));
        assert_eq!(start.body, Body::Json(json!({"name": "dump.sql", "parents": ["1Folder"]})));
        let put = &sent[1];
        assert_eq!((put.method, put.host, put.path.as_str()), (Method::Put, "upload_base_url", "/files"));
        assert_eq!(
            put.query,
            [("uploadType", "resumable"), ("supportsAllDrives", "true"), ("upload_id", "ADPy+cdu_x-1")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(put.body, Body::Raw { content_type: "application/sql".into(), bytes: data });
    }

    #[test]
    fn a_session_without_location_is_an_error_not_a_silent_success() {
        let mock = Arc::new(Mock {
            replies: Mutex::new(VecDeque::from([reply(200, &[], "")])),
            sent: Mutex::new(Vec::new()),
            file: vec![0; MULTIPART_MAX + 1],
        });
        let err = block_on(send_content(
            &*mock,
            Method::Patch,
            "/files/1X",
            &json!({}),
            "text/plain",
            mock.file.clone(),
            &[],
        ))
        .unwrap_err();
        assert!(matches!(err, ToolError::Internal(m) if m.contains("Location")));
    }

    #[test]
    fn range_downloads_stop_when_the_server_sends_everything() {
        let mock = Arc::new(Mock {
            replies: Mutex::new(VecDeque::from([reply(200, &[], "whole file")])),
            sent: Mutex::new(Vec::new()),
            file: Vec::new(),
        });
        let bytes = block_on(fetch_media(&*mock, "1F", Some(RANGE_CHUNK * 3))).unwrap();
        assert_eq!(bytes, b"whole file");
        assert_eq!(mock.sent.lock().unwrap().len(), 1);
    }

    #[test]
    fn export_names_and_conversions() {
        assert_eq!(export_mime("PDF"), Some("application/pdf"));
        assert_eq!(export_mime(".md"), Some("text/markdown"));
        assert_eq!(export_mime("klingon"), None);
        assert_eq!(default_export("application/vnd.google-apps.spreadsheet"), "text/csv");
        assert_eq!(google_type_for("text/csv"), Some("application/vnd.google-apps.spreadsheet"));
        assert_eq!(google_type_for("application/pdf"), None);
        assert_eq!(url_decode("a%2Fb+c"), "a/b c");
    }
}
