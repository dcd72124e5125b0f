//! The deeper analyses as the page shows them (the typed view model its components draw): every
//! real trace builds, every figure's value equals the analysis result it comes from, every figure
//! name is documented, and a figure is named once per context.

use crate::common;

use std::collections::BTreeSet;

use profile_model::analysis::all::{analyze, AllAnalyses, AnalysisId, AnalysisOptions};
use profile_model::page::analyses_view::{analyses_model, AnalysesModel, Part};
use profile_model::table::{load_path, TraceSet};
use serde_json::{json, Map, Value};

type Figure = (String, f64, Value);

fn figures_of(all: &AllAnalyses, rank: Option<i64>) -> (AnalysesModel, Vec<Figure>) {
    let model = analyses_model(all, rank);
    let figs = model
        .figures()
        .into_iter()
        .map(|f| {
            let ctx: Map<String, Value> = f
                .context
                .iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
                .collect();
            (f.metric.to_string(), f.value, Value::Object(ctx))
        })
        .collect();
    (model, figs)
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
    let (model, figs) = figures_of(all, rank);
    assert!(!figs.is_empty(), "{name}: no figures");
    assert_eq!(
        model.blocks.len(),
        AnalysisId::ALL.len(),
        "{name}: one block per analysis"
    );
    // Tables have as many cells per row as columns.
    for b in &model.blocks {
        for p in &b.parts {
            if let Part::Table(t) | Part::Folded { table: t, .. } = p {
                let columns = t.text_columns.len() + t.num_columns.len();
                for row in &t.rows {
                    assert_eq!(row.len(), columns, "{name}: {:?}", b.id);
                }
            }
        }
    }
    // Every figure's name is in the table of names at the top of analyses_view.
    let documented: String = include_str!("../src/page/analyses_view/mod.rs")
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
    for r in all
        .collectives
        .per_rank
        .iter()
        .filter(|_| !all.collectives.is_empty())
    {
        let rank = r.rank.to_string();
        let ctx = [("rank", rank.as_str())];
        assert!(
            close(
                one(&figs, "collective-kernel-us", &ctx),
                r.kernel_ns as f64 / 1000.0
            ),
            "{name}"
        );
        assert!(
            close(one(&figs, "collective-count", &ctx), r.ops as f64),
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
        let kernel_type = t.kernel_type.to_string();
        let ctx = [
            ("rank", scope.as_str()),
            ("kernel-type", kernel_type.as_str()),
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
fn empty_results_build_every_block_without_figures() {
    let model = analyses_model(&AllAnalyses::default(), None);
    assert_eq!(model.blocks.len(), AnalysisId::ALL.len());
    assert!(model.figures().is_empty());
    let gist = |key: &str| {
        model
            .blocks
            .iter()
            .find(|b| b.id.key() == key)
            .map(|b| b.gist.clone())
    };
    assert_eq!(gist("kernel_breakdown").as_deref(), Some("no GPU kernels"));
    assert_eq!(
        gist("stragglers").as_deref(),
        Some("needs two or more ranks")
    );
}

#[test]
fn a_value_that_is_not_finite_is_shown_missing_not_as_a_figure() {
    let mut all = AllAnalyses {
        ranks: vec![0],
        ..Default::default()
    };
    all.temporal_breakdown = vec![profile_model::analysis::temporal::TemporalBreakdown {
        rank: 0,
        idle_pct: 12.5,
        window_us: f64::NAN,
        ..Default::default()
    }];
    let (_, figs) = figures_of(&all, None);
    assert!(figs.iter().all(|(m, _, _)| m != "temporal-window-us"));
    let idle = one(&figs, "temporal-idle-pct", &[("rank", "0")]);
    assert_eq!(idle, 12.5);
}
