//! Email text <-> MIME, both ways.
//!
//! Out: an RFC 2822 / MIME message from plain fields (addresses, subject, a text or HTML body, files),
//! with RFC 2047 encoded-words for non-ASCII headers, RFC 2231 file names, CRLF line ends and base64
//! where 7-bit text will not do. In: Gmail's parsed `payload` tree (parts with base64url bodies) to
//! readable text, preferring `text/plain` and reducing HTML to text, plus the attachment list.

use serde_json::Value;

use crate::codec::{base64_decode, base64_encode};
use crate::text::html_to_text;

/// One file attached to an outgoing message.
pub struct Attachment {
    pub name: String,
    pub mime_type: String,
    pub bytes: Vec<u8>,
}

/// An outgoing message in the terms a person writes it.
pub struct Outgoing<'a> {
    pub to: &'a [String],
    pub cc: &'a [String],
    pub bcc: &'a [String],
    pub subject: &'a str,
    pub body: &'a str,
    /// `body` is HTML: send it with a plain-text alternative derived from it.
    pub html: bool,
    pub in_reply_to: Option<String>,
    pub references: Option<String>,
    pub attachments: Vec<Attachment>,
}

/// Header values never carry line breaks from arguments (no header injection).
fn one_line(value: &str) -> String {
    value.replace(['\r', '\n'], " ").trim().to_string()
}

/// RFC 2047: ASCII stays as it is; anything else becomes UTF-8 base64 encoded-words of at most
/// 75 characters, folded onto continuation lines.
pub fn encode_header(value: &str) -> String {
    let value = one_line(value);
    if value.is_ascii() {
        return value;
    }
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in value.chars() {
        // 45 bytes of UTF-8 -> 60 base64 characters -> 72 with the `=?UTF-8?B?` `?=` frame.
        if chunk.len() + c.len_utf8() > 45 {
            words.push(std::mem::take(&mut chunk));
        }
        chunk.push(c);
    }
    if !chunk.is_empty() {
        words.push(chunk);
    }
    words.iter().map(|w| format!("=?UTF-8?B?{}?=", base64_encode(w.as_bytes()))).collect::<Vec<_>>().join("\r\n ")
}

/// Why a message could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MimeError {
    /// A recipient that is not one email address (the text as given, on one line).
    #[error("'{0}' is not an email address")]
    NotAnAddress(String),
}

/// One address (`ada@example.com` or `Ada Lovelace <ada@example.com>`) as a header value, with a
/// non-ASCII display name encoded and a display name with specials quoted.
pub fn encode_address(address: &str) -> Result<String, MimeError> {
    let address = one_line(address);
    let (name, email) = match (address.rfind('<'), address.ends_with('>')) {
        (Some(lt), true) => (address[..lt].trim().trim_matches('"').trim(), address[lt + 1..address.len() - 1].trim()),
        _ => ("", address.as_str()),
    };
    let valid = email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty() && domain.contains('.') && !email.contains([' ', ',', '<', '>', ';'])
    });
    if !valid {
        return Err(MimeError::NotAnAddress(address));
    }
    if name.is_empty() {
        return Ok(email.to_string());
    }
    let name = if !name.is_ascii() {
        encode_header(name)
    } else if name.contains(|c: char| "()<>[]:;@\\,.\"".contains(c)) {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        name.to_string()
    };
    Ok(format!("{name} <{email}>"))
}

fn crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n").replace('\n', "\r\n")
}

fn wrap76(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 76 * 2 + 2);
    for (i, c) in encoded.chars().enumerate() {
        if i > 0 && i % 76 == 0 {
            out.push_str("\r\n");
        }
        out.push(c);
    }
    out
}

