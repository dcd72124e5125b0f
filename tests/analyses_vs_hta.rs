//! The analyses in HTA-compat mode against what HTA 0.5.0 computed (../shared/ref), plus small traces
//! built in code for edge cases, checked against values computed by hand.

use profile_model::analysis::all::{analyze, AllAnalyses, AnalysisOptions, Mode};
use profile_model::table::{load_bytes, load_path, TraceSet};
use serde_json::{json, Value};
use std::path::PathBuf;

fn traces_dir() -> PathBuf {
    std::env::var("PROFILE_MODEL_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/traces")))
}

fn ref_dir() -> PathBuf {
    std::env::var("PROFILE_MODEL_REF")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/ref")))
}

fn read_json(p: &std::path::Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

/// Relative (0.1%) or absolute (0.51 for whole-µs and 2-decimal rounding) closeness.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.001 * a.abs().max(b.abs()) || (a - b).abs() <= 0.011
}

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

struct Checker {
    trace: String,
    analysis: &'static str,
    errors: Vec<String>,
    /// Relative differences of the values that differ (row-count differences count as 1.0).
    worst: f64,
    checked: usize,
}

impl Checker {
    fn eq(&mut self, what: String, ours: f64, hta: Option<f64>) {
        self.checked += 1;
        match hta {
            None if !ours.is_finite() => {}
            None => {
                self.worst = f64::INFINITY;
                self.errors.push(format!("{what}: ours {ours}, HTA null"))
            }
            Some(h) if close(ours, h) => {}
            Some(h) => {
                self.worst = self.worst.max((ours - h).abs() / h.abs().max(1e-9));
                self.errors.push(format!("{what}: ours {ours}, HTA {h}"))
            }
        }
    }
}

fn load_case(dir: &std::path::Path) -> Option<TraceSet> {
    let meta = read_json(&dir.join("meta.json"))?;
    let files = meta.get("source_files").and_then(Value::as_array)?;
    let mut tables = Vec::new();
    for f in files {
        let name = f.as_str()?.trim_start_matches("traces/");
        tables.push(load_path(&traces_dir().join(name)).ok()?);
    }
    Some(TraceSet::from_tables(tables))
}

fn ok(meta: &Value, analysis: &str) -> bool {
    meta["analyses"][analysis]["ok"].as_bool() == Some(true)
}

