//! The deeper analyses as HTML (what the page shows): every real trace renders, every figure's
//! `data-value` equals the analysis result it comes from, and a figure is named once per context.

mod common;

use std::collections::BTreeSet;

use profile_model::analysis::all::{analyze, AllAnalyses, AnalysisOptions};
use profile_model::report::html::{analyses_html, figures, HtmlOptions};
use profile_model::table::{load_path, TraceSet};
use serde_json::{json, Value};

type Figure = (String, f64, Value);

fn figures_of(all: &AllAnalyses, rank: Option<i64>) -> (String, Vec<Figure>) {
    let doc = serde_json::to_value(all).expect("analyses serialise");
    let html = analyses_html(
        &doc,
        HtmlOptions {
            rank,
            ..Default::default()
        },
    );
    let figs = figures(&html)
        .into_iter()
        .map(|(metric, value, ctx)| {
            let x: f64 = value
                .parse()
                .unwrap_or_else(|_| panic!("{metric}: data-value {value:?} is not a number"));
            (metric, x, Value::Object(ctx))
        })
        .collect();
    (html, figs)
}

/// The one figure named `metric` whose context has every `(key, value)`.
fn one(figs: &[Figure], metric: &str, ctx: &[(&str, &str)]) -> f64 {
    let found: Vec<f64> = figs
        .iter()
        .filter(|(m, _, c)| m == metric && ctx.iter().all(|(k, v)| c[*k] == json!(v)))
        .map(|(_, x, _)| *x)
        .collect();
    assert_eq!(found.len(), 1, "{metric} {ctx:?}: {found:?}");
    found[0]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Every figure of the analyses, checked against the result it was rendered from.
fn check(name: &str, all: &AllAnalyses, unique: bool) {
    let rank = all.ranks.first().copied();
    let (html, figs) = figures_of(all, rank);
    assert!(!figs.is_empty(), "{name}: no figures");
    // Tags open and close in pairs.
    for tag in ["details", "table", "tr", "td", "dl", "p", "ol"] {
        let opened =
            html.matches(&format!("<{tag}>")).count() + html.matches(&format!("<{tag} ")).count();
        let closed = html.matches(&format!("</{tag}>")).count();
        assert_eq!(
            opened, closed,
            "{name}: <{tag}> opened {opened}, closed {closed}"
        );
    }
    // Every figure's name is in the table of names at the top of html.rs.
    let documented: String = include_str!("../src/report/html.rs")
        .lines()
        .filter(|l| l.starts_with("//!"))
        .collect();
    for (m, _, _) in &figs {
        assert!(
            documented.contains(&format!("`{m}`")),
            "{name}: {m} is not documented"
        );
    }
    // A figure is named once per context (metric + every data-* attribute).
    // (HTA-compat mode counts a step twice when it is annotated on the host and on the GPU.)
    let mut seen = BTreeSet::new();
    for (m, _, c) in &figs {
        assert!(
            seen.insert(format!("{m} {c}")) || !unique,
            "{name}: {m} {c} twice"
        );
    }
    for t in &all.temporal_breakdown {
        let r = t.rank.to_string();
        let ctx = [("rank", r.as_str())];
        assert!(
            close(one(&figs, "temporal-idle-pct", &ctx), t.idle_pct),
            "{name}"
        );
        assert!(
            close(one(&figs, "temporal-compute-us", &ctx), t.compute_us),
            "{name}"
        );
        assert!(
            close(one(&figs, "temporal-window-us", &ctx), t.window_us),
            "{name}"
        );
    }
    for o in &all.comm_comp_overlap {
        let r = o.rank.to_string();
        assert!(
            close(one(&figs, "overlap-comm-us", &[("rank", &r)]), o.comm_us),
            "{name}"
        );
    }
    let several = all.ranks.len() > 1;
    let types = if several {
        all.kernel_breakdown.by_type_all_ranks.clone()
    } else {
        all.kernel_breakdown.ranks[0].by_type.clone()
    };
    let scope = if several {
        "all".to_string()
    } else {
        all.ranks[0].to_string()
    };
    for t in &types {
        let ctx = [
            ("rank", scope.as_str()),
            ("kernel-type", t.kernel_type.as_str()),
        ];
        assert!(
            close(one(&figs, "kernel-type-us", &ctx), t.time_us),
            "{name} {}",
            t.kernel_type
        );
    }
    let shown_rank = rank.unwrap_or(0);
    let sr = shown_rank.to_string();
    for q in all.queue_length.iter().filter(|q| q.rank == shown_rank) {
        let s = q.stream.to_string();
        let ctx = [("rank", sr.as_str()), ("stream", s.as_str())];
        assert!(
            close(one(&figs, "queue-blocked-us", &ctx), q.blocked_us),
            "{name}"
        );
    }
    for i in all
        .idle_time_breakdown
        .iter()
        .filter(|i| i.rank == shown_rank)
    {
        let s = i.stream.to_string();
        assert!(
            close(
                one(&figs, "idle-us", &[("rank", &sr), ("stream", &s)]),
                i.idle_us
            ),
            "{name}"
        );
        for c in &i.categories {
            let ctx = [
                ("rank", sr.as_str()),
                ("stream", s.as_str()),
                ("category", c.category.as_str()),
            ];
            assert!(
                close(one(&figs, "idle-category-us", &ctx), c.idle_us),
                "{name}"
            );
        }
    }
    for m in all.memory_bandwidth.iter().filter(|m| m.rank == shown_rank) {
        let ctx = [
            ("rank", sr.as_str()),
            ("op", m.op.as_str()),
            ("direction", m.direction.as_str()),
            ("memory", m.memory.as_str()),
        ];
        assert_eq!(one(&figs, "memcpy-bytes", &ctx), m.bytes as f64, "{name}");
    }
    for l in &all.kernel_launch_stats {
        let r = l.rank.to_string();
        assert_eq!(
            one(&figs, "launch-count", &[("rank", &r)]),
            l.launches as f64,
            "{name}"
        );
    }
    if let Some(cp) = all.critical_path.iter().find(|c| c.rank == shown_rank) {
        if cp.result.error().is_none() {
            assert!(
                close(
                    one(&figs, "critical-path-total-us", &[("rank", &sr)]),
                    cp.result.total_us
                ),
                "{name}"
            );
            for s in &cp.result.summary {
                let ctx = [("rank", sr.as_str()), ("bound-by", s.bound_by.as_str())];
                assert!(
                    close(one(&figs, "critical-path-share-pct", &ctx), s.pct),
                    "{name}"
                );
            }
        }
    }
    if let Some(st) = all.profiler_steps.iter().find(|s| s.rank == shown_rank) {
        for s in st.steps.iter().filter(|_| unique) {
            let n = s.step.to_string();
            assert!(
                close(
                    one(&figs, "step-duration-us", &[("rank", &sr), ("step", &n)]),
                    s.duration_us
                ),
                "{name}"
            );
        }
    }
}

#[test]
fn every_real_trace_renders_figures_equal_to_its_analyses() {
    let files = common::kineto_trace_files();
    assert!(files.len() >= 20, "{} traces", files.len());
    for f in files {
        let name = f.display().to_string();
        let set = TraceSet::single(load_path(&f).expect("loads"));
        check(&name, &analyze(&set, &AnalysisOptions::default()), true);
        check(&name, &analyze(&set, &AnalysisOptions::hta_compat()), false);
    }
}

#[test]
fn two_ranks_render_cross_rank_figures_and_each_rank_in_detail() {
    let files = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"];
    let tables = files
        .iter()
        .map(|f| load_path(&common::trace(f)).expect("loads"))
        .collect();
    let set = TraceSet::from_tables(tables);
    let all = analyze(&set, &AnalysisOptions::default());
    check("two ranks", &all, true);
    // Busy time per rank is compute + non-compute, against the median of the two (the lower one).
    let (_, figs) = figures_of(&all, Some(1));
    let busy: Vec<f64> = all
        .temporal_breakdown
        .iter()
        .map(|t| t.compute_us + t.non_compute_us)
        .collect();
    let median = busy.iter().copied().fold(f64::INFINITY, f64::min);
    for (t, b) in all.temporal_breakdown.iter().zip(&busy) {
        let r = t.rank.to_string();
        assert!(close(one(&figs, "rank-busy-us", &[("rank", &r)]), *b));
        let vs = one(&figs, "rank-busy-vs-median-pct", &[("rank", &r)]);
        assert!(close(vs, 100.0 * (b - median) / median), "rank {r}: {vs}");
    }
    // Rank 1 picked: its detail tables, not rank 0's.
    assert!(figs
        .iter()
        .any(|(m, _, c)| m == "queue-length-max" && c["rank"] == json!("1")));
    assert!(!figs
        .iter()
        .any(|(m, _, c)| m == "queue-length-max" && c["rank"] == json!("0")));
}

#[test]
fn partial_or_old_documents_render_without_panicking() {
    for doc in [
        Value::Null,
        json!({}),
        json!({"ranks": [0], "temporal_breakdown": [{"rank": 0, "idle_pct": 12.5}]}),
        json!({"ranks": [3], "critical_path": [{"rank": 3, "result": {"error": "no annotation"}}],
               "kernel_breakdown": {"ranks": []}, "stragglers": {}, "queue_length": "odd"}),
    ] {
        let html = analyses_html(&doc, HtmlOptions::default());
        assert!(html.contains("analysis-mode"), "{doc}");
    }
    let html = analyses_html(
        &json!({"ranks": [0], "temporal_breakdown": [{"rank": 0, "idle_pct": 12.5}]}),
        HtmlOptions::default(),
    );
    let figs = figures(&html);
    assert_eq!(figs.len(), 1);
    assert_eq!(
        (figs[0].0.as_str(), figs[0].1.as_str()),
        ("temporal-idle-pct", "12.5")
    );
}

#[test]
fn names_with_markup_are_escaped_in_text_and_attributes() {
    let doc = json!({"ranks": [0], "memory_bandwidth": [{"rank": 0, "name": "<b>\"x\" & y</b>",
        "op": "memcpy", "direction": "H\"toD", "memory": "a<b", "count": 1, "bytes": 8, "time_us": 1.0,
        "bandwidth_gbps": 0.008}]});
    let html = analyses_html(&doc, HtmlOptions::default());
    assert!(!html.contains("<b>\"x\""), "{html}");
    let figs = figures(&html);
    let bytes = figs
        .iter()
        .find(|f| f.0 == "memcpy-bytes")
        .expect("bytes figure");
    assert_eq!(bytes.2["direction"], json!("H\"toD"));
    assert_eq!(bytes.2["memory"], json!("a<b"));
}
