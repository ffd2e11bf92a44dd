//! Open-Meteo: place search (geocoding host), forecasts (forecast host) and past weather (archive
//! host). No authentication. Column-oriented responses are turned into rows, and WMO weather codes
//! into words, because that is how an agent reads weather.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "open_meteo",
    display_name: "Open-Meteo weather",
    version: "1.0.0",
    auth: AuthSpec::NONE,
    keywords: &["weather", "forecast", "temperature", "rain", "climate", "meteo"],
    hosts: &[
        Host { key: "base_url", default_url: "https://api.open-meteo.com/v1" },
        Host { key: "geocoding_base_url", default_url: "https://geocoding-api.open-meteo.com/v1" },
        Host { key: "archive_base_url", default_url: "https://archive-api.open-meteo.com/v1" },
    ],
    curl_proxy: crate::api::CurlProxy::Off,
    rate_limit: crate::api::RateLimit::per_minute(600),
    side: None,
    tools: &[SEARCH_LOCATIONS, GET_FORECAST, GET_HISTORICAL],
    error_message,
};

fn error_message(body: &Value) -> Option<String> {
    body.get("reason").and_then(Value::as_str).map(str::to_string)
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchLocations {
    /// Place name to look up, e.g. "Berlin" or "Springfield".
    #[schemars(length(min = 2))]
    name: String,
    /// How many matches (1-100).
    #[serde_inline_default(10)]
    #[schemars(range(min = 1, max = 100))]
    count: u32,
    /// Language for place names, e.g. en, de, fr.
    language: Option<String>,
    /// ISO 3166-1 alpha-2 country code to restrict the search to, e.g. US, DE.
    country_code: Option<String>,
}

pub(crate) const SEARCH_LOCATIONS: ToolSpec = tool! {
    name: "open_meteo_search_locations",
    effect: Read,
    results: Public,
    args: SearchLocations,
    run: search_locations,
    keywords: ["geocode", "coordinates", "latitude", "longitude", "city", "place", "where is", "timezone"],
    description: "Look up a place name (city, town, postcode) and get its latitude, longitude, country, region and time zone, for use with the weather tools.",
};

async fn search_locations(up: Arc<dyn Upstream>, args: SearchLocations) -> Result<Value, ToolError> {
    let locations =
        geocode(&*up, &args.name, args.count, args.language.as_deref(), args.country_code.as_deref()).await?;
    Ok(json!({ "locations": locations }))
}

async fn geocode(
    up: &dyn Upstream,
    name: &str,
    count: u32,
    language: Option<&str>,
    country_code: Option<&str>,
) -> Result<Vec<Value>, ToolError> {
    let req = HttpRequest::get("/search")
        .on("geocoding_base_url")
        .query("name", name)
        .query("count", count)
        .query_opt("language", language)
        .query_opt("countryCode", country_code)
        .query("format", "json");
    let body = up.send(req).await?.json()?;
    Ok(body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            compact(json!({
                "name": r["name"],
                "region": r["admin1"],
                "country": r["country"],
                "country_code": r["country_code"],
                "latitude": r["latitude"],
                "longitude": r["longitude"],
                "timezone": r["timezone"],
                "elevation_m": r["elevation"],
                "population": r["population"],
            }))
        })
        .collect())
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum TemperatureUnit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum WindSpeedUnit {
    Kmh,
    Ms,
    Mph,
    Kn,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum PrecipitationUnit {
    Mm,
    Inch,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetForecast {
    /// Latitude in degrees (-90 to 90); give it with longitude, or give location instead.
    #[schemars(range(min = -90.0, max = 90.0))]
    latitude: Option<f64>,
    /// Longitude in degrees (-180 to 180).
    #[schemars(range(min = -180.0, max = 180.0))]
    longitude: Option<f64>,
    /// A place name to geocode when no coordinates are given, e.g. "Lisbon".
    location: Option<String>,
    /// Current-conditions variables (Open-Meteo names). Default: temperature, feels-like, humidity, precipitation, weather code, wind.
    current: Option<Vec<String>>,
    /// Hourly variables, e.g. ["temperature_2m","precipitation_probability"]. Omitted unless asked for.
    hourly: Option<Vec<String>>,
    /// Daily variables. Default: max/min temperature, precipitation sum and probability, weather code.
    daily: Option<Vec<String>>,
    /// Days of forecast (1-16).
    #[serde_inline_default(7)]
    #[schemars(range(min = 1, max = 16))]
    forecast_days: u32,
    /// IANA time zone for the times, or "auto" for the place's own.
    #[serde_inline_default("auto".to_string())]
    timezone: String,
    /// Temperature unit (default celsius).
    temperature_unit: Option<TemperatureUnit>,
    /// Wind speed unit: kmh (default), ms, mph or kn (knots).
    wind_speed_unit: Option<WindSpeedUnit>,
    /// Precipitation unit: mm (default) or inch.
    precipitation_unit: Option<PrecipitationUnit>,
}

const DEFAULT_CURRENT: &[&str] = &[
    "temperature_2m",
    "apparent_temperature",
    "relative_humidity_2m",
    "precipitation",
    "weather_code",
    "wind_speed_10m",
];
const DEFAULT_DAILY: &[&str] =
    &["weather_code", "temperature_2m_max", "temperature_2m_min", "precipitation_sum", "precipitation_probability_max"];
const DEFAULT_ARCHIVE_DAILY: &[&str] =
    &["weather_code", "temperature_2m_max", "temperature_2m_min", "precipitation_sum", "wind_speed_10m_max"];

/// Coordinates from the arguments, geocoding a place name when needed.
async fn resolve_place(
    up: &dyn Upstream,
    latitude: Option<f64>,
    longitude: Option<f64>,
    location: Option<&str>,
) -> Result<(f64, f64, Option<Value>), ToolError> {
    match (latitude, longitude, location) {
        (Some(lat), Some(lon), _) => Ok((lat, lon, None)),
        (None, None, Some(name)) => {
            let found = geocode(up, name, 1, None, None).await?;
            let place = found.into_iter().next().ok_or_else(|| {
                invalid(
                    "/location",
                    format!("no place called '{name}' was found; try a larger nearby town or pass latitude/longitude"),
                    "not found",
                )
            })?;
            let lat = place["latitude"].as_f64().unwrap_or_default();
            let lon = place["longitude"].as_f64().unwrap_or_default();
            Ok((lat, lon, Some(place)))
        }
        _ => Err(invalid(
            "",
            "give either both latitude and longitude, or a location name",
            "expected latitude + longitude, or location",
        )),
    }
}

fn list(values: &Option<Vec<String>>, default: &[&str]) -> String {
    match values {
        Some(v) => v.join(","),
        None => default.join(","),
    }
}

fn unit_param<T: std::fmt::Debug>(value: Option<T>) -> Option<String> {
    value.map(|v| format!("{v:?}").to_lowercase())
}

pub(crate) const GET_FORECAST: ToolSpec = tool! {
    name: "open_meteo_get_forecast",
    effect: Read,
    results: Public,
    args: GetForecast,
    run: get_forecast,
    keywords: ["weather", "forecast", "temperature", "rain", "snow", "wind", "tomorrow", "this week", "umbrella", "sunny", "weather tomorrow", "next days", "will it rain"],
    description: "Weather forecast for a place (name or coordinates): current conditions plus daily (and optionally hourly) forecast up to 16 days: temperature, rain/precipitation, wind, weather description.",
};

async fn get_forecast(up: Arc<dyn Upstream>, args: GetForecast) -> Result<Value, ToolError> {
    let (lat, lon, place) = resolve_place(&*up, args.latitude, args.longitude, args.location.as_deref()).await?;
    let req = HttpRequest::get("/forecast")
        .query("latitude", lat)
        .query("longitude", lon)
        .query("current", list(&args.current, DEFAULT_CURRENT))
        .query("daily", list(&args.daily, DEFAULT_DAILY))
        .query_opt("hourly", args.hourly.as_ref().map(|h| h.join(",")))
        .query("forecast_days", args.forecast_days)
        .query("timezone", &args.timezone)
        .query_opt("temperature_unit", unit_param(args.temperature_unit))
        .query_opt("wind_speed_unit", unit_param(args.wind_speed_unit))
        .query_opt("precipitation_unit", unit_param(args.precipitation_unit));
    let body = up.send(req).await?.json()?;
    Ok(shape_weather(&body, place))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetHistorical {
    /// Latitude in degrees (-90 to 90); give it with longitude, or give location instead.
    #[schemars(range(min = -90.0, max = 90.0))]
    latitude: Option<f64>,
    /// Longitude in degrees (-180 to 180).
    #[schemars(range(min = -180.0, max = 180.0))]
    longitude: Option<f64>,
    /// A place name to geocode when no coordinates are given.
    location: Option<String>,
    /// First day, YYYY-MM-DD.
    start_date: String,
    /// Last day (inclusive), YYYY-MM-DD.
    end_date: String,
    /// Daily variables. Default: weather code, max/min temperature, precipitation sum, max wind.
    daily: Option<Vec<String>>,
    /// Hourly variables, e.g. ["temperature_2m"]. Omitted unless asked for.
    hourly: Option<Vec<String>>,
    /// IANA time zone for the times, or "auto" for the place's own.
    #[serde_inline_default("auto".to_string())]
    timezone: String,
}

pub(crate) const GET_HISTORICAL: ToolSpec = tool! {
    name: "open_meteo_get_historical_weather",
    effect: Read,
    results: Public,
    args: GetHistorical,
    run: get_historical,
    keywords: ["past weather", "history", "last year", "archive", "climate", "temperature record", "was it raining"],
    description: "Past (historical) weather for a place and date range: daily or hourly temperature, precipitation and wind from the weather archive.",
};

async fn get_historical(up: Arc<dyn Upstream>, args: GetHistorical) -> Result<Value, ToolError> {
    check_date("/start_date", &args.start_date)?;
    check_date("/end_date", &args.end_date)?;
    if args.end_date < args.start_date {
        return Err(ToolError::invalid(format!("end_date {} is before start_date {}", args.end_date, args.start_date)));
    }
    let (lat, lon, place) = resolve_place(&*up, args.latitude, args.longitude, args.location.as_deref()).await?;
    let req = HttpRequest::get("/archive")
        .on("archive_base_url")
        .query("latitude", lat)
        .query("longitude", lon)
        .query("start_date", &args.start_date)
        .query("end_date", &args.end_date)
        .query("daily", list(&args.daily, DEFAULT_ARCHIVE_DAILY))
        .query_opt("hourly", args.hourly.as_ref().map(|h| h.join(",")))
        .query("timezone", &args.timezone);
    let body = up.send(req).await?.json()?;
    Ok(shape_weather(&body, place))
}

/// Turns Open-Meteo's column blocks into rows, attaches units, and names weather codes.
fn shape_weather(body: &Value, place: Option<Value>) -> Value {
    let mut out = Map::new();
    if let Some(place) = place {
        out.insert("place".into(), place);
    }
    for key in ["latitude", "longitude", "timezone", "elevation"] {
        if let Some(v) = body.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(Value::Object(current)) = body.get("current") {
        let mut row = current.clone();
        row.remove("interval");
        add_weather_text(&mut row);
        out.insert("current".into(), Value::Object(row));
        if let Some(units) = body.get("current_units") {
            out.insert("current_units".into(), strip_units(units));
        }
    }
    for block in ["daily", "hourly"] {
        if let Some(Value::Object(columns)) = body.get(block) {
            out.insert(block.into(), Value::Array(columns_to_rows(columns)));
            if let Some(units) = body.get(format!("{block}_units")) {
                out.insert(format!("{block}_units"), strip_units(units));
            }
        }
    }
    Value::Object(out)
}

fn strip_units(units: &Value) -> Value {
    let mut units = units.clone();
    if let Value::Object(u) = &mut units {
        u.remove("time");
        u.remove("interval");
    }
    units
}

fn columns_to_rows(columns: &Map<String, Value>) -> Vec<Value> {
    let len = columns.values().filter_map(Value::as_array).map(Vec::len).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let mut row = Map::new();
            for (name, values) in columns {
                let v = values.get(i).cloned().unwrap_or(Value::Null);
                row.insert(name.clone(), v);
            }
            add_weather_text(&mut row);
            Value::Object(row)
        })
        .collect()
}

fn add_weather_text(row: &mut Map<String, Value>) {
    if let Some(code) = row.get("weather_code").and_then(Value::as_u64) {
        row.insert("weather".into(), Value::from(wmo_text(code)));
    }
}

/// WMO weather interpretation codes as Open-Meteo documents them.
fn wmo_text(code: u64) -> &'static str {
    match code {
        0 => "clear sky",
        1 => "mainly clear",
        2 => "partly cloudy",
        3 => "overcast",
        45 | 48 => "fog",
        51 | 53 | 55 => "drizzle",
        56 | 57 => "freezing drizzle",
        61 => "light rain",
        63 => "rain",
        65 => "heavy rain",
        66 | 67 => "freezing rain",
        71 => "light snow",
        73 => "snow",
        75 => "heavy snow",
        77 => "snow grains",
        80..=82 => "rain showers",
        85 | 86 => "snow showers",
        95 => "thunderstorm",
        96 | 99 => "thunderstorm with hail",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_become_rows_with_weather_words() {
        let body = json!({
            "latitude": 52.5, "longitude": 13.4, "timezone": "Europe/Berlin",
            "daily_units": {"time": "iso8601", "temperature_2m_max": "°C"},
            "daily": {"time": ["2026-11-30", "2026-12-01"], "temperature_2m_max": [4.1, 5.0], "weather_code": [3, 61]}
        });
        let shaped = shape_weather(&body, None);
        assert_eq!(
            shaped["daily"][1],
            json!({"time": "2026-12-01", "temperature_2m_max": 5.0, "weather_code": 61, "weather": "light rain"})
        );
        assert_eq!(shaped["daily_units"], json!({"temperature_2m_max": "°C"}));
    }

    #[test]
    fn dates_are_checked() {
        assert!(check_date("/d", "2026-01-31").is_ok());
        assert!(check_date("/d", "2026-1-31").is_err());
        assert!(check_date("/d", "yesterday").is_err());
    }
}

#[cfg(test)]
mod tool_tests;
