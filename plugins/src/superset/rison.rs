//! Rison, the URL-friendly JSON notation Superset's list endpoints take in `q`
//! (`(filters:!((col:dashboard_title,opr:ct,value:sales)),page:0,page_size:25)`).

use serde_json::Value;

/// Characters that may not appear in an unquoted Rison id.
const NOT_IDCHAR: &str = " '!:(),*@$";
/// Characters an unquoted id may not start with (they would read as a number).
const NOT_IDSTART: &str = "-0123456789";

/// Encodes a JSON value as Rison: objects `(k:v,...)` in their key order, arrays `!(...)`,
/// `!t`/`!f`/`!n`, strings bare when they are valid ids and quoted (`'...'`, with `!` escapes)
/// otherwise.
pub fn encode(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("!n"),
        Value::Bool(true) => out.push_str("!t"),
        Value::Bool(false) => out.push_str("!f"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push_str("!(");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(')');
        }
        Value::Object(map) => {
            out.push('(');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(k, out);
                out.push(':');
                write(v, out);
            }
            out.push(')');
        }
    }
}

fn id_ok(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        None => false,
        Some(first) => {
            !NOT_IDSTART.contains(first) && !NOT_IDCHAR.contains(first) && chars.all(|c| !NOT_IDCHAR.contains(c))
        }
    }
}

fn string(s: &str, out: &mut String) {
    if id_ok(s) {
        out.push_str(s);
        return;
    }
    out.push('\'');
    for c in s.chars() {
        if c == '!' || c == '\'' {
            out.push('!');
        }
        out.push(c);
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_like_rison_js() {
        assert_eq!(encode(&json!({"page": 0, "page_size": 25})), "(page:0,page_size:25)");
        assert_eq!(
            encode(&json!({"filters": [{"col": "dashboard_title", "opr": "ct", "value": "sales"}], "page": 0})),
            "(filters:!((col:dashboard_title,opr:ct,value:sales)),page:0)"
        );
        assert_eq!(encode(&json!("sales report")), "'sales report'");
        assert_eq!(encode(&json!("don't!")), "'don!'t!!'");
        assert_eq!(encode(&json!("")), "''");
        assert_eq!(encode(&json!("2b1c-uuid")), "'2b1c-uuid'");
        assert_eq!(encode(&json!("-x")), "'-x'");
        assert_eq!(encode(&json!("a-1.b/c")), "a-1.b/c");
        assert_eq!(encode(&json!("Zürich")), "Zürich");
        assert_eq!(encode(&json!([true, false, null, 1.5, []])), "!(!t,!f,!n,1.5,!())");
        assert_eq!(encode(&json!({})), "()");
    }
}
