//! The analyses as plain-text tables, for the command line.

use std::fmt::Write;

use crate::analysis::all::{AllAnalyses, AnalysisId, AnalysisTiming};
use crate::analysis::idle::IdleCategory;
use crate::analysis::merge::MergedAnalyses;

/// The timing table of [`analyze_timed`]: one line per analysis and the total, ms.
pub fn render_timings(timings: &[AnalysisTiming]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<28} {:>10}", "analysis", "ms");
    for t in timings {
        let _ = writeln!(s, "{:<28} {:>10.1}", t.name, t.ms);
    }
    let total: f64 = timings.iter().map(|t| t.ms).sum();
    let _ = writeln!(s, "{:<28} {:>10.1}", "total", total);
    s
}

fn f(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

/// Plain-text tables of typed results: one section per analysis, in registry order, then the notes.
pub fn render_analyses(a: &AllAnalyses) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Analyses ({:?} mode), ranks {:?}", a.mode, a.ranks);
    for id in AnalysisId::ALL {
        section(&mut s, id, a);
    }
    if !a.notes.is_empty() {
        let _ = writeln!(s, "\nNotes");
        for n in &a.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    s
}

/// One analysis's text section (what `analyze` writes for it), headed by the mode and the ranks.
pub fn render_analysis(a: &AllAnalyses, id: AnalysisId) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Analyses ({:?} mode), ranks {:?}", a.mode, a.ranks);
    section(&mut s, id, a);
    s
}

/// The text section of one analysis.
fn section(s: &mut String, id: AnalysisId, a: &AllAnalyses) {
    match id {
        AnalysisId::KernelBreakdown => kernel_breakdown_text(s, a),
        AnalysisId::TemporalBreakdown => temporal_text(s, a),
        AnalysisId::IdleTimeBreakdown => idle_text(s, a),
        AnalysisId::CommCompOverlap => overlap_text(s, a),
        AnalysisId::Stragglers => stragglers_text(s, a),
        AnalysisId::KernelLaunchStats => launches_text(s, a),
        AnalysisId::QueueLength => queue_text(s, a),
        AnalysisId::MemoryBandwidth => memory_text(s, a),
        AnalysisId::ProfilerSteps => steps_text(s, a),
        AnalysisId::FrequentKernelSequences => sequences_text(s, a),
        AnalysisId::CriticalPath => critical_path_text(s, a),
        AnalysisId::Roofline => {
            let _ = writeln!(s, "\nRoofline");
            for r in &a.roofline {
                let _ = writeln!(
                    s,
                    "  rank {:>4}: {}",
                    r.rank,
                    super::roofline_text::roof_line(r)
                );
            }
        }
        AnalysisId::Collectives => {
            let _ = writeln!(s, "\nCollectives");
            s.push_str(&super::collectives_text::collectives_text(&a.collectives));
        }
    }
}

fn kernel_breakdown_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nGPU time by kernel type (all ranks)");
    let _ = writeln!(s, "  {:<58} {:>14} {:>7}", "type", "time (us)", "%");
    for t in &a.kernel_breakdown.by_type_all_ranks {
        let _ = writeln!(
            s,
            "  {:<58} {:>14} {:>7.1}",
            t.kernel_type,
            f(t.time_us),
            t.pct
        );
    }
    for r in &a.kernel_breakdown.ranks {
        let _ = writeln!(s, "\nTop kernels, rank {}", r.rank);
        let _ = writeln!(
            s,
            "  {:<14} {:>7} {:>12} {:>10} {:>10} {:>6}  name",
            "type", "count", "sum (us)", "mean (us)", "max (us)", "%type"
        );
        for k in &r.top {
            let mut name = k.name.clone();
            if name.len() > 70 {
                let mut cut = 67;
                while !name.is_char_boundary(cut) {
                    cut -= 1;
                }
                name.truncate(cut);
                name.push_str("...");
            }
            let _ = writeln!(
                s,
                "  {:<14} {:>7} {:>12} {:>10} {:>10} {:>6.1}  {}",
                k.kernel_type.as_str(),
                k.count,
                f(k.sum_us),
                f(k.mean_us),
                f(k.max_us),
                k.pct_of_type,
                name
            );
        }
    }
}

