//! Open-Meteo tools on `MockUpstream`: the request each tool sends (geocoding, forecast and
//! archive hosts) and the rows it makes of the API's column blocks.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn lisbon() -> Value {
    json!({"results": [{"id": 2267057, "name": "Lisbon", "latitude": 38.71667, "longitude": -9.13333,
        "elevation": 45.0, "feature_code": "PPLC", "country_code": "PT", "admin1": "Lisbon",
        "timezone": "Europe/Lisbon", "population": 517802, "country": "Portugal"}], "generationtime_ms": 0.5})
}

#[test]
fn search_locations_queries_the_geocoder() {
    let (out, reqs) = MockUpstream::new()
        .json(lisbon())
        .ok(&SEARCH_LOCATIONS, json!({"name": "Lisbon", "count": 1, "country_code": "PT"}));
    assert_eq!(reqs[0].host, "geocoding_base_url");
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search", "body": null,
            "query": [["name", "Lisbon"], ["count", "1"], ["countryCode", "PT"], ["format", "json"]]})
    );
    assert_eq!(
        out,
        json!({"locations": [{"name": "Lisbon", "region": "Lisbon", "country": "Portugal", "country_code": "PT",
            "latitude": 38.71667, "longitude": -9.13333, "timezone": "Europe/Lisbon", "elevation_m": 45.0, "population": 517802}]})
    );
    // No match: the geocoder leaves `results` out.
    let (out, _) =
        MockUpstream::new().json(json!({"generationtime_ms": 0.1})).ok(&SEARCH_LOCATIONS, json!({"name": "Zz"}));
    assert_eq!(out, json!({"locations": []}));
}

/// get_forecast by place name: geocode first, then the forecast with the default variables;
/// columns become rows with the weather code named.
#[test]
fn get_forecast_geocodes_then_turns_columns_into_rows() {
    let forecast = json!({"latitude": 38.72, "longitude": -9.14, "timezone": "Europe/Lisbon", "elevation": 45.0,
        "current_units": {"time": "iso8601", "interval": "seconds", "temperature_2m": "°C"},
        "current": {"time": "2026-03-01T12:00", "interval": 900, "temperature_2m": 17.2, "weather_code": 3},
        "daily_units": {"time": "iso8601", "temperature_2m_max": "°C"},
        "daily": {"time": ["2026-03-01", "2026-03-02"], "temperature_2m_max": [18.0, 19.5], "weather_code": [61, 0]}});
    let (out, reqs) = MockUpstream::new()
        .json(lisbon())
        .json(forecast)
        .ok(&GET_FORECAST, json!({"location": "Lisbon", "forecast_days": 2, "temperature_unit": "fahrenheit"}));
    assert_eq!(sent(&reqs[0])["query"][0], json!(["name", "Lisbon"]));
    assert_eq!(reqs[1].host, "base_url");
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/forecast", "body": null, "query": [
            ["latitude", "38.71667"], ["longitude", "-9.13333"],
            ["current", "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m"],
            ["daily", "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max"],
            ["forecast_days", "2"], ["timezone", "auto"], ["temperature_unit", "fahrenheit"]]})
    );
    assert_eq!(out["place"]["name"], "Lisbon");
    assert_eq!(
        out["current"],
        json!({"time": "2026-03-01T12:00", "temperature_2m": 17.2, "weather_code": 3, "weather": "overcast"})
    );
    assert_eq!(out["current_units"], json!({"temperature_2m": "°C"}));
    assert_eq!(
        out["daily"],
        json!([{"time": "2026-03-01", "temperature_2m_max": 18.0, "weather_code": 61, "weather": "light rain"},
               {"time": "2026-03-02", "temperature_2m_max": 19.5, "weather_code": 0, "weather": "clear sky"}])
    );
}

/// Half a coordinate pair, or a place nobody knows, is an argument error.
#[test]
fn get_forecast_needs_a_place() {
    let (r, reqs) = MockUpstream::new().call(&GET_FORECAST, json!({"latitude": 1.0}));
    assert!(message(&r.unwrap_err()).contains("both latitude and longitude"));
    assert!(reqs.is_empty());
    let (r, _) = MockUpstream::new().json(json!({})).call(&GET_FORECAST, json!({"location": "Nowhere"}));
    assert!(message(&r.unwrap_err()).contains("no place called 'Nowhere'"));
}

#[test]
fn get_historical_weather_reads_the_archive_and_checks_dates() {
    let body = json!({"latitude": 52.52, "longitude": 13.42, "timezone": "GMT",
        "daily": {"time": ["2025-01-01"], "precipitation_sum": [1.2]}, "daily_units": {"precipitation_sum": "mm"}});
    let (out, reqs) = MockUpstream::new().json(body).ok(
        &GET_HISTORICAL,
        json!({"latitude": 52.52, "longitude": 13.41, "start_date": "2025-01-01", "end_date": "2025-01-01",
               "daily": ["precipitation_sum"], "timezone": "GMT"}),
    );
    assert_eq!(reqs[0].host, "archive_base_url");
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/archive", "body": null, "query": [["latitude", "52.52"], ["longitude", "13.41"],
            ["start_date", "2025-01-01"], ["end_date", "2025-01-01"], ["daily", "precipitation_sum"], ["timezone", "GMT"]]})
    );
    assert_eq!(out["daily"], json!([{"time": "2025-01-01", "precipitation_sum": 1.2}]));
    let (r, reqs) = MockUpstream::new().call(
        &GET_HISTORICAL,
        json!({"latitude": 1.0, "longitude": 1.0, "start_date": "2025-02-01", "end_date": "2025-01-01"}),
    );
    assert!(message(&r.unwrap_err()).contains("before start_date"));
    assert!(reqs.is_empty());
}
