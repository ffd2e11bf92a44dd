//! Data helpers: query JSON (JMESPath, or simple JSONPath) and convert CSV/TSV, JSON and Markdown.
//! In compose mode they work on an earlier step's result (`"data": "{{step:x.items}}"`) so large
//! payloads never pass through the model.

use std::sync::Arc;

use plugins::api::{ArgProblem, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use super::builtin;
use crate::app::App;
use crate::registry::BuiltinSpec;

pub const QUERY_JSON: BuiltinSpec = builtin! {
    name: "data_query_json",
    namespace: "data",
    effect: Read,
    results: Public,
    args: QueryJson,
    run: query_json,
    keywords: ["jmespath", "jsonpath", "filter", "extract", "project", "count", "sort", "pluck", "select fields", "jq", "keep only", "select items", "where status"],
    description: "Query JSON data with a JMESPath expression (or a simple JSONPath like $.items[0].name): filter, pick fields, count, sort. Pass data inline, or an earlier step's result in compose mode.",
};

pub const CONVERT_CSV: BuiltinSpec = builtin! {
    name: "data_convert_csv",
    namespace: "data",
    effect: Read,
    results: Public,
    args: ConvertCsv,
    run: convert_csv,
    keywords: ["csv", "tsv", "table", "markdown table", "spreadsheet", "parse csv", "export", "rows", "columns"],
    description: "Convert between CSV/TSV text and JSON (array of row objects), or render either as a Markdown table. Numbers and booleans in CSV become JSON numbers and booleans unless infer_types is false.",
};

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Engine {
    #[default]
    Jmespath,
    Jsonpath,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueryJson {
    /// The expression, e.g. "items[?state=='open'].{id: id, title: title}" (JMESPath) or "$.items[*].id" (JSONPath).
    #[schemars(length(min = 1))]
    expression: String,
    /// The JSON to query (any value); a JSON document given as a string is parsed first.
    data: Value,
    /// Expression language; JSONPath is also detected from a leading "$".
    engine: Option<Engine>,
}

async fn query_json(_app: Arc<App>, args: QueryJson) -> Result<Value, ToolError> {
    query(args)
}

/// Most bytes (`template::weight`) of data one query reads or returns: JSON parsed from text
/// takes many times its size in memory (and again inside the JMESPath engine).
const MAX_QUERY_BYTES: usize = 16 * 1024 * 1024;

fn too_large_data(what: &str) -> ToolError {
    ToolError::invalid(format!(
        "{what} would take more than {} MiB in memory, the most one data_query_json call handles; query a smaller part of it (a page, a filtered result) or split it",
        MAX_QUERY_BYTES / 1024 / 1024
    ))
}

/// An upper bound of what JSON text takes once parsed ([`crate::template::weight`]'s measure):
/// its bytes, plus a value's cost for every byte that can start one.
fn parsed_weight_bound(text: &str) -> usize {
    text.len() + 32 * (1 + text.bytes().filter(|b| matches!(b, b',' | b'[' | b'{' | b':')).count())
}

/// The memory a JMESPath result takes once converted (shared parts counted every time they
/// occur, as the conversion copies them); `None` past `limit`.
fn variable_weight(v: &jmespath::Variable, limit: usize) -> Option<usize> {
    use jmespath::Variable;
    let mut total = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total += 32;
        match v {
            Variable::String(s) => total += s.len(),
            Variable::Array(items) => stack.extend(items.iter().map(|r| &**r)),
            Variable::Object(map) => {
                for (k, item) in map {
                    total += 32 + k.len();
                    stack.push(item);
                }
            }
            _ => {}
        }
        if total > limit {
            return None;
        }
    }
    Some(total)
}

fn query(args: QueryJson) -> Result<Value, ToolError> {
    let QueryJson { expression, data, engine } = args;
    if crate::template::weight(&data, MAX_QUERY_BYTES).is_none() {
        return Err(too_large_data("data"));
    }
    let max = crate::validate::MAX_VALUE_DEPTH;
    if crate::validate::nests_deeper_than(&data, max) {
        crate::validate::dismantle(data);
        return Err(ToolError::InvalidArguments {
            message: format!("data nests arrays and objects more than {max} levels deep; pass a smaller part of it"),
            problems: vec![ArgProblem { path: "/data".into(), problem: format!("nested deeper than {max} levels") }],
        });
    }
    let data = match data {
        Value::String(s) if matches!(s.trim_start().chars().next(), Some('{' | '[')) => {
            if parsed_weight_bound(&s) > MAX_QUERY_BYTES {
                return Err(too_large_data("data, parsed as JSON,"));
            }
            match serde_json::from_str(&s) {
                Ok(parsed) => parsed,
                // serde_json stops at 128 levels; saying so beats querying the text as a plain string.
                Err(e) if e.to_string().contains("recursion limit") => {
                    return Err(ToolError::InvalidArguments {
                        message: "data is JSON text nested more than 128 levels deep; pass a smaller part of it".into(),
                        problems: vec![ArgProblem {
                            path: "/data".into(),
                            problem: "nested deeper than 128 levels".into(),
                        }],
                    });
                }
                Err(_) => Value::String(s),
            }
        }
        other => other,
    };
    let engine =
        engine.unwrap_or(if expression.trim_start().starts_with('$') { Engine::Jsonpath } else { Engine::Jmespath });
    let result = match engine {
        Engine::Jmespath => run_jmespath(&expression, &data)?,
        Engine::Jsonpath => run_jsonpath(&expression, &data)?,
    };
    Ok(json!({ "result": result }))
}

/// Deepest bracket nesting (`(`, `[`, `{`) a JMESPath expression may have.
const MAX_EXPRESSION_NESTING: usize = 64;
/// Most operators and brackets one JMESPath expression may hold. The `jmespath` crate parses,
/// evaluates and drops its syntax tree recursively, one stack frame per level, and a chain such as
/// `a.a.a…`, `!!!…a` or `a[*][*]…` is as deep as it is long, so the whole count is bounded.
const MAX_EXPRESSION_OPERATORS: usize = 256;
/// Stack for the thread that compiles and evaluates an expression: well above what the bounds
/// above allow, so no expression or data can overflow it (only touched pages are committed).
const JMESPATH_STACK: usize = 16 * 1024 * 1024;

fn expression_problem(problem: String) -> ToolError {
    ToolError::InvalidArguments {
        message: format!("{problem}; write a flatter expression, or query in two steps (compose mode)"),
        problems: vec![ArgProblem { path: "/expression".into(), problem }],
    }
}

/// Refuses expressions nested or long enough to exhaust the stack, before the crate sees them.
/// String literals (`'…'`, `"…"`) and JSON literals (`` `…` ``) are skipped: their brackets are
/// text (a JSON literal is parsed by serde_json, which has its own 128-level limit).
fn check_expression(expression: &str) -> Result<(), ToolError> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut operators = 0usize;
    let mut chars = expression.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                // Skip to the closing quote, honouring backslash escapes.
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == c {
                        break;
                    }
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
                operators += 1;
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            c if c.is_alphanumeric() || c == '_' || c == '-' || c.is_whitespace() || c == ':' || c == ',' => {}
            _ => operators += 1,
        }
        if deepest > MAX_EXPRESSION_NESTING {
            return Err(expression_problem(format!(
                "the expression nests brackets more than {MAX_EXPRESSION_NESTING} levels deep"
            )));
        }
        if operators > MAX_EXPRESSION_OPERATORS {
            return Err(expression_problem(format!(
                "the expression has more than {MAX_EXPRESSION_OPERATORS} operators and brackets"
            )));
        }
    }
    Ok(())
}