/// A text part: 7-bit when it is short-lined ASCII, base64 otherwise.
fn text_part(subtype: &str, text: &str) -> String {
    let text = crlf(text);
    if text.is_ascii() && text.split("\r\n").all(|l| l.len() <= 998) {
        format!("Content-Type: text/{subtype}; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n{text}")
    } else {
        format!(
            "Content-Type: text/{subtype}; charset=UTF-8\r\nContent-Transfer-Encoding: base64\r\n\r\n{}",
            wrap76(&base64_encode(text.as_bytes()))
        )
    }
}

fn body_part(msg: &Outgoing<'_>, boundary: &str) -> String {
    if !msg.html {
        return text_part("plain", msg.body);
    }
    let alt = format!("{boundary}_alt");
    format!(
        "Content-Type: multipart/alternative; boundary=\"{alt}\"\r\n\r\n--{alt}\r\n{}\r\n--{alt}\r\n{}\r\n--{alt}--",
        text_part("plain", &html_to_text(msg.body)),
        text_part("html", msg.body)
    )
}

/// A file name parameter: quoted ASCII, or RFC 2231 `name*=UTF-8''...` for anything else.
fn name_param(param: &str, name: &str) -> String {
    let name = one_line(name);
    if name.is_ascii() {
        format!("{param}=\"{}\"", name.replace('\\', "_").replace('"', "'"))
    } else {
        format!("{param}*=UTF-8''{}", crate::codec::percent_encode(&name))
    }
}

