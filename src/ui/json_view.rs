//! Renders any analysis JSON generically: arrays of objects as tables, objects as sub-sections.

use serde_json::{Map, Value};

use crate::report::format::{escape, number, title};

/// Rows shown per table before the rest is summarised.
const MAX_ROWS: usize = 200;
/// Items of a list of plain values shown before the rest is summarised.
const MAX_ITEMS: usize = 50;

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "—".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), number),
        Value::String(s) => escape(s),
        other => {
            let text = other.to_string();
            let short: String = text.chars().take(120).collect();
            let more = if short.len() < text.len() { "…" } else { "" };
            format!("<code>{}{more}</code>", escape(&short))
        }
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

fn cell(v: &Value) -> String {
    match v {
        Value::Number(n) => format!(
            "<td class=\"num\" data-value=\"{}\">{}</td>",
            escape(&n.to_string()),
            scalar(v)
        ),
        Value::Array(items) if items.iter().all(is_scalar) && items.len() <= 8 => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            format!("<td>{}</td>", parts.join(", "))
        }
        _ => format!("<td>{}</td>", scalar(v)),
    }
}

fn table(rows: &[Value]) -> String {
    let mut columns: Vec<String> = Vec::new();
    for row in rows.iter().take(MAX_ROWS) {
        if let Value::Object(map) = row {
            for k in map.keys() {
                if !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
        }
    }
    let mut out = String::from("<div class=\"table-wrap\"><table><thead><tr>");
    for c in &columns {
        out.push_str(&format!("<th>{}</th>", escape(c)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows.iter().take(MAX_ROWS) {
        out.push_str("<tr>");
        for c in &columns {
            out.push_str(&cell(row.get(c).unwrap_or(&Value::Null)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    if rows.len() > MAX_ROWS {
        out.push_str(&format!(
            "<p class=\"muted\">{} more rows not shown.</p>",
            number((rows.len() - MAX_ROWS) as f64)
        ));
    }
    out
}

fn object(map: &Map<String, Value>, depth: usize) -> String {
    let mut out = String::new();
    let scalars: Vec<(&String, &Value)> = map.iter().filter(|(_, v)| is_scalar(v)).collect();
    if !scalars.is_empty() {
        out.push_str("<dl class=\"facts\">");
        for (k, v) in scalars {
            let raw = match v {
                Value::Number(n) => format!(" data-value=\"{}\"", escape(&n.to_string())),
                _ => String::new(),
            };
            out.push_str(&format!(
                "<div><dt>{}</dt><dd{raw}>{}</dd></div>",
                escape(&title(k)),
                scalar(v)
            ));
        }
        out.push_str("</dl>");
    }
    for (k, v) in map.iter().filter(|(_, v)| !is_scalar(v)) {
        let level = (depth + 3).min(6);
        out.push_str(&format!(
            "<section class=\"sub\" data-key=\"{}\"><h{level}>{}</h{level}>{}</section>",
            escape(k),
            escape(&title(k)),
            value(v, depth + 1)
        ));
    }
    out
}

/// Any JSON value as HTML; `depth` picks heading levels.
pub fn value(v: &Value, depth: usize) -> String {
    match v {
        Value::Object(map) if map.is_empty() => "<p class=\"muted\">(empty)</p>".to_string(),
        Value::Object(map) => object(map, depth),
        Value::Array(items) if items.is_empty() => "<p class=\"muted\">(none)</p>".to_string(),
        Value::Array(items) if items.iter().all(|i| i.is_object()) => table(items),
        Value::Array(items) if items.iter().all(is_scalar) => {
            let shown: Vec<String> = items.iter().take(MAX_ITEMS).map(scalar).collect();
            let more = if items.len() > MAX_ITEMS {
                format!(" … ({} in all)", items.len())
            } else {
                String::new()
            };
            format!("<p class=\"list\">{}{more}</p>", shown.join(", "))
        }
        Value::Array(items) => {
            let mut out = String::from("<ol class=\"items\">");
            for item in items.iter().take(MAX_ROWS) {
                out.push_str(&format!("<li>{}</li>", value(item, depth + 1)));
            }
            out.push_str("</ol>");
            out
        }
        other => format!("<p>{}</p>", scalar(other)),
    }
}
