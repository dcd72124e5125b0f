//! Numbers in the report's words: durations with units that fit, shares, the context line.

use super::context::{TraceContext, TraceHolds};
use super::inputs::DiagnosisInputs;

/// A duration in ns as a short text with a unit that fits (`840 µs`, `12.4 ms`, `3.21 s`).
pub fn dur(ns: i64) -> String {
    let ns = ns.max(0) as f64;
    if ns < 1e6 {
        format!("{:.0} µs", ns / 1e3)
    } else if ns < 1e9 {
        let ms = ns / 1e6;
        if ms < 10.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.1} ms")
        }
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Microseconds with one decimal (`3.1 µs`).
pub fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1000.0)
}

/// A time relative to a start, for "0-4.5 s" ranges.
fn at(ns: i64) -> String {
    let s = ns as f64 / 1e9;
    if s.abs() < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// "Analysed: steps 3-7 (5 steps), 412 ms of GPU time window; warm-up (steps 1-2, 0-4.50 s) left out".
pub fn analysed_line(c: &TraceContext, i: &DiagnosisInputs) -> String {
    if let Some(b) = c.blocking() {
        return format!("Nothing analysed: {}", blocking_words(b));
    }
    let ranks = i.ranks.len().max(1) as i64;
    let window = i.time.window_ns / ranks;
    let what = match c.steps {
        Some((a, b)) if a == b => format!("step {a}"),
        Some((a, b)) => format!("steps {a}-{b} ({} steps)", i.steps),
        None => match c.windows.first() {
            Some(w) if w.warmup_ns.is_some() => format!(
                "{}-{} of the trace",
                at(w.start_ns - w.trace_start_ns),
                at(w.end_ns - w.trace_start_ns)
            ),
            _ => "the whole trace (no ProfilerStep annotations)".to_string(),
        },
    };
    let per_rank = if ranks > 1 { " per rank" } else { "" };
    let mut line = format!("Analysed: {what}, GPU window {}{per_rank}", dur(window));
    if let (Some(w), Some(warm)) = (c.windows.first(), &c.warmup) {
        if let Some((a, b)) = w.warmup_ns {
            let steps = match (warm.steps.first(), warm.steps.last()) {
                (Some(x), Some(y)) if x == y => format!("step {x}, "),
                (Some(x), Some(y)) => format!("steps {x}-{y}, "),
                _ => String::new(),
            };
            line.push_str(&format!(
                "; warm-up ({steps}{}-{}) left out",
                at(a - w.trace_start_ns),
                at(b - w.trace_start_ns)
            ));
        }
    }
    if c.holds(TraceHolds::Truncated) {
        line.push_str("; the file was cut off mid-write, so only what was read is analysed");
    }
    line
}

/// Why nothing can be analysed, in a few words.
pub fn blocking_words(h: TraceHolds) -> &'static str {
    match h {
        TraceHolds::GraphCapture => "the trace is a graph capture (its kernels did not run)",
        TraceHolds::WarmupOnly => "the trace holds only warm-up",
        TraceHolds::Insufficient => "too little device work",
        TraceHolds::NotPytorch => "not a PyTorch profiler trace",
        TraceHolds::NoKernelEvents => "kernel launches without kernel events",
        TraceHolds::CpuOnly => "no GPU work (a CPU-only run)",
        TraceHolds::Empty => "the capture holds no operation",
        TraceHolds::DeviceEventsCut => "the file is cut before any device event",
        _ => "nothing to diagnose",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(dur(840_000), "840 µs");
        assert_eq!(dur(1_234_000), "1.23 ms");
        assert_eq!(dur(12_400_000), "12.4 ms");
        assert_eq!(dur(3_210_000_000), "3.21 s");
    }
}
/// A short display form of a kernel or op name: no `void `, no template arguments or parameters.
pub fn short_name(name: &str) -> String {
    let s = name.strip_prefix("void ").unwrap_or(name);
    if !(s.contains("::") || s.contains('<') || name.starts_with("void ")) {
        return s.chars().take(80).collect();
    }
    let mut out = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        if depth < 0 {
            break;
        }
    }
    let out = out.trim();
    let out = if out.is_empty() { s.trim() } else { out };
    if out.chars().count() > 80 {
        let cut: String = out.chars().take(77).collect();
        format!("{cut}...")
    } else {
        out.to_string()
    }
}

/// Display forms of several names at once: [`short_name`] where that is unique among them; names
/// whose short forms collide keep their template arguments (cut at 80 characters), then a `#N`.
pub fn short_names(names: &[&str]) -> Vec<String> {
    let short: Vec<String> = names.iter().map(|n| short_name(n)).collect();
    let collides =
        |i: usize, forms: &[String]| forms.iter().filter(|f| **f == forms[i]).count() > 1;
    let mut out: Vec<String> = (0..names.len())
        .map(|i| {
            if !collides(i, &short) {
                return short[i].clone();
            }
            let s = names[i].strip_prefix("void ").unwrap_or(names[i]);
            // The kernel and its template arguments, without its parameter list.
            let mut depth = 0i32;
            let end = s
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '<' => depth += 1,
                        '>' => depth -= 1,
                        _ => {}
                    }
                    c == '(' && depth == 0
                })
                .map_or(s.len(), |(i, _)| i);
            let long = s[..end].trim();
            if long.chars().count() > 80 {
                format!("{}...", long.chars().take(77).collect::<String>())
            } else {
                long.to_string()
            }
        })
        .collect();
    for i in 0..out.len() {
        if collides(i, &out) {
            let n = out[..i].iter().filter(|f| **f == out[i]).count();
            if n > 0 {
                out[i] = format!("{} #{}", out[i], n + 1);
            }
        }
    }
    out
}
