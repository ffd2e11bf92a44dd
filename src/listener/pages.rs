//! The HTML every page of the listener shares: escaping, the layout with its one small
//! stylesheet, and the plain success and failure pages. Connect, approval and portal pages build
//! on these.

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}\
main{max-width:520px;margin:48px auto;background:#fff;border:1px solid #e3e6ec;border-radius:10px;padding:28px 32px;box-shadow:0 1px 3px rgba(0,0,0,.05)}\
h1{font-size:20px;margin:0 0 4px}p.sub{color:#5b6475;margin:0 0 20px}label{display:block;font-weight:600;margin:16px 0 4px}\
input{width:100%;box-sizing:border-box;padding:9px 10px;border:1px solid #c9ced8;border-radius:6px;font:inherit}\
small{display:block;color:#6b7385;margin-top:4px}button{margin-top:22px;padding:10px 18px;border:0;border-radius:6px;background:#2f5bea;color:#fff;font:inherit;font-weight:600;cursor:pointer}\
.err{background:#fdecec;border:1px solid #f3b9b9;color:#8a1f1f;padding:10px 12px;border-radius:6px;margin:12px 0}\
.ok{background:#e9f8ee;border:1px solid #b6e2c3;color:#17572c;padding:10px 12px;border-radius:6px;margin:12px 0}\
code{background:#f1f3f6;padding:1px 5px;border-radius:4px}footer{color:#8a91a0;font-size:12px;margin-top:24px}";

pub fn layout(title: &str, body: &str) -> String {
    layout_with_footer(title, body, CREDENTIAL_FOOTER)
}

/// The footer of the pages where the user types a credential.
pub const CREDENTIAL_FOOTER: &str = "workbench runs on this computer; what you enter here goes to its secret store on this computer, never to the chat.";

/// The page layout with a footer of the caller's (plain text, escaped here).
pub fn layout_with_footer(title: &str, body: &str, footer: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · workbench</title><style>{STYLE}</style></head><body><main>{body}\
         <footer>{}</footer></main></body></html>",
        escape(title),
        escape(footer)
    )
}

pub fn success(title: &str, message: &str) -> String {
    layout(
        title,
        &format!(
            "<h1>{}</h1><div class=\"ok\">{}</div><p>You can close this tab and return to your agent.</p>",
            escape(title),
            escape(message)
        ),
    )
}

pub fn failure(title: &str, message: &str) -> String {
    layout(title, &format!("<h1>{}</h1><div class=\"err\">{}</div>", escape(title), escape(message)))
}