fn temporal_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nTemporal breakdown");
    let _ = writeln!(
        s,
        "  {:>5} {:>14} {:>8} {:>8} {:>12}",
        "rank", "window (us)", "idle %", "comp %", "non-comp %"
    );
    for t in &a.temporal_breakdown {
        let _ = writeln!(
            s,
            "  {:>5} {:>14} {:>8.2} {:>8.2} {:>12.2}",
            t.rank,
            f(t.window_us),
            t.idle_pct,
            t.compute_pct,
            t.non_compute_pct
        );
    }
}

fn idle_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nIdle time by stream");
    let _ = writeln!(
        s,
        "  {:>5} {:>7} {:>14} {:>14} {:>14} {:>14}",
        "rank", "stream", "idle (us)", "host wait", "kernel wait", "other"
    );
    for i in &a.idle_time_breakdown {
        let c = |category: IdleCategory| {
            i.categories
                .iter()
                .find(|c| c.category == category)
                .map_or(0.0, |c| c.idle_us)
        };
        let _ = writeln!(
            s,
            "  {:>5} {:>7} {:>14} {:>14} {:>14} {:>14}",
            i.rank,
            i.stream,
            f(i.idle_us),
            f(c(IdleCategory::HostWait)),
            f(c(IdleCategory::KernelWait)),
            f(c(IdleCategory::Other))
        );
    }
}

fn overlap_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nCommunication/computation overlap");
    for o in &a.comm_comp_overlap {
        let _ = writeln!(
            s,
            "  rank {:>4}: comm {} us, overlapped {} us ({})",
            o.rank,
            f(o.comm_us),
            f(o.overlap_us),
            o.overlap_pct
                .map_or("no communication".into(), |p| format!("{p:.2}%"))
        );
    }
}

fn stragglers_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nStragglers");
    if a.stragglers.ranks.is_empty() {
        let _ = writeln!(s, "  none found");
    } else {
        let _ = writeln!(
            s,
            "  ranks {:?} (collective {} on stream {})",
            a.stragglers.ranks,
            a.stragglers.kernel.as_deref().unwrap_or("?"),
            a.stragglers.stream.unwrap_or(-1)
        );
    }
    for n in &a.stragglers.notes {
        let _ = writeln!(s, "  note: {n}");
    }
}

fn launches_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nKernel launches");
    for l in &a.kernel_launch_stats {
        let _ = writeln!(
            s,
            "  rank {:>4}: {} launches, cpu median {} us (p90 {}, mean {}), gpu median {} us (p90 {}), delay median {} us (p90 {}); short kernels {}, runtime outliers {}, delay outliers {}",
            l.rank,
            l.launches,
            f(l.cpu_us.p50),
            f(l.cpu_p90_us),
            f(l.cpu_us.mean),
            f(l.gpu_us.p50),
            f(l.gpu_p90_us),
            f(l.delay_us.p50),
            f(l.delay_p90_us),
            l.short_kernels,
            l.runtime_outliers,
            l.delay_outliers
        );
        for o in &l.outliers {
            let _ = writeln!(
                s,
                "      slow launch: {} of {} took {} us{}",
                o.call,
                o.kernel,
                f(o.cpu_us),
                if o.first_of_kernel {
                    " (its first launch: a one-off, e.g. module loading)"
                } else {
                    ""
                }
            );
        }
    }
}

fn queue_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nQueue length");
    for q in &a.queue_length {
        let _ = writeln!(
            s,
            "  rank {:>4} stream {:>4}: mean {:.1}, max {}, blocked {} us",
            q.rank,
            q.stream,
            q.queue_length.mean,
            q.queue_length.max,
            f(q.blocked_us)
        );
    }
}

