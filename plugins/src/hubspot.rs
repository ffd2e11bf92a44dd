//! HubSpot CRM: contacts, companies, deals and notes through the CRM objects API, with a private
//! app access token as `Authorization: Bearer`. Records come back flattened (id, the properties that
//! have values, created/updated times); the search endpoints page with `paging.next.after` and stop
//! at 10,000 results per query, which the search tools say instead of handing out a dead cursor.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::text::html_to_text;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "hubspot",
    display_name: "HubSpot CRM",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "token",
            label: "Private app access token",
            secret: true,
            required: true,
            help: "HubSpot → Settings → Integrations → Private apps (pat-…); scopes crm.objects.contacts.read/write, crm.objects.companies.read, crm.objects.deals.read/write",
        }],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || HttpRequest::get("/account-info/v3/details"), label: identity_label }),
        oauth: None,
    },
    keywords: &["crm", "deal", "pipeline", "pipeline stage", "sales", "leads", "customers", "accounts", "opportunity"],
    hosts: &[Host { key: "base_url", default_url: "https://api.hubapi.com" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit { requests: 100, per_seconds: 10 },
    side: Some(flow_side),
    tools: &[
        SEARCH_CONTACTS,
        GET_CONTACT,
        CREATE_CONTACT,
        UPDATE_CONTACT,
        SEARCH_COMPANIES,
        SEARCH_DEALS,
        CREATE_DEAL,
        UPDATE_DEAL,
        CREATE_NOTE,
    ],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): the portal (`account-info/v3/details`: `portalId`). Contacts, deals and notes stay in the user's portal (inside; flows.md section 3).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/account-info/v3/details")).await?.json()?;
        crate::flow::side_from(&me, &[], &["/portalId"])
    })
}

fn identity_label(body: &Value) -> Option<String> {
    let portal = body["portalId"].as_u64()?;
    Some(match body["uiDomain"].as_str() {
        Some(domain) => format!("portal {portal} ({domain})"),
        None => format!("portal {portal}"),
    })
}

/// `{status:"error", message, category, correlationId}`.
fn error_message(body: &Value) -> Option<String> {
    let message = body["message"].as_str()?;
    Some(match body["category"].as_str() {
        Some(category) => format!("{message} ({category})"),
        None => message.to_string(),
    })
}

/// The CRM objects API version segment, in one place (HubSpot is moving to date-versioned paths).
const CRM: &str = "/crm/v3/objects";
/// HubSpot's search endpoints never page past this many results.
const SEARCH_CAP: u64 = 10_000;

const CONTACT_PROPERTIES: &[&str] = &[
    "email",
    "firstname",
    "lastname",
    "phone",
    "company",
    "jobtitle",
    "lifecyclestage",
    "hs_lead_status",
    "hubspot_owner_id",
];
const COMPANY_PROPERTIES: &[&str] = &[
    "name",
    "domain",
    "industry",
    "city",
    "state",
    "country",
    "phone",
    "numberofemployees",
    "annualrevenue",
    "lifecyclestage",
    "hubspot_owner_id",
];
const DEAL_PROPERTIES: &[&str] =
    &["dealname", "amount", "deal_currency_code", "dealstage", "pipeline", "closedate", "hubspot_owner_id"];

/// HubSpot-defined association type ids for the unlabeled associations the tools create.
mod assoc {
    pub const CONTACT_TO_COMPANY: u32 = 279;
    pub const CONTACT_TO_DEAL: u32 = 4;
    pub const DEAL_TO_CONTACT: u32 = 3;
    pub const DEAL_TO_COMPANY: u32 = 341;
    pub const NOTE_TO_CONTACT: u32 = 202;
    pub const NOTE_TO_COMPANY: u32 = 190;
    pub const NOTE_TO_DEAL: u32 = 214;
}

