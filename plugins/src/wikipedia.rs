//! Wikipedia: article search (REST search), lead summaries (REST page summary) and full plain-text
//! articles (Action API extracts), in any language edition. No authentication; the engine sends a
//! descriptive User-Agent as Wikimedia's policy requires.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
use crate::text::html_to_text;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "wikipedia",
    display_name: "Wikipedia",
    version: "1.0.0",
    auth: AuthSpec::NONE,
    keywords: &["encyclopedia", "wiki", "article", "look up", "who is", "what is", "facts", "history of"],
    hosts: &[Host { key: "base_url", default_url: "https://{lang}.wikipedia.org" }],
    curl_proxy: crate::api::CurlProxy::Off,
    rate_limit: crate::api::RateLimit::per_second(10),
    side: None,
    tools: &[SEARCH_ARTICLES, GET_SUMMARY, GET_ARTICLE],
    error_message,
};

fn error_message(body: &Value) -> Option<String> {
    body.pointer("/error/info")
        .or_else(|| body.get("detail"))
        .or_else(|| body.get("messageTranslations").and_then(|m| m.get("en")))
        .or_else(|| body.get("title"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Language editions are ASCII codes like `en`, `de`, `zh-yue`; anything else would let the
/// placeholder steer the request to another host.
fn check_lang(lang: &str) -> Result<(), ToolError> {
    let ok = !lang.is_empty() && lang.len() <= 20 && lang.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(invalid(
            "/lang",
            format!("'{lang}' is not a Wikipedia language code"),
            "expected a language code such as en, de, fr, ja",
        ))
    }
}

/// Article titles use underscores for spaces in URLs.
fn title_segment(title: &str) -> String {
    encode_segment(&title.trim().replace(' ', "_"))
}

fn article_url(lang: &str, title: &str) -> String {
    format!("https://{lang}.wikipedia.org/wiki/{}", title_segment(title))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArticles {
    /// Words to search for.
    #[schemars(length(min = 1))]
    query: String,
    /// Wikipedia language code, e.g. en, de, fr, ja.
    #[serde_inline_default("en".to_string())]
    lang: String,
    /// How many results (1-50).
    #[serde_inline_default(10)]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
}

pub(crate) const SEARCH_ARTICLES: ToolSpec = tool! {
    name: "wikipedia_search_articles",
    effect: Read,
    results: Public,
    args: SearchArticles,
    run: search_articles,
    keywords: ["find", "encyclopedia", "topic", "research", "look up"],
    description: "Search Wikipedia articles by keywords (full text) and get titles, short descriptions and matching excerpts, in any language edition.",
};

async fn search_articles(up: Arc<dyn Upstream>, args: SearchArticles) -> Result<Value, ToolError> {
    check_lang(&args.lang)?;
    let req = HttpRequest::get("/w/rest.php/v1/search/page")
        .host_var("lang", &args.lang)
        .query("q", &args.query)
        .query("limit", args.limit);
    let body = up.send(req).await?.json()?;
    let results: Vec<Value> = body["pages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let title = p["title"].as_str().unwrap_or_default();
            compact(json!({
                "title": title,
                "description": p["description"],
                "excerpt": p["excerpt"].as_str().map(html_to_text),
                "url": article_url(&args.lang, p["key"].as_str().unwrap_or(title)),
            }))
        })
        .collect();
    Ok(json!({ "results": results }))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetSummary {
    /// Article title, e.g. "Ada Lovelace" (redirects are followed).
    #[schemars(length(min = 1))]
    title: String,
    /// Wikipedia language code, e.g. en, de, fr, ja.
    #[serde_inline_default("en".to_string())]
    lang: String,
}

pub(crate) const GET_SUMMARY: ToolSpec = tool! {
    name: "wikipedia_get_summary",
    effect: Read,
    results: Public,
    args: GetSummary,
    run: get_summary,
    keywords: ["who is", "what is", "define", "overview", "intro", "lead", "encyclopedia"],
    description: "Get the short summary of a Wikipedia article: its lead paragraph, one-line description, thumbnail and link. The quick answer to 'who is' / 'what is'.",
};

async fn get_summary(up: Arc<dyn Upstream>, args: GetSummary) -> Result<Value, ToolError> {
    check_lang(&args.lang)?;
    let req = HttpRequest::get(format!("/api/rest_v1/page/summary/{}", title_segment(&args.title)))
        .host_var("lang", &args.lang)
        .query("redirect", "true");
    let body = up.send(req).await?.json()?;
    let title = body["title"].as_str().unwrap_or(&args.title).to_string();
    Ok(compact(json!({
        "title": title,
        "description": body["description"],
        "summary": body["extract"],
        "type": body["type"],
        "thumbnail": body.pointer("/thumbnail/source"),
        "url": body.pointer("/content_urls/desktop/page").cloned().unwrap_or_else(|| Value::String(article_url(&args.lang, &title))),
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetArticle {
    /// Article title, e.g. "Rust (programming language)" (redirects are followed).
    #[schemars(length(min = 1))]
    title: String,
    /// Wikipedia language code, e.g. en, de, fr, ja.
    #[serde_inline_default("en".to_string())]
    lang: String,
    /// Only this section (its heading, case-insensitive), e.g. "History".
    section: Option<String>,
    /// Cut the text after this many characters (500-100000).
    #[serde_inline_default(20_000)]
    #[schemars(range(min = 500, max = 100000))]
    max_chars: usize,
}

pub(crate) const GET_ARTICLE: ToolSpec = tool! {
    name: "wikipedia_get_article",
    effect: Read,
    results: Public,
    args: GetArticle,
    run: get_article,
    keywords: ["full text", "read", "section", "content", "encyclopedia", "page"],
    description: "Read a whole Wikipedia article as plain text, or just one section of it, with the list of section headings; long articles are cut at max_chars.",
};

async fn get_article(up: Arc<dyn Upstream>, args: GetArticle) -> Result<Value, ToolError> {
    check_lang(&args.lang)?;
    let req = HttpRequest::get("/w/api.php")
        .host_var("lang", &args.lang)
        .query("action", "query")
        .query("prop", "extracts")
        .query("explaintext", "1")
        .query("exsectionformat", "wiki")
        .query("redirects", "1")
        .query("titles", &args.title)
        .query("format", "json")
        .query("formatversion", "2");
    let body = up.send(req).await?.json()?;
    let page = body.pointer("/query/pages/0").cloned().unwrap_or(Value::Null);
    if page.is_null() || page.get("missing").is_some() || page.get("invalid").is_some() {
        return Err(ToolError::Upstream {
            status: 404,
            message: format!("Wikipedia ({}) has no article titled '{}'", args.lang, args.title),
            retry_after: None,
        });
    }
    let title = page["title"].as_str().unwrap_or(&args.title).to_string();
    let extract = page["extract"].as_str().unwrap_or_default();
    let sections = split_sections(extract);
    let headings: Vec<&str> = sections.iter().skip(1).map(|(h, _)| h.as_str()).collect();
    let text = match &args.section {
        None => extract.to_string(),
        Some(wanted) => match sections.iter().find(|(h, _)| h.eq_ignore_ascii_case(wanted.trim())) {
            Some((_, body)) => body.clone(),
            None => {
                return Err(invalid(
                    "/section",
                    format!("'{title}' has no section '{wanted}'; its sections are: {}", headings.join(", ")),
                    "no such section",
                ));
            }
        },
    };
    let (text, truncated) = truncate_chars(text.trim(), args.max_chars);
    Ok(compact(json!({
        "title": title,
        "url": article_url(&args.lang, &title),
        "section": args.section,
        "text": text,
        "truncated": truncated,
        "sections": headings,
    })))
}

/// Splits an extract with wiki-style headings (`== History ==`) into (heading, text) pairs; the
/// first pair is the lead with an empty heading. A section's text includes its subsections.
fn split_sections(extract: &str) -> Vec<(String, String)> {
    let mut sections: Vec<(String, usize, String)> = vec![(String::new(), 0, String::new())];
    for line in extract.lines() {
        let trimmed = line.trim();
        let level = trimmed.chars().take_while(|&c| c == '=').count();
        if level >= 2 && trimmed.ends_with(&"=".repeat(level)) && trimmed.len() > level * 2 {
            let heading = trimmed[level..trimmed.len() - level].trim().to_string();
            sections.push((heading, level, String::new()));
            continue;
        }
        // Text belongs to the newest section and to each enclosing section above it.
        let mut current_level = usize::MAX;
        for (_, lvl, body) in sections.iter_mut().rev() {
            if *lvl < current_level {
                body.push_str(line);
                body.push('\n');
                current_level = *lvl;
                if *lvl <= 2 {
                    break;
                }
            }
        }
    }
    sections.into_iter().map(|(h, _, b)| (h, b.trim().to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_and_nest() {
        let text = "Lead.\n\n== History ==\nOld.\n=== Early ===\nVery old.\n== Design ==\nShape.";
        let s = split_sections(text);
        assert_eq!(s[0], ("".into(), "Lead.".into()));
        assert_eq!(s[1], ("History".into(), "Old.\nVery old.".into()));
        assert_eq!(s[2], ("Early".into(), "Very old.".into()));
        assert_eq!(s[3], ("Design".into(), "Shape.".into()));
    }

    #[test]
    fn language_codes_cannot_smuggle_hosts() {
        assert!(check_lang("en").is_ok());
        assert!(check_lang("zh-yue").is_ok());
        assert!(check_lang("evil.com/").is_err());
        assert!(check_lang("").is_err());
    }
}

#[cfg(test)]
mod tool_tests;
