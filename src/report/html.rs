//! The deeper analyses as HTML: one collapsible block per analysis, every figure tagged with
//! `data-metric` / `data-value` (and `data-rank`, `data-stream`, ... for its context).
//!
//! It reads the analyses as JSON (`AllAnalyses` serialised), so results saved in the browser by an
//! older page still render: a missing part is left out, never a panic. Pure: the page puts the text
//! in place; the CLI can write the same blocks to a file.
//!
//! # Figures (`data-metric` names)
//! Every figure element carries `data-value` (the number as in the analysis JSON: µs, %, bytes) and
//! the attributes that say which row it is. Names are stable.
//!
//! | analysis | `data-metric` | context |
//! |---|---|---|
//! | kernel breakdown | `kernel-type-us`, `kernel-type-pct` | `data-rank` (`all` or a rank), `data-kernel-type` |
//! | | `breakdown-kernel-count`, `breakdown-kernel-sum-us`, `breakdown-kernel-pct-of-type`, `breakdown-kernel-mean-us`, `breakdown-kernel-median-us`, `breakdown-kernel-min-us`, `breakdown-kernel-max-us`, `breakdown-kernel-std-us` | `data-rank`, `data-kernel`, `data-kernel-type` |
//! | temporal | `temporal-window-us`, `temporal-compute-us`, `temporal-compute-pct`, `temporal-non-compute-us`, `temporal-non-compute-pct`, `temporal-idle-us`, `temporal-idle-pct` | `data-rank` |
//! | idle time | `idle-us`; `idle-category-us`, `idle-category-ratio`, `idle-gap-count` | `data-rank`, `data-stream`; `data-category` |
//! | overlap | `overlap-comm-us`, `overlap-us`, `overlap-pct` | `data-rank` |
//! | stragglers | `straggler-flagged-steps`; `rank-busy-us`, `rank-busy-vs-median-pct` | `data-rank` |
//! | launches | `launch-count`, `launch-cpu-mean-us`, `launch-cpu-p50-us`, `launch-cpu-max-us`, `launch-gpu-mean-us`, `launch-gpu-p50-us`, `launch-gpu-max-us`, `launch-delay-mean-us`, `launch-delay-p50-us`, `launch-delay-max-us`, `launch-short-kernels`, `launch-runtime-outliers`, `launch-delay-outliers`; `launch-cpu-total-us`, `launch-gpu-total-us`, `launch-delay-total-us`, `launch-runtime-cutoff-us`, `launch-delay-cutoff-us` | `data-rank` |
//! | queue length | `queue-length-mean`, `queue-length-p50`, `queue-length-max`, `queue-blocked-us`, `queue-blocked-ratio` | `data-rank`, `data-stream` |
//! | kernel sequences | `sequence-count`, `sequence-gpu-us`, `sequence-cpu-us` | `data-rank`, `data-pattern` |
//! | critical path | `critical-path-total-us`, `critical-path-segments`; `critical-path-share-us`, `critical-path-share-pct`; `critical-path-event-us`, `critical-path-event-segments`; `critical-path-segment-start-us`, `critical-path-segment-us` | `data-rank`; `data-bound-by`; `data-event`; `data-list` (`longest`, `path`), `data-segment`, `data-row` |
//! | memory copies | `memcpy-count`, `memcpy-bytes`, `memcpy-time-us`, `memcpy-gbps` | `data-rank`, `data-op`, `data-direction`, `data-memory` |
//! | profiler steps | `step-start-us`, `step-duration-us`; `step-mean-us` | `data-rank`, `data-step`; `data-rank` |

use serde_json::{Map, Value};

use super::format::{self, escape};

/// Rows of a long table shown before "N more".
const MAX_ROWS: usize = 100;

/// Which rank's detailed tables to show, and which blocks start open.
#[derive(Clone, Debug, Default)]
pub struct HtmlOptions {
    /// `None`: the first rank.
    pub rank: Option<i64>,
    /// Keys of the analyses whose block is open (`temporal_breakdown`, ...); the others are closed.
    pub open: Vec<String>,
}

/// Every analysis block, in the order of the product brief.
pub fn analyses_html(all: &Value, opts: HtmlOptions) -> String {
    let ranks: Vec<i64> = arr(all, "ranks").iter().filter_map(Value::as_i64).collect();
    let rank = opts
        .rank
        .filter(|r| ranks.contains(r))
        .or_else(|| ranks.first().copied())
        .unwrap_or(0);
    let ctx = Ctx {
        rank,
        several: ranks.len() > 1,
        all,
    };
    let blocks: [(&str, &str, fn(&Value, &Ctx) -> Option<Block>); 11] = [
        ("kernel_breakdown", "GPU kernel breakdown", kernel_breakdown),
        ("temporal_breakdown", "Temporal breakdown", temporal),
        ("idle_time_breakdown", "Idle time breakdown", idle),
        (
            "comm_comp_overlap",
            "Communication / computation overlap",
            overlap,
        ),
        ("stragglers", "Stragglers across ranks", stragglers),
        ("kernel_launch_stats", "Kernel launch statistics", launches),
        ("queue_length", "Launch queue length", queue),
        (
            "frequent_kernel_sequences",
            "Frequent kernel sequences",
            sequences,
        ),
        ("critical_path", "Critical path", critical_path),
        ("memory_bandwidth", "Memory copies and bandwidth", memory),
        ("profiler_steps", "Profiler steps", steps),
    ];
    let mut out = String::new();
    for (key, title, render) in blocks {
        let Some(v) = all.get(key) else { continue };
        let Some(block) = render(v, &ctx) else {
            continue;
        };
        out.push_str(&format!(
            "<details class=\"analysis\" id=\"analysis-{key}\" data-analysis=\"{key}\"{}><summary>{}{}</summary>{}</details>",
            if opts.open.iter().any(|k| k == key) {
                " open"
            } else {
                ""
            },
            escape(title),
            if block.gist.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"gist\">{}</span>", block.gist)
            },
            block.body
        ));
    }
    let notes: Vec<&str> = arr(all, "notes").iter().filter_map(Value::as_str).collect();
    let mode = all.get("mode").and_then(Value::as_str).unwrap_or("exact");
    out.push_str(&format!(
        "<p class=\"muted analysis-mode\" data-mode=\"{}\">Mode: {}.{}</p>",
        escape(mode),
        if mode == "hta-compat" {
            "HTA 0.5.0-compatible (whole-µs timestamps, last ProfilerStep dropped, HTA's name patterns)"
        } else {
            "exact (integer-ns timestamps, every event of the trace window)"
        },
        notes
            .iter()
            .map(|n| format!(" {}", escape(n)))
            .collect::<String>()
    ));
    out
}

