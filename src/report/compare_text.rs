//! A [`Comparison`] as Markdown (the CLI's `diff`, and the page's copy button) and its tables as CSV.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

use super::compare::{Comparison, Delta, NamedDelta, Presence, RunSide};
use super::markdown::code_cell;
use super::wording::short_name;

/// Rows of a name table shown in Markdown (the JSON and CSV have them all).
const MARKDOWN_ROWS: usize = 20;

crate::stable_enum! {
    /// The tables of a comparison that can be exported as CSV (by their stable text: `waterfall`, ...).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CompareTable {
        Waterfall,
        Categories,
        Kernels,
        Ops,
        Ranks,
        Findings,
    }
}

fn num(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn pct(d: &Delta) -> String {
    match d.change_pct {
        Some(p) => format!("{p:+.1}%"),
        None if d.candidate == 0.0 => "—".into(),
        None => "new".into(),
    }
}

fn side_line(label: &str, s: &RunSide) -> String {
    let files = if s.files.len() > 3 {
        format!("{} … ({} files)", s.files[..2].join(", "), s.files.len())
    } else {
        s.files.join(", ")
    };
    let steps = s
        .step_ms
        .map(|m| format!("{} steps, {m:.2} ms per step", s.steps))
        .unwrap_or_else(|| "no profiler steps".into());
    let device = s.device.as_deref().unwrap_or("device not named");
    format!(
        "- **{label}:** {files}: {} rank(s), {steps}, GPU busy {:.1}% of {:.1} ms, {device}\n",
        s.ranks, s.busy_pct, s.window_ms
    )
}

fn delta_table(out: &mut String, first: &str, rows: &[Delta], unit: &str) {
    let _ = writeln!(
        out,
        "| {first} | baseline ({unit}) | candidate | change | change % |\n|---|---:|---:|---:|---:|"
    );
    for d in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            d.key,
            num(d.baseline),
            num(d.candidate),
            num(d.change),
            pct(d)
        );
    }
    out.push('\n');
}

fn presence(p: Presence) -> &'static str {
    match p {
        Presence::Both => "",
        Presence::Added => " (new)",
        Presence::Removed => " (gone)",
    }
}

fn named_table(out: &mut String, first: &str, rows: &[(String, NamedDelta)], unit: &str) {
    let _ = writeln!(
        out,
        "| {first} | baseline ({unit}) | candidate | change | change % | calls per unit |\n|---|---:|---:|---:|---:|---:|"
    );
    for (name, d) in rows.iter().take(MARKDOWN_ROWS) {
        let _ = writeln!(
            out,
            "| {}{} | {} | {} | {} | {} | {} → {} |",
            code_cell(&short_name(name)),
            presence(d.presence),
            num(d.time.baseline),
            num(d.time.candidate),
            num(d.time.change),
            pct(&d.time),
            num(d.calls.baseline),
            num(d.calls.candidate)
        );
    }
    if rows.len() > MARKDOWN_ROWS {
        let _ = writeln!(
            out,
            "\n{} more in the JSON or CSV.",
            rows.len() - MARKDOWN_ROWS
        );
    }
    out.push('\n');
}

/// The comparison as Markdown: the headline, both runs, warnings, then every table.
pub fn to_markdown(c: &Comparison) -> String {
    let unit = c.basis.unit();
    let mut s = String::new();
    let _ = writeln!(s, "# Comparison\n\n**{}**\n", c.headline);
    s += &side_line("Baseline", &c.baseline);
    s += &side_line("Candidate", &c.candidate);
    let _ = writeln!(s, "- **Basis:** figures in {unit}.\n");
    for w in &c.warnings {
        let _ = writeln!(s, "> Warning: {w}\n");
    }
    s += "## Where the time changed\n\n";
    delta_table(&mut s, "part of the GPU window", &c.waterfall, unit);
    s += "## Kernel time by type\n\n";
    delta_table(&mut s, "type", &c.categories, unit);
    s += "## Kernels\n\n";
    named_table(&mut s, "kernel", &c.kernels, unit);
    let k = &c.compiled_kernels;
    if k.added + k.removed > 0 {
        let _ = writeln!(
            s,
            "Compiled (Triton) kernels: {} new ({} {unit}), {} gone ({} {unit}).\n",
            k.added,
            num(k.added_time),
            k.removed,
            num(k.removed_time)
        );
    }
    s += "## CPU operators (inclusive time)\n\n";
    named_table(&mut s, "operator", &c.ops, unit);
    s += "## Ranks\n\n";
    let rank_unit = match c.basis {
        super::compare::Basis::PerStep => "ms per step",
        super::compare::Basis::PerMsOfWindow => "busy µs per ms",
    };
    delta_table(&mut s, "rank", &c.ranks, rank_unit);
    if let Some((b, k)) = &c.steps {
        let _ = writeln!(
            s,
            "## Steps\n\n| run | steps | mean ms | std ms | min ms | max ms |\n|---|---:|---:|---:|---:|---:|\n| baseline | {} | {:.2} | {:.2} | {:.2} | {:.2} |\n| candidate | {} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            b.count, b.mean_ms, b.std_ms, b.min_ms, b.max_ms, k.count, k.mean_ms, k.std_ms, k.min_ms, k.max_ms
        );
    }
    s += "## Findings\n\n| finding | change | recoverable, baseline | candidate |\n|---|---|---:|---:|\n";
    for f in &c.findings {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            f.id.as_str(),
            f.change.as_str(),
            num(f.impact.baseline),
            num(f.impact.candidate)
        );
    }
    s
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| x.to_string())
}

/// One table of the comparison as CSV, every row, values in the basis's unit.
pub fn to_csv(c: &Comparison, table: CompareTable) -> String {
    let mut s = String::new();
    let deltas = |s: &mut String, rows: &[Delta]| {
        s.push_str("key,baseline,candidate,change,change_pct\n");
        for d in rows {
            let _ = writeln!(
                s,
                "{},{},{},{},{}",
                csv_field(&d.key),
                d.baseline,
                d.candidate,
                d.change,
                opt(d.change_pct)
            );
        }
    };
    let named = |s: &mut String, rows: &[(String, NamedDelta)]| {
        s.push_str(
            "name,presence,baseline,candidate,change,change_pct,calls_baseline,calls_candidate\n",
        );
        for (name, d) in rows {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{}",
                csv_field(name),
                d.presence.as_str(),
                d.time.baseline,
                d.time.candidate,
                d.time.change,
                opt(d.time.change_pct),
                d.calls.baseline,
                d.calls.candidate
            );
        }
    };
    match table {
        CompareTable::Waterfall => deltas(&mut s, &c.waterfall),
        CompareTable::Categories => deltas(&mut s, &c.categories),
        CompareTable::Ranks => deltas(&mut s, &c.ranks),
        CompareTable::Kernels => named(&mut s, &c.kernels),
        CompareTable::Ops => named(&mut s, &c.ops),
        CompareTable::Findings => {
            let rows: Vec<Delta> = c.findings.iter().map(|f| f.impact.clone()).collect();
            deltas(&mut s, &rows)
        }
    }
    s
}
