//! Numbers in the report's words: durations with units that fit, shares, the context line.

use super::context::{TraceContext, TraceHolds};
use super::inputs::DiagnosisInputs;
use crate::report::rich_text::{code, kernel, RichText};
use crate::rich;

/// A count with its noun, singular or plural as the count asks: `count(1, "copy")` is "1 copy",
/// `count(3, "copy")` "3 copies", `count(2, "launch")` "2 launches". `noun` is singular with a
/// regular plural; a word whose plural is not is a [`Noun`].
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n: u64 = n.into();
    format!("{n} {}", noun_for(n, noun))
}

/// A word whose plural is not made by [`noun_for`]'s rules, both forms written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

impl Noun {
    /// The form `n` asks for.
    pub fn of(self, n: u64) -> &'static str {
        if n == 1 {
            self.one
        } else {
            self.many
        }
    }
}

/// "This" / "These".
pub const THIS: Noun = Noun {
    one: "This",
    many: "These",
};

/// `noun` (singular, with a regular plural) in the form `n` asks for.
pub fn noun_for(n: u64, noun: &str) -> String {
    if n == 1 {
        return noun.to_string();
    }
    let consonant_y = noun.ends_with('y')
        && !noun
            .chars()
            .rev()
            .nth(1)
            .is_some_and(|c| "aeiou".contains(c));
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "sh", "ch", "x"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

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

/// The advice to replay many launches as one graph, in the device's words; when the trace already
/// replays graphs ([`super::inputs::InUse::graphs`]), where the graphs stop instead.
pub fn graph_advice(i: &DiagnosisInputs) -> RichText {
    if i.in_use.graphs() {
        return format!(
            "The trace already replays {}: the launches counted here run outside them. Capture more of the step (the parts still launched one kernel at a time, e.g. the remaining eager ops or those past a graph break), rather than adding graphs.",
            count(i.in_use.graph_launches, "graph")
        ).into();
    }
    if i.device_kind.has_cuda_toolbox() {
        "Capture the steady-state step in a CUDA graph: `torch.compile(model, mode=\"reduce-overhead\")`, or `torch.cuda.graphs.make_graphed_callables`, so one launch replays every kernel.".into()
    } else {
        rich!(format!("Launch fewer, larger operations on the {}: compile the step with ", i.device_word()), code("torch.compile"), " (its backend fuses small operations) and use the vendor's graph mode where it has one, so one submission runs many operations.")
    }
}

/// The advice to compile with `torch.compile` for `purpose` ("to fuse the small kernels"); when
/// the trace shows compiled code already ([`super::inputs::InUse::compiled`]), where compilation
/// stops instead.
pub fn compile_advice(i: &DiagnosisInputs, purpose: &str) -> RichText {
    if let Some(evidence) = &i.in_use.compiled {
        return rich!(format!("The model is already compiled ({evidence} in the trace): the kernels and host time here come from code outside the compiled graphs. Find the graph breaks and the uncompiled parts ("), code("TORCH_LOGS=graph_breaks,recompiles"), ", ", code("torch._dynamo.explain"), ") and bring them in, rather than compiling again.");
    }
    rich!(
        "Compile the model or the hot function with ",
        code("torch.compile"),
        format!(" {purpose}.")
    )
}

/// The advice for fp32 kernels (`what`, named `names`) when mixed precision (bf16, fp16: autocast)
/// is already in use elsewhere: these ones run outside it. TF32 is not autocast: a TF32 kernel
/// (cuDNN's default for convolutions) says nothing of autocast ([`fp32_advice`] reads it).
pub fn precision_advice(i: &DiagnosisInputs, what: RichText) -> Option<RichText> {
    let used = i.in_use.low_precision.as_ref()?;
    Some(rich!("Reduced precision is already in use (", kernel(used), " runs in it): ", what, " run outside it. Check that ", code("torch.autocast"), " covers them (ops called outside the autocast region, or forced to fp32), rather than turning mixed precision on."))
}

/// What to do about plain fp32 kernels `names` (matrix products, convolutions) on a device with
/// TF32 tensor cores (Ampere or later), read from the kernels' own precision
/// ([`crate::analysis::names::kernel_precision`]): TF32 for the matmuls (PyTorch leaves it off for
/// them: `torch.backends.cuda.matmul.allow_tf32` defaults to False) when it runs faster than fp32;
/// for convolutions, that cuDNN already allows TF32 by default (`torch.backends.cudnn.allow_tf32`
/// defaults to True), saying which convolutions run in it; bf16 (else fp16) autocast as the next
/// step. `None` when the device is not known to have TF32 (the callers' older-GPU advice applies).
pub fn fp32_advice(i: &DiagnosisInputs, names: &[&str]) -> Option<RichText> {
    use crate::analysis::names::{kernel_precision, KernelPrecision};
    use crate::analysis::roofline::Fp32Lever;
    use crate::report::patterns::is_convolution_kernel;
    let tf32_seen = |conv: bool| {
        i.kernels.iter().find(|k| {
            kernel_precision(&k.name) == Some(KernelPrecision::Tf32)
                && is_convolution_kernel(&k.name) == conv
        })
    };
    let has_tf32 = match i.roofline.peaks {
        Some(p) => p.tf32.is_some(),
        None => tf32_seen(true).or(tf32_seen(false)).is_some(),
    };
    if !has_tf32 {
        return None;
    }
    let gpu = gpu_words(i);
    let matmuls = names.iter().any(|n| !is_convolution_kernel(n));
    let convs = names.iter().any(|n| is_convolution_kernel(n));
    let lever = i.roofline.peaks.map(|p| p.fp32_lever());
    let mut parts: Vec<RichText> = Vec::new();
    if let Some(Fp32Lever::Half { .. }) = lever {
        // TF32 at about the fp32 rate (GeForce): bf16 is the lever, said below.
        parts.push(rich!(format!(
            "On {gpu} TF32 runs at about the fp32 rate ({:.0} against {:.0} TFLOP/s), so enabling it gains little",
            i.roofline.peaks.and_then(|p| p.tf32).unwrap_or(0.0),
            i.roofline.peaks.map_or(0.0, |p| p.fp32)
        )));
    } else {
        let rate = match lever {
            Some(Fp32Lever::Tf32(g)) => {
                format!(": on {gpu} tensor cores run them at {g:.0}× the fp32 rate")
            }
            _ => String::new(),
        };
        if matmuls {
            parts.push(rich!(
                "Enable TF32 for the matrix multiplies (",
                code("torch.set_float32_matmul_precision(\"high\")"),
                " or ",
                code("torch.backends.cuda.matmul.allow_tf32 = True"),
                "): PyTorch leaves it off for matmuls by default",
                rate.clone()
            ));
        }
        if convs {
            parts.push(rich!(
                "cuDNN allows TF32 for convolutions by default (",
                code("torch.backends.cudnn.allow_tf32 = True"),
                "), yet these convolutions run in plain fp32: check that it was not turned off, and let cuDNN pick its tensor-core algorithms (",
                code("torch.backends.cudnn.benchmark = True"),
                ")"
            ));
        }
    }
    if let Some(k) = tf32_seen(true) {
        parts.push(rich!(
            "the convolutions already run in TF32 (",
            kernel(&k.name),
            "; cuDNN's default), so TF32 is no further lever for them"
        ));
    }
    let bf16 = i.roofline.peaks.map_or(true, |p| p.bf16.is_some());
    parts.push(if bf16 {
        rich!(
            "the next step is bf16 autocast (",
            code("torch.autocast(\"cuda\", dtype=torch.bfloat16)"),
            ")"
        )
    } else {
        rich!(
            "the next step is fp16 autocast (",
            code("torch.autocast(\"cuda\", dtype=torch.float16)"),
            " with ",
            code("torch.cuda.amp.GradScaler"),
            ")"
        )
    });
    Some(rich!(RichText::join(parts, "; "), "."))
}

/// The GPU in words for the precision advice: the trace's name, else the table's.
fn gpu_words(i: &DiagnosisInputs) -> String {
    match (&i.device_name, &i.roofline.device) {
        (Some(n), _) => format!("the {}", n.trim_start_matches("NVIDIA ")),
        (None, Some(d)) => format!("this GPU (like a {d})"),
        (None, None) => "this GPU".to_string(),
    }
}

/// What to do about fp32 matrix products on this device, from its peaks
/// ([`crate::analysis::roofline::Peaks::fp32_lever`]): TF32 where it runs well above fp32, bf16 or
/// fp16 autocast where it does not (GeForce Ampere/Ada), nothing where no unit is faster; `None`
/// when the device has no roof. `what` is what multiplies ("these fp32 GEMMs", "it").
pub fn fp32_lever_advice(i: &DiagnosisInputs, what: &str) -> Option<RichText> {
    use crate::analysis::roofline::Fp32Lever;
    let peaks = i.roofline.peaks?;
    let gpu = gpu_words(i);
    Some(match peaks.fp32_lever() {
        Fp32Lever::Tf32(g) => rich!("Enable TF32 (", code("torch.backends.cuda.matmul.allow_tf32 = True"), ", ", code("torch.backends.cudnn.allow_tf32 = True"), ", or ", code("torch.set_float32_matmul_precision(\"high\")"), format!("): on {gpu} its tensor cores run {what} at {g:.0}× the fp32 rate; bf16 mixed precision ("), code("torch.autocast(\"cuda\", dtype=torch.bfloat16)"), ") goes further."),
        Fp32Lever::Half { gain, bf16: true } => rich!(format!("Run {what} under bf16 autocast ("), code("torch.autocast(\"cuda\", dtype=torch.bfloat16)"), format!("): on {gpu} tensor cores run bf16 at {gain:.0}× the fp32 rate, while TF32 runs at about the fp32 rate ({:.0} against {:.0} TFLOP/s), so enabling TF32 alone gains little.", peaks.tf32.unwrap_or(0.0), peaks.fp32)),
        Fp32Lever::Half { gain, bf16: false } => rich!(format!("{} has no TF32 or bf16: use fp16 mixed precision (", capitalise(&gpu)), code("torch.autocast(\"cuda\", dtype=torch.float16)"), " with ", code("torch.cuda.amp.GradScaler"), format!(") so {what} run on tensor cores at {gain:.0}× the fp32 rate; for convolutions also use channels-last ("), code("model.to(memory_format=torch.channels_last)"), ")."),
        Fp32Lever::Nothing => format!(
            "{} has no unit faster than fp32 for {what}: the way down is fewer FLOPs (smaller or fused products), not a lower precision.",
            capitalise(&gpu)
        )
        .into(),
    })
}

/// The best gain over fp32 a lower precision gives on this device's matrix products, when known
/// (1.0: none).
pub fn fp32_lever_gain(i: &DiagnosisInputs) -> Option<f64> {
    use crate::analysis::roofline::Fp32Lever;
    Some(match i.roofline.peaks?.fp32_lever() {
        Fp32Lever::Tf32(g) | Fp32Lever::Half { gain: g, .. } => g,
        Fp32Lever::Nothing => 1.0,
    })
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| {
        f.to_uppercase().collect::<String>() + c.as_str()
    })
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
        if let Some(r) = c
            .host_only
            .as_ref()
            .filter(|h| b == TraceHolds::CpuOnly && h.evidence_kind.is_none())
            .and_then(|h| h.cpu.as_ref())
        {
            return format!(
                "Analysed: the host's CPU operators over the {} profiled (operators busy {}, on {} thread{}); no GPU work",
                dur(r.span_ns),
                dur(r.busy_ns),
                r.op_threads,
                if r.op_threads == 1 { "" } else { "s" }
            );
        }
        return format!("Nothing analysed: {}", blocking_words(c, b));
    }
    let ranks = i.ranks.len().max(1) as i64;
    let window = i.time.window_ns / ranks;
    let what = match (c.steps, c.steps_chosen) {
        (Some((a, b)), false) if a == b => format!("step {a}"),
        (Some((a, b)), true) if a == b => format!("step {a} (as chosen)"),
        (Some((a, b)), false) => format!("steps {a}-{b} ({} steps)", i.steps),
        (Some((a, b)), true) => format!("steps {a}-{b} ({} steps, as chosen)", i.steps),
        (None, _) => match c.windows.first() {
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

/// Why nothing can be analysed, in a few words. A run whose device shows (allocations on it,
/// operators that only run there) with no device event recorded is never called CPU-only.
pub fn blocking_words(c: &TraceContext, h: TraceHolds) -> &'static str {
    let device_seen = c
        .host_only
        .as_ref()
        .and_then(|o| o.evidence_kind)
        .is_some_and(|k| k != crate::trace::dialect::DeviceKind::Cpu);
    match h {
        TraceHolds::NoKernelEvents if c.launch_calls + c.graph_launches == 0 => {
            "the device's activity was not recorded (no kernel or copy events)"
        }
        TraceHolds::CpuOnly if device_seen => {
            "no device event recorded (the device ran, but its activity was not recorded)"
        }
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
    fn counts_take_the_form_their_number_asks_for() {
        assert_eq!(count(1u64, "copy"), "1 copy");
        assert_eq!(count(3u64, "copy"), "3 copies");
        assert_eq!(count(2u64, "launch"), "2 launches");
        assert_eq!(count(0u64, "day"), "0 days");
        assert_eq!(THIS.of(1), "This");
        assert_eq!(THIS.of(0), "These");
        assert_eq!(THIS.of(2), "These");
    }

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(dur(840_000), "840 µs");
        assert_eq!(dur(1_234_000), "1.23 ms");
        assert_eq!(dur(12_400_000), "12.4 ms");
        assert_eq!(dur(3_210_000_000), "3.21 s");
    }
}
/// Longest display form before a name is cut.
const SHORT_MAX: usize = 80;

/// Namespace parts a compiler writes for unnamed namespaces: left out of display forms.
const UNNAMED_NAMESPACES: [&str; 4] = [
    "(anonymous namespace)::",
    "`anonymous namespace'::",
    "<unnamed>::",
    "{anonymous}::",
];

/// A kernel name without `void `, unnamed namespaces, and its parameter list.
fn signature_of(name: &str) -> String {
    let mut s = name.strip_prefix("void ").unwrap_or(name).to_string();
    for u in UNNAMED_NAMESPACES {
        s = s.replace(u, "");
    }
    // Cut at the parameter list: the first `(` outside template arguments and braces.
    let mut depth = 0i32;
    let end = s
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '<' | '{' => depth += 1,
                '>' | '}' => depth -= 1,
                _ => {}
            }
            c == '(' && depth == 0
        })
        .map_or(s.len(), |(i, _)| i);
    s[..end].trim().to_string()
}