/// How many times an expression can repeat its input at most: the product of the widths of its
/// multi-selects (`[a, b]`, `{x: a, y: b}`), wherever they are (a projection applies one per
/// element, a pipe or nesting multiplies). Inside the engine repeated parts are shared, but
/// flattening them, `join` and `to_string` copy them, so memory grows by up to this factor.
fn fan_out(ast: &jmespath::ast::Ast) -> usize {
    use jmespath::ast::Ast;
    let mut product = 1usize;
    let mut stack = vec![ast];
    while let Some(a) = stack.pop() {
        match a {
            Ast::MultiList { elements, .. } => {
                product = product.saturating_mul(elements.len().max(1));
                stack.extend(elements.iter());
            }
            Ast::MultiHash { elements, .. } => {
                product = product.saturating_mul(elements.len().max(1));
                stack.extend(elements.iter().map(|kv| &kv.value));
            }
            Ast::Comparison { lhs, rhs, .. }
            | Ast::Projection { lhs, rhs, .. }
            | Ast::And { lhs, rhs, .. }
            | Ast::Or { lhs, rhs, .. }
            | Ast::Subexpr { lhs, rhs, .. } => {
                stack.push(lhs);
                stack.push(rhs);
            }
            Ast::Condition { predicate, then, .. } => {
                stack.push(predicate);
                stack.push(then);
            }
            Ast::Expref { ast, .. } => stack.push(ast),
            Ast::Flatten { node, .. } | Ast::Not { node, .. } | Ast::ObjectValues { node, .. } => stack.push(node),
            Ast::Function { args, .. } => stack.extend(args.iter()),
            Ast::Identity { .. } | Ast::Field { .. } | Ast::Index { .. } | Ast::Literal { .. } | Ast::Slice { .. } => {}
        }
    }
    product
}

