//! The TensorBoard-style views (operators, kernels, memory, step time) as text tables and CSV for
//! the CLI: each view becomes one [`Grid`] (a header and rows of cells), rendered either way.

use crate::analysis::views::kernel_table::KernelsResult;
use crate::analysis::views::memory::MemoryResult;
use crate::analysis::views::modules::ModulesResult;
use crate::analysis::views::operators::OperatorsResult;
use crate::analysis::views::step_time::{StepCategory, StepTime, StepTimeResult};
use crate::analysis::views::RankView;
use crate::table::query::csv_field;

/// A table: column names and rows of cells (already formatted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Grid {
    fn new(header: &[&str]) -> Grid {
        Grid {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// RFC 4180 CSV, one line per row.
    pub fn to_csv(&self) -> String {
        let line = |cells: &[String]| {
            cells
                .iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut out = line(&self.header) + "\n";
        for r in &self.rows {
            out += &(line(r) + "\n");
        }
        out
    }

    /// Aligned columns; text cells longer than `max_width` are cut with an ellipsis.
    pub fn to_text(&self, max_width: usize) -> String {
        let cut = |s: &str| -> String {
            if s.chars().count() > max_width {
                s.chars().take(max_width - 1).collect::<String>() + "…"
            } else {
                s.to_string()
            }
        };
        let cells: Vec<Vec<String>> = std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| r.iter().map(|c| cut(c)).collect())
            .collect();
        let widths: Vec<usize> = (0..self.header.len())
            .map(|i| {
                cells
                    .iter()
                    .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for r in &cells {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
                .collect();
            out += line.join("  ").trim_end();
            out.push('\n');
        }
        out
    }
}

/// A number with up to 3 decimals, no trailing zeros.
fn num(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

/// Operators of every rank.
pub fn operators_grid(ranks: &[RankView<OperatorsResult>]) -> Grid {
    let by_shape = ranks.iter().any(|r| r.result.by_shape);
    let mut header = vec!["rank", "name"];
    if by_shape {
        header.push("input_shapes");
    }
    header.extend([
        "calls",
        "host_total_us",
        "host_self_us",
        "device_total_us",
        "device_self_us",
        "device_ops",
    ]);
    let mut g = Grid::new(&header);
    for rv in ranks {
        for o in &rv.result.rows {
            let mut row = vec![rv.rank.to_string(), o.name.clone()];
            if by_shape {
                row.push(opt(&o.input_shapes));
            }
            row.extend([
                o.calls.to_string(),
                num(o.host_total_us),
                num(o.host_self_us),
                num(o.device_total_us),
                num(o.device_self_us),
                o.device_ops.to_string(),
            ]);
            g.rows.push(row);
        }
    }
    g
}

/// Kernels of every rank.
pub fn kernels_grid(ranks: &[RankView<KernelsResult>]) -> Grid {
    let mut g = Grid::new(&[
        "rank",
        "name",
        "type",
        "calls",
        "total_us",
        "mean_us",
        "min_us",
        "max_us",
        "top_operator",
        "grid",
        "block",
        "registers_per_thread",
        "shared_memory_bytes",
        "blocks_per_sm",
        "est_achieved_occupancy_pct",
        "tensor_cores",
    ]);
    for rv in ranks {
        for k in &rv.result.rows {
            g.rows.push(vec![
                rv.rank.to_string(),
                k.name.clone(),
                k.kernel_type
                    .map(|t| t.as_str().to_string())
                    .unwrap_or_default(),
                k.calls.to_string(),
                num(k.total_us),
                num(k.mean_us),
                num(k.min_us),
                num(k.max_us),
                opt(&k.top_operator),
                opt(&k.grid),
                opt(&k.block),
                opt(&k.registers_per_thread),
                opt(&k.shared_memory_bytes),
                k.blocks_per_sm.map(num).unwrap_or_default(),
                k.est_achieved_occupancy_pct.map(num).unwrap_or_default(),
                k.tensor_cores.to_string(),
            ]);
        }
    }
    g
}

/// Step time of every rank: one row per step, then the average.
pub fn steps_grid(ranks: &[RankView<StepTimeResult>]) -> Grid {
    let mut header: Vec<String> = ["rank", "step", "start_us", "end_us", "total_us"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(StepCategory::ALL.iter().map(|c| format!("{c}_us")));
    let mut g = Grid {
        header,
        rows: Vec::new(),
    };
    let row = |rank: i64, label: String, s: &StepTime| -> Vec<String> {
        let mut r = vec![
            rank.to_string(),
            label,
            num(s.start_us),
            num(s.end_us),
            num(s.total_us),
        ];
        r.extend(s.parts.iter().map(|p| num(p.1)));
        r
    };
    for rv in ranks {
        for s in &rv.result.steps {
            let label = s.step.map_or("all".into(), |n| n.to_string());
            g.rows.push(row(rv.rank, label, s));
        }
        if let Some(a) = &rv.result.average {
            g.rows.push(row(rv.rank, "average".into(), a));
        }
    }
    g
}

/// The memory curves of every rank and device (the CSV form).
pub fn memory_curve_grid(ranks: &[RankView<MemoryResult>]) -> Grid {
    let mut g = Grid::new(&[
        "rank",
        "device",
        "ts_us",
        "allocated_bytes",
        "reserved_bytes",
    ]);
    for rv in ranks {
        for d in &rv.result.devices {
            for p in &d.curve {
                g.rows.push(vec![
                    rv.rank.to_string(),
                    d.device.clone(),
                    num(p.ts_us),
                    p.allocated_bytes.to_string(),
                    opt(&p.reserved_bytes),
                ]);
            }
        }
    }
    g
}

/// The memory of every rank as text: per device its peak, then the blocks alive at the peak.
pub fn memory_text(ranks: &[RankView<MemoryResult>]) -> String {
    let mib = |b: i64| num(b as f64 / (1024.0 * 1024.0));
    let mut out = String::new();
    for rv in ranks {
        if rv.result.devices.is_empty() {
            out += &format!("rank {}: {}\n", rv.rank, rv.result.note);
        }
        for d in &rv.result.devices {
            out += &format!(
                "rank {} {}: peak {} MiB allocated at {} µs (reserved up to {} MiB), {} events; {} MiB of it in blocks the trace saw allocated, {} MiB from before it\n",
                rv.rank,
                d.device,
                mib(d.peak_allocated_bytes),
                num(d.peak_ts_us),
                d.peak_reserved_bytes.map(mib).unwrap_or("?".into()),
                d.events,
                mib(d.alive_at_peak_bytes),
                mib(d.allocated_before_trace_bytes),
            );
            let mut g = Grid::new(&["bytes", "allocated_at_us", "operator"]);
            for a in &d.alive_at_peak {
                g.rows
                    .push(vec![a.bytes.to_string(), num(a.ts_us), opt(&a.operator)]);
            }
            if !g.rows.is_empty() {
                out += &g.to_text(100);
            }
        }
    }
    out
}

/// The module tree of every rank, indented by depth in the name column.
pub fn modules_grid(ranks: &[RankView<ModulesResult>]) -> Grid {
    let mut g = Grid::new(&["rank", "module", "path", "calls", "host_us", "device_us"]);
    for rv in ranks {
        for m in &rv.result.rows {
            g.rows.push(vec![
                rv.rank.to_string(),
                format!("{}{}", "  ".repeat(m.depth as usize), m.name),
                m.path.clone(),
                m.calls.to_string(),
                num(m.host_us),
                num(m.device_us),
            ]);
        }
    }
    g
}
