//! Markdown rendering of the quick summary (the diagnosis report builds on it).

use crate::analysis::summary::Summary;
use std::fmt::Write;

/// Escapes `|` and newlines so a name fits in one Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A name as inline code that fits in one table cell (`|` escaped, backticks replaced by `'`).
pub fn code_cell(text: &str) -> String {
    format!("`{}`", cell(text).replace('`', "'"))
}

/// "; 412 of them replayed from CUDA graphs" when graph launches ran kernels, else nothing: a
/// replayed kernel is not a kernel launched on its own.
pub fn replayed_words(replayed: u64) -> String {
    if replayed == 0 {
        String::new()
    } else {
        format!("; {replayed} of them replayed from CUDA graphs, not launched one by one")
    }
}

/// The quick summary as Markdown.
pub fn summary_markdown(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Quick summary\n");
    let _ = writeln!(out, "- Events: {}", s.events);
    let _ = writeln!(
        out,
        "- GPU kernels: {} ({} distinct{}), {:.1} µs in total",
        s.kernels,
        s.distinct_kernels,
        replayed_words(s.replayed_kernels),
        s.kernel_time_us
    );
    let _ = writeln!(out, "- Trace span: {:.1} µs", s.span_us);
    if let Some(d) = &s.device {
        let _ = writeln!(out, "- Device: {d}");
    }
    if let Some(r) = s.rank {
        let _ = writeln!(
            out,
            "- Rank: {r}{}",
            s.world_size.map(|w| format!(" of {w}")).unwrap_or_default()
        );
    }
    let _ = writeln!(out, "\n| Category | Events |\n|---|---:|");
    for c in &s.categories {
        let _ = writeln!(out, "| {} | {} |", cell(&c.category), c.events);
    }
    if !s.top_kernels.is_empty() {
        let _ = writeln!(
            out,
            "\n| % Time | Calls | Total (μs) | Avg (μs) | Kernel |\n|---:|---:|---:|---:|---|"
        );
        for k in &s.top_kernels {
            let _ = writeln!(
                out,
                "| {:.1} | {} | {:.1} | {:.2} | {} |",
                k.pct_of_kernel_time,
                k.calls,
                k.total_us,
                k.avg_us,
                cell(&k.name)
            );
        }
    }
    out
}
