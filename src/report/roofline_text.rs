//! The roofline for the CLI: per rank, the device's roof, how much of the device time has figures
//! (and why the rest has none), then the kernels and operators with achieved TFLOP/s, GB/s, intensity
//! and % of roof; per step, model FLOPs and MFU. The same rows as CSV.

use super::views_text::Grid;
use crate::analysis::roofline::{
    Judged, KernelRoofline, OperatorRoofline, RankRoofline, RooflineResult, StepRoofline,
};

/// Rows listed per table in the text form (the CSV and JSON have all).
const TEXT_ROWS: usize = 25;

fn fixed(x: f64, d: usize) -> String {
    format!("{x:.d$}")
}

/// A figure with 3 significant digits (`0.000123`, `1.23`, `1230`).
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    let d = (2 - mag).clamp(0, 9) as usize;
    format!("{x:.d$}")
}

fn opt_sig(v: Option<f64>) -> String {
    v.map(sig).unwrap_or_default()
}

fn judged_cells(j: &Judged) -> Vec<String> {
    vec![
        j.dtype.map(|d| d.as_str().to_string()).unwrap_or_default(),
        sig(j.flops / 1e9),
        sig(j.bytes / 1e6),
        sig(j.tflops),
        sig(j.gbps),
        opt_sig(j.intensity),
        opt_sig(j.roof_tflops),
        opt_sig(j.pct_of_roof),
        j.bound.map(|b| b.as_str().to_string()).unwrap_or_default(),
    ]
}

const JUDGED_HEADER: [&str; 9] = [
    "dtype",
    "gflop",
    "mbytes",
    "tflops",
    "gbps",
    "flop_per_byte",
    "roof_tflops",
    "pct_of_roof",
    "bound",
];

fn kernel_grid(rank: i64, rows: &[KernelRoofline], limit: usize) -> Grid {
    let mut header = vec![
        "rank",
        "kernel",
        "family",
        "calls",
        "time_us",
        "with_figures_us",
    ];
    header.extend(JUDGED_HEADER);
    header.push("missing");
    let mut g = Grid {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows: Vec::new(),
    };
    for k in rows.iter().take(limit) {
        let mut r = vec![
            rank.to_string(),
            k.name.clone(),
            k.family.map(|f| f.as_str().to_string()).unwrap_or_default(),
            k.calls.to_string(),
            fixed(k.time_us, 1),
            fixed(k.time_with_figures_us, 1),
        ];
        r.extend(judged_cells(&k.judged));
        r.push(
            k.missing
                .map(|m| m.as_str().to_string())
                .unwrap_or_default(),
        );
        g.rows.push(r);
    }
    g
}

fn operator_grid(rank: i64, rows: &[OperatorRoofline], limit: usize) -> Grid {
    let mut header = vec![
        "rank",
        "operator",
        "shapes",
        "family",
        "calls",
        "kernel_time_us",
    ];
    header.extend(JUDGED_HEADER);
    header.push("main_kernel");
    let mut g = Grid {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows: Vec::new(),
    };
    for o in rows.iter().take(limit) {
        let mut r = vec![
            rank.to_string(),
            o.name.clone(),
            o.shapes.clone(),
            o.family.map(|f| f.as_str().to_string()).unwrap_or_default(),
            o.calls.to_string(),
            fixed(o.kernel_time_us, 1),
        ];
        r.extend(judged_cells(&o.judged));
        r.push(o.main_kernel.clone());
        g.rows.push(r);
    }
    g
}

