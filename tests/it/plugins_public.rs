//! The auth-free integrations (Hacker News, Wikipedia, Open-Meteo) against fakes on 127.0.0.1 that
//! check what the real APIs would and answer with bodies shaped like theirs.

use serde_json::{Value, json};

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

// ---------------------------------------------------------------- Hacker News

fn hn_item(id: u64) -> Value {
    json!({
        "by": format!("user{id}"), "descendants": id % 50, "id": id, "kids": [id * 10, id * 10 + 1],
        "score": 100 + id, "time": 1_700_000_000 + id, "title": format!("Story {id}"), "type": "story",
        "url": format!("https://example.com/{id}")
    })
}

/// Firebase: top/new lists and items; unknown items are `null` like the real API.
fn firebase(r: &Recorded) -> Reply {
    if r.method != "GET" || !has_user_agent(r) {
        return Reply::json(400, json!({"error": "bad request"}));
    }
    let ids: Vec<u64> = (1..=45).collect();
    match r.path.as_str() {
        "/v0/topstories.json" | "/v0/newstories.json" => Reply::json(200, json!(ids)),
        "/v0/user/pg.json" => Reply::json(
            200,
            json!({"id": "pg", "created": 1160418092, "karma": 157236, "about": "Bug fixer.<p>Essays at <a href=\"http://paulgraham.com\">paulgraham.com</a>", "submitted": (1..=25).collect::<Vec<u64>>()}),
        ),
        "/v0/user/nobody-here.json" => Reply::json(200, Value::Null),
        "/v0/item/999.json" => Reply::json(
            200,
            json!({"id": 999, "type": "comment", "by": "alice", "parent": 1, "time": 1700000000, "text": "I&#x27;d say <i>yes</i>.<p>Second paragraph"}),
        ),
        p if p.starts_with("/v0/item/") => {
            let id: u64 = p.trim_start_matches("/v0/item/").trim_end_matches(".json").parse().unwrap_or(0);
            if id == 7 {
                Reply::json(200, json!({"id": 7, "deleted": true, "type": "story", "time": 1}))
            } else if (1..=45).contains(&id) {
                Reply::json(200, hn_item(id))
            } else {
                Reply::json(200, Value::Null)
            }
        }
        _ => Reply::json(401, json!({"error": "Permission denied"})),
    }
}

fn algolia(r: &Recorded) -> Reply {
    if r.method != "GET" || !has_user_agent(r) {
        return Reply::json(400, json!({"message": "bad request", "status": 400}));
    }
    match r.path.as_str() {
        "/api/v1/search" | "/api/v1/search_by_date" => {
            let page: u64 = r.q("page").and_then(|p| p.parse().ok()).unwrap_or(0);
            Reply::json(
                200,
                json!({
                    "hits": [{
                        "objectID": format!("{}", 4000 + page), "title": "Rust 2.0 released", "url": "https://blog.rust-lang.org",
                        "author": "steveklabnik", "points": 1200, "num_comments": 345, "created_at": "2026-11-01T10:00:00Z",
                        "created_at_i": 1793527200, "_tags": ["story", "author_steveklabnik", "story_4000"]
                    }],
                    "nbHits": 3, "page": page, "nbPages": 3, "hitsPerPage": 1, "query": r.q("query")
                }),
            )
        }
        "/api/v1/items/8863" => Reply::json(
            200,
            json!({
                "id": 8863, "created_at": "2007-04-04T19:16:40.000Z", "author": "dhouston", "title": "My YC app: Dropbox",
                "url": "http://www.getdropbox.com/u/2/screencast.html", "text": null, "points": 111, "type": "story",
                "children": [
                    {"id": 8952, "author": "nickb", "created_at": "2007-04-05T15:16:40.000Z", "text": "<p>Cool&#x2F;neat</p>", "type": "comment",
                     "children": [{"id": 9224, "author": "BrandonM", "text": "you can already build such a system yourself", "type": "comment",
                                   "children": [{"id": 9272, "author": "dhouston", "text": "deep", "type": "comment", "children": []}]}]},
                    {"id": 8970, "author": "pg", "text": "Good luck", "type": "comment", "children": []}
                ]
            }),
        ),
        _ => Reply::json(404, json!({"message": "ObjectID does not exist", "status": 404})),
    }
}