struct Ctx<'a> {
    /// The rank whose detailed tables are shown.
    rank: i64,
    several: bool,
    /// The whole document, for blocks that set one analysis beside another.
    all: &'a Value,
}

struct Block {
    /// A few words shown beside the title, so the block says something while closed.
    gist: String,
    body: String,
}

// ---------------------------------------------------------------------------------------------
// JSON access

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn f64_of(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn rank_of(v: &Value) -> i64 {
    v.get("rank").and_then(Value::as_i64).unwrap_or(0)
}

/// The number at `key` as its JSON text (exactly what the analysis wrote), or empty.
fn raw(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// HTML pieces

/// Context attributes: `[("rank", "0"), ("stream", "7")]` → ` data-rank="0" data-stream="7"`.
fn attrs(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!(" data-{k}=\"{}\"", escape(v)))
        .collect()
}

#[derive(Clone, Copy)]
enum Unit {
    Micros,
    Pct,
    /// A 0-1 share shown as %.
    Ratio,
    /// A count, or any plain number.
    Count,
    Bytes,
    Gbps,
}

fn shown(x: f64, unit: Unit) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    match unit {
        Unit::Micros => format::micros(x),
        Unit::Pct => format::pct(x),
        Unit::Ratio => format::pct(x * 100.0),
        Unit::Count => format::number(x),
        Unit::Bytes => format::bytes(x.max(0.0) as u64),
        Unit::Gbps => format!("{} GB/s", format::number(x)),
    }
}

/// A table cell holding one figure of `row[key]`.
fn cell(row: &Value, key: &str, metric: &str, unit: Unit, ctx: &str) -> String {
    match row.get(key).and_then(Value::as_f64) {
        Some(x) => format!(
            "<td class=\"num\" data-metric=\"{metric}\" data-value=\"{}\"{ctx}>{}</td>",
            raw(row, key),
            shown(x, unit)
        ),
        None => "<td class=\"num muted\">—</td>".into(),
    }
}

/// A table cell holding a number that is not in the JSON as such (computed for display).
fn cell_value(x: f64, metric: &str, unit: Unit, ctx: &str) -> String {
    format!(
        "<td class=\"num\" data-metric=\"{metric}\" data-value=\"{x}\"{ctx}>{}</td>",
        shown(x, unit)
    )
}

/// A small figure card (label above, figure below).
fn fact(label: &str, row: &Value, key: &str, metric: &str, unit: Unit, ctx: &str) -> String {
    match row.get(key).and_then(Value::as_f64) {
        Some(x) => format!(
            "<div><dt>{}</dt><dd data-metric=\"{metric}\" data-value=\"{}\"{ctx}>{}</dd></div>",
            escape(label),
            raw(row, key),
            shown(x, unit)
        ),
        None => String::new(),
    }
}

fn name_cell(name: &str) -> String {
    format!(
        "<td class=\"name\" title=\"{0}\">{0}</td>",
        escape(if name.is_empty() { "(unnamed)" } else { name })
    )
}