fn compare(dir: &std::path::Path, set: &TraceSet, a: &AllAnalyses) -> Vec<Checker> {
    let meta = read_json(&dir.join("meta.json")).unwrap_or(Value::Null);
    let trace = dir.file_name().unwrap().to_string_lossy().to_string();
    let mut out = Vec::new();
    let mut new = |analysis| Checker {
        trace: trace.clone(),
        analysis,
        errors: Vec::new(),
        worst: 0.0,
        checked: 0,
    };
    let load = |f: &str| read_json(&dir.join(format!("{f}.json")));

    // kernel_type_breakdown
    if let Some(Value::Array(rows)) = load("kernel_type_breakdown") {
        let mut c = new("kernel_type_breakdown");
        // 0.1% of the table's total time; HTA also lists zero-length combinations (rows of 0 us).
        let total: f64 = rows.iter().filter_map(|r| num(r, "sum")).sum();
        // HTA's sweep also lists zero-length and tiny combinations (from negative durations):
        // rows count when above 0.1% of the total.
        let big = |x: f64| x > 0.001 * total;
        let hta_rows = rows
            .iter()
            .filter(|r| big(num(r, "sum").unwrap_or(0.0)))
            .count();
        let our_rows = a
            .kernel_breakdown
            .by_type_all_ranks
            .iter()
            .filter(|x| big(x.time_us))
            .count();
        for r in &rows {
            let t = r["kernel_type"].as_str().unwrap_or("");
            let ours = a
                .kernel_breakdown
                .by_type_all_ranks
                .iter()
                .find(|x| x.kernel_type == t)
                .map_or(0.0, |x| x.time_us);
            let h = num(r, "sum").unwrap_or(f64::NAN);
            c.checked += 1;
            if (ours - h).abs() > 0.001 * total {
                c.errors.push(format!("{t} time: ours {ours}, HTA {h}"));
            }
            let p = a
                .kernel_breakdown
                .by_type_all_ranks
                .iter()
                .find(|x| x.kernel_type == t)
                .map_or(0.0, |x| x.pct);
            c.eq(format!("{t} pct"), p, num(r, "percentage"));
        }
        c.checked += 1;
        if our_rows != hta_rows {
            c.errors
                .push(format!("rows above 0.1%: ours {our_rows}, HTA {hta_rows}"));
        }
        out.push(c);
    }
    // kernel_breakdown_full
    if let Some(Value::Array(rows)) = load("kernel_breakdown_full") {
        let mut c = new("kernel_breakdown_full");
        let ours_n: usize = a
            .kernel_breakdown
            .ranks
            .iter()
            .map(|r| r.kernels.len())
            .sum();
        c.checked += 1;
        if ours_n != rows.len() {
            c.errors
                .push(format!("rows: ours {ours_n}, HTA {}", rows.len()));
        }
        for r in &rows {
            let rank = r["rank"].as_i64().unwrap_or(0);
            let name = r["name"].as_str().unwrap_or("");
            let t = r["kernel_type"].as_str().unwrap_or("");
            let k = a
                .kernel_breakdown
                .ranks
                .iter()
                .find(|x| x.rank == rank)
                .and_then(|x| {
                    x.kernels
                        .iter()
                        .find(|k| k.name == name && k.kernel_type.as_str() == t)
                });
            let Some(k) = k else {
                c.errors
                    .push(format!("missing kernel rank {rank} {t} {name}"));
                continue;
            };
            let w = format!("rank {rank} {name:.40}");
            c.eq(format!("{w} sum"), k.sum_us, num(r, "sum (us)"));
            c.eq(format!("{w} max"), k.max_us, num(r, "max (us)"));
            c.eq(format!("{w} min"), k.min_us, num(r, "min (us)"));
            c.eq(format!("{w} mean"), k.mean_us, num(r, "mean (us)"));
            c.eq(format!("{w} std"), k.std_us, num(r, "stddev"));
        }
        out.push(c);
    }
    // temporal_breakdown
    if let Some(Value::Array(rows)) = load("temporal_breakdown") {
        let mut c = new("temporal_breakdown");
        for r in &rows {
            let rank = r["rank"].as_i64().unwrap_or(0);
            let Some(t) = a.temporal_breakdown.iter().find(|x| x.rank == rank) else {
                c.errors.push(format!("rank {rank} missing"));
                continue;
            };
            c.eq(
                format!("rank {rank} idle"),
                t.idle_us,
                num(r, "idle_time(us)"),
            );
            c.eq(
                format!("rank {rank} compute"),
                t.compute_us,
                num(r, "compute_time(us)"),
            );
            c.eq(
                format!("rank {rank} non_compute"),
                t.non_compute_us,
                num(r, "non_compute_time(us)"),
            );
            c.eq(
                format!("rank {rank} window"),
                t.window_us,
                num(r, "kernel_time(us)"),
            );
            c.eq(
                format!("rank {rank} idle%"),
                t.idle_pct,
                num(r, "idle_time_pctg"),
            );
            c.eq(
                format!("rank {rank} compute%"),
                t.compute_pct,
                num(r, "compute_time_pctg"),
            );
        }
        out.push(c);
    }
    // idle_time_breakdown + idle_interval_stats
    if let Some(Value::Array(rows)) = load("idle_time_breakdown") {
        let mut c = new("idle_time_breakdown");
        let stats = load("idle_interval_stats").unwrap_or(Value::Null);
        let ours_n: usize = a
            .idle_time_breakdown
            .iter()
            .map(|s| s.categories.len())
            .sum();
        for r in &rows {
            let rank = r["rank"].as_i64().unwrap_or(0);
            let stream = r["stream"].as_i64().unwrap_or(0);
            let cat = r["idle_category"].as_str().unwrap_or("");
            let Some(s) = a
                .idle_time_breakdown
                .iter()
                .find(|x| x.rank == rank && x.stream == stream)
            else {
                c.errors
                    .push(format!("rank {rank} stream {stream} missing"));
                continue;
            };
            let Some(k) = s.categories.iter().find(|k| k.category == cat) else {
                continue;
            };
            let w = format!("rank {rank} stream {stream} {cat}");
            c.eq(format!("{w} idle"), k.idle_us, num(r, "idle_time"));
            c.eq(
                format!("{w} ratio"),
                k.ratio.unwrap_or(f64::NAN),
                num(r, "idle_time_ratio"),
            );
            if let Some(st) = stats.as_array().and_then(|v| {
                v.iter().find(|x| {
                    x["rank"].as_i64() == Some(rank)
                        && x["stream"].as_i64() == Some(stream)
                        && x["idle_category"].as_str() == Some(cat)
                })
            }) {
                c.eq(
                    format!("{w} count"),
                    k.gaps_us.count as f64,
                    num(st, "count"),
                );
                if k.gaps_us.count > 0 {
                    c.eq(format!("{w} mean"), k.gaps_us.mean, num(st, "mean"));
                    c.eq(format!("{w} max"), k.gaps_us.max, num(st, "max"));
                    c.eq(format!("{w} p50"), k.gaps_us.p50, num(st, "50%"));
                }
            }
        }
        c.checked += 1;
        if ours_n != rows.len() {
            c.errors
                .push(format!("rows: ours {ours_n}, HTA {}", rows.len()));
        }
        out.push(c);
    }
    // comm_comp_overlap
    if let Some(Value::Array(rows)) = load("comm_comp_overlap") {
        let mut c = new("comm_comp_overlap");
        for r in &rows {
            let rank = r["rank"].as_i64().unwrap_or(0);
            let o = a.comm_comp_overlap.iter().find(|x| x.rank == rank);
            c.eq(
                format!("rank {rank} pct"),
                o.and_then(|o| o.overlap_pct).unwrap_or(f64::NAN),
                num(r, "comp_comm_overlap_pctg"),
            );
        }
        out.push(c);
    }
    // queue_length_summary
    if let Some(Value::Array(rows)) = load("queue_length_summary") {
        let mut c = new("queue_length_summary");
        c.checked += 1;
        if a.queue_length.len() != rows.len() {
            c.errors.push(format!(
                "rows: ours {}, HTA {}",
                a.queue_length.len(),
                rows.len()
            ));
        }
        for r in &rows {
            let rank = r["rank"].as_i64().unwrap_or(0);
            let stream = r["stream"].as_i64().unwrap_or(0);
            let Some(q) = a
                .queue_length
                .iter()
                .find(|x| x.rank == rank && x.stream == stream)
            else {
                c.errors
                    .push(format!("rank {rank} stream {stream} missing"));
                continue;
            };
            let w = format!("rank {rank} stream {stream}");
            let d = &q.queue_length;
            c.eq(
                format!("{w} count"),
                d.count as f64,
                num(r, "queue_length_count"),
            );
            c.eq(format!("{w} mean"), d.mean, num(r, "queue_length_mean"));
            c.eq(format!("{w} min"), d.min, num(r, "queue_length_min"));
            c.eq(format!("{w} max"), d.max, num(r, "queue_length_max"));
            c.eq(format!("{w} p50"), d.p50, num(r, "queue_length_50%"));
            c.eq(
                format!("{w} std"),
                d.std.unwrap_or(f64::NAN),
                num(r, "queue_length_std"),
            );
        }
        out.push(c);
    }
    // time_spent_blocked_on_full_queue: HTA keeps one row per rank (quirk 9); all refs are empty.
    if let Some(Value::Array(rows)) = load("time_spent_blocked_on_full_queue") {
        let mut c = new("time_spent_blocked_on_full_queue");
        c.checked += 1;
        let blocked = a.queue_length.iter().filter(|q| q.blocked_us > 0.0).count();
        if rows.is_empty() != (blocked == 0) {
            c.errors.push(format!(
                "ours {blocked} blocked streams, HTA {} rows",
                rows.len()
            ));
        }
        out.push(c);
    }
    // cuda_kernel_launch_stats
    if let Some(Value::Array(rows)) = load("cuda_kernel_launch_stats") {
        let mut c = new("cuda_kernel_launch_stats");
        for l in &a.kernel_launch_stats {
            let mine: Vec<&Value> = rows
                .iter()
                .filter(|r| r["rank"].as_i64() == Some(l.rank))
                .collect();
            let sum = |k: &str| mine.iter().filter_map(|r| num(r, k)).sum::<f64>();
            let w = format!("rank {}", l.rank);
            c.eq(
                format!("{w} launches"),
                l.launches as f64,
                Some(mine.len() as f64),
            );
            c.eq(
                format!("{w} cpu total"),
                l.cpu_total_us,
                Some(sum("cpu_duration")),
            );
            c.eq(
                format!("{w} gpu total"),
                l.gpu_total_us,
                Some(sum("gpu_duration")),
            );
            c.eq(
                format!("{w} delay total"),
                l.delay_total_us,
                Some(sum("launch_delay")),
            );
            // Per launch.
            for r in &mine {
                let corr = r["correlation"].as_i64().unwrap_or(-1);
                match l.rows.iter().find(|x| x.correlation == corr) {
                    Some(x) => {
                        c.eq(
                            format!("{w} corr {corr} cpu"),
                            x.cpu_us,
                            num(r, "cpu_duration"),
                        );
                        c.eq(
                            format!("{w} corr {corr} gpu"),
                            x.gpu_us,
                            num(r, "gpu_duration"),
                        );
                        c.eq(
                            format!("{w} corr {corr} delay"),
                            x.delay_us,
                            num(r, "launch_delay"),
                        );
                    }
                    None => c.errors.push(format!("{w} corr {corr} missing")),
                }
            }
        }
        out.push(c);
    }
    // memory_bw_summary
    if let Some(Value::Array(rows)) = load("memory_bw_summary") {
        let mut c = new("memory_bw_summary");
        c.checked += 1;
        if a.memory_bandwidth.len() != rows.len() {
            c.errors.push(format!(
                "rows: ours {}, HTA {}",
                a.memory_bandwidth.len(),
                rows.len()
            ));
        }
        for r in &rows {
            let rank = r["rank"].as_i64().unwrap_or(0);
            let name = r["name"].as_str().unwrap_or("");
            let Some(m) = a
                .memory_bandwidth
                .iter()
                .find(|x| x.rank == rank && x.name == name)
            else {
                c.errors.push(format!("rank {rank} {name} missing"));
                continue;
            };
            let w = format!("rank {rank} {name}");
            let d = &m.per_op_gbps;
            c.eq(
                format!("{w} count"),
                d.count as f64,
                num(r, "memory_bw_gbps_count"),
            );
            c.eq(format!("{w} mean"), d.mean, num(r, "memory_bw_gbps_mean"));
            c.eq(format!("{w} min"), d.min, num(r, "memory_bw_gbps_min"));
            c.eq(format!("{w} max"), d.max, num(r, "memory_bw_gbps_max"));
            c.eq(format!("{w} p50"), d.p50, num(r, "memory_bw_gbps_50%"));
        }
        out.push(c);
    }
    // profiler_steps
    if ok(&meta, "get_profiler_steps") {
        if let Some(Value::Array(steps)) = load("profiler_steps") {
            let mut c = new("profiler_steps");
            let mut ours: Vec<i64> = a
                .profiler_steps
                .iter()
                .flat_map(|r| r.analysed_steps.clone())
                .collect();
            ours.sort_unstable();
            ours.dedup();
            let hta: Vec<i64> = steps.iter().filter_map(Value::as_i64).collect();
            c.checked += 1;
            if ours != hta {
                c.errors.push(format!("ours {ours:?}, HTA {hta:?}"));
            }
            out.push(c);
        }
    }
    // potential_stragglers
    if ok(&meta, "get_potential_stragglers") {
        if let Some(Value::Array(ranks)) = load("potential_stragglers") {
            let mut c = new("potential_stragglers");
            let mut hta: Vec<i64> = ranks.iter().filter_map(Value::as_i64).collect();
            let mut ours = a.stragglers.ranks.clone();
            hta.sort_unstable();
            ours.sort_unstable();
            c.checked += 1;
            if ours != hta {
                c.errors.push(format!("ours {ours:?}, HTA {hta:?}"));
            }
            out.push(c);
        }
    }
    let _ = set;
    out
}

