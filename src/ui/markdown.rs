//! A small Markdown subset to HTML: headings, paragraphs, bold, code, bullet/numbered lists, pipe tables.

use crate::report::format::escape;

/// Inline markup of one line: `**bold**` and `` `code` ``; everything else is escaped text.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let bold = rest.find("**");
        let code = rest.find('`');
        let next = match (bold, code) {
            (Some(b), Some(c)) => Some(b.min(c)),
            (b, c) => b.or(c),
        };
        let Some(at) = next else {
            out.push_str(&escape(rest));
            break;
        };
        out.push_str(&escape(&rest[..at]));
        let (marker, tag) = if rest[at..].starts_with("**") {
            ("**", "strong")
        } else {
            ("`", "code")
        };
        let after = &rest[at + marker.len()..];
        match after.find(marker) {
            Some(end) => {
                let inner = &after[..end];
                let inner = if tag == "code" {
                    escape(inner)
                } else {
                    inline(inner)
                };
                out.push_str(&format!("<{tag}>{inner}</{tag}>"));
                rest = &after[end + marker.len()..];
            }
            None => {
                out.push_str(&escape(marker));
                rest = after;
            }
        }
    }
    out
}

fn table_cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(str::trim).collect()
}

fn is_table_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// Numbers (with units, %, separators) are right-aligned in tables.
fn looks_numeric(cell: &str) -> bool {
    let t = cell
        .trim()
        .trim_end_matches(['%', ' '])
        .trim_end_matches("µs")
        .trim_end_matches("ms")
        .trim_end_matches('s')
        .trim_end_matches('x')
        .trim();
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+' | ' '))
        && t.chars().any(|c| c.is_ascii_digit())
}

fn list_item(line: &str) -> Option<(bool, &str)> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return Some((false, rest));
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        if let Some(rest) = t[digits..].strip_prefix(". ") {
            return Some((true, rest));
        }
    }
    None
}

/// Renders the subset to HTML (all text escaped).
pub fn to_html(markdown: &str) -> String {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed.is_empty() {
            i += 1;
            continue;
        }
        // Heading.
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            let level = (hashes + 1).min(6);
            out.push_str(&format!(
                "<h{level}>{}</h{level}>",
                inline(trimmed[hashes..].trim())
            ));
            i += 1;
            continue;
        }
        // Pipe table: a header line, then a separator line.
        if trimmed.starts_with('|') && i + 1 < lines.len() && is_table_separator(lines[i + 1]) {
            let header = table_cells(trimmed);
            out.push_str("<div class=\"table-wrap\"><table><thead><tr>");
            for h in &header {
                out.push_str(&format!("<th>{}</th>", inline(h)));
            }
            out.push_str("</tr></thead><tbody>");
            i += 2;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                out.push_str("<tr>");
                for c in table_cells(lines[i]) {
                    let class = if looks_numeric(c) {
                        " class=\"num\""
                    } else {
                        ""
                    };
                    out.push_str(&format!("<td{class}>{}</td>", inline(c)));
                }
                out.push_str("</tr>");
                i += 1;
            }
            out.push_str("</tbody></table></div>");
            continue;
        }
        // List (bullets or numbers), consecutive items; more indented items nest.
        if list_item(line).is_some() {
            out.push_str(&list_html(&lines, &mut i));
            continue;
        }
        // Paragraph: lines up to a blank line or another block.
        let mut para = vec![trimmed];
        i += 1;
        while i < lines.len() {
            let t = lines[i].trim();
            if t.is_empty() || t.starts_with('#') || t.starts_with('|') || list_item(t).is_some() {
                break;
            }
            para.push(t);
            i += 1;
        }
        out.push_str(&format!("<p>{}</p>", inline(&para.join(" "))));
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// One list starting at `lines[*i]` (all items of its kind at its indentation), with the more
/// indented items under an item rendered as a nested list inside it.
fn list_html(lines: &[&str], i: &mut usize) -> String {
    let Some((ordered, _)) = list_item(lines[*i]) else {
        return String::new();
    };
    let indent = indent_of(lines[*i]);
    let tag = if ordered { "ol" } else { "ul" };
    let mut out = format!("<{tag}>");
    while *i < lines.len() {
        let line = lines[*i];
        match list_item(line) {
            Some((o, text)) if o == ordered && indent_of(line) == indent => {
                let mut item = inline(text.trim());
                *i += 1;
                loop {
                    // Skip blank lines only when the list goes on after them.
                    let mut j = *i;
                    while j < lines.len() && lines[j].trim().is_empty() {
                        j += 1;
                    }
                    if j >= lines.len() || indent_of(lines[j]) <= indent {
                        break;
                    }
                    *i = j;
                    if list_item(lines[j]).is_some() {
                        item.push_str(&list_html(lines, i));
                    } else {
                        item.push(' ');
                        item.push_str(&inline(lines[j].trim()));
                        *i += 1;
                    }
                }
                out.push_str(&format!("<li>{item}</li>"));
                // A blank line between items of the same list keeps the list going.
                let mut j = *i;
                while j < lines.len() && lines[j].trim().is_empty() {
                    j += 1;
                }
                if j < lines.len()
                    && indent_of(lines[j]) == indent
                    && matches!(list_item(lines[j]), Some((o, _)) if o == ordered)
                {
                    *i = j;
                }
            }
            _ => break,
        }
    }
    out.push_str(&format!("</{tag}>"));
    out
}