async fn hn() -> (TestApp, Fake, Fake) {
    let fb = Fake::start(firebase).await;
    let al = Fake::start(algolia).await;
    let t = app_with(&[
        ("WORKBENCH_HACKERNEWS_BASE_URL", format!("{}/v0", fb.url)),
        ("WORKBENCH_HACKERNEWS_ALGOLIA_BASE_URL", format!("{}/api/v1", al.url)),
    ]);
    (t, fb, al)
}

#[tokio::test]
async fn hackernews_list_stories_fans_out_and_pages() {
    let (t, fb, _) = hn().await;
    let r = t.ok("hackernews_list_stories", json!({"limit": 10})).await;
    let stories = r["stories"].as_array().unwrap();
    assert_eq!(stories.len(), 9, "the deleted item 7 is dropped");
    assert_eq!(
        stories[0],
        json!({
            "id": 1, "type": "story", "title": "Story 1", "url": "https://example.com/1", "author": "user1",
            "points": 101, "comments": 1, "time": "2023-11-14T22:13:21Z", "hn_url": "https://news.ycombinator.com/item?id=1"
        })
    );
    assert_eq!(r["next_cursor"], "10");
    let reqs = fb.requests();
    assert_eq!(reqs[0].path, "/v0/topstories.json");
    assert_eq!(reqs.len(), 11);
    // The cursor continues where the first page ended; the last page has no next_cursor.
    let r2 = t.ok("hackernews_list_stories", json!({"list": "new", "limit": 30, "cursor": "30"})).await;
    assert_eq!(r2["stories"][0]["id"], 31);
    assert_eq!(r2["stories"].as_array().unwrap().len(), 15);
    assert!(r2.get("next_cursor").is_none());
    assert!(fb.requests().iter().any(|r| r.path == "/v0/newstories.json"));
}

#[tokio::test]
async fn hackernews_get_item_plain_and_with_comment_tree() {
    let (t, fb, al) = hn().await;
    let c = t.ok("hackernews_get_item", json!({"item_id": 999})).await;
    assert_eq!(c["text"], "I'd say yes.\nSecond paragraph");
    assert_eq!(c["parent"], 1);
    assert_eq!(c["author"], "alice");
    assert_eq!(fb.last().path, "/v0/item/999.json");

    let tree = t.ok("hackernews_get_item", json!({"item_id": 8863, "include_comments": true, "max_depth": 2})).await;
    assert_eq!(al.last().path, "/api/v1/items/8863");
    assert_eq!(tree["title"], "My YC app: Dropbox");
    assert_eq!(tree["hn_url"], "https://news.ycombinator.com/item?id=8863");
    assert_eq!(tree["comments"][0]["text"], "Cool/neat");
    assert_eq!(tree["comments"][0]["replies"][0]["author"], "BrandonM");
    assert_eq!(tree["comments"][0]["replies"][0]["more_replies"], 1, "depth 2 stops here and says how many are hidden");
    assert_eq!(tree["comments"][1]["author"], "pg");

    let missing = t.err("hackernews_get_item", json!({"item_id": 123456})).await;
    assert_eq!(missing["code"], "UPSTREAM_ERROR");
    assert_eq!(missing["status"], 404);
}