/// The whole message, ready for Gmail's `raw` (after base64url).
pub fn build(msg: &Outgoing<'_>, boundary: &str) -> Result<Vec<u8>, MimeError> {
    let mut head = String::new();
    for (name, list) in [("To", msg.to), ("Cc", msg.cc), ("Bcc", msg.bcc)] {
        if list.is_empty() {
            continue;
        }
        let encoded: Result<Vec<String>, MimeError> = list.iter().map(|a| encode_address(a)).collect();
        head.push_str(&format!("{name}: {}\r\n", encoded?.join(",\r\n ")));
    }
    head.push_str(&format!("Subject: {}\r\n", encode_header(msg.subject)));
    if let Some(id) = &msg.in_reply_to {
        head.push_str(&format!("In-Reply-To: {}\r\n", one_line(id)));
    }
    if let Some(refs) = &msg.references {
        head.push_str(&format!("References: {}\r\n", one_line(refs)));
    }
    head.push_str("MIME-Version: 1.0\r\n");
    let mut out = head.into_bytes();
    if msg.attachments.is_empty() {
        out.extend_from_slice(body_part(msg, boundary).as_bytes());
        out.extend_from_slice(b"\r\n");
        return Ok(out);
    }
    let mix = format!("{boundary}_mix");
    out.extend_from_slice(format!("Content-Type: multipart/mixed; boundary=\"{mix}\"\r\n\r\n").as_bytes());
    out.extend_from_slice(format!("--{mix}\r\n{}\r\n", body_part(msg, boundary)).as_bytes());
    for a in &msg.attachments {
        out.extend_from_slice(
            format!(
                "--{mix}\r\nContent-Type: {}; {}\r\nContent-Disposition: attachment; {}\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
                one_line(&a.mime_type),
                name_param("name", &a.name),
                name_param("filename", &a.name),
                wrap76(&base64_encode(&a.bytes))
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(format!("--{mix}--\r\n").as_bytes());
    Ok(out)
}

// ------------------------------------------------------------------------------------- reading

/// Bytes in a named charset as text (UTF-8 and the Latin-1 family; anything else read as UTF-8).
pub fn decode_charset(bytes: &[u8], charset: &str) -> String {
    match charset.trim().trim_matches('"').to_ascii_lowercase().as_str() {
        "iso-8859-1" | "latin1" | "latin-1" | "iso-8859-15" | "windows-1252" | "cp1252" | "us-ascii" | "ascii" => {
            bytes.iter().map(|&b| b as char).collect()
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn decode_q(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'_' => out.push(b' '),
            b'=' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'='),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// Decodes RFC 2047 encoded-words (`=?UTF-8?B?...?=`, `=?ISO-8859-1?Q?...?=`) in a header value;
/// whitespace between adjacent encoded-words is dropped, as the RFC says.
pub fn decode_header(value: &str) -> String {
    if !value.contains("=?") {
        return value.to_string();
    }
    let mut out = String::new();
    let mut rest = value;
    let mut last_was_word = false;
    while !rest.is_empty() {
        if let Some(start) = rest.find("=?") {
            let decoded = rest[start + 2..].split_once('?').and_then(|(charset, after)| {
                let (enc, after) = after.split_once('?')?;
                let end = after.find("?=")?;
                let text = &after[..end];
                let bytes = match enc {
                    "B" | "b" => base64_decode(text)?,
                    "Q" | "q" => decode_q(text),
                    _ => return None,
                };
                let charset = charset.split('*').next().unwrap_or(charset);
                let consumed = start + 2 + charset.len() + 1 + enc.len() + 1 + end + 2;
                Some((decode_charset(&bytes, charset), consumed))
            });
            match decoded {
                Some((text, consumed)) => {
                    let between = &rest[..start];
                    if !(last_was_word && between.trim().is_empty()) {
                        out.push_str(between);
                    }
                    out.push_str(&text);
                    last_was_word = true;
                    rest = &rest[consumed.min(rest.len())..];
                    continue;
                }
                None => {
                    out.push_str(&rest[..start + 2]);
                    rest = &rest[start + 2..];
                    last_was_word = false;
                    continue;
                }
            }
        }
        out.push_str(rest);
        break;
    }
    out
}

/// A header of a Gmail message part, decoded; names compare case-insensitively.
pub fn header(part: &Value, name: &str) -> Option<String> {
    part["headers"]
        .as_array()?
        .iter()
        .find(|h| h["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
        .and_then(|h| h["value"].as_str())
        .map(|v| decode_header(v).trim().to_string())
}

fn param(header_value: &str, name: &str) -> Option<String> {
    header_value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().trim_matches('"').to_string())
    })
}

/// An attachment found in a message.
#[derive(Debug, Clone, PartialEq)]
pub struct AttachmentRef {
    pub part_id: String,
    pub filename: String,
    pub mime_type: String,
    pub size: u64,
    /// Gmail's id for fetching the bytes (large parts); small parts carry `data` inline instead.
    pub attachment_id: Option<String>,
    pub data: Option<String>,
}

/// A message body as text, and where it came from.
#[derive(Debug, Default, PartialEq)]
pub struct MessageBody {
    pub text: Option<String>,
    /// `text/plain`, or `text/html` when the text was reduced from HTML.
    pub source: Option<&'static str>,
    pub attachments: Vec<AttachmentRef>,
}

fn walk<'a>(
    part: &'a Value,
    plain: &mut Option<&'a Value>,
    html: &mut Option<&'a Value>,
    files: &mut Vec<AttachmentRef>,
) {
    let mime = part["mimeType"].as_str().unwrap_or("").to_ascii_lowercase();
    let filename = part["filename"].as_str().unwrap_or("");
    let disposition = header(part, "Content-Disposition").unwrap_or_default().to_ascii_lowercase();
    if !filename.is_empty() || disposition.starts_with("attachment") {
        files.push(AttachmentRef {
            part_id: part["partId"].as_str().unwrap_or("").to_string(),
            filename: if filename.is_empty() { "attachment".to_string() } else { decode_header(filename) },
            mime_type: mime,
            size: part["body"]["size"].as_u64().unwrap_or(0),
            attachment_id: part["body"]["attachmentId"].as_str().map(str::to_string),
            data: part["body"]["data"].as_str().map(str::to_string),
        });
        return;
    }
    match mime.as_str() {
        "text/plain" if plain.is_none() => *plain = Some(part),
        "text/html" if html.is_none() => *html = Some(part),
        _ => {}
    }
    for child in part["parts"].as_array().into_iter().flatten() {
        walk(child, plain, html, files);
    }
}

fn part_text(part: &Value) -> Option<String> {
    let data = part["body"]["data"].as_str()?;
    let bytes = base64_decode(data)?;
    let charset = header(part, "Content-Type").and_then(|ct| param(&ct, "charset")).unwrap_or_else(|| "utf-8".into());
    Some(decode_charset(&bytes, &charset))
}

/// The readable body of a Gmail `payload` (text/plain preferred, HTML reduced to text otherwise)
/// and its attachments.
pub fn extract(payload: &Value) -> MessageBody {
    let (mut plain, mut html, mut files) = (None, None, Vec::new());
    walk(payload, &mut plain, &mut html, &mut files);
    let mut out = MessageBody { attachments: files, ..Default::default() };
    if let Some(text) = plain.and_then(part_text).filter(|t| !t.trim().is_empty()) {
        out.text = Some(text.replace("\r\n", "\n").trim_end().to_string());
        out.source = Some("text/plain");
    } else if let Some(h) = html.and_then(part_text) {
        out.text = Some(html_to_text(&h));
        out.source = Some("text/html");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::base64url_encode;
    use serde_json::json;

    fn outgoing<'a>(to: &'a [String], subject: &'a str, body: &'a str) -> Outgoing<'a> {
        Outgoing {
            to,
            cc: &[],
            bcc: &[],
            subject,
            body,
            html: false,
            in_reply_to: None,
            references: None,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn non_ascii_headers_become_encoded_words_and_round_trip() {
        assert_eq!(encode_header("Quarterly report"), "Quarterly report");
        let enc = encode_header("Grüße aus Köln");
        assert_eq!(enc, format!("=?UTF-8?B?{}?=", base64_encode("Grüße aus Köln".as_bytes())));
        assert_eq!(decode_header(&enc), "Grüße aus Köln");
        let long = "Überweisung für die Rechnung Nr. 2026-0042 über 1.250,00 € — bitte prüfen";
        let enc = encode_header(long);
        assert!(enc.split("\r\n ").all(|w| w.len() <= 75 && w.starts_with("=?UTF-8?B?")), "{enc}");
        assert_eq!(decode_header(&enc), long, "folded words join without spaces");
        assert_eq!(encode_header("line\r\nBcc: evil@x.com"), "line  Bcc: evil@x.com");
    }

    #[test]
    fn q_encoded_and_latin1_headers_decode() {
        assert_eq!(decode_header("=?ISO-8859-1?Q?Andr=E9?= Pirard <pirard@x.be>"), "André Pirard <pirard@x.be>");
        assert_eq!(decode_header("=?utf-8?q?caf=C3=A9_au_lait?="), "café au lait");
        assert_eq!(decode_header("plain =? not a word"), "plain =? not a word");
    }

    #[test]
    fn addresses_are_checked_and_display_names_encoded() {
        assert_eq!(encode_address("ada@example.com").unwrap(), "ada@example.com");
        assert_eq!(encode_address("Ada Lovelace <ada@example.com>").unwrap(), "Ada Lovelace <ada@example.com>");
        assert_eq!(encode_address("Lovelace, Ada <ada@example.com>").unwrap(), "\"Lovelace, Ada\" <ada@example.com>");
        assert_eq!(
            encode_address("Jürgen <j@example.de>").unwrap(),
            format!("=?UTF-8?B?{}?= <j@example.de>", base64_encode("Jürgen".as_bytes()))
        );
        assert!(encode_address("not-an-address").is_err());
        assert!(encode_address("a@b.com, c@d.com").is_err());
    }

    #[test]
    fn plain_message_is_7bit_with_crlf() {
        let to = vec!["bob@example.com".to_string()];
        let raw = build(&outgoing(&to, "Hi", "line one\nline two"), "b").unwrap();
        assert_eq!(
            String::from_utf8(raw).unwrap(),
            "To: bob@example.com\r\nSubject: Hi\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\nline one\r\nline two\r\n"
        );
    }

    #[test]
    fn html_with_attachment_is_mixed_over_alternative() {
        let to = vec!["bob@example.com".to_string()];
        let mut msg = outgoing(&to, "Zahlen für März", "<p>Hallo <b>Bob</b></p>");
        msg.html = true;
        msg.attachments.push(Attachment {
            name: "März.csv".into(),
            mime_type: "text/csv".into(),
            bytes: b"a,b\n1,2\n".to_vec(),
        });
        let raw = String::from_utf8(build(&msg, "B").unwrap()).unwrap();
        assert!(raw.contains("Subject: =?UTF-8?B?"), "{raw}");
        assert!(raw.contains("Content-Type: multipart/mixed; boundary=\"B_mix\"\r\n\r\n--B_mix\r\nContent-Type: multipart/alternative; boundary=\"B_alt\""));
        assert!(raw.contains(
            "--B_alt\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\nHallo Bob\r\n"
        ));
        assert!(raw.contains("Content-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n<p>Hallo <b>Bob</b></p>\r\n--B_alt--"));
        assert!(raw.contains("Content-Disposition: attachment; filename*=UTF-8''M%C3%A4rz.csv"));
        assert!(raw.contains(&base64_encode(b"a,b\n1,2\n")));
        assert!(raw.ends_with("--B_mix--\r\n"));
    }

    #[test]
    fn non_ascii_body_is_base64() {
        let to = vec!["bob@example.com".to_string()];
        let raw = String::from_utf8(build(&outgoing(&to, "x", "Grüße"), "b").unwrap()).unwrap();
        assert!(
            raw.ends_with(&format!(
                "Content-Transfer-Encoding: base64\r\n\r\n{}\r\n",
                base64_encode("Grüße".as_bytes())
            ))
        );
    }

    #[test]
    fn bodies_prefer_plain_text_and_list_attachments() {
        let payload = json!({
            "partId": "", "mimeType": "multipart/mixed", "filename": "",
            "headers": [{"name": "Content-Type", "value": "multipart/mixed; boundary=x"}],
            "body": {"size": 0},
            "parts": [
                {"partId": "0", "mimeType": "multipart/alternative", "filename": "", "body": {"size": 0}, "parts": [
                    {"partId": "0.0", "mimeType": "text/plain", "filename": "",
                     "headers": [{"name": "Content-Type", "value": "text/plain; charset=\"ISO-8859-1\""}],
                     "body": {"size": 6, "data": base64url_encode(b"caf\xe9\r\n")}},
                    {"partId": "0.1", "mimeType": "text/html", "filename": "", "body": {"size": 20, "data": base64url_encode(b"<p>caf&eacute;</p>")}}
                ]},
                {"partId": "1", "mimeType": "application/pdf", "filename": "invoice.pdf",
                 "headers": [{"name": "Content-Disposition", "value": "attachment; filename=\"invoice.pdf\""}],
                 "body": {"attachmentId": "ANGjdJ8", "size": 48213}}
            ]
        });
        let e = extract(&payload);
        assert_eq!(e.text.as_deref(), Some("café"));
        assert_eq!(e.source, Some("text/plain"));
        assert_eq!(e.attachments.len(), 1);
        assert_eq!(e.attachments[0].filename, "invoice.pdf");
        assert_eq!(e.attachments[0].part_id, "1");
        assert_eq!(e.attachments[0].attachment_id.as_deref(), Some("ANGjdJ8"));

        let html_only =
            json!({"mimeType": "text/html", "body": {"data": base64url_encode(b"<div>Hi&nbsp;there<br>Bye</div>")}});
        let e = extract(&html_only);
        assert_eq!(e.text.as_deref(), Some("Hi there\nBye"));
        assert_eq!(e.source, Some("text/html"));
    }
}