/// `text` with everything inside `<...>` and `{...}` left out.
fn outside_brackets(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '<' | '{' | '(' => depth += 1,
            '>' | '}' | ')' => depth = (depth - 1).max(0),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Tidies `::` runs: no `::::`, no leading or trailing `::`.
fn tidy_scopes(text: &str) -> String {
    let mut s = text.trim().to_string();
    while s.contains("::::") {
        s = s.replace("::::", "::");
    }
    s.trim_matches(':').trim().to_string()
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        let c: String = text.chars().take(max - 3).collect();
        format!("{c}...")
    } else {
        text.to_string()
    }
}

/// A short display form of a kernel or op name: no `void `, no template arguments or parameters,
/// no unnamed namespaces; never a bare namespace (`at::native::`) or an empty `::::` scope.
pub fn short_name(name: &str) -> String {
    let s = name.strip_prefix("void ").unwrap_or(name);
    if !(s.contains("::") || s.contains('<') || name.starts_with("void ")) {
        return s.chars().take(SHORT_MAX).collect();
    }
    let sig = signature_of(name);
    let plain = tidy_scopes(&outside_brackets(&sig));
    // A bare namespace or nothing: the kernel is in the template arguments (`at::native::<lambda>`).
    let meaningful = !plain.is_empty() && !plain.ends_with("::") && {
        let last = plain.rsplit("::").next().unwrap_or("");
        !last.is_empty() && !matches!(last, "native" | "detail" | "cuda" | "at" | "c10")
    };
    let out = if meaningful { plain } else { tidy_scopes(&sig) };
    let out = if out.is_empty() {
        s.trim().to_string()
    } else {
        out
    };
    cut(&out, SHORT_MAX)
}