fn step_grid(rank: i64, steps: &[StepRoofline]) -> Grid {
    let mut g = Grid {
        header: [
            "rank",
            "step",
            "duration_us",
            "gflop",
            "tflops",
            "dtype",
            "peak_tflops",
            "mfu_pct",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: Vec::new(),
    };
    for s in steps {
        g.rows.push(vec![
            rank.to_string(),
            s.step.to_string(),
            fixed(s.duration_us, 1),
            sig(s.flops / 1e9),
            sig(s.tflops),
            s.dtype.map(|d| d.as_str().to_string()).unwrap_or_default(),
            opt_sig(s.peak_tflops),
            opt_sig(s.mfu_pct),
        ]);
    }
    g
}

/// The roof in one line: `A100 SXM4 80GB (datasheet): bf16 312, fp16 312, tf32 156, fp32 19.5, fp64
/// 19.5 TFLOP/s; memory 2039 GB/s; host link PCIe 4.0 x16 (31.5 GB/s)`.
pub fn roof_line(r: &RankRoofline) -> String {
    let roof = &r.roof;
    let Some(dev) = &roof.device else {
        return format!(
            "device: {} (no roof)",
            roof.trace_name.as_deref().unwrap_or("unknown")
        );
    };
    let p = &roof.peaks;
    let mut peaks = Vec::new();
    for (label, v) in [
        ("fp8", p.fp8),
        ("bf16", p.bf16),
        ("fp16", Some(p.fp16)),
        ("tf32", p.tf32),
        ("fp32", Some(p.fp32)),
        ("fp64", Some(p.fp64)),
    ] {
        if let Some(v) = v.filter(|v| *v > 0.0) {
            peaks.push(format!("{label} {}", sig(v)));
        }
    }
    let from = if roof.source == crate::analysis::roofline::RoofSource::SmCountEstimate {
        format!("estimated from its SM count and the per-SM rates of the {dev}")
    } else {
        format!("{dev} ({})", roof.source)
    };
    format!(
        "device: {} → {from}: {} TFLOP/s; memory {}; host link {}",
        roof.trace_name.as_deref().unwrap_or("?"),
        peaks.join(", "),
        if roof.memory_gbps > 0.0 {
            format!("{} GB/s", sig(roof.memory_gbps))
        } else {
            "unknown".to_string()
        },
        roof.host_link
            .as_ref()
            .map_or("unknown".into(), |l| l.label())
    )
}

fn rank_text(r: &RankRoofline, per_step: bool) -> String {
    let mut out = format!("== rank {} ==\n{}\n", r.rank, roof_line(r));
    let pct = if r.device_time_us > 0.0 {
        100.0 * r.time_with_figures_us / r.device_time_us
    } else {
        0.0
    };
    out += &format!(
        "device time {:.1} us, with FLOP/byte figures {:.1} us ({pct:.1}%); {} GFLOP, {} MB modelled\n",
        r.device_time_us,
        r.time_with_figures_us,
        sig(r.flops / 1e9),
        sig(r.bytes / 1e6)
    );
    for m in &r.missing {
        out += &format!(
            "  without figures: {} kernels, {:.1} us: {}\n",
            m.kernels,
            m.time_us,
            m.reason.map_or("", |x| x.as_str())
        );
    }
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    out += &format!("\nkernels (top {TEXT_ROWS} by time)\n");
    out += &kernel_grid(r.rank, &r.kernels, TEXT_ROWS).to_text(70);
    out += &format!("\noperators (top {TEXT_ROWS} by kernel time)\n");
    out += &operator_grid(r.rank, &r.operators, TEXT_ROWS).to_text(50);
    if per_step {
        out += "\nsteps (model FLOPs of the operators started in each step; MFU against the peak of their main type)\n";
        out += &step_grid(r.rank, &r.steps).to_text(40);
    }
    out
}

/// The text form.
pub fn roofline_text(res: &RooflineResult, per_step: bool) -> String {
    if res.ranks.is_empty() {
        return "no ranks\n".into();
    }
    res.ranks
        .iter()
        .map(|r| rank_text(r, per_step))
        .collect::<Vec<_>>()
        .join("\n")
}

/// CSV: every kernel and operator row (a `level` column says which), or the steps with `per_step`.
pub fn roofline_csv(res: &RooflineResult, per_step: bool) -> String {
    if per_step {
        let mut g = step_grid(0, &[]);
        for r in &res.ranks {
            g.rows.extend(step_grid(r.rank, &r.steps).rows);
        }
        return g.to_csv();
    }
    let mut header = vec![
        "level", "rank", "name", "shapes", "family", "calls", "time_us",
    ];
    header.extend(JUDGED_HEADER);
    header.extend(["roof_gbps", "missing_or_main_kernel"]);
    let mut g = Grid {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows: Vec::new(),
    };
    let tail = |j: &Judged| opt_sig(j.roof_gbps);
    for r in &res.ranks {
        for k in &r.kernels {
            let mut row = vec![
                "kernel".to_string(),
                r.rank.to_string(),
                k.name.clone(),
                String::new(),
                k.family.map(|f| f.as_str().to_string()).unwrap_or_default(),
                k.calls.to_string(),
                fixed(k.time_us, 3),
            ];
            row.extend(judged_cells(&k.judged));
            row.push(tail(&k.judged));
            row.push(
                k.missing
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default(),
            );
            g.rows.push(row);
        }
        for o in &r.operators {
            let mut row = vec![
                "operator".to_string(),
                r.rank.to_string(),
                o.name.clone(),
                o.shapes.clone(),
                o.family.map(|f| f.as_str().to_string()).unwrap_or_default(),
                o.calls.to_string(),
                fixed(o.kernel_time_us, 3),
            ];
            row.extend(judged_cells(&o.judged));
            row.push(tail(&o.judged));
            row.push(o.main_kernel.clone());
            g.rows.push(row);
        }
    }
    g.to_csv()
}