fn run_jmespath(expression: &str, data: &Value) -> Result<Value, ToolError> {
    check_expression(expression)?;
    // What the data and the expression's literals weigh, times the most the expression can repeat
    // them, stays within a few times the query budget.
    let input = crate::template::weight(data, usize::MAX).unwrap_or(usize::MAX).saturating_add(expression.len());
    let max = crate::validate::MAX_VALUE_DEPTH;
    // The crate recurses per level of the expression and of the data (converting, comparing,
    // dropping); both are bounded above, and it runs on a thread whose stack holds far more.
    let run = || -> Result<Value, ToolError> {
        let compiled = jmespath::compile(expression).map_err(|e| ToolError::InvalidArguments {
            message: format!("not a valid JMESPath expression: {e}"),
            problems: vec![ArgProblem { path: "/expression".into(), problem: e.to_string() }],
        })?;
        let repeats = fan_out(compiled.as_ast());
        if input.saturating_mul(repeats) > 4 * MAX_QUERY_BYTES {
            return Err(expression_problem(format!(
                "the expression can repeat its data {repeats} times (its multi-selects multiplied), more than this much data allows within {} MiB",
                4 * MAX_QUERY_BYTES / 1024 / 1024
            )));
        }
        let found = compiled
            .search(data)
            .map_err(|e| ToolError::invalid(format!("the expression could not be evaluated on this data: {e}")))?;
        // Parts of the data the expression repeats are shared inside the engine and copied by the
        // conversion: weighed first.
        if variable_weight(&found, MAX_QUERY_BYTES).is_none() {
            return Err(too_large_data("the result"));
        }
        let value = serde_json::to_value(&*found).map_err(|e| ToolError::Internal(e.to_string()))?;
        if crate::validate::nests_deeper_than(&value, max) {
            crate::validate::dismantle(value);
            return Err(ToolError::invalid(format!(
                "the result nests arrays and objects more than {max} levels deep; select a smaller part of the data"
            )));
        }
        Ok(value)
    };
    let mut value = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("jmespath".into())
            .stack_size(JMESPATH_STACK)
            .spawn_scoped(scope, run)
            .map_err(|e| ToolError::Internal(format!("cannot start the query thread: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(ToolError::Internal("the JMESPath query panicked".into())))
    })?;
    whole_numbers(&mut value);
    Ok(value)
}

/// JMESPath computes in floats; `sum([1, 2])` should read 3, not 3.0. Iterative: any depth is safe.
fn whole_numbers(v: &mut Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) => {
                if let Some(f) = n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15) {
                    *v = Value::from(f as i64);
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            Value::Object(o) => stack.extend(o.values_mut()),
            _ => {}
        }
    }
}