/// The template arguments of a signature with their namespaces left out, for telling apart kernels
/// of one template: `<4, at::native::MulFunctor<float>, ...>` → `<4, MulFunctor<float>, ...>`.
fn without_namespaces(sig: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for c in sig.chars().chain(std::iter::once('\0')) {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            let w = tidy_scopes(&word);
            out.push_str(w.rsplit("::").next().unwrap_or(&w));
            word.clear();
        }
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

/// Display forms of several names at once: [`short_name`] where that is unique among them; names
/// whose short forms collide show their template arguments (namespaces left out), then their
/// whole signature, then the whole name: every form is unique, none is a numbered twin.
pub fn short_names(names: &[&str]) -> Vec<String> {
    let forms: [&dyn Fn(&str) -> String; 4] = [
        &|n| short_name(n),
        &|n| {
            let sig = signature_of(n);
            let base = short_name(n);
            match sig.find('<') {
                Some(i) => cut(&format!("{base}{}", without_namespaces(&sig[i..])), 120),
                None => base,
            }
        },
        &|n| without_namespaces(n.strip_prefix("void ").unwrap_or(n)),
        &|n| n.to_string(),
    ];
    let mut out: Vec<String> = names.iter().map(|n| short_name(n)).collect();
    for form in forms.iter().skip(1) {
        let colliding: Vec<usize> = (0..out.len())
            .filter(|&i| out.iter().filter(|f| **f == out[i]).count() > 1)
            .collect();
        if colliding.is_empty() {
            break;
        }
        for i in colliding {
            out[i] = form(names[i]);
        }
    }
    out
}

#[cfg(test)]
mod short_name_tests {
    use super::*;

    #[test]
    fn short_names_are_never_a_bare_namespace_or_an_empty_scope() {
        let pool = "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, int)";
        assert_eq!(short_name(pool), "at::native::max_pool_forward_nchw");
        let unnamed = "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4>(int)";
        assert_eq!(
            short_name(unnamed),
            "at::native::distribution_elementwise_grid_stride_kernel"
        );
        for n in [pool, unnamed, "void at::native::<lambda>(int)"] {
            let s = short_name(n);
            assert!(
                !s.contains("::::") && !s.ends_with("::") && !s.is_empty(),
                "{n} → {s}"
            );
        }
        assert_eq!(short_name("aten::mm"), "aten::mm");
        assert_eq!(short_name("train.py(12): step"), "train.py(12): step");
    }

    #[test]
    fn colliding_short_names_are_told_apart_without_numbers() {
        let fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
        let mul = "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)";
        // Same signature, different parameter lists.
        let a = "void k<float>(int)";
        let b = "void k<float>(long)";
        let out = short_names(&[fill, mul, a, b, "aten::mm"]);
        let unique: std::collections::BTreeSet<&String> = out.iter().collect();
        assert_eq!(unique.len(), out.len(), "{out:?}");
        assert!(out.iter().all(|s| !s.contains(" #")), "{out:?}");
        assert!(
            out[0].contains("FillFunctor") && out[1].contains("MulFunctor"),
            "{out:?}"
        );
        assert_eq!(out[4], "aten::mm");
    }
}

/// Kernel name parts of an optimizer update done per parameter (not a fused or multi-tensor one).
const PER_PARAM_OPTIMIZER_MARKS: [&str; 5] = ["adam", "sgd", "lamb", "adagrad", "rmsprop"];

/// Whether a kernel is an optimizer update done per parameter: a word of its name (split at every
/// character that is not a letter or digit) is an optimizer's (`adam`, `adamw`, `sgd`, ...), so a
/// `lambda` in a template argument is not `lamb`; multi-tensor and fused kernels are not.
pub fn is_per_param_optimizer_kernel(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let is_mark = |w: &str| {
        PER_PARAM_OPTIMIZER_MARKS
            .iter()
            .any(|m| w == *m || w.strip_prefix(m) == Some("w"))
    };
    n.split(|c: char| !c.is_ascii_alphanumeric()).any(is_mark)
        && !n.contains("multi_tensor")
        && !n.contains("fused")
}

/// The optimizer kernels the trace runs per parameter (not fused, not multi-tensor): their count
/// and time, when any; what makes "use a fused optimizer" advice measured, not a template.
pub fn per_param_optimizer(i: &DiagnosisInputs) -> Option<(u64, i64)> {
    let ks: Vec<_> = i
        .kernels
        .iter()
        .filter(|k| is_per_param_optimizer_kernel(&k.name))
        .collect();
    (!ks.is_empty()).then(|| {
        (
            ks.iter().map(|k| k.calls).sum(),
            ks.iter().map(|k| k.total_ns).sum(),
        )
    })
}

/// "Use a fused optimizer ... (the trace runs 412 per-parameter optimizer kernels, 3.1 ms)" when
/// the trace shows per-parameter optimizer kernels; empty otherwise.
pub fn fused_optimizer_words(i: &DiagnosisInputs) -> RichText {
    per_param_optimizer(i).map_or(RichText::default(), |(n, ns)| {
        rich!(
            "; use a fused optimizer (",
            code("foreach=True"),
            "/",
            code("fused=True"),
            format!(
                "): the trace runs {n} per-parameter optimizer kernels ({})",
                dur(ns)
            )
        )
    })
}
