//! The "Roofline" block: the device's roof (peaks per type, memory bandwidth, ridge points), then
//! each kernel as a point (arithmetic intensity, achieved TFLOP/s) with its roof at that intensity and
//! its share of it, the operators likewise, and why the rest of the device time has no figures. The
//! points and the roof are data (`data-metric` figures) for the page to draw on log-log axes.

use super::{block, fact, figure, figure_opt, notes, Block, Cell, Ctx, Inline, Part, Table, Unit};
use crate::analysis::roofline::{Dtype, Judged, RankRoofline};
use crate::report::format;
use crate::report::redact::NameKind;

fn judged_cells(j: &Judged, c: &[(&'static str, String)], time_us: f64) -> Vec<Cell> {
    vec![
        Cell::Text(j.dtype.map(|d| d.as_str().to_string()).unwrap_or_default()),
        Cell::Text(j.bound.map(|b| b.as_str().to_string()).unwrap_or_default()),
        figure(time_us, "roofline-time-us", Unit::Micros, c),
        figure_opt(j.intensity, "roofline-intensity", Unit::Count, c),
        figure(j.tflops, "roofline-tflops", Unit::Count, c),
        figure(j.gbps, "roofline-gbps", Unit::Gbps, c),
        figure_opt(j.roof_tflops, "roofline-roof-tflops", Unit::Count, c),
        figure_opt(j.pct_of_roof, "roofline-pct-of-roof", Unit::Pct, c),
    ]
}

const NUM: [&str; 6] = [
    "Time",
    "FLOP/byte",
    "TFLOP/s",
    "Bandwidth",
    "Roof TFLOP/s",
    "% of roof",
];

fn roof_facts(r: &RankRoofline) -> Vec<Part> {
    let rank = r.rank.to_string();
    let mut facts = Vec::new();
    for d in [
        Dtype::Fp8,
        Dtype::Bf16,
        Dtype::Fp16,
        Dtype::Tf32,
        Dtype::Fp32,
        Dtype::Fp64,
    ] {
        let Some(peak) = r.roof.peaks.of(d) else {
            continue;
        };
        let c = [("rank", rank.clone()), ("dtype", d.as_str().to_string())];
        facts.extend(fact(
            d.as_str_label(),
            peak,
            "roofline-peak-tflops",
            Unit::Count,
            &c,
        ));
        facts.extend(
            r.roof
                .ridge(d)
                .and_then(|x| fact("ridge (FLOP/byte)", x, "roofline-ridge", Unit::Count, &c)),
        );
    }
    let c = [("rank", rank)];
    if r.roof.memory_gbps > 0.0 {
        facts.extend(fact(
            "memory",
            r.roof.memory_gbps,
            "roofline-memory-gbps",
            Unit::Gbps,
            &c,
        ));
    }
    if let Some(l) = &r.roof.host_link {
        facts.extend(fact(
            "host link",
            l.gbps,
            "roofline-link-gbps",
            Unit::Gbps,
            &c,
        ));
    }
    let covered = if r.device_time_us > 0.0 {
        100.0 * r.time_with_figures_us / r.device_time_us
    } else {
        f64::NAN
    };
    facts.extend(fact(
        "device time with figures",
        covered,
        "roofline-coverage-pct",
        Unit::Pct,
        &c,
    ));
    let mfu: Vec<f64> = r.steps.iter().filter_map(|s| s.mfu_pct).collect();
    if !mfu.is_empty() {
        let mean = mfu.iter().sum::<f64>() / mfu.len() as f64;
        facts.extend(fact(
            "MFU (mean of steps)",
            mean,
            "roofline-mfu-pct",
            Unit::Pct,
            &c,
        ));
    }
    vec![Part::Facts(facts)]
}

trait Label {
    fn as_str_label(self) -> &'static str;
}

impl Label for Dtype {
    /// The fact's label: `bf16 peak (TFLOP/s)`.
    fn as_str_label(self) -> &'static str {
        match self {
            Dtype::Fp8 => "fp8 peak (TFLOP/s)",
            Dtype::Bf16 => "bf16 peak (TFLOP/s)",
            Dtype::Fp16 => "fp16 peak (TFLOP/s)",
            Dtype::Tf32 => "tf32 peak (TFLOP/s)",
            Dtype::Fp32 => "fp32 peak (TFLOP/s)",
            _ => "fp64 peak (TFLOP/s)",
        }
    }
}

pub fn roofline(rows: &[RankRoofline], ctx: &Ctx) -> Block {
    let mut parts = ctx.rank_label();
    parts.push(Part::Intro(vec![
        Inline::Text(
            "Achieved against possible: FLOPs and bytes of each operator from its recorded shapes (",
        ),
        Inline::Code("record_shapes=True"),
        Inline::Text(
            "), given to the kernels it launched, against the device's roof at their arithmetic \
             intensity: left of the ridge point memory bandwidth bounds a kernel, right of it compute.",
        ),
    ]));
    let Some(r) = rows.iter().find(|r| r.rank == ctx.rank) else {
        parts.push(Part::Muted("No roofline for this rank.".into()));
        return block("no roofline", parts);
    };
    let estimated = r.roof.source == crate::analysis::roofline::RoofSource::SmCountEstimate;
    parts.push(Part::Muted(match &r.roof.device {
        Some(d) if estimated => format!(
            "{}: peaks estimated from its SM count and the per-SM rates of the {d}; memory bandwidth unknown.",
            r.roof.trace_name.as_deref().unwrap_or("device"),
        ),
        Some(d) => format!(
            "{} → {d} ({}).",
            r.roof.trace_name.as_deref().unwrap_or("device"),
            r.roof.source
        ),
        None => "No roof for this device: figures without % of roof.".into(),
    }));
    parts.extend(roof_facts(r));
    parts.extend(
        crate::page::roofline_chart::roofline_chart(r).map(|c| Part::Roofline(Box::new(c))),
    );
    let rank = r.rank.to_string();
    let kernels: Vec<Vec<Cell>> = r
        .kernels
        .iter()
        .filter(|k| k.calls_with_figures > 0)
        .map(|k| {
            let c = [("rank", rank.clone()), ("kernel", k.name.clone())];
            let mut row = vec![
                Cell::Name(NameKind::Kernel, k.name.clone()),
                Cell::Text(k.family.map(|f| f.as_str().to_string()).unwrap_or_default()),
            ];
            row.extend(judged_cells(&k.judged, &c, k.time_with_figures_us));
            row
        })
        .collect();
    let points = kernels.len();
    if kernels.is_empty() {
        parts.push(Part::Muted("No kernel has FLOP/byte figures.".into()));
    } else {
        parts.push(Part::Table(Table::new(
            &["Kernel", "Family", "Type", "Bound"],
            &NUM,
            kernels,
        )));
    }
    let ops: Vec<Vec<Cell>> = r
        .operators
        .iter()
        .map(|o| {
            let c = [
                ("rank", rank.clone()),
                ("event", o.name.clone()),
                ("shapes", o.shapes.clone()),
                (
                    "dtype",
                    o.judged
                        .dtype
                        .map(|d| d.as_str().to_string())
                        .unwrap_or_default(),
                ),
            ];
            let mut row = vec![
                Cell::Name(NameKind::Op, o.name.clone()),
                Cell::Text(o.shapes.clone()),
            ];
            row.extend(judged_cells(&o.judged, &c, o.kernel_time_us));
            row
        })
        .collect();
    if !ops.is_empty() {
        parts.push(Part::Folded {
            summary: format!("Operators ({})", ops.len()),
            table: Table::new(&["Operator", "Shapes", "Type", "Bound"], &NUM, ops),
        });
    }
    for m in &r.missing {
        parts.push(Part::Muted(format!(
            "Without figures: {} kernels, {} ({}).",
            format::int(m.kernels),
            format::micros(m.time_us),
            m.reason.map_or("", |x| x.as_str())
        )));
    }
    parts.extend(notes(&r.notes));
    block(format!("{points} kernels against the roof"), parts)
}