/// A JSONPath subset: `$`, `.key`, `['key']`, `[n]`, `[-n]`, `[*]`, `.*` and `..key`.
fn run_jsonpath(expression: &str, data: &Value) -> Result<Value, ToolError> {
    let bad = |why: &str| ToolError::InvalidArguments {
        message: format!("not a supported JSONPath expression: {why}"),
        problems: vec![ArgProblem {
            path: "/expression".into(),
            problem: format!(
                "{why}; supported: $, .key, ['key'], [n], [*], .*, ..key (use engine jmespath for filters)"
            ),
        }],
    };
    let expr = expression.trim();
    let mut rest = expr.strip_prefix('$').ok_or_else(|| bad("it must start with $"))?;
    let mut current: Vec<Value> = vec![data.clone()];
    let mut wildcard = false;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("..") {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = &r[..end];
            if key.is_empty() {
                return Err(bad("'..' needs a key after it"));
            }
            let mut found = Vec::new();
            for v in &current {
                descend(v, key, &mut found);
            }
            current = found;
            wildcard = true;
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix(".*") {
            current = current.iter().flat_map(children).collect();
            wildcard = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = &r[..end];
            if key.is_empty() {
                return Err(bad("empty key after '.'"));
            }
            current = current.iter().filter_map(|v| v.get(key).cloned()).collect();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(|| bad("unclosed '['"))?;
            let inner = r[..end].trim();
            rest = &r[end + 1..];
            if inner == "*" {
                current = current.iter().flat_map(children).collect();
                wildcard = true;
            } else if let Some(key) = inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
                current = current.iter().filter_map(|v| v.get(key).cloned()).collect();
            } else if let Ok(i) = inner.parse::<i64>() {
                current = current
                    .iter()
                    .filter_map(|v| {
                        let a = v.as_array()?;
                        let idx = if i < 0 { a.len() as i64 + i } else { i };
                        a.get(usize::try_from(idx).ok()?).cloned()
                    })
                    .collect();
            } else {
                return Err(bad(&format!("'[{inner}]' is not supported")));
            }
        } else {
            return Err(bad(&format!("unexpected '{}'", rest.chars().next().unwrap_or(' '))));
        }
    }
    Ok(if wildcard { Value::Array(current) } else { current.into_iter().next().unwrap_or(Value::Null) })
}

fn children(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o.values().cloned().collect(),
        _ => Vec::new(),
    }
}

fn descend(v: &Value, key: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            if let Some(found) = o.get(key) {
                out.push(found.clone());
            }
            o.values().for_each(|c| descend(c, key, out));
        }
        Value::Array(a) => a.iter().for_each(|c| descend(c, key, out)),
        _ => {}
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Target {
    Json,
    Csv,
    Markdown,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConvertCsv {
    /// CSV/TSV text, or JSON (an array of objects or of arrays, or JSON text of one).
    input: Value,
    /// What to produce: json (rows), csv (text) or markdown (a table).
    to: Target,
    /// Field separator for CSV in and out: "," (default), "\t" for TSV, ";" or "|".
    delimiter: Option<String>,
    /// Whether the CSV's first line is a header row (in) / whether to write one (out).
    #[serde_inline_default(true)]
    header: bool,
    /// Only these columns, in this order.
    columns: Option<Vec<String>>,
    /// Turn numeric and true/false CSV cells into JSON numbers and booleans.
    #[serde_inline_default(true)]
    infer_types: bool,
}

/// Largest input accepted, in bytes of text.
const MAX_INPUT: usize = 5 * 1024 * 1024;

async fn convert_csv(_app: Arc<App>, args: ConvertCsv) -> Result<Value, ToolError> {
    let delimiter = match args.delimiter.as_deref() {
        None | Some(",") => b',',
        Some("\t") | Some("\\t") | Some("tab") => b'\t',
        Some(d) if d.len() == 1 && d.is_ascii() => d.as_bytes()[0],
        Some(d) => {
            return Err(ToolError::invalid(format!("delimiter must be one ASCII character, got '{d}'")));
        }
    };
    // Input: JSON rows, JSON text, or CSV text.
    let rows: Table = match &args.input {
        Value::Array(items) => Table::from_json(items)?,
        Value::String(text) => {
            if text.len() > MAX_INPUT {
                return Err(ToolError::invalid(format!("input is larger than {} MiB", MAX_INPUT / 1024 / 1024)));
            }
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(items)) if text.trim_start().starts_with('[') => Table::from_json(&items)?,
                _ => Table::from_csv(text, delimiter, args.header)?,
            }
        }
        other => {
            return Err(ToolError::InvalidArguments {
                message: "input must be CSV text or a JSON array".into(),
                problems: vec![ArgProblem {
                    path: "/input".into(),
                    problem: format!("got {}", crate::validate::describe(other)),
                }],
            });
        }
    };
    let rows = match &args.columns {
        Some(cols) => rows.select(cols)?,
        None => rows,
    };
    let row_count = rows.rows.len();
    Ok(match args.to {
        Target::Json => {
            json!({ "rows": rows.to_json(args.infer_types), "columns": rows.columns, "row_count": row_count })
        }
        Target::Csv => {
            json!({ "csv": rows.to_csv(delimiter, args.header)?, "row_count": row_count })
        }
        Target::Markdown => json!({ "markdown": rows.to_markdown(), "row_count": row_count }),
    })
}