/// (trace, analysis, largest relative difference allowed, why) where HTA-compat mode cannot
/// reproduce HTA to 0.1%.
const KNOWN_DIFFERENCES: &[(&str, &str, f64, &str)] = &[
    (
        "hta__critical_path_simple_add",
        "queue_length_summary",
        0.015,
        "HTA orders launches and kernel starts with numpy's unstable quicksort, so events at the \
         same µs come in an arbitrary order; count, mean, min, max and quartiles agree, std differs by 1.1%",
    ),
    (
        "hta__ns_resolution__rank-0.Apr_03_18_51_38.1102.pt.trace",
        "memory_bw_summary",
        0.01,
        "HTA's bandwidth time series sorts copy starts and ends with the same unstable sort: a copy \
         ending at the µs the next one starts gives 1280 (ends first) to 1288 (starts first) \
         points; HTA has 1285 (0.4%)",
    ),
];

#[test]
fn hta_compat_matches_hta_reference() {
    let refs = ref_dir();
    let Ok(dirs) = std::fs::read_dir(&refs) else {
        eprintln!("reference folder {} absent: skipped", refs.display());
        return;
    };
    let mut dirs: Vec<PathBuf> = dirs
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let opts = AnalysisOptions::hta_compat();
    let mut failures = Vec::new();
    let mut matched = 0;
    let mut total = 0;
    for dir in &dirs {
        let Some(set) = load_case(dir) else {
            eprintln!("{}: trace files absent, skipped", dir.display());
            continue;
        };
        let a = analyze(&set, &opts);
        for c in compare(dir, &set, &a) {
            total += 1;
            let known = KNOWN_DIFFERENCES
                .iter()
                .find(|k| c.trace == k.0 && c.analysis == k.1);
            if c.errors.is_empty() {
                matched += 1;
                eprintln!(
                    "match    {:<60} {:<34} {} values",
                    c.trace, c.analysis, c.checked
                );
            } else {
                eprintln!(
                    "{} {:<60} {:<34} {} of {} differ, e.g. {:?}",
                    if known.is_some() {
                        "KNOWN   "
                    } else {
                        "MISMATCH"
                    },
                    c.trace,
                    c.analysis,
                    c.errors.len(),
                    c.checked,
                    &c.errors[..c.errors.len().min(3)]
                );
                if known.is_none() {
                    failures.push(format!(
                        "{} {}: {:?}",
                        c.trace,
                        c.analysis,
                        &c.errors[..c.errors.len().min(3)]
                    ));
                }
            }
        }
    }
    eprintln!("{matched} of {total} (trace, analysis) pairs match HTA");
    assert!(total > 0 || dirs.is_empty());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