fn memory_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nMemory copies and sets");
    for m in &a.memory_bandwidth {
        let _ = writeln!(
            s,
            "  rank {:>4} {:<40} {:>6} ops {:>14} bytes {:>12} us {:>10.3} GB/s",
            m.rank,
            m.name,
            m.count,
            m.bytes,
            f(m.time_us),
            m.bandwidth_gbps
        );
    }
}

fn steps_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nProfiler steps");
    for r in &a.profiler_steps {
        let list: Vec<String> = r
            .steps
            .iter()
            .map(|st| format!("#{} {} us", st.step, f(st.duration_us)))
            .collect();
        let _ = writeln!(s, "  rank {:>4}: {}", r.rank, list.join(", "));
    }
}

fn sequences_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nFrequent kernel sequences");
    for r in &a.frequent_kernel_sequences {
        let top: Vec<String> = r
            .result
            .rows
            .iter()
            .take(3)
            .map(|row| {
                format!(
                    "{}x {} us ({})",
                    row.count,
                    f(row.gpu_kernel_duration_us),
                    row.pattern
                )
            })
            .collect();
        if top.is_empty() {
            let _ = writeln!(s, "  rank {:>4}: none ({})", r.rank, r.result.note);
        } else {
            let _ = writeln!(
                s,
                "  rank {:>4}: {} patterns; top: {}",
                r.rank,
                r.result.patterns_total,
                top.join("; ")
            );
        }
    }
}

fn critical_path_text(s: &mut String, a: &AllAnalyses) {
    let _ = writeln!(s, "\nCritical path");
    for c in &a.critical_path {
        let p = &c.result;
        if !p.ok() {
            let _ = writeln!(
                s,
                "  rank {:>4}: none ({})",
                c.rank,
                p.error().as_deref().unwrap_or("?")
            );
            continue;
        }
        let shares: Vec<String> = p
            .summary
            .iter()
            .filter(|b| b.pct.abs() >= 0.05)
            .map(|b| format!("{} {:.1}%", b.bound_by, b.pct))
            .collect();
        let _ = writeln!(
            s,
            "  rank {:>4}: {} us over {} segments: {}",
            c.rank,
            f(p.total_us),
            p.segments,
            shares.join(", ")
        );
        for seg in p.top_segments.iter().take(5) {
            let _ = writeln!(
                s,
                "    {:>12} us  {:<26} {}",
                f(seg.duration_us),
                seg.bound_by,
                seg.name.as_deref().unwrap_or(seg.edge_type.as_str())
            );
        }
    }
}

/// The cross-rank results of `profile-model merge`: one line per rank, then the stragglers.
pub fn render_merged(m: &MergedAnalyses) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Merged {} analyze outputs ({} mode), ranks {:?}",
        m.sources.len(),
        m.mode.as_str(),
        m.ranks
    );
    let _ = writeln!(
        s,
        "\n  {:>5} {:>14} {:>8} {:>8} {:>12} {:>16}",
        "rank", "window (us)", "idle %", "comp %", "non-comp %", "kernel sum (us)"
    );
    for t in &m.temporal_breakdown {
        let kernel_sum: f64 = m
            .kernel_breakdown_ranks
            .iter()
            .filter(|k| k.rank == t.rank)
            .flat_map(|k| k.kernels.iter().map(|k| k.sum_us))
            .sum();
        let _ = writeln!(
            s,
            "  {:>5} {:>14} {:>8.2} {:>8.2} {:>12.2} {:>16}",
            t.rank,
            f(t.window_us),
            t.idle_pct,
            t.compute_pct,
            t.non_compute_pct,
            f(kernel_sum)
        );
    }
    let st = &m.stragglers;
    let _ = writeln!(s, "\nStragglers");
    if st.ranks.is_empty() {
        let _ = writeln!(s, "  none found");
    } else {
        let _ = writeln!(
            s,
            "  ranks {:?} (collective {} on stream {})",
            st.ranks,
            st.kernel.as_deref().unwrap_or("?"),
            st.stream.unwrap_or(-1)
        );
    }
    for n in &st.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    s
}