#[tokio::test]
async fn hackernews_search_maps_filters_and_cursor() {
    let (t, _, al) = hn().await;
    let r = t
        .ok("hackernews_search_stories", json!({"query": "rust", "tags": "show_hn", "numeric_filters": "points>100", "sort_by_date": true, "limit": 1}))
        .await;
    let req = al.last();
    assert_eq!(req.path, "/api/v1/search_by_date");
    assert_eq!(req.q("query"), Some("rust"));
    assert_eq!(req.q("tags"), Some("show_hn"));
    assert_eq!(req.q("numericFilters"), Some("points>100"));
    assert_eq!(req.q("hitsPerPage"), Some("1"));
    assert_eq!(r["hits"][0]["id"], 4000);
    // Algolia's objectID is a JSON string: the link carries the bare id, not `id="4000"`.
    assert_eq!(r["hits"][0]["hn_url"], "https://news.ycombinator.com/item?id=4000");
    assert_eq!(r["hits"][0]["comments"], 345);
    assert_eq!(r["total"], 3);
    assert_eq!(r["next_cursor"], "1");
    let r2 = t.ok("hackernews_search_stories", json!({"query": "rust", "cursor": "2"})).await;
    assert_eq!(al.last().path, "/api/v1/search");
    assert_eq!(al.last().q("tags"), Some("story"), "stories by default");
    assert_eq!(r2["hits"][0]["id"], 4002);
    assert!(r2.get("next_cursor").is_none(), "page 2 of 3 is the last");
    let bad = t.err("hackernews_search_stories", json!({"query": "rust", "cursor": "abc"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn hackernews_get_user_and_unknown_user() {
    let (t, fb, _) = hn().await;
    let u = t.ok("hackernews_get_user", json!({"username": "pg"})).await;
    assert_eq!(fb.last().path, "/v0/user/pg.json");
    assert_eq!(u["karma"], 157236);
    assert_eq!(u["about"], "Bug fixer.\nEssays at paulgraham.com");
    assert_eq!(u["submission_count"], 25);
    assert_eq!(u["recent_submission_ids"].as_array().unwrap().len(), 10);
    assert_eq!(u["created"], "2006-10-09T18:21:32Z");
    let e = t.err("hackernews_get_user", json!({"username": "nobody-here"})).await;
    assert!(e["message"].as_str().unwrap().contains("no user 'nobody-here'"), "{e}");
}

// ---------------------------------------------------------------- Wikipedia

fn wikipedia(r: &Recorded) -> Reply {
    if r.method != "GET" || !has_user_agent(r) {
        return Reply::json(403, json!({"error": {"code": "badrequest", "info": "Please set a user-agent"}}));
    }
    match r.path.as_str() {
        "/w/rest.php/v1/search/page" => {
            let q = r.q("q").unwrap_or_default().to_string();
            Reply::json(
                200,
                json!({"pages": [
                    {"id": 9228, "key": "Ada_Lovelace", "title": "Ada Lovelace", "excerpt": format!("<span class=\"searchmatch\">{q}</span> was an English mathematician"),
                     "matched_title": null, "description": "English mathematician (1815–1852)", "thumbnail": null}
                ]}),
            )
        }
        "/api/rest_v1/page/summary/Ada_Lovelace" => Reply::json(
            200,
            json!({
                "type": "standard", "title": "Ada Lovelace", "displaytitle": "<span>Ada Lovelace</span>",
                "description": "English mathematician (1815–1852)", "extract": "Augusta Ada King, Countess of Lovelace was an English mathematician.",
                "thumbnail": {"source": "https://upload.wikimedia.org/ada.jpg", "width": 320, "height": 400},
                "content_urls": {"desktop": {"page": "https://en.wikipedia.org/wiki/Ada_Lovelace"}}
            }),
        ),
        p if p.starts_with("/api/rest_v1/page/summary/") => Reply::json(
            404,
            json!({
                "type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found", "title": "Not found.", "method": "get", "detail": "Page or revision not found.", "uri": p
            }),
        ),
        "/w/api.php" => {
            let ok = r.q("action") == Some("query")
                && r.q("prop") == Some("extracts")
                && r.q("explaintext") == Some("1")
                && r.q("formatversion") == Some("2");
            if !ok {
                return Reply::json(
                    200,
                    json!({"error": {"code": "badvalue", "info": "Unrecognized value for parameter"}}),
                );
            }
            match r.q("titles") {
                Some("Rust (programming language)") => Reply::json(
                    200,
                    json!({"batchcomplete": true, "query": {"pages": [{
                        "pageid": 29414838, "ns": 0, "title": "Rust (programming language)",
                        "extract": "Rust is a language.\n\n== History ==\nStarted in 2006.\n=== Mozilla ===\nSponsored.\n\n== Syntax ==\nCurly braces."
                    }]}}),
                ),
                Some(t) => Reply::json(
                    200,
                    json!({"batchcomplete": true, "query": {"pages": [{"ns": 0, "title": t, "missing": true}]}}),
                ),
                None => Reply::json(200, json!({"error": {"code": "notitles", "info": "No titles"}})),
            }
        }
        _ => Reply::json(404, json!({"title": "Not found."})),
    }
}

async fn wiki() -> (TestApp, Fake) {
    let f = Fake::start(wikipedia).await;
    let t = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", f.url.clone())]);
    (t, f)
}

#[tokio::test]
async fn wikipedia_search_summary_article() {
    let (t, f) = wiki().await;
    let s = t.ok("wikipedia_search_articles", json!({"query": "Ada", "limit": 3})).await;
    assert_eq!(f.last().q("q"), Some("Ada"));
    assert_eq!(f.last().q("limit"), Some("3"));
    assert_eq!(
        s["results"][0],
        json!({
            "title": "Ada Lovelace", "description": "English mathematician (1815–1852)",
            "excerpt": "Ada was an English mathematician", "url": "https://en.wikipedia.org/wiki/Ada_Lovelace"
        })
    );

    let sum = t.ok("wikipedia_get_summary", json!({"title": "Ada Lovelace"})).await;
    assert_eq!(f.last().path, "/api/rest_v1/page/summary/Ada_Lovelace");
    assert_eq!(sum["summary"], "Augusta Ada King, Countess of Lovelace was an English mathematician.");
    assert_eq!(sum["thumbnail"], "https://upload.wikimedia.org/ada.jpg");

    let art = t
        .ok(
            "wikipedia_get_article",
            json!({"title": "Rust (programming language)", "section": "history", "max_chars": 500}),
        )
        .await;
    assert_eq!(f.last().q("titles"), Some("Rust (programming language)"));
    assert_eq!(art["text"], "Started in 2006.\nSponsored.");
    assert_eq!(art["sections"], json!(["History", "Mozilla", "Syntax"]));
    assert_eq!(art["truncated"], false);
    assert_eq!(art["url"], "https://en.wikipedia.org/wiki/Rust_%28programming_language%29");

    let nosec =
        t.err("wikipedia_get_article", json!({"title": "Rust (programming language)", "section": "Performance"})).await;
    assert_eq!(nosec["code"], "INVALID_ARGUMENTS");
    assert!(nosec["message"].as_str().unwrap().contains("History, Mozilla, Syntax"), "{nosec}");
}

#[tokio::test]
async fn wikipedia_errors_carry_the_providers_words() {
    let (t, _) = wiki().await;
    let e = t.err("wikipedia_get_summary", json!({"title": "No such page at all"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("Page or revision not found."), "{e}");
    let missing = t.err("wikipedia_get_article", json!({"title": "Qwzxv"})).await;
    assert!(missing["message"].as_str().unwrap().contains("no article titled 'Qwzxv'"));
    let lang = t.err("wikipedia_get_summary", json!({"title": "X", "lang": "evil.com/"})).await;
    assert_eq!(lang["code"], "INVALID_ARGUMENTS");
}

// ---------------------------------------------------------------- Open-Meteo

fn meteo(r: &Recorded) -> Reply {
    if r.method != "GET" || !has_user_agent(r) {
        return Reply::json(400, json!({"error": true, "reason": "bad request"}));
    }
    match r.path.as_str() {
        "/geo/v1/search" => match r.q("name") {
            Some("Lisbon") => Reply::json(
                200,
                json!({"results": [{
                "id": 2267057, "name": "Lisbon", "latitude": 38.71667, "longitude": -9.13333, "elevation": 45.0,
                "feature_code": "PPLC", "country_code": "PT", "country": "Portugal", "admin1": "Lisbon",
                "timezone": "Europe/Lisbon", "population": 517802
            }], "generationtime_ms": 0.5}),
            ),
            Some(_) => Reply::json(200, json!({"generationtime_ms": 0.3})),
            None => Reply::json(400, json!({"error": true, "reason": "Parameter 'name' is required"})),
        },
        "/fc/v1/forecast" | "/ar/v1/archive" => {
            let (Some(lat), Some(_lon)) = (r.q("latitude"), r.q("longitude")) else {
                return Reply::json(
                    400,
                    json!({"error": true, "reason": "Parameter 'latitude' and 'longitude' must have the same number of elements"}),
                );
            };
            if lat.parse::<f64>().map(|l| l.abs() > 90.0).unwrap_or(true) {
                return Reply::json(
                    400,
                    json!({"error": true, "reason": format!("Latitude must be in range of -90 to 90°. Given: {lat}.")}),
                );
            }
            let mut body = json!({
                "latitude": 38.72, "longitude": -9.14, "timezone": "Europe/Lisbon", "elevation": 45.0,
                "daily_units": {"time": "iso8601", "temperature_2m_max": "°C", "weather_code": "wmo code"},
                "daily": {"time": ["2026-11-30", "2026-12-01"], "temperature_2m_max": [17.1, 16.4], "weather_code": [3, 61]}
            });
            if r.path.starts_with("/fc") {
                body["current_units"] = json!({"time": "iso8601", "interval": "seconds", "temperature_2m": "°C", "weather_code": "wmo code"});
                body["current"] =
                    json!({"time": "2026-11-30T10:00", "interval": 900, "temperature_2m": 15.2, "weather_code": 2});
            }
            Reply::json(200, body)
        }
        _ => Reply::json(404, json!({"error": true, "reason": "Not Found"})),
    }
}

async fn weather() -> (TestApp, Fake) {
    let f = Fake::start(meteo).await;
    let t = app_with(&[
        ("WORKBENCH_OPEN_METEO_BASE_URL", format!("{}/fc/v1", f.url)),
        ("WORKBENCH_OPEN_METEO_GEOCODING_BASE_URL", format!("{}/geo/v1", f.url)),
        ("WORKBENCH_OPEN_METEO_ARCHIVE_BASE_URL", format!("{}/ar/v1", f.url)),
    ]);
    (t, f)
}

#[tokio::test]
async fn open_meteo_search_and_forecast_by_name() {
    let (t, f) = weather().await;
    let loc = t.ok("open_meteo_search_locations", json!({"name": "Lisbon", "count": 1, "country_code": "PT"})).await;
    let req = f.last();
    assert_eq!((req.q("name"), req.q("count"), req.q("countryCode")), (Some("Lisbon"), Some("1"), Some("PT")));
    assert_eq!(loc["locations"][0]["timezone"], "Europe/Lisbon");
    assert_eq!(loc["locations"][0]["latitude"], 38.71667);

    let fc = t
        .ok(
            "open_meteo_get_forecast",
            json!({"location": "Lisbon", "forecast_days": 2, "temperature_unit": "fahrenheit"}),
        )
        .await;
    let reqs = f.requests();
    let forecast = reqs.last().unwrap();
    assert_eq!(forecast.path, "/fc/v1/forecast");
    assert_eq!(forecast.q("latitude"), Some("38.71667"));
    assert_eq!(forecast.q("forecast_days"), Some("2"));
    assert_eq!(forecast.q("timezone"), Some("auto"));
    assert_eq!(forecast.q("temperature_unit"), Some("fahrenheit"));
    assert!(forecast.q("daily").unwrap().contains("temperature_2m_max"));
    assert_eq!(fc["place"]["name"], "Lisbon");
    assert_eq!(fc["current"]["weather"], "partly cloudy");
    assert!(fc["current"].get("interval").is_none());
    assert_eq!(
        fc["daily"][1],
        json!({"time": "2026-12-01", "temperature_2m_max": 16.4, "weather_code": 61, "weather": "light rain"})
    );
}

#[tokio::test]
async fn open_meteo_history_and_argument_errors() {
    let (t, f) = weather().await;
    let h = t
        .ok(
            "open_meteo_get_historical_weather",
            json!({"latitude": 38.7, "longitude": -9.1, "start_date": "2025-01-01", "end_date": "2025-01-02"}),
        )
        .await;
    let req = f.last();
    assert_eq!(req.path, "/ar/v1/archive");
    assert_eq!((req.q("start_date"), req.q("end_date")), (Some("2025-01-01"), Some("2025-01-02")));
    assert_eq!(h["daily"].as_array().unwrap().len(), 2);

    let none = t.err("open_meteo_get_forecast", json!({"forecast_days": 3})).await;
    assert_eq!(none["code"], "INVALID_ARGUMENTS");
    assert!(none["message"].as_str().unwrap().contains("latitude and longitude, or a location"), "{none}");
    let nowhere = t.err("open_meteo_get_forecast", json!({"location": "Atlantis"})).await;
    assert!(nowhere["message"].as_str().unwrap().contains("no place called 'Atlantis'"));
    let range = t.err("open_meteo_get_forecast", json!({"latitude": 95, "longitude": 0})).await;
    assert_eq!(range["problems"][0]["path"], "/latitude", "the schema catches it before any request");
    let backwards = t
        .err(
            "open_meteo_get_historical_weather",
            json!({"latitude": 1, "longitude": 1, "start_date": "2025-02-01", "end_date": "2025-01-01"}),
        )
        .await;
    assert!(backwards["message"].as_str().unwrap().contains("before start_date"));
}

#[tokio::test]
async fn provider_error_bodies_and_rate_limits() {
    // A provider's 400 reaches the agent in its own words; a 429 with a long Retry-After becomes
    // RATE_LIMITED with the wait; one with a short Retry-After is retried transparently.
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = hits.clone();
    let f = Fake::start(move |r| {
        let n = h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        match r.q("name") {
            Some("slow") => Reply::json(429, json!({"error": true, "reason": "Too many requests"}))
                .with_header("retry-after", "120"),
            Some("blip") if n.is_multiple_of(2) => {
                Reply::json(429, json!({"error": true, "reason": "Too many"})).with_header("retry-after", "1")
            }
            Some("blip") => Reply::json(200, json!({"results": [{"name": "Blip", "latitude": 1.0, "longitude": 2.0}]})),
            _ => Reply::json(
                400,
                json!({"error": true, "reason": "Cannot initialize WeatherVariable from invalid String value"}),
            ),
        }
    })
    .await;
    let t = app_with(&[("WORKBENCH_OPEN_METEO_GEOCODING_BASE_URL", f.url.clone())]);
    let e = t.err("open_meteo_search_locations", json!({"name": "xx"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 400);
    assert_eq!(e["message"], "open_meteo answered 400: Cannot initialize WeatherVariable from invalid String value");
    let rl = t.err("open_meteo_search_locations", json!({"name": "slow"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
    // The 429 holds later calls of this process to Open-Meteo (the governor); a fresh process
    // shows the short Retry-After being retried transparently.
    let held = t.err("open_meteo_search_locations", json!({"name": "blip"})).await;
    assert_eq!(held["code"], "RATE_LIMITED", "{held}");
    let t = app_with(&[("WORKBENCH_OPEN_METEO_GEOCODING_BASE_URL", f.url.clone())]);
    let before = hits.load(std::sync::atomic::Ordering::SeqCst);
    let ok = t.ok("open_meteo_search_locations", json!({"name": "blip"})).await;
    assert_eq!(ok["locations"][0]["name"], "Blip");
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst) - before, 2, "one 429, one retry");
}

#[tokio::test]
async fn a_403_that_says_rate_limit_is_rate_limited_not_a_credential_problem() {
    let f =
        Fake::start(|_| Reply::json(403, json!({"error": true, "reason": "API rate limit exceeded for 127.0.0.1"})))
            .await;
    let t = app_with(&[("WORKBENCH_OPEN_METEO_GEOCODING_BASE_URL", f.url.clone())]);
    let e = t.err("open_meteo_search_locations", json!({"name": "Lisbon"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    assert_eq!(e["status"], 403);
}