/// A table: the `text` columns first (left-aligned), then the `num` columns (right-aligned).
fn table(text: &[&str], num: &[&str], rows: Vec<String>, total: usize) -> String {
    let mut out = String::from("<div class=\"table-wrap\"><table><thead><tr>");
    for h in text {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    for h in num {
        out.push_str(&format!("<th class=\"num\">{}</th>", escape(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows.iter().take(MAX_ROWS) {
        out.push_str(&format!("<tr>{r}</tr>"));
    }
    out.push_str("</tbody></table></div>");
    let shown_rows = rows.len().min(MAX_ROWS);
    if total > shown_rows {
        out.push_str(&format!(
            "<p class=\"muted\">{} of {} rows shown.</p>",
            format::int(shown_rows as u64),
            format::int(total as u64)
        ));
    }
    out
}

/// A bar split into parts of a whole: (label, share 0-100, css class).
fn stacked_bar(parts: &[(&str, f64, &str)]) -> String {
    let mut out = String::from("<div class=\"stack\">");
    for (label, pct, class) in parts {
        if *pct > 0.0 {
            out.push_str(&format!(
                "<span class=\"{class}\" style=\"width: {:.2}%\" title=\"{}: {}\"></span>",
                pct.clamp(0.0, 100.0),
                escape(label),
                format::pct(*pct)
            ));
        }
    }
    out.push_str("</div><div class=\"legend\">");
    for (label, pct, class) in parts {
        out.push_str(&format!(
            "<span><i class=\"{class}\"></i>{} {}</span>",
            escape(label),
            format::pct(*pct)
        ));
    }
    out.push_str("</div>");
    out
}

fn notes_html(v: &Value) -> String {
    let notes: Vec<&str> = arr(v, "notes").iter().filter_map(Value::as_str).collect();
    let note = v
        .get("note")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty());
    notes
        .into_iter()
        .chain(note)
        .map(|n| format!("<p class=\"muted note\">{}</p>", escape(n)))
        .collect()
}

fn rank_label(ctx: &Ctx) -> String {
    if ctx.several {
        format!(
            "<p class=\"muted\">Rank {} (pick another rank in the summary).</p>",
            ctx.rank
        )
    } else {
        String::new()
    }
}

fn empty(text: &str) -> String {
    format!("<p class=\"muted\">{}</p>", escape(text))
}

/// The rows of a per-rank list that belong to `rank`.
fn of_rank(rows: &[Value], rank: i64) -> Vec<&Value> {
    rows.iter().filter(|r| rank_of(r) == rank).collect()
}

// ---------------------------------------------------------------------------------------------
// The blocks

fn kernel_breakdown(v: &Value, ctx: &Ctx) -> Option<Block> {
    v.as_object()?;
    let rank_entry = arr(v, "ranks").iter().find(|r| rank_of(r) == ctx.rank);
    let (types, kernels, rank_attr) = if ctx.several {
        (
            arr(v, "by_type_all_ranks"),
            arr(v, "kernels_all_ranks"),
            "all".to_string(),
        )
    } else {
        let r = rank_entry.unwrap_or(&Value::Null);
        (arr(r, "by_type"), arr(r, "kernels"), ctx.rank.to_string())
    };
    let type_pct = |t: &str| {
        types
            .iter()
            .find(|x| str_of(x, "kernel_type") == t)
            .and_then(|x| f64_of(x, "pct"))
            .unwrap_or(0.0)
    };
    let gist = if types.is_empty() {
        "no GPU kernels".to_string()
    } else {
        format!(
            "computation {} · communication {} · memory {}",
            format::pct(type_pct("COMPUTATION")),
            format::pct(type_pct("COMMUNICATION")),
            format::pct(type_pct("MEMORY"))
        )
    };
    let mut body = String::new();
    if types.is_empty() {
        body.push_str(&empty("No GPU kernels in this trace."));
    } else {
        body.push_str(&format!(
            "<h3>Time by kernel type{}</h3><p class=\"muted\">Wall-clock time of each type (union of intervals); overlapping types are split out.</p>",
            if ctx.several { ", all ranks" } else { "" }
        ));
        let bar: Vec<(&str, f64, &str)> = types
            .iter()
            .map(|t| {
                let name = str_of(t, "kernel_type");
                (name, f64_of(t, "pct").unwrap_or(0.0), type_class(name))
            })
            .collect();
        body.push_str(&stacked_bar(&bar));
        let rows = types
            .iter()
            .map(|t| {
                let a = attrs(&[
                    ("rank", rank_attr.clone()),
                    ("kernel-type", str_of(t, "kernel_type").to_string()),
                ]);
                format!(
                    "<td>{}</td>{}{}",
                    escape(str_of(t, "kernel_type")),
                    cell(t, "time_us", "kernel-type-us", Unit::Micros, &a),
                    cell(t, "pct", "kernel-type-pct", Unit::Pct, &a)
                )
            })
            .collect();
        body.push_str(&table(&["Type"], &["Time", "Share"], rows, types.len()));
        body.push_str(&format!(
            "<h3>Kernels{}</h3>",
            if ctx.several { ", all ranks" } else { "" }
        ));
        body.push_str(&kernel_table(kernels, &rank_attr));
    }
    if ctx.several {
        if let Some(r) = rank_entry {
            body.push_str(&format!("<h3>Kernels of rank {}</h3>", ctx.rank));
            body.push_str(&kernel_table(arr(r, "kernels"), &ctx.rank.to_string()));
        }
    }
    body.push_str(&notes_html(v));
    Some(Block { gist, body })
}

fn type_class(kernel_type: &str) -> &'static str {
    match kernel_type {
        "COMPUTATION" => "c-compute",
        "COMMUNICATION" => "c-comm",
        "MEMORY" => "c-memory",
        t if t.contains("overlapping") => "c-overlap",
        _ => "c-other",
    }
}

/// Kernel rows shown before the rest is folded away.
const KERNELS_SHOWN: usize = 15;

fn kernel_table(kernels: &[Value], rank: &str) -> String {
    if kernels.is_empty() {
        return empty("No kernels.");
    }
    let (first, rest) = kernels.split_at(kernels.len().min(KERNELS_SHOWN));
    let mut out = kernel_rows_table(first, rank, first.len());
    if !rest.is_empty() {
        out.push_str(&format!(
            "<details class=\"inner\"><summary>{} more kernels</summary>{}</details>",
            format::int(rest.len() as u64),
            kernel_rows_table(rest, rank, rest.len())
        ));
    }
    out
}

fn kernel_rows_table(kernels: &[Value], rank: &str, total: usize) -> String {
    let rows = kernels
        .iter()
        .take(MAX_ROWS)
        .map(|k| {
            let name = str_of(k, "name");
            let a = attrs(&[
                ("rank", rank.to_string()),
                ("kernel", name.to_string()),
                ("kernel-type", str_of(k, "kernel_type").to_string()),
            ]);
            format!(
                "{}<td>{}</td>{}{}{}{}{}{}{}{}",
                name_cell(name),
                escape(&str_of(k, "kernel_type").to_lowercase()),
                cell(k, "count", "breakdown-kernel-count", Unit::Count, &a),
                cell(k, "sum_us", "breakdown-kernel-sum-us", Unit::Micros, &a),
                cell(
                    k,
                    "pct_of_type",
                    "breakdown-kernel-pct-of-type",
                    Unit::Pct,
                    &a
                ),
                cell(k, "mean_us", "breakdown-kernel-mean-us", Unit::Micros, &a),
                cell(
                    k,
                    "median_us",
                    "breakdown-kernel-median-us",
                    Unit::Micros,
                    &a
                ),
                cell(k, "min_us", "breakdown-kernel-min-us", Unit::Micros, &a),
                cell(k, "max_us", "breakdown-kernel-max-us", Unit::Micros, &a),
                cell(k, "std_us", "breakdown-kernel-std-us", Unit::Micros, &a),
            )
        })
        .collect();
    table(
        &["Kernel", "Type"],
        &[
            "Calls",
            "Total",
            "% of type",
            "Mean",
            "Median",
            "Min",
            "Max",
            "Std",
        ],
        rows,
        total,
    )
}

fn temporal(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = rows
        .iter()
        .find(|r| rank_of(r) == ctx.rank)
        .or(rows.first());
    let gist = mine.map_or(String::new(), |r| {
        format!(
            "idle {} · compute {} · non-compute {}",
            format::pct(f64_of(r, "idle_pct").unwrap_or(0.0)),
            format::pct(f64_of(r, "compute_pct").unwrap_or(0.0)),
            format::pct(f64_of(r, "non_compute_pct").unwrap_or(0.0))
        )
    });
    let mut body = String::from(
        "<p class=\"muted\">Between the first and the last GPU activity: time some kernel computes, time only \
         communication / copies / syncs run, and time the GPU does nothing.</p>",
    );
    if let Some(r) = mine {
        body.push_str(&stacked_bar(&[
            (
                "compute",
                f64_of(r, "compute_pct").unwrap_or(0.0),
                "c-compute",
            ),
            (
                "non-compute",
                f64_of(r, "non_compute_pct").unwrap_or(0.0),
                "c-comm",
            ),
            ("idle", f64_of(r, "idle_pct").unwrap_or(0.0), "c-idle"),
        ]));
    }
    let table_rows = rows
        .iter()
        .map(|r| {
            let a = attrs(&[("rank", rank_of(r).to_string())]);
            format!(
                "<td class=\"num\">{}</td>{}{}{}{}{}{}{}",
                rank_of(r),
                cell(r, "window_us", "temporal-window-us", Unit::Micros, &a),
                cell(r, "compute_us", "temporal-compute-us", Unit::Micros, &a),
                cell(r, "compute_pct", "temporal-compute-pct", Unit::Pct, &a),
                cell(
                    r,
                    "non_compute_us",
                    "temporal-non-compute-us",
                    Unit::Micros,
                    &a
                ),
                cell(
                    r,
                    "non_compute_pct",
                    "temporal-non-compute-pct",
                    Unit::Pct,
                    &a
                ),
                cell(r, "idle_us", "temporal-idle-us", Unit::Micros, &a),
                cell(r, "idle_pct", "temporal-idle-pct", Unit::Pct, &a),
            )
        })
        .collect();
    body.push_str(&table(
        &[],
        &[
            "Rank",
            "GPU window",
            "Compute",
            "%",
            "Non-compute",
            "%",
            "Idle",
            "%",
        ],
        table_rows,
        rows.len(),
    ));
    if rows.is_empty() {
        body = empty("No GPU activity: the trace has no kernels, copies or sets.");
    }
    Some(Block { gist, body })
}

fn idle(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = of_rank(rows, ctx.rank);
    let total: f64 = mine.iter().filter_map(|r| f64_of(r, "idle_us")).sum();
    let by_cat = |c: &str| -> f64 {
        mine.iter()
            .flat_map(|r| arr(r, "categories"))
            .filter(|x| str_of(x, "category") == c)
            .filter_map(|x| f64_of(x, "idle_us"))
            .sum()
    };
    let share = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
    let (host, kernel, other) = (by_cat("host_wait"), by_cat("kernel_wait"), by_cat("other"));
    let gist = if mine.is_empty() {
        String::new()
    } else {
        format!(
            "host wait {} · kernel wait {} · other {} of idle time",
            format::pct(share(host)),
            format::pct(share(kernel)),
            format::pct(share(other))
        )
    };
    let mut body = rank_label(ctx);
    body.push_str(
        "<p class=\"muted\">Each gap between two kernels on a stream: <b>host wait</b> when the next kernel \
         was launched only after the gap began (the CPU was late), <b>kernel wait</b> for short gaps between \
         kernels already queued, <b>other</b> for the rest (syncs, dependencies on other streams).</p>",
    );
    if mine.is_empty() {
        body.push_str(&empty("No GPU streams on this rank."));
    } else {
        body.push_str(&stacked_bar(&[
            ("host wait", share(host), "c-host"),
            ("kernel wait", share(kernel), "c-kernel-wait"),
            ("other", share(other), "c-other"),
        ]));
        let cats = ["host_wait", "kernel_wait", "other"];
        let table_rows = mine
            .iter()
            .map(|r| {
                let stream = r.get("stream").and_then(Value::as_i64).unwrap_or(-1);
                let base = vec![
                    ("rank", rank_of(r).to_string()),
                    ("stream", stream.to_string()),
                ];
                let mut cells = format!(
                    "<td class=\"num\">{stream}</td>{}",
                    cell(r, "idle_us", "idle-us", Unit::Micros, &attrs(&base))
                );
                for c in cats {
                    let found = arr(r, "categories")
                        .iter()
                        .find(|x| str_of(x, "category") == c);
                    let mut a = base.clone();
                    a.push(("category", c.to_string()));
                    let a = attrs(&a);
                    match found {
                        Some(x) => {
                            cells.push_str(&cell(
                                x,
                                "idle_us",
                                "idle-category-us",
                                Unit::Micros,
                                &a,
                            ));
                            cells.push_str(&cell(
                                x,
                                "ratio",
                                "idle-category-ratio",
                                Unit::Ratio,
                                &a,
                            ));
                            let gaps = x.get("gaps_us").unwrap_or(&Value::Null);
                            cells.push_str(&cell(gaps, "count", "idle-gap-count", Unit::Count, &a));
                        }
                        None => cells.push_str("<td class=\"num muted\">—</td><td></td><td></td>"),
                    }
                }
                cells
            })
            .collect();
        body.push_str(&table(
            &[],
            &[
                "Stream",
                "Idle",
                "Host wait",
                "%",
                "gaps",
                "Kernel wait",
                "%",
                "gaps",
                "Other",
                "%",
                "gaps",
            ],
            table_rows,
            mine.len(),
        ));
    }
    Some(Block { gist, body })
}

fn overlap(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = rows.iter().find(|r| rank_of(r) == ctx.rank);
    let comm = mine.and_then(|r| f64_of(r, "comm_us")).unwrap_or(0.0);
    let gist = match mine.and_then(|r| f64_of(r, "overlap_pct")) {
        _ if comm <= 0.0 => "no communication kernels".into(),
        Some(p) => format!("{} of communication overlaps computation", format::pct(p)),
        None if rows.is_empty() => "no communication kernels".into(),
        None => String::new(),
    };
    let mut body = String::from(
        "<p class=\"muted\">Share of the time communication kernels run during which computation kernels run \
         too. Low overlap means the GPU waits for collectives: start them earlier (bucketing, async \
         collectives, prefetch).</p>",
    );
    if rows.is_empty() {
        body.push_str(&empty(
            "No communication kernels (NCCL, RCCL, HCCL) in this trace.",
        ));
    } else {
        let table_rows = rows
            .iter()
            .map(|r| {
                let a = attrs(&[("rank", rank_of(r).to_string())]);
                format!(
                    "<td class=\"num\">{}</td>{}{}{}",
                    rank_of(r),
                    cell(r, "comm_us", "overlap-comm-us", Unit::Micros, &a),
                    cell(r, "overlap_us", "overlap-us", Unit::Micros, &a),
                    cell(r, "overlap_pct", "overlap-pct", Unit::Pct, &a),
                )
            })
            .collect();
        body.push_str(&table(
            &[],
            &["Rank", "Communication", "Overlapped", "Overlap"],
            table_rows,
            rows.len(),
        ));
    }
    Some(Block { gist, body })
}

fn stragglers(v: &Value, ctx: &Ctx) -> Option<Block> {
    v.as_object()?;
    let ranks: Vec<String> = arr(v, "ranks")
        .iter()
        .filter_map(Value::as_i64)
        .map(|r| r.to_string())
        .collect();
    let flags = arr(v, "flags");
    let gist = if !ctx.several {
        "needs two or more ranks".into()
    } else if flags.is_empty() {
        "no result (see the notes)".into()
    } else if ranks.is_empty() {
        "none found".into()
    } else {
        format!("rank {} most often last", ranks.join(", "))
    };
    let mut body = String::from(
        "<p class=\"muted\">For the collective whose timing varies most across ranks, the ranks that start it \
         last in each step: every other rank waits for them.</p>",
    );
    if let Some(k) = v.get("kernel").and_then(Value::as_str) {
        body.push_str(&format!(
            "<p>Collective: <code>{}</code>{}; steps {}.</p>",
            escape(k),
            v.get("stream")
                .and_then(Value::as_i64)
                .map_or(String::new(), |s| format!(" on stream {s}")),
            escape(
                &arr(v, "steps_used")
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if !flags.is_empty() {
        let table_rows = flags
            .iter()
            .map(|f| {
                let a = attrs(&[("rank", rank_of(f).to_string())]);
                format!(
                    "<td class=\"num\">{}</td>{}",
                    rank_of(f),
                    cell(
                        f,
                        "flagged_steps",
                        "straggler-flagged-steps",
                        Unit::Count,
                        &a
                    )
                )
            })
            .collect();
        body.push_str(&table(
            &[],
            &["Rank", "Steps among the last"],
            table_rows,
            flags.len(),
        ));
    }
    body.push_str(&busy_by_rank(ctx));
    body.push_str(&notes_html(v));
    Some(Block { gist, body })
}

/// Each rank's GPU busy time (compute + non-compute of the temporal breakdown) beside the median
/// rank's: in synchronous training the busiest rank sets the pace.
fn busy_by_rank(ctx: &Ctx) -> String {
    let rows = arr(ctx.all, "temporal_breakdown");
    if rows.len() < 2 {
        return String::new();
    }
    let busy = |r: &Value| {
        f64_of(r, "compute_us").unwrap_or(0.0) + f64_of(r, "non_compute_us").unwrap_or(0.0)
    };
    let mut sorted: Vec<f64> = rows.iter().map(busy).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[(sorted.len() - 1) / 2];
    let table_rows = rows
        .iter()
        .map(|r| {
            let a = attrs(&[("rank", rank_of(r).to_string())]);
            let vs = if median > 0.0 {
                100.0 * (busy(r) - median) / median
            } else {
                0.0
            };
            format!(
                "<td class=\"num\">{}</td>{}{}",
                rank_of(r),
                cell_value(busy(r), "rank-busy-us", Unit::Micros, &a),
                cell_value(vs, "rank-busy-vs-median-pct", Unit::Pct, &a),
            )
        })
        .collect();
    format!(
        "<h3>GPU busy time by rank</h3><p class=\"muted\">Compute and non-compute time of each rank's GPU, against the median rank ({}).</p>{}",
        format::micros(median),
        table(&[], &["Rank", "GPU busy", "vs median"], table_rows, rows.len())
    )
}

fn describe_cells(row: &Value, key: &str, prefix: &str, a: &str) -> String {
    let d = row.get(key).unwrap_or(&Value::Null);
    format!(
        "{}{}{}",
        cell(d, "mean", &format!("{prefix}-mean-us"), Unit::Micros, a),
        cell(d, "p50", &format!("{prefix}-p50-us"), Unit::Micros, a),
        cell(d, "max", &format!("{prefix}-max-us"), Unit::Micros, a),
    )
}

fn launches(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = rows.iter().find(|r| rank_of(r) == ctx.rank);
    let gist = mine.map_or(String::new(), |r| {
        format!(
            "{} launches · median launch delay {} · {} short kernels",
            format::number(f64_of(r, "launches").unwrap_or(0.0)),
            format::micros(
                r.get("delay_us")
                    .and_then(|d| f64_of(d, "p50"))
                    .unwrap_or(0.0)
            ),
            format::number(f64_of(r, "short_kernels").unwrap_or(0.0))
        )
    });
    let mut body = String::from(
        "<p class=\"muted\">Per kernel launch: the CPU time of the launch call, the kernel's GPU time, and the \
         delay from the launch call to the kernel's start. <b>Short kernels</b> take less GPU time than their \
         launch took CPU time (launch-bound: fuse them, or use CUDA graphs / torch.compile).</p>",
    );
    if rows.is_empty() {
        body.push_str(&empty("No kernel launches matched to kernels."));
        return Some(Block { gist, body });
    }
    let table_rows = rows
        .iter()
        .map(|r| {
            let a = attrs(&[("rank", rank_of(r).to_string())]);
            format!(
                "<td class=\"num\">{}</td>{}{}{}{}{}{}{}",
                rank_of(r),
                cell(r, "launches", "launch-count", Unit::Count, &a),
                describe_cells(r, "cpu_us", "launch-cpu", &a),
                describe_cells(r, "gpu_us", "launch-gpu", &a),
                describe_cells(r, "delay_us", "launch-delay", &a),
                cell(r, "short_kernels", "launch-short-kernels", Unit::Count, &a),
                cell(
                    r,
                    "runtime_outliers",
                    "launch-runtime-outliers",
                    Unit::Count,
                    &a
                ),
                cell(
                    r,
                    "delay_outliers",
                    "launch-delay-outliers",
                    Unit::Count,
                    &a
                ),
            )
        })
        .collect();
    body.push_str(&table(
        &[],
        &[
            "Rank",
            "Launches",
            "CPU mean",
            "CPU median",
            "CPU max",
            "GPU mean",
            "GPU median",
            "GPU max",
            "Delay mean",
            "Delay median",
            "Delay max",
            "Short kernels",
            "Slow launches",
            "Late starts",
        ],
        table_rows,
        rows.len(),
    ));
    if let Some(r) = mine {
        let a = attrs(&[("rank", rank_of(r).to_string())]);
        body.push_str("<dl class=\"facts\">");
        body.push_str(&fact(
            "Launch calls, CPU total",
            r,
            "cpu_total_us",
            "launch-cpu-total-us",
            Unit::Micros,
            &a,
        ));
        body.push_str(&fact(
            "Kernels, GPU total",
            r,
            "gpu_total_us",
            "launch-gpu-total-us",
            Unit::Micros,
            &a,
        ));
        body.push_str(&fact(
            "Launch delay, total",
            r,
            "delay_total_us",
            "launch-delay-total-us",
            Unit::Micros,
            &a,
        ));
        body.push_str(&fact(
            "Slow launch: CPU time over",
            r,
            "runtime_cutoff_us",
            "launch-runtime-cutoff-us",
            Unit::Micros,
            &a,
        ));
        body.push_str(&fact(
            "Late start: delay over",
            r,
            "launch_delay_cutoff_us",
            "launch-delay-cutoff-us",
            Unit::Micros,
            &a,
        ));
        body.push_str("</dl>");
    }
    Some(Block { gist, body })
}

fn queue(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = of_rank(rows, ctx.rank);
    let max_len = mine
        .iter()
        .filter_map(|r| r.get("queue_length").and_then(|q| f64_of(q, "max")))
        .fold(0.0, f64::max);
    let blocked: f64 = mine.iter().filter_map(|r| f64_of(r, "blocked_us")).sum();
    let gist = if mine.is_empty() {
        String::new()
    } else {
        format!(
            "longest queue {} · blocked on a full queue {}",
            format::number(max_len),
            format::micros(blocked)
        )
    };
    let mut body = rank_label(ctx);
    body.push_str(
        "<p class=\"muted\">Kernels launched but not finished, per stream. A queue that stays near zero means \
         the GPU waits for the CPU; a full queue (1024) blocks the CPU on the next launch.</p>",
    );
    if mine.is_empty() {
        body.push_str(&empty("No GPU streams on this rank."));
        return Some(Block { gist, body });
    }
    let table_rows = mine
        .iter()
        .map(|r| {
            let stream = r.get("stream").and_then(Value::as_i64).unwrap_or(-1);
            let a = attrs(&[
                ("rank", rank_of(r).to_string()),
                ("stream", stream.to_string()),
            ]);
            let q = r.get("queue_length").unwrap_or(&Value::Null);
            format!(
                "<td class=\"num\">{stream}</td>{}{}{}{}{}",
                cell(q, "mean", "queue-length-mean", Unit::Count, &a),
                cell(q, "p50", "queue-length-p50", Unit::Count, &a),
                cell(q, "max", "queue-length-max", Unit::Count, &a),
                cell(r, "blocked_us", "queue-blocked-us", Unit::Micros, &a),
                cell(r, "blocked_ratio", "queue-blocked-ratio", Unit::Ratio, &a),
            )
        })
        .collect();
    body.push_str(&table(
        &[],
        &[
            "Stream",
            "Mean length",
            "Median",
            "Max",
            "Blocked",
            "Blocked share",
        ],
        table_rows,
        mine.len(),
    ));
    Some(Block { gist, body })
}

/// The per-rank result of a block whose entries are `{rank, result}`.
fn result_of<'a>(v: &'a Value, ctx: &Ctx) -> Option<&'a Value> {
    let rows = v.as_array()?;
    rows.iter()
        .find(|r| rank_of(r) == ctx.rank)
        .or(rows.first())
        .and_then(|r| r.get("result"))
}

/// Names of a kernel sequence listed before "… N more".
const PATTERN_SHOWN: usize = 8;

fn sequences(v: &Value, ctx: &Ctx) -> Option<Block> {
    v.as_array()?;
    let mut body = rank_label(ctx);
    body.push_str(
        "<p class=\"muted\">Kernel sequences that repeat under the same operator: candidates for fusion \
         (torch.compile, a fused kernel) to save launches and memory round trips.</p>",
    );
    let Some(r) = result_of(v, ctx) else {
        body.push_str(&empty("No result."));
        return Some(Block {
            gist: String::new(),
            body,
        });
    };
    let rows = arr(r, "rows");
    let gist = format!(
        "{} repeated patterns",
        format::number(f64_of(r, "patterns_total").unwrap_or(rows.len() as f64))
    );
    if rows.is_empty() {
        body.push_str(&empty("No repeated kernel sequences."));
    } else {
        let table_rows = rows
            .iter()
            .map(|s| {
                let pattern = str_of(s, "pattern");
                let a = attrs(&[
                    ("rank", ctx.rank.to_string()),
                    ("pattern", pattern.to_string()),
                ]);
                let parts: Vec<&str> = pattern.split('|').collect();
                let mut steps: String = parts
                    .iter()
                    .take(PATTERN_SHOWN)
                    .map(|p| format!("<li title=\"{0}\">{0}</li>", escape(p)))
                    .collect();
                if parts.len() > PATTERN_SHOWN {
                    steps.push_str(&format!(
                        "<li class=\"more\">… {} more kernels</li>",
                        parts.len() - PATTERN_SHOWN
                    ));
                }
                format!(
                    "<td class=\"pattern\"><ol>{steps}</ol></td>{}{}{}",
                    cell(s, "count", "sequence-count", Unit::Count, &a),
                    cell(
                        s,
                        "gpu_kernel_duration_us",
                        "sequence-gpu-us",
                        Unit::Micros,
                        &a
                    ),
                    cell(s, "cpu_op_duration_us", "sequence-cpu-us", Unit::Micros, &a),
                )
            })
            .collect();
        body.push_str(&table(
            &["Operator, then its kernels"],
            &["Times", "GPU time", "CPU op time"],
            table_rows,
            rows.len(),
        ));
    }
    body.push_str(&notes_html(r));
    Some(Block { gist, body })
}

fn bound_label(b: &str) -> &str {
    match b {
        "cpu_bound" => "CPU",
        "gpu_compute_bound" => "GPU compute",
        "gpu_communication_bound" => "GPU communication",
        "gpu_kernel_launch_overhead" => "kernel launch overhead",
        "gpu_kernel_kernel_overhead" => "gaps between kernels",
        "data_loading" => "data loading",
        other => other,
    }
}

fn bound_class(b: &str) -> &'static str {
    match b {
        "cpu_bound" => "c-host",
        "gpu_compute_bound" => "c-compute",
        "gpu_communication_bound" => "c-comm",
        "gpu_kernel_launch_overhead" => "c-kernel-wait",
        "gpu_kernel_kernel_overhead" => "c-idle",
        "data_loading" => "c-memory",
        _ => "c-other",
    }
}

fn critical_path(v: &Value, ctx: &Ctx) -> Option<Block> {
    v.as_array()?;
    let mut body = rank_label(ctx);
    body.push_str(
        "<p class=\"muted\">The longest chain of dependent work (CPU ops, launches, kernels, syncs) through the \
         window: shortening anything off this path does not make the step faster.</p>",
    );
    let Some(r) = result_of(v, ctx) else {
        body.push_str(&empty("No result."));
        return Some(Block {
            gist: String::new(),
            body,
        });
    };
    if let Some(e) = r.get("error").and_then(Value::as_str) {
        body.push_str(&empty(e));
        return Some(Block {
            gist: "not computed".into(),
            body,
        });
    }
    let shares = arr(r, "summary");
    let top = shares
        .iter()
        .max_by(|a, b| {
            f64_of(a, "pct")
                .unwrap_or(0.0)
                .total_cmp(&f64_of(b, "pct").unwrap_or(0.0))
        })
        .filter(|s| f64_of(s, "pct").unwrap_or(0.0) > 0.0);
    let gist = top.map_or(String::new(), |s| {
        format!(
            "{} of the path is {}",
            format::pct(f64_of(s, "pct").unwrap_or(0.0)),
            bound_label(str_of(s, "bound_by"))
        )
    });
    let a = attrs(&[("rank", ctx.rank.to_string())]);
    body.push_str("<dl class=\"facts\">");
    body.push_str(&fact(
        "Path length",
        r,
        "total_us",
        "critical-path-total-us",
        Unit::Micros,
        &a,
    ));
    body.push_str(&fact(
        "Segments",
        r,
        "segments",
        "critical-path-segments",
        Unit::Count,
        &a,
    ));
    body.push_str("</dl>");
    let bar: Vec<(&str, f64, &str)> = shares
        .iter()
        .map(|s| {
            let b = str_of(s, "bound_by");
            (
                bound_label(b),
                f64_of(s, "pct").unwrap_or(0.0),
                bound_class(b),
            )
        })
        .collect();
    body.push_str(&stacked_bar(&bar));
    let share_rows = shares
        .iter()
        .map(|s| {
            let b = str_of(s, "bound_by");
            let a = attrs(&[("rank", ctx.rank.to_string()), ("bound-by", b.to_string())]);
            format!(
                "<td>{}</td>{}{}",
                escape(bound_label(b)),
                cell(s, "duration_us", "critical-path-share-us", Unit::Micros, &a),
                cell(s, "pct", "critical-path-share-pct", Unit::Pct, &a),
            )
        })
        .collect();
    body.push_str(&table(
        &["Bound by"],
        &["Time", "Share"],
        share_rows,
        shares.len(),
    ));
    let events = arr(r, "top_events");
    if !events.is_empty() {
        body.push_str("<h3>Events with the most time on the path</h3>");
        let rows = events
            .iter()
            .map(|e| {
                let a = attrs(&[
                    ("rank", ctx.rank.to_string()),
                    ("event", str_of(e, "name").to_string()),
                ]);
                format!(
                    "{}<td>{}</td>{}{}",
                    name_cell(str_of(e, "name")),
                    escape(bound_label(str_of(e, "bound_by"))),
                    cell(e, "duration_us", "critical-path-event-us", Unit::Micros, &a),
                    cell(
                        e,
                        "segments",
                        "critical-path-event-segments",
                        Unit::Count,
                        &a
                    ),
                )
            })
            .collect();
        body.push_str(&table(
            &["Event", "Bound by"],
            &["Time on path", "Segments"],
            rows,
            events.len(),
        ));
    }
    let segments = arr(r, "top_segments");
    if !segments.is_empty() {
        body.push_str("<h3>Longest segments</h3>");
        body.push_str(&segment_table(segments, &a, "longest"));
    }
    let path = arr(r, "rows");
    if !path.is_empty() {
        body.push_str(&format!(
            "<details class=\"inner\"><summary>The path, segment by segment ({} of {})</summary>{}</details>",
            format::int(path.len().min(MAX_ROWS) as u64),
            format::number(f64_of(r, "segments").unwrap_or(path.len() as f64)),
            segment_table(path, &a, "path")
        ));
    }
    body.push_str(&notes_html(r));
    Some(Block { gist, body })
}

/// Segments of the path as a table; `list` (`longest`, `path`) and the position tell apart the
/// figures of the same event shown twice.
fn segment_table(rows: &[Value], a: &str, list: &str) -> String {
    let origin = rows
        .iter()
        .filter_map(|s| f64_of(s, "start_us"))
        .fold(f64::INFINITY, f64::min);
    let table_rows = rows
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let stream = s.get("stream").and_then(Value::as_i64).unwrap_or(-1);
            let a = &format!(
                "{a}{}",
                attrs(&[
                    ("list", list.to_string()),
                    ("segment", i.to_string()),
                    ("row", raw(s, "row"))
                ])
            );
            format!(
                "{}<td>{}</td><td>{}</td><td class=\"num\">{}</td>{}{}",
                name_cell(str_of(s, "name")),
                escape(bound_label(str_of(s, "bound_by"))),
                escape(str_of(s, "edge_type")),
                if stream >= 0 {
                    stream.to_string()
                } else {
                    "CPU".into()
                },
                cell_value(
                    f64_of(s, "start_us").unwrap_or(0.0) - origin,
                    "critical-path-segment-start-us",
                    Unit::Micros,
                    a
                ),
                cell(
                    s,
                    "duration_us",
                    "critical-path-segment-us",
                    Unit::Micros,
                    a
                ),
            )
        })
        .collect();
    table(
        &["Event", "Bound by", "Edge"],
        &["Stream", "Start (from first shown)", "Duration"],
        table_rows,
        rows.len(),
    )
}

fn memory(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = of_rank(rows, ctx.rank);
    let time: f64 = mine.iter().filter_map(|r| f64_of(r, "time_us")).sum();
    let bytes: f64 = mine.iter().filter_map(|r| f64_of(r, "bytes")).sum();
    let gist = if mine.is_empty() {
        "no copies or sets".into()
    } else {
        format!(
            "{} moved in {}",
            format::bytes(bytes as u64),
            format::micros(time)
        )
    };
    let mut body = rank_label(ctx);
    body.push_str(
        "<p class=\"muted\">GPU copies and sets by kind. Host-to-device copies from pageable memory are slow and \
         block: use <code>pin_memory=True</code> and <code>non_blocking=True</code>.</p>",
    );
    if mine.is_empty() {
        body.push_str(&empty("No memory copies or sets on this rank."));
        return Some(Block { gist, body });
    }
    let table_rows = mine
        .iter()
        .map(|r| {
            let a = attrs(&[
                ("rank", rank_of(r).to_string()),
                ("op", str_of(r, "op").to_string()),
                ("direction", str_of(r, "direction").to_string()),
                ("memory", str_of(r, "memory").to_string()),
            ]);
            format!(
                "{}<td>{}</td><td>{}</td>{}{}{}{}",
                name_cell(str_of(r, "name")),
                escape(str_of(r, "direction")),
                escape(str_of(r, "memory")),
                cell(r, "count", "memcpy-count", Unit::Count, &a),
                cell(r, "bytes", "memcpy-bytes", Unit::Bytes, &a),
                cell(r, "time_us", "memcpy-time-us", Unit::Micros, &a),
                cell(r, "bandwidth_gbps", "memcpy-gbps", Unit::Gbps, &a),
            )
        })
        .collect();
    body.push_str(&table(
        &["Operation", "Direction", "Memory"],
        &["Count", "Bytes", "Time", "Bandwidth"],
        table_rows,
        mine.len(),
    ));
    Some(Block { gist, body })
}

fn steps(v: &Value, ctx: &Ctx) -> Option<Block> {
    let rows = v.as_array()?;
    let mine = rows.iter().find(|r| rank_of(r) == ctx.rank);
    let list = mine.map_or(&[][..], |r| arr(r, "steps"));
    let gist = match mine.and_then(|r| f64_of(r, "mean_step_us")) {
        Some(m) if !list.is_empty() => format!(
            "{} steps · mean {}",
            format::int(list.len() as u64),
            format::micros(m)
        ),
        _ => "no ProfilerStep annotations".into(),
    };
    let mut body = rank_label(ctx);
    if list.is_empty() {
        body.push_str(&empty(
            "No ProfilerStep#N events: record with torch.profiler.schedule and call prof.step() each iteration to get per-step figures.",
        ));
        return Some(Block { gist, body });
    }
    let r = mine.unwrap_or(&Value::Null);
    let a = attrs(&[("rank", ctx.rank.to_string())]);
    body.push_str("<dl class=\"facts\">");
    body.push_str(&fact(
        "Mean step",
        r,
        "mean_step_us",
        "step-mean-us",
        Unit::Micros,
        &a,
    ));
    body.push_str("</dl>");
    let table_rows = list
        .iter()
        .map(|s| {
            let step = s.get("step").and_then(Value::as_i64).unwrap_or(0);
            let a = attrs(&[("rank", ctx.rank.to_string()), ("step", step.to_string())]);
            format!(
                "<td class=\"num\">{step}</td>{}{}<td class=\"num\">{}</td>",
                cell(s, "start_us", "step-start-us", Unit::Micros, &a),
                cell(s, "duration_us", "step-duration-us", Unit::Micros, &a),
                if s.get("analysed").and_then(Value::as_bool) == Some(true) {
                    "yes"
                } else {
                    "no"
                }
            )
        })
        .collect();
    body.push_str(&table(
        &[],
        &["Step", "Start", "Duration", "Analysed"],
        table_rows,
        list.len(),
    ));
    Some(Block { gist, body })
}

/// The figures of an HTML text: (`data-metric`, `data-value`, every other `data-*` attribute), in
/// order. For tests and checkers: it reads only what this module writes.
pub fn figures(html: &str) -> Vec<(String, String, Map<String, Value>)> {
    let mut out = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or("");
        if !tag.contains("data-metric=") {
            continue;
        }
        let mut metric = String::new();
        let mut value = String::new();
        let mut context = Map::new();
        let mut rest = tag;
        while let Some(at) = rest.find(" data-") {
            rest = &rest[at + 6..];
            let Some((name, after)) = rest.split_once("=\"") else {
                break;
            };
            let Some((val, after)) = after.split_once('"') else {
                break;
            };
            let val = unescape(val);
            match name {
                "metric" => metric = val,
                "value" => value = val,
                _ => {
                    context.insert(name.to_string(), Value::String(val));
                }
            }
            rest = after;
        }
        out.push((metric, value, context));
    }
    out
}

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