fn associations(targets: &[(&[String], u32)]) -> Vec<Value> {
    targets
        .iter()
        .flat_map(|(ids, type_id)| {
            ids.iter().map(move |id| {
                json!({"to": {"id": id}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": type_id}]})
            })
        })
        .collect()
}

/// A record as an agent reads it: id, the properties that have values, created/updated times.
fn shape_object(o: &Value) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), o["id"].clone());
    if let Some(props) = o["properties"].as_object() {
        for (k, v) in props {
            let empty = v.is_null() || v.as_str() == Some("");
            let duplicate =
                matches!(k.as_str(), "hs_object_id" | "createdate" | "lastmodifieddate" | "hs_lastmodifieddate");
            if !empty && !duplicate && !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out.insert("created_at".into(), o["createdAt"].clone());
    out.insert("updated_at".into(), o["updatedAt"].clone());
    if o["archived"].as_bool() == Some(true) {
        out.insert("archived".into(), json!(true));
    }
    compact(Value::Object(out))
}

/// A property value in the string form HubSpot stores: numbers and booleans as text, lists
/// (multiple checkboxes) joined with `;`, null to clear.
fn property_value(path: &str, v: &Value) -> Result<Value, ToolError> {
    Ok(match v {
        Value::Null => json!(""),
        Value::String(_) => v.clone(),
        Value::Number(n) => json!(n.to_string()),
        Value::Bool(b) => json!(b.to_string()),
        Value::Array(items) => {
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect();
            match parts {
                Some(p) => json!(p.join(";")),
                None => return Err(bad_property(path)),
            }
        }
        Value::Object(_) => return Err(bad_property(path)),
    })
}

fn bad_property(path: &str) -> ToolError {
    invalid(
        path,
        "property values are text, numbers, booleans, lists of options, or null to clear",
        "not a HubSpot property value",
    )
}

fn properties_map(path: &str, props: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    let mut out = Map::new();
    for (k, v) in props {
        out.insert(k.clone(), property_value(&format!("{path}/{k}"), v)?);
    }
    Ok(out)
}

// ---------------------------------------------------------------- search

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Operator {
    Eq,
    Neq,
    Lt,
    Lte,
    Gt,
    Gte,
    Between,
    In,
    NotIn,
    HasProperty,
    NotHasProperty,
    ContainsToken,
    NotContainsToken,
}

impl Operator {
    fn api(self) -> &'static str {
        match self {
            Operator::Eq => "EQ",
            Operator::Neq => "NEQ",
            Operator::Lt => "LT",
            Operator::Lte => "LTE",
            Operator::Gt => "GT",
            Operator::Gte => "GTE",
            Operator::Between => "BETWEEN",
            Operator::In => "IN",
            Operator::NotIn => "NOT_IN",
            Operator::HasProperty => "HAS_PROPERTY",
            Operator::NotHasProperty => "NOT_HAS_PROPERTY",
            Operator::ContainsToken => "CONTAINS_TOKEN",
            Operator::NotContainsToken => "NOT_CONTAINS_TOKEN",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Filter {
    /// Internal property name, e.g. lifecyclestage, email, dealstage, amount, closedate, hubspot_owner_id, createdate.
    #[schemars(length(min = 1))]
    property: String,
    /// eq, neq, lt, lte, gt, gte, between (value..high_value), in / not_in (values), has_property / not_has_property (no value), contains_token / not_contains_token (word match, * wildcards allowed).
    operator: Operator,
    /// The value to compare with, as text: "customer", "1000", dates as "2026-01-31" or epoch milliseconds.
    value: Option<String>,
    /// Upper bound for between.
    high_value: Option<String>,
    /// Values for in / not_in (lowercase for text properties).
    values: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SortDirection {
    Asc,
    Desc,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    /// Free text matched against the default searchable properties (names, email, phone, domain, deal name).
    query: Option<String>,
    /// Property filters, all of which must match (AND).
    #[schemars(length(max = 6))]
    filters: Option<Vec<Filter>>,
    /// Extra properties to return besides the usual ones (internal names).
    properties: Option<Vec<String>>,
    /// Property to sort by, e.g. createdate, closedate, amount. Default: createdate.
    sort_by: Option<String>,
    /// Sort direction (default desc: newest / largest first).
    #[serde_inline_default(SortDirection::Desc)]
    sort_direction: SortDirection,
    /// Results per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the other arguments the same.
    cursor: Option<String>,
    /// Also return HubSpot's response as raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const SEARCH_CONTACTS: ToolSpec = tool! {
    name: "hubspot_search_contacts",
    effect: Read,
    results: Private,
    args: Search,
    run: search_contacts,
    keywords: ["find contact", "lookup person", "leads", "people", "customer", "email address", "crm search"],
    description: "Search HubSpot CRM contacts (people, leads, customers) by free text (name, email, phone, company) and/or property filters such as lifecyclestage or createdate, newest first by default. HubSpot search reaches at most 10,000 matches per query.",
};

async fn search_contacts(up: Arc<dyn Upstream>, args: Search) -> Result<Value, ToolError> {
    search(&*up, "contacts", CONTACT_PROPERTIES, args).await
}

pub(crate) const SEARCH_COMPANIES: ToolSpec = tool! {
    name: "hubspot_search_companies",
    effect: Read,
    results: Private,
    args: Search,
    run: search_companies,
    keywords: ["find company", "accounts", "organizations", "businesses", "domain", "crm search"],
    description: "Search HubSpot CRM companies (accounts, organizations) by free text (name, domain, phone) and/or property filters such as industry, country or numberofemployees. At most 10,000 matches per query.",
};

async fn search_companies(up: Arc<dyn Upstream>, args: Search) -> Result<Value, ToolError> {
    search(&*up, "companies", COMPANY_PROPERTIES, args).await
}

pub(crate) const SEARCH_DEALS: ToolSpec = tool! {
    name: "hubspot_search_deals",
    effect: Read,
    results: Private,
    args: Search,
    run: search_deals,
    keywords: ["find deal", "opportunities", "pipeline", "pipeline stage", "forecast", "closing this month", "won deals"],
    description: "Search HubSpot deals (opportunities) by free text and/or property filters: pipeline stage (dealstage), owner, amount, close date (closedate); sortable. At most 10,000 matches per query.",
};

async fn search_deals(up: Arc<dyn Upstream>, args: Search) -> Result<Value, ToolError> {
    search(&*up, "deals", DEAL_PROPERTIES, args).await
}

fn filter_json(i: usize, f: &Filter) -> Result<Value, ToolError> {
    let problem = |field: &str, problem: &str| {
        invalid(
            &format!("/filters/{i}/{field}"),
            format!("filter {i} ({} {:?}) {problem}", f.property, f.operator).to_lowercase(),
            problem,
        )
    };
    let mut out = json!({"propertyName": f.property, "operator": f.operator.api()});
    match f.operator {
        Operator::HasProperty | Operator::NotHasProperty => {}
        Operator::In | Operator::NotIn => match &f.values {
            Some(v) if !v.is_empty() => out["values"] = json!(v),
            _ => return Err(problem("values", "needs values")),
        },
        Operator::Between => match (&f.value, &f.high_value) {
            (Some(lo), Some(hi)) => {
                out["value"] = json!(lo);
                out["highValue"] = json!(hi);
            }
            _ => return Err(problem("high_value", "needs value and high_value")),
        },
        _ => match &f.value {
            Some(v) => out["value"] = json!(v),
            None => return Err(problem("value", "needs a value")),
        },
    }
    Ok(out)
}

async fn search(up: &dyn Upstream, object: &str, defaults: &[&str], args: Search) -> Result<Value, ToolError> {
    let mut properties: Vec<String> = defaults.iter().map(|p| p.to_string()).collect();
    for p in args.properties.iter().flatten() {
        if !properties.contains(p) {
            properties.push(p.clone());
        }
    }
    let filters: Vec<Value> =
        args.filters.iter().flatten().enumerate().map(|(i, f)| filter_json(i, f)).collect::<Result<_, _>>()?;
    let direction = match args.sort_direction {
        SortDirection::Asc => "ASCENDING",
        SortDirection::Desc => "DESCENDING",
    };
    let mut body = json!({
        "properties": properties,
        "sorts": [{"propertyName": args.sort_by.as_deref().unwrap_or("createdate"), "direction": direction}],
        "limit": args.limit.clamp(1, 100),
    });
    if let Some(q) = args.query.as_deref().filter(|q| !q.trim().is_empty()) {
        body["query"] = json!(q);
    }
    if !filters.is_empty() {
        body["filterGroups"] = json!([{"filters": filters}]);
    }
    if let Some(after) = &args.cursor {
        body["after"] = json!(after);
    }
    let reply = up.send(HttpRequest::post(format!("{CRM}/{object}/search")).json(body)).await?.json()?;
    let results: Vec<Value> = reply["results"].as_array().into_iter().flatten().map(shape_object).collect();
    let total = reply["total"].as_u64();
    let next = reply["paging"]["next"]["after"].as_str();
    let beyond_cap = next.and_then(|a| a.parse::<u64>().ok()).is_some_and(|a| a >= SEARCH_CAP);
    let note = (beyond_cap || total.is_some_and(|t| t > SEARCH_CAP)).then(|| {
        format!(
            "HubSpot search returns at most {SEARCH_CAP} of the {} matches; add filters (e.g. a createdate range) to reach the rest",
            total.map(|t| t.to_string()).unwrap_or_else(|| "many".into())
        )
    });
    let mut out = compact(json!({
        "total": total,
        object: results,
        "next_cursor": next.filter(|_| !beyond_cap),
        "note": note,
    }));
    if args.include_raw {
        out["raw"] = reply;
    }
    Ok(out)
}

// ---------------------------------------------------------------- contacts

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetContact {
    /// The contact's record id (numeric, from search or the record URL). Give this or email.
    contact_id: Option<String>,
    /// The contact's email address, instead of contact_id.
    email: Option<String>,
    /// Extra properties to return besides the usual ones (internal names).
    properties: Option<Vec<String>>,
    /// Also list the ids of associated companies and deals.
    #[serde_inline_default(true)]
    include_associations: bool,
    /// Also return HubSpot's response as raw.
    #[serde(default)]
    include_raw: bool,
}

/// The contact's path segment and whether it is an email (`idProperty=email`).
fn contact_ref(contact_id: Option<&str>, email: Option<&str>) -> Result<(String, bool), ToolError> {
    match (contact_id.filter(|s| !s.is_empty()), email.filter(|s| !s.is_empty())) {
        (Some(id), None) => Ok((encode_segment(id), false)),
        (None, Some(email)) => Ok((encode_segment(email), true)),
        _ => Err(invalid(
            "",
            "give either contact_id or email (one of them)",
            "expected exactly one of contact_id, email",
        )),
    }
}

fn with_properties(defaults: &[&str], extra: Option<&Vec<String>>) -> String {
    let mut all: Vec<String> = defaults.iter().map(|p| p.to_string()).collect();
    for p in extra.into_iter().flatten() {
        if !all.contains(p) {
            all.push(p.clone());
        }
    }
    all.join(",")
}

pub(crate) const GET_CONTACT: ToolSpec = tool! {
    name: "hubspot_get_contact",
    effect: Read,
    results: Private,
    args: GetContact,
    run: get_contact,
    keywords: ["contact details", "person", "lead", "lookup by email", "associated companies", "associated deals"],
    description: "Get one HubSpot contact by contact id or email address, with its properties and the ids of associated companies and deals.",
};

async fn get_contact(up: Arc<dyn Upstream>, args: GetContact) -> Result<Value, ToolError> {
    let (segment, by_email) = contact_ref(args.contact_id.as_deref(), args.email.as_deref())?;
    let mut req = HttpRequest::get(format!("{CRM}/contacts/{segment}"))
        .query("properties", with_properties(CONTACT_PROPERTIES, args.properties.as_ref()));
    if args.include_associations {
        req = req.query("associations", "companies,deals");
    }
    if by_email {
        req = req.query("idProperty", "email");
    }
    let body = up.send(req).await?.json()?;
    let mut out = shape_object(&body);
    if args.include_associations {
        let mut linked = Map::new();
        for (kind, key) in [("companies", "company_ids"), ("deals", "deal_ids")] {
            let mut ids: Vec<Value> = Vec::new();
            for a in body["associations"][kind]["results"].as_array().into_iter().flatten() {
                if !ids.contains(&a["id"]) {
                    ids.push(a["id"].clone());
                }
            }
            linked.insert(key.into(), Value::Array(ids));
        }
        if let Value::Object(o) = &mut out {
            o.extend(linked);
        }
    }
    if args.include_raw {
        out["raw"] = body;
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateContact {
    /// Email address (HubSpot's unique key for contacts).
    #[schemars(length(min = 3))]
    email: String,
    /// First name.
    firstname: Option<String>,
    /// Last name.
    lastname: Option<String>,
    /// Phone number.
    phone: Option<String>,
    /// Company name as text (to link a company record, use company_ids).
    company: Option<String>,
    /// Job title.
    jobtitle: Option<String>,
    /// Lifecycle stage: subscriber, lead, marketingqualifiedlead, salesqualifiedlead, opportunity, customer, evangelist, other (or a custom stage's internal id).
    lifecyclestage: Option<String>,
    /// Any other contact properties by internal name, e.g. {"hs_lead_status": "NEW", "city": "Lyon"}.
    properties: Option<Map<String, Value>>,
    /// Company record ids to associate the contact with.
    company_ids: Option<Vec<String>>,
    /// Deal record ids to associate the contact with.
    deal_ids: Option<Vec<String>>,
}

pub(crate) const CREATE_CONTACT: ToolSpec = tool! {
    name: "hubspot_create_contact",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateContact,
    run: create_contact,
    keywords: ["add contact", "new lead", "new person", "add to crm", "create lead"],
    description: "Create a HubSpot contact (person / lead) with email, name, phone, company, job title and lifecycle stage, optionally associated with companies and deals. Fails with HubSpot's conflict error if the email already exists.",
};

async fn create_contact(up: Arc<dyn Upstream>, args: CreateContact) -> Result<Value, ToolError> {
    let mut props = match &args.properties {
        Some(p) => properties_map("/properties", p)?,
        None => Map::new(),
    };
    let named = [
        ("email", Some(&args.email)),
        ("firstname", args.firstname.as_ref()),
        ("lastname", args.lastname.as_ref()),
        ("phone", args.phone.as_ref()),
        ("company", args.company.as_ref()),
        ("jobtitle", args.jobtitle.as_ref()),
        ("lifecyclestage", args.lifecyclestage.as_ref()),
    ];
    for (k, v) in named {
        if let Some(v) = v {
            props.insert(k.into(), json!(v));
        }
    }
    let companies = args.company_ids.unwrap_or_default();
    let deals = args.deal_ids.unwrap_or_default();
    let mut body = json!({"properties": props});
    let links = associations(&[(&companies, assoc::CONTACT_TO_COMPANY), (&deals, assoc::CONTACT_TO_DEAL)]);
    if !links.is_empty() {
        body["associations"] = Value::Array(links);
    }
    let created = up.send(HttpRequest::post(format!("{CRM}/contacts")).json(body)).await?.json()?;
    Ok(shape_object(&created))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateContact {
    /// The contact's record id. Give this or email.
    contact_id: Option<String>,
    /// The contact's email address, instead of contact_id.
    email: Option<String>,
    /// Properties to set, by internal name, e.g. {"lifecyclestage": "customer", "phone": "+33 1 23 45 67 89"}; null clears one.
    properties: Map<String, Value>,
}

pub(crate) const UPDATE_CONTACT: ToolSpec = tool! {
    name: "hubspot_update_contact",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateContact,
    run: update_contact,
    keywords: ["edit contact", "change lifecycle stage", "update lead", "set property", "modify person"],
    description: "Update properties of a HubSpot contact, found by contact id or email, e.g. lifecyclestage, phone, jobtitle or any custom property.",
};

async fn update_contact(up: Arc<dyn Upstream>, args: UpdateContact) -> Result<Value, ToolError> {
    let (segment, by_email) = contact_ref(args.contact_id.as_deref(), args.email.as_deref())?;
    let props = non_empty_properties(&args.properties)?;
    let mut req =
        HttpRequest::new(Method::Patch, format!("{CRM}/contacts/{segment}")).json(json!({"properties": props}));
    if by_email {
        req = req.query("idProperty", "email");
    }
    let updated = up.send(req).await?.json()?;
    Ok(shape_object(&updated))
}

fn non_empty_properties(props: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    if props.is_empty() {
        return Err(invalid(
            "/properties",
            "properties is empty: name at least one property to change",
            "needs at least one property",
        ));
    }
    properties_map("/properties", props)
}

// ---------------------------------------------------------------- deals

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateDeal {
    /// The deal's name, e.g. "Acme — 50 seats".
    #[schemars(length(min = 1))]
    dealname: String,
    /// Deal amount (value) in the account's currency, e.g. 12500.50.
    amount: Option<f64>,
    /// Pipeline id (default: the default sales pipeline, "default").
    #[serde_inline_default("default".into())]
    pipeline: String,
    /// Stage id within the pipeline, e.g. appointmentscheduled, qualifiedtobuy, presentationscheduled, decisionmakerboughtin, contractsent, closedwon, closedlost (default pipeline ids). Default: appointmentscheduled for the default pipeline; required for other pipelines.
    dealstage: Option<String>,
    /// Expected close date, YYYY-MM-DD or an ISO 8601 date-time.
    closedate: Option<String>,
    /// Owner's HubSpot user (owner) id.
    hubspot_owner_id: Option<String>,
    /// Any other deal properties by internal name.
    properties: Option<Map<String, Value>>,
    /// Contact record ids to associate the deal with.
    contact_ids: Option<Vec<String>>,
    /// Company record ids to associate the deal with.
    company_ids: Option<Vec<String>>,
}

fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { n.to_string() }
}

/// `YYYY-MM-DD` becomes midnight UTC; anything else must already be an ISO 8601 date-time.
fn close_date(value: &str) -> Result<String, ToolError> {
    let b = value.as_bytes();
    let date_ok = b.len() >= 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b[..10].iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    match (date_ok, b.len()) {
        (true, 10) => Ok(format!("{value}T00:00:00.000Z")),
        (true, _) if b[10] == b'T' => Ok(value.to_string()),
        _ => Err(invalid(
            "/closedate",
            format!("'{value}' is not a date (YYYY-MM-DD) or ISO 8601 date-time"),
            "expected YYYY-MM-DD",
        )),
    }
}

pub(crate) const CREATE_DEAL: ToolSpec = tool! {
    name: "hubspot_create_deal",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateDeal,
    run: create_deal,
    keywords: ["new deal", "add opportunity", "create opportunity", "pipeline", "sales deal"],
    description: "Create a HubSpot deal (opportunity) with name, amount, pipeline and stage, close date and owner, optionally associated with contacts and companies.",
};

async fn create_deal(up: Arc<dyn Upstream>, args: CreateDeal) -> Result<Value, ToolError> {
    let mut props = match &args.properties {
        Some(p) => properties_map("/properties", p)?,
        None => Map::new(),
    };
    let stage = match (&args.dealstage, args.pipeline.as_str()) {
        (Some(s), _) => s.clone(),
        (None, "default") => "appointmentscheduled".into(),
        (None, other) => {
            return Err(invalid(
                "/dealstage",
                format!("pipeline '{other}' is not the default one: give its dealstage id"),
                "required for this pipeline",
            ));
        }
    };
    props.insert("dealname".into(), json!(args.dealname));
    props.insert("pipeline".into(), json!(args.pipeline));
    props.insert("dealstage".into(), json!(stage));
    if let Some(a) = args.amount {
        props.insert("amount".into(), json!(number_text(a)));
    }
    if let Some(d) = &args.closedate {
        props.insert("closedate".into(), json!(close_date(d)?));
    }
    if let Some(o) = &args.hubspot_owner_id {
        props.insert("hubspot_owner_id".into(), json!(o));
    }
    let contacts = args.contact_ids.unwrap_or_default();
    let companies = args.company_ids.unwrap_or_default();
    let mut body = json!({"properties": props});
    let links = associations(&[(&contacts, assoc::DEAL_TO_CONTACT), (&companies, assoc::DEAL_TO_COMPANY)]);
    if !links.is_empty() {
        body["associations"] = Value::Array(links);
    }
    let created = up.send(HttpRequest::post(format!("{CRM}/deals")).json(body)).await?.json()?;
    Ok(shape_object(&created))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateDeal {
    /// The deal's record id.
    #[schemars(length(min = 1))]
    deal_id: String,
    /// Properties to set, by internal name, e.g. {"dealstage": "closedwon"}, {"amount": 18000, "closedate": "2026-06-30"}; null clears one.
    properties: Map<String, Value>,
}

pub(crate) const UPDATE_DEAL: ToolSpec = tool! {
    name: "hubspot_update_deal",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateDeal,
    run: update_deal,
    keywords: ["move deal", "change stage", "pipeline stage", "close won", "closed lost", "update amount", "close date"],
    description: "Update a HubSpot deal: move it to another pipeline stage (dealstage, e.g. closedwon), change amount, close date, owner or any other deal property.",
};

async fn update_deal(up: Arc<dyn Upstream>, args: UpdateDeal) -> Result<Value, ToolError> {
    let mut props = non_empty_properties(&args.properties)?;
    if let Some(d) = props.get("closedate").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        let d = close_date(d).map_err(|_| {
            invalid(
                "/properties/closedate",
                format!("closedate '{d}' is not a date (YYYY-MM-DD) or ISO 8601 date-time"),
                "expected YYYY-MM-DD",
            )
        })?;
        props.insert("closedate".into(), json!(d));
    }
    let path = format!("{CRM}/deals/{}", encode_segment(&args.deal_id));
    let updated = up.send(HttpRequest::new(Method::Patch, path).json(json!({"properties": props}))).await?.json()?;
    Ok(shape_object(&updated))
}

// ---------------------------------------------------------------- notes

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum NoteTarget {
    Contact,
    Company,
    Deal,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateNote {
    /// The note's text (plain text; line breaks are kept).
    #[schemars(length(min = 1))]
    body: String,
    /// What the note is about: contact, company or deal.
    object_type: NoteTarget,
    /// The record id of that contact, company or deal.
    #[schemars(length(min = 1))]
    object_id: String,
    /// When the activity happened, ISO 8601 (e.g. 2026-03-02T15:30:00Z). Default: now.
    timestamp: Option<String>,
    /// HubSpot owner (user) id to attribute the note to.
    owner_id: Option<String>,
}

fn note_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace("\r\n", "\n").replace('\n', "<br>")
}

fn now_rfc3339() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default();
    let secs = ms.div_euclid(1000);
    let wall = crate::time::wall_clock_text(secs).unwrap_or_default();
    format!("{wall}.{:03}Z", ms.rem_euclid(1000))
}

pub(crate) const CREATE_NOTE: ToolSpec = tool! {
    name: "hubspot_create_note",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateNote,
    run: create_note,
    keywords: ["log note", "add note", "activity", "comment", "call notes", "meeting notes", "timeline"],
    description: "Log a note (activity on the timeline) on a HubSpot contact, company or deal, e.g. call or meeting notes; plain text, line breaks kept.",
};

async fn create_note(up: Arc<dyn Upstream>, args: CreateNote) -> Result<Value, ToolError> {
    let timestamp = match &args.timestamp {
        Some(t) => close_date(t).map_err(|_| {
            invalid(
                "/timestamp",
                format!("timestamp '{t}' is not an ISO 8601 date-time"),
                "expected e.g. 2026-03-02T15:30:00Z",
            )
        })?,
        None => now_rfc3339(),
    };
    let mut props = json!({"hs_note_body": note_html(&args.body), "hs_timestamp": timestamp});
    if let Some(owner) = &args.owner_id {
        props["hubspot_owner_id"] = json!(owner);
    }
    let type_id = match args.object_type {
        NoteTarget::Contact => assoc::NOTE_TO_CONTACT,
        NoteTarget::Company => assoc::NOTE_TO_COMPANY,
        NoteTarget::Deal => assoc::NOTE_TO_DEAL,
    };
    let target = [args.object_id.clone()];
    let body = json!({"properties": props, "associations": associations(&[(&target, type_id)])});
    let note = up.send(HttpRequest::post(format!("{CRM}/notes")).json(body)).await?.json()?;
    let kind = match args.object_type {
        NoteTarget::Contact => "contact",
        NoteTarget::Company => "company",
        NoteTarget::Deal => "deal",
    };
    Ok(compact(json!({
        "id": note["id"],
        "attached_to": {"object_type": kind, "object_id": args.object_id},
        "timestamp": note["properties"]["hs_timestamp"],
        "body": note["properties"]["hs_note_body"].as_str().map(html_to_text),
        "owner_id": note["properties"]["hubspot_owner_id"],
        "created_at": note["createdAt"],
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_values_become_hubspot_text() {
        assert_eq!(property_value("/p", &json!(12.5)).unwrap(), json!("12.5"));
        assert_eq!(property_value("/p", &json!(true)).unwrap(), json!("true"));
        assert_eq!(property_value("/p", &json!(["a", "b"])).unwrap(), json!("a;b"));
        assert_eq!(property_value("/p", &Value::Null).unwrap(), json!(""));
        assert!(property_value("/p", &json!({"x": 1})).is_err());
    }

    #[test]
    fn dates_and_notes() {
        assert_eq!(close_date("2026-06-30").unwrap(), "2026-06-30T00:00:00.000Z");
        assert_eq!(close_date("2026-06-30T12:00:00Z").unwrap(), "2026-06-30T12:00:00Z");
        assert!(close_date("30/06/2026").is_err());
        assert_eq!(note_html("a < b & c\nnext"), "a &lt; b &amp; c<br>next");
        let now = now_rfc3339();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'));
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) =
            MockUpstream::new().json(serde_json::json!({"portalId": 62515, "uiDomain": "app.hubspot.com"})).side(side);
        let s = s.unwrap();
        assert!(s.has_id("62515"));
        assert_eq!(reqs[0].path, "/account-info/v3/details");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