/// Rows of cells with named columns; cells stay JSON values so types survive JSON -> JSON.
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

impl Table {
    fn from_json(items: &[Value]) -> Result<Table, ToolError> {
        let mut columns: Vec<String> = Vec::new();
        for item in items {
            match item {
                Value::Object(o) => {
                    for k in o.keys() {
                        if !columns.contains(k) {
                            columns.push(k.clone());
                        }
                    }
                }
                Value::Array(a) => {
                    while columns.len() < a.len() {
                        columns.push(format!("column_{}", columns.len() + 1));
                    }
                }
                other => {
                    return Err(ToolError::invalid(format!(
                        "JSON input must be an array of objects or arrays; found {}",
                        crate::validate::describe(other)
                    )));
                }
            }
        }
        let rows = items
            .iter()
            .map(|item| match item {
                Value::Object(o) => columns.iter().map(|c| o.get(c).cloned().unwrap_or(Value::Null)).collect(),
                Value::Array(a) => (0..columns.len()).map(|i| a.get(i).cloned().unwrap_or(Value::Null)).collect(),
                _ => Vec::new(),
            })
            .collect();
        Ok(Table { columns, rows })
    }

    fn from_csv(text: &str, delimiter: u8, header: bool) -> Result<Table, ToolError> {
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(header)
            .flexible(true)
            .from_reader(text.as_bytes());
        let mut columns: Vec<String> = if header {
            reader
                .headers()
                .map_err(|e| ToolError::invalid(format!("could not read the CSV header: {e}")))?
                .iter()
                .map(|h| h.trim().to_string())
                .collect()
        } else {
            Vec::new()
        };
        let mut rows = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let record =
                record.map_err(|e| ToolError::invalid(format!("CSV line {}: {e}", i + 1 + usize::from(header))))?;
            while columns.len() < record.len() {
                columns.push(format!("column_{}", columns.len() + 1));
            }
            rows.push(record.iter().map(|c| Value::String(c.to_string())).collect::<Vec<_>>());
        }
        Ok(Table { columns, rows })
    }

    fn select(self, wanted: &[String]) -> Result<Table, ToolError> {
        let mut idx = Vec::new();
        for w in wanted {
            match self.columns.iter().position(|c| c == w) {
                Some(i) => idx.push(i),
                None => {
                    return Err(ToolError::InvalidArguments {
                        message: format!("no column '{w}'; columns are: {}", self.columns.join(", ")),
                        problems: vec![ArgProblem {
                            path: "/columns".into(),
                            problem: format!("unknown column '{w}'"),
                        }],
                    });
                }
            }
        }
        Ok(Table {
            columns: wanted.to_vec(),
            rows: self
                .rows
                .into_iter()
                .map(|r| idx.iter().map(|&i| r.get(i).cloned().unwrap_or(Value::Null)).collect())
                .collect(),
        })
    }

    fn to_json(&self, infer: bool) -> Vec<Value> {
        self.rows
            .iter()
            .map(|r| {
                let mut o = Map::new();
                for (c, v) in self.columns.iter().zip(r) {
                    o.insert(c.clone(), if infer { infer_type(v) } else { v.clone() });
                }
                Value::Object(o)
            })
            .collect()
    }

    fn to_csv(&self, delimiter: u8, header: bool) -> Result<String, ToolError> {
        let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(Vec::new());
        let err = |e: csv::Error| ToolError::Internal(e.to_string());
        if header {
            w.write_record(&self.columns).map_err(err)?;
        }
        for r in &self.rows {
            w.write_record(r.iter().map(cell_text)).map_err(err)?;
        }
        let bytes = w.into_inner().map_err(|e| ToolError::Internal(e.to_string()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn to_markdown(&self) -> String {
        let esc = |s: String| s.replace('|', "\\|").replace('\n', " ");
        let mut out = format!("| {} |\n", self.columns.iter().map(|c| esc(c.clone())).collect::<Vec<_>>().join(" | "));
        out.push_str(&format!("|{}\n", " --- |".repeat(self.columns.len().max(1))));
        for r in &self.rows {
            out.push_str(&format!("| {} |\n", r.iter().map(|v| esc(cell_text(v))).collect::<Vec<_>>().join(" | ")));
        }
        out
    }
}

fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn infer_type(v: &Value) -> Value {
    let Value::String(s) = v else {
        return v.clone();
    };
    let t = s.trim();
    if t.is_empty() {
        return Value::Null;
    }
    match t {
        "true" | "TRUE" | "True" => return Value::Bool(true),
        "false" | "FALSE" | "False" => return Value::Bool(false),
        _ => {}
    }
    // Leading zeros (zip codes, ids) stay text.
    let leading_zero = t.len() > 1 && t.starts_with('0') && !t.starts_with("0.");
    if !leading_zero {
        if let Ok(i) = t.parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(f) = t.parse::<f64>()
            && f.is_finite()
            && t.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        {
            return Value::from(f);
        }
    }
    v.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpath_subset() {
        let d = json!({"items": [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": []}], "meta": {"id": 9}});
        assert_eq!(run_jsonpath("$.items[*].id", &d).unwrap(), json!([1, 2]));
        assert_eq!(run_jsonpath("$.items[-1].id", &d).unwrap(), json!(2));
        assert_eq!(run_jsonpath("$['meta'].id", &d).unwrap(), json!(9));
        assert_eq!(run_jsonpath("$..id", &d).unwrap(), json!([1, 2, 9]));
        assert!(run_jsonpath("$.items[?(@.id>1)]", &d).is_err());
        assert!(run_jsonpath("items", &d).is_err());
    }

    #[test]
    fn jmespath_filters_and_reports_syntax_errors() {
        let d = json!({"items": [{"id": 1, "state": "open"}, {"id": 2, "state": "closed"}]});
        assert_eq!(run_jmespath("items[?state=='open'].id", &d).unwrap(), json!([1]));
        assert_eq!(run_jmespath("length(items)", &d).unwrap(), json!(2));
        assert!(matches!(run_jmespath("items[?", &d), Err(ToolError::InvalidArguments { .. })));
    }

    /// Attack (issue 26): a repeated multi-select is shared inside the engine and copied by the
    /// conversion (a 100 KB string three times tenfold is 100 MB); wide JSON text parses to many
    /// times its size. Both are refused by weight, before they are built.
    #[test]
    fn amplifying_queries_and_wide_data_are_refused_by_weight() {
        let ten = "[@,@,@,@,@,@,@,@,@,@]";
        let q = |expression: String, data: Value| query(QueryJson { expression, data, engine: None });
        let e = q(format!("{ten} | {ten} | {ten}"), json!("x".repeat(100_000))).unwrap_err();
        assert!(e.to_string().contains("1000 times"), "{e}");
        // Flattened, the copies are made inside the engine (tenfold per stage): refused before it runs.
        let e = q(vec![format!("{ten} | []"); 12].join(" | "), json!(["x"])).unwrap_err();
        assert!(e.to_string().contains("multi-selects"), "{e}");
        let e = q("to_string([@,@,@,@]) | [@,@,@,@] | join('', @)".into(), json!("y".repeat(5_000_000))).unwrap_err();
        assert!(e.to_string().contains("16 times"), "{e}");
        // Everyday projections are untouched.
        let items = json!({"items": [{"id": 1, "title": "a", "user": {"login": "x"}}]});
        assert!(q("items[*].{id: id, title: title, who: user.login}".into(), items).is_ok());
        assert!(q(ten.to_string(), json!("x".repeat(1000))).is_ok(), "ten copies of 1 KB are fine");
        let wide = format!("[{}]", vec!["0"; 1_000_000].join(","));
        let e = q("length(@)".into(), json!(wide)).unwrap_err();
        assert!(e.to_string().contains("parsed as JSON"), "{e}");
        let e = q("length(@)".into(), Value::Array(vec![json!(0); 1_000_000])).unwrap_err();
        assert!(e.to_string().contains("16 MiB"), "{e}");
        assert_eq!(q("length(@)".into(), Value::Array(vec![json!(0); 1000])).unwrap(), json!({"result": 1000}));
    }

    /// Attack: an 8 KB expression of 4,000 nested parentheses overflowed the stack inside the
    /// `jmespath` crate and aborted the process. Every deep or long shape is refused up front.
    #[test]
    fn deep_and_long_expressions_are_refused_before_parsing() {
        let d = json!({"a": {"a": 1}});
        let deep = [
            format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("{}a{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("{}{}", "{a: ".repeat(100_000), "}".repeat(100_000)),
            format!("{}a", "!".repeat(100_000)),
            format!("a{}", ".a".repeat(100_000)),
            format!("a{}", "[*]".repeat(100_000)),
            format!("a{}", " || a".repeat(100_000)),
            format!("{}a", "&".repeat(100_000)),
        ];
        for e in &deep {
            let Err(ToolError::InvalidArguments { message, problems }) = run_jmespath(e, &d) else {
                panic!("accepted {}…", &e[..20])
            };
            assert!(
                message.contains("nests brackets more than 64") || message.contains("more than 256 operators"),
                "{message}"
            );
            assert_eq!(problems[0].path, "/expression");
        }
        // Brackets inside string and JSON literals are text, and ordinary expressions still run.
        assert_eq!(run_jmespath(&format!("'{}'", "(".repeat(1000)), &d).unwrap(), json!("(".repeat(1000)));
        assert_eq!(run_jmespath("a.a", &d).unwrap(), json!(1));
        // Right at the bounds it still works.
        let nested = format!("{}a{}", "(".repeat(64), ")".repeat(64));
        assert_eq!(run_jmespath(&nested, &d).unwrap(), json!({"a": 1}));
        let chain = "a.a".to_string() + &" || a".repeat(120);
        assert_eq!(run_jmespath(&chain, &d).unwrap(), json!(1));
    }

    /// Deep data: JSON text past serde_json's limit, and a value combined deeper than ours, are
    /// refused with a clear error; data at the bound is queried (on the default 2 MiB test stack).
    #[test]
    fn deep_data_is_refused_or_queried_safely() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let args = QueryJson { expression: "@".into(), data: Value::String(text), engine: None };
        let Err(ToolError::InvalidArguments { message, .. }) = query(args) else { panic!() };
        assert!(message.contains("128 levels"), "{message}");
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let args = QueryJson { expression: "@".into(), data: deep, engine: None };
        let Err(ToolError::InvalidArguments { message, .. }) = query(args) else { panic!() };
        assert!(message.contains("256 levels"), "{message}");
        let mut ok = json!({"n": 2.0});
        for _ in 0..250 {
            ok = Value::Array(vec![ok]);
        }
        let expr = format!("@{}", "[0]".repeat(250));
        let args = QueryJson { expression: expr, data: ok.clone(), engine: None };
        assert_eq!(query(args).unwrap(), json!({"result": {"n": 2}}));
        let args = QueryJson { expression: "$..n".into(), data: ok, engine: None };
        assert_eq!(query(args).unwrap(), json!({"result": [2.0]}));
    }

    #[test]
    fn csv_types_and_markdown() {
        let t = Table::from_csv("name,zip,n,ok\nAda,02139,3,true\n\"B, C\",10001,4.5,false\n", b',', true).unwrap();
        let rows = t.to_json(true);
        assert_eq!(rows[0], json!({"name": "Ada", "zip": "02139", "n": 3, "ok": true}));
        assert_eq!(rows[1]["name"], "B, C");
        assert_eq!(rows[1]["n"], 4.5);
        let md = Table::from_json(&rows).unwrap().to_markdown();
        assert_eq!(md.lines().nth(1).unwrap(), "| --- | --- | --- | --- |");
        assert!(md.contains("| B, C | 10001 | 4.5 | false |"));
    }

    #[test]
    fn json_to_csv_quotes_and_selects() {
        let t = Table::from_json(&[json!({"a": "x,y", "b": 1}), json!({"b": 2, "c": true})]).unwrap();
        assert_eq!(t.columns, vec!["a", "b", "c"]);
        let t = t.select(&["b".into(), "a".into()]).unwrap();
        assert_eq!(t.to_csv(b',', true).unwrap(), "b,a\n1,\"x,y\"\n2,\n");
        assert!(Table::from_json(&[json!(1)]).is_err());
    }
}
