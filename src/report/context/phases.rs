//! A script's phases: the named blocks of user code (its own functions under `with_stack`, or
//! `record_function` annotations) that run one after another on the thread that drives the device,
//! in a trace without ProfilerSteps. Two or more of them make an A/B comparison (a demo or a
//! micro-benchmark of variants): per phase its wall time and what it does (repeated operator,
//! kernels, copies, waits), which variant is fastest and by how much, and why.

use crate::report::rich_text::{code, op, RichText};
use crate::rich;
use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::analysis::names::{
    copy_kind, copy_words, frame_file, frame_function, is_copy_or_fill_call, is_user_code_frame,
    script_file, CopyDirection, NameClass, NameClasses,
};
use crate::report::wording::dur;
use crate::table::{EventKind, TraceTable};

/// At most this many phases: more blocks at one level are a loop's iterations, not variants.
pub const MAX_PHASES: usize = 8;
/// A block shorter than this share of its level's time is a helper between phases, left out.
const MIN_PHASE_SHARE: f64 = 0.02;
/// The phases must cover this share of the driving thread's span of device calls.
const MIN_COVER_SHARE: f64 = 0.5;
/// How deep a lone block is entered looking for its phases.
const MAX_DEPTH: usize = 6;
/// A phase repeats a call this often before its per-call cost is its story.
pub const REPEATED_CALLS: u64 = 50;

/// One phase of a script, with what it did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phase {
    /// The function or annotation (`first_sum`).
    pub name: String,
    pub start_ns: i64,
    pub wall_ns: i64,
    /// The outermost operator it calls most often, with its count.
    pub top_op: Option<(String, u64)>,
    /// Kernels it launched (by correlation), and their device time.
    pub kernels: u64,
    pub kernel_ns: i64,
    /// Kernel launch calls.
    pub launches: u64,
    /// Device copies it made, their time and bytes, and the most frequent copy's name.
    pub copies: u64,
    pub copy_ns: i64,
    pub copy_bytes: i64,
    pub copy_name: Option<String>,
    /// Calls that block the host until the device is done (synchronise, blocking copies).
    pub waits: u64,
    pub wait_ns: i64,
    /// Device-to-host copies it made (reads of device values on the host).
    pub reads: u64,
    /// How many times the block ran (a variant repeated N times in a row: its runs are summed
    /// into one phase); 0 or 1 for a block run once.
    #[serde(default, skip_serializing_if = "is_one_run")]
    pub runs: u64,
}

fn is_one_run(n: &u64) -> bool {
    *n <= 1
}

impl Phase {
    /// Times it ran (at least 1).
    pub fn runs(&self) -> u64 {
        self.runs.max(1)
    }

    /// Wall time per run, ns.
    pub fn wall_per_run(&self) -> i64 {
        self.wall_ns / self.runs() as i64
    }

    /// Device time (kernels and copies) per run, ns.
    pub fn device_per_run(&self) -> i64 {
        device_ns(self) / self.runs() as i64
    }
}

/// A candidate block: (start, end, name id).
type Block = (i64, i64, u32);

/// The phases of `t`: empty unless two or more named blocks of user code (with at least two
/// names) run one after another on the thread with most launch calls and cover most of its span.
pub fn phases_of(t: &TraceTable, classes: &NameClasses) -> Vec<Phase> {
    let Some(thread) = driving_thread(t, classes) else {
        return Vec::new();
    };
    let mut blocks: Vec<Block> = Vec::new();
    let mut scripts: std::collections::BTreeSet<&str> = Default::default();
    let mut calls_span: Option<(i64, i64)> = None;
    for row in 0..t.len() {
        if (t.pid_id(row), t.tid_id(row)) != thread {
            continue;
        }
        let (Some(ts), Some(d)) = (t.ts_at(row), t.dur_at(row)) else {
            continue;
        };
        match t.kind_at(row) {
            EventKind::Runtime | EventKind::Driver => {
                let s = calls_span.get_or_insert((ts, ts + d));
                *s = (s.0.min(ts), s.1.max(ts + d));
            }
            EventKind::PythonFunction => {
                let name = t.name_at(row);
                if is_user_code_frame(name) {
                    blocks.push((ts, ts + d.max(0), t.name_id(row)));
                }
                scripts.extend(script_file(name));
            }
            EventKind::UserAnnotation if is_phase_annotation(classes.of_row(t, row)) => {
                blocks.push((ts, ts + d.max(0), t.name_id(row)));
            }
            _ => {}
        }
    }
    let Some(span) = calls_span else {
        return Vec::new();
    };
    blocks.retain(|b| in_script(t, b.2, &scripts));
    let level = phase_level(blocks);
    let covered: i64 = level.iter().map(|b| b.1 - b.0).sum();
    let names: std::collections::BTreeSet<&str> =
        crate::sort::set_of(level.iter().map(|b| frame_function(t.name_of_id(b.2))));
    if level.len() < 2
        || names.len() < 2
        || (covered as f64) < MIN_COVER_SHARE * (span.1 - span.0) as f64
    {
        return Vec::new();
    }
    // Each name run several times in a row (`eager` × 10, then `fused` × 10) is one variant, its
    // runs summed; more blocks than that at one level are a loop's iterations (whose stages come
    // back after one another), not variants.
    match repeated_variants(t, &level) {
        Some(runs) => merge_runs(measure(t, classes, thread, &level), &runs),
        None if level.len() <= MAX_PHASES => measure(t, classes, thread, &level),
        None => Vec::new(),
    }
}

/// The variants of a level of blocks that each repeat one name in one contiguous run (at least
/// twice, at most [`MAX_PHASES`] names): per variant, its blocks' indexes. `None` when a name
/// comes back after another (a loop's stages: forward, backward, optimizer) or there are too many
/// names.
fn repeated_variants(t: &TraceTable, level: &[Block]) -> Option<Vec<Vec<usize>>> {
    let mut runs: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, b) in level.iter().enumerate() {
        let name = frame_function(t.name_of_id(b.2));
        match runs.last_mut() {
            Some((n, idx)) if *n == name => idx.push(i),
            _ => {
                if runs.iter().any(|(n, _)| *n == name) {
                    return None;
                }
                runs.push((name, vec![i]));
            }
        }
    }
    let repeated = runs.iter().any(|(_, idx)| idx.len() >= 2);
    (runs.len() >= 2 && runs.len() <= MAX_PHASES && repeated)
        .then(|| runs.into_iter().map(|(_, idx)| idx).collect())
}

/// One phase per variant: its runs' figures summed, `runs` set, named by the variant.
fn merge_runs(phases: Vec<Phase>, runs: &[Vec<usize>]) -> Vec<Phase> {
    runs.iter()
        .filter_map(|idx| {
            let mut it = idx.iter().map(|&i| &phases[i]);
            let first = it.next()?.clone();
            let name = first
                .name
                .split(" #")
                .next()
                .unwrap_or(&first.name)
                .to_string();
            let mut p = Phase {
                name,
                runs: idx.len() as u64,
                ..first
            };
            for q in it {
                p.wall_ns += q.wall_ns;
                p.kernels += q.kernels;
                p.kernel_ns += q.kernel_ns;
                p.launches += q.launches;
                p.copies += q.copies;
                p.copy_ns += q.copy_ns;
                p.copy_bytes += q.copy_bytes;
                p.waits += q.waits;
                p.wait_ns += q.wait_ns;
                p.reads += q.reads;
                if let (Some(a), Some(b)) = (p.top_op.as_mut(), q.top_op.as_ref()) {
                    if a.0 == b.0 {
                        a.1 += b.1;
                    }
                }
            }
            Some(p)
        })
        .collect()
}

/// Whether a block is a phase candidate by where it is defined: a Python frame only when it is a
/// function of the script that was run (the file of its `<module>` frame: a library's functions,
/// a serving engine's stages, are not the user's variants); an annotation always.
fn in_script(t: &TraceTable, name: u32, scripts: &std::collections::BTreeSet<&str>) -> bool {
    match frame_file(t.name_of_id(name)) {
        Some(file) => scripts.contains(file),
        None => true,
    }
}

/// A user annotation that can be a phase: not a step, compilation, warm-up, communication or data
/// loading mark.
fn is_phase_annotation(c: NameClass) -> bool {
    !(c.has(NameClass::PROFILER_STEP)
        || c.has(NameClass::PROFILER_STEP_NAME)
        || c.has(NameClass::COMPILE)
        || c.has(NameClass::COMPILED_REGION)
        || c.has(NameClass::WARMUP_LABEL)
        || c.has(NameClass::COMM_OP)
        || c.has(NameClass::DATA_LOADER))
}

/// The (pid, tid) with most kernel launch and copy calls.
fn driving_thread(t: &TraceTable, classes: &NameClasses) -> Option<(u32, u32)> {
    let mut calls: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for row in 0..t.len() {
        if !matches!(t.kind_at(row), EventKind::Runtime | EventKind::Driver) {
            continue;
        }
        let c = classes.of_row(t, row);
        if c.has(NameClass::LAUNCH) || c.has(NameClass::MEMCPY_CALL) {
            *calls.entry((t.pid_id(row), t.tid_id(row))).or_default() += 1;
        }
    }
    calls
        .into_iter()
        .max_by_key(|(k, n)| (*n, std::cmp::Reverse(*k)))
        .map(|(k, _)| k)
}

/// The first level of nesting with more than one block: the outermost blocks, and while there is
/// one, the blocks directly inside it. Blocks under [`MIN_PHASE_SHARE`] of the level are dropped.
fn phase_level(mut blocks: Vec<Block>) -> Vec<Block> {
    crate::sort::sort_by_key(&mut blocks, |b| (b.0, std::cmp::Reverse(b.1)));
    let mut level = outermost(&blocks, None);
    for _ in 0..MAX_DEPTH {
        if level.len() != 1 {
            break;
        }
        let parent = level[0];
        level = outermost(&blocks, Some(parent));
    }
    // A name's blocks together (a variant run N times) are measured against the level.
    let total: i64 = level.iter().map(|b| b.1 - b.0).sum();
    let mut by_name: BTreeMap<u32, i64> = BTreeMap::new();
    for b in &level {
        *by_name.entry(b.2).or_default() += b.1 - b.0;
    }
    level.retain(|b| by_name[&b.2] as f64 >= MIN_PHASE_SHARE * total as f64);
    level
}

/// The blocks not inside another block (within `parent`, leaving `parent` itself out).
fn outermost(sorted: &[Block], parent: Option<Block>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for b in sorted {
        if let Some(p) = parent {
            if *b == p || b.0 < p.0 || b.1 > p.1 {
                continue;
            }
        }
        if out.last().is_some_and(|l| b.0 < l.1) {
            continue;
        }
        out.push(*b);
    }
    out
}

/// Each phase's operators, launches, copies and waits (runtime calls on `thread` inside it; device
/// operations by their launch's correlation).
fn measure(
    t: &TraceTable,
    classes: &NameClasses,
    thread: (u32, u32),
    level: &[Block],
) -> Vec<Phase> {
    let mut phases: Vec<Phase> = level
        .iter()
        .map(|b| Phase {
            name: frame_function(t.name_of_id(b.2)).to_string(),
            start_ns: b.0,
            wall_ns: b.1 - b.0,
            ..Default::default()
        })
        .collect();
    let index = |ts: i64| level.iter().position(|b| ts >= b.0 && ts < b.1);
    // Correlation → (phase, the call's duration when it is an asynchronous copy call).
    let mut by_correlation: HashMap<i64, (usize, Option<i64>)> = HashMap::new();
    let mut ops: Vec<BTreeMap<u32, u64>> = vec![BTreeMap::new(); level.len()];
    let mut op_end: Vec<i64> = vec![i64::MIN; level.len()];
    for row in 0..t.len() {
        if (t.pid_id(row), t.tid_id(row)) != thread {
            continue;
        }
        let (Some(ts), Some(d)) = (t.ts_at(row), t.dur_at(row)) else {
            continue;
        };
        let Some(p) = index(ts) else { continue };
        match t.kind_at(row) {
            EventKind::Runtime | EventKind::Driver => {
                let c = classes.of_row(t, row);
                if let Some(corr) = t.correlation_at(row) {
                    let async_copy =
                        c.has(NameClass::MEMCPY_CALL) && !c.has(NameClass::WAITS_FOR_DEVICE);
                    by_correlation.insert(corr, (p, async_copy.then_some(d.max(0))));
                }
                if c.has(NameClass::LAUNCH) && !is_copy_or_fill_call(t.name_at(row)) {
                    phases[p].launches += 1;
                }
                if c.has(NameClass::WAITS_FOR_DEVICE) {
                    phases[p].waits += 1;
                    phases[p].wait_ns += d.max(0);
                }
            }
            EventKind::CpuOp if ts >= op_end[p] => {
                // Outermost operators only: `aten::to` counts, its `aten::copy_` does not.
                op_end[p] = ts + d.max(0);
                *ops[p].entry(t.name_id(row)).or_default() += 1;
            }
            _ => {}
        }
    }
    let bytes = t.arg("bytes");
    let mut copy_names: Vec<BTreeMap<u32, u64>> = vec![BTreeMap::new(); level.len()];
    for row in 0..t.len() {
        let kind = t.kind_at(row);
        if !matches!(kind, EventKind::Kernel | EventKind::Memcpy) {
            continue;
        }
        let Some(&(p, async_call)) = t.correlation_at(row).and_then(|c| by_correlation.get(&c))
        else {
            continue;
        };
        let d = t.dur_at(row).unwrap_or(0).max(0);
        let ph = &mut phases[p];
        if kind == EventKind::Kernel {
            ph.kernels += 1;
            ph.kernel_ns += d;
        } else {
            ph.copies += 1;
            ph.copy_ns += d;
            ph.copy_bytes += bytes
                .and_then(|c| c.find(row).and_then(|i| c.i64_at(i)))
                .unwrap_or(0)
                .max(0);
            *copy_names[p].entry(t.name_id(row)).or_default() += 1;
            // An asynchronous copy call to the host still blocks it (`.cpu()`, `.item()`).
            let to_host =
                copy_kind(t.name_at(row)).map(|k| k.0) == Some(CopyDirection::DeviceToHost);
            ph.reads += u64::from(to_host);
            if let (true, Some(call_ns)) = (to_host, async_call) {
                ph.waits += 1;
                ph.wait_ns += call_ns;
            }
        }
    }
    number_repeated_names(&mut phases);
    for (p, ph) in phases.iter_mut().enumerate() {
        ph.top_op = most(&ops[p]).map(|(id, n)| (t.name_of_id(id).to_string(), n));
        ph.copy_name = most(&copy_names[p]).map(|(id, _)| t.name_of_id(id).to_string());
    }
    phases
}

/// A name that several phases share gets its occurrence: `unfused #1`, `unfused #2`.
fn number_repeated_names(phases: &mut [Phase]) {
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for p in phases.iter() {
        *total.entry(p.name.clone()).or_default() += 1;
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for p in phases.iter_mut() {
        if total[&p.name] > 1 {
            let k = seen.entry(p.name.clone()).or_default();
            *k += 1;
            p.name = format!("{} #{k}", p.name);
        }
    }
}

/// The most frequent name id (the smallest id on a tie).
fn most(counts: &BTreeMap<u32, u64>) -> Option<(u32, u64)> {
    counts
        .iter()
        .max_by_key(|(id, n)| (**n, std::cmp::Reverse(**id)))
        .map(|(id, n)| (*id, *n))
}

/// What one phase did, in a few words: "4096 × `aten::to`; 4096 device-to-host copies into
/// pageable memory; host blocked 53.4 ms in 4096 waits".
fn phase_words(p: &Phase) -> RichText {
    let mut parts: Vec<RichText> = Vec::new();
    if let Some((top, n)) = &p.top_op {
        parts.push(rich!(format!("{n} × "), op(top)));
    }
    if p.kernels > 0 {
        parts.push(rich!(format!(
            "{} kernels ({} on the GPU)",
            p.kernels,
            dur(p.kernel_ns)
        )));
    }
    if p.copies > 0 {
        let what = p
            .copy_name
            .as_deref()
            .and_then(copy_words)
            .map_or("copies".to_string(), |w| format!("× {w}"));
        parts.push(rich!(format!("{} {what} ({})", p.copies, dur(p.copy_ns))));
    }
    if p.waits > 0 {
        parts.push(rich!(format!(
            "host blocked {} in {} blocking calls",
            dur(p.wait_ns),
            p.waits
        )));
    }
    if parts.is_empty() {
        parts.push("host work only".into());
    }
    let runs = if p.runs() > 1 {
        format!(
            " × {} runs, {} wall and {} on the device per run, {} in all",
            p.runs(),
            dur(p.wall_per_run()),
            dur(p.device_per_run()),
            dur(p.wall_ns)
        )
    } else {
        format!(" {}", dur(p.wall_ns))
    };
    rich!(op(&p.name), runs, " (", RichText::join(parts, "; "), ")")
}

/// Why the slowest phase is slow, from its measured parts, and what the fastest does instead.
pub fn why_words(slow: &Phase, fast: &Phase) -> RichText {
    let per = |n: u64| dur(slow.wall_ns / n.max(1) as i64);
    // A read is one round trip however many blocking calls make it (the copy, a synchronise).
    let trips = |p: &Phase| {
        if p.reads > 0 {
            p.reads.min(p.waits)
        } else {
            p.waits
        }
    };
    if trips(slow) >= REPEATED_CALLS && slow.waits > fast.waits.saturating_mul(4) {
        return rich!(op(&slow.name), format!(" makes {} blocking round trips to the device ({} of wall time each, {} of it blocked in the calls): each per-element read (", trips(slow), per(trips(slow)), dur(slow.wait_ns / trips(slow).max(1) as i64)), code(".cpu()"), ", ", code(".item()"), ") makes the host wait for the device and then for the copy before it can go on; ", op(&fast.name), format!(" makes {}: batch the reads into one copy of the whole tensor, or keep the work on the device.", trips(fast)));
    }
    if slow.launches >= REPEATED_CALLS
        && slow.launches > fast.launches.saturating_mul(2)
        && slow.kernel_ns * 2 < slow.wall_ns
    {
        return rich!(op(&slow.name), format!(" launches {} kernels for {} of GPU work, {} of wall time per launch: the host's per-launch cost sets its pace; ", slow.launches, dur(slow.kernel_ns), per(slow.launches)), op(&fast.name), format!(" launches {}: fewer, larger kernels (one vectorised op, fusion) remove it.", fast.launches));
    }
    if slow.kernel_ns * 2 >= slow.wall_ns && fast.kernel_ns < slow.kernel_ns {
        return spends_against(
            (slow, fast),
            "kernels",
            |p| p.kernel_ns,
            format!(
                ": the difference is device work ({} kernels against {}).",
                slow.kernels, fast.kernels
            ),
        );
    }
    if slow.copy_ns > fast.copy_ns && slow.copy_ns * 4 >= slow.wall_ns {
        return spends_against(
            (slow, fast),
            "copies",
            |p| p.copy_ns,
            format!("{}.", rate_words(slow, fast)),
        );
    }
    rich!(
        "the difference is host time: ",
        op(&slow.name),
        format!(
            " spends {} outside kernels and copies, ",
            dur((slow.wall_ns - slow.kernel_ns - slow.copy_ns).max(0))
        ),
        op(&fast.name),
        format!(
            " {}.",
            dur((fast.wall_ns - fast.kernel_ns - fast.copy_ns).max(0))
        )
    )
}

/// "`slow` spends 3 ms in `what` against 1 ms for `fast`" and `tail`, the times read by `ns`.
fn spends_against(
    (slow, fast): (&Phase, &Phase),
    what: &str,
    ns: impl Fn(&Phase) -> i64,
    tail: String,
) -> RichText {
    rich!(
        op(&slow.name),
        format!(
            " spends {} in {what} against {} for ",
            dur(ns(slow)),
            dur(ns(fast))
        ),
        op(&fast.name),
        tail
    )
}

/// ", 2.5 GB/s against 12.6 GB/s" when both phases' copies have bytes.
fn rate_words(slow: &Phase, fast: &Phase) -> String {
    let rate = |p: &Phase| {
        (p.copy_bytes > 0 && p.copy_ns > 0).then(|| p.copy_bytes as f64 / p.copy_ns as f64)
    };
    match (rate(slow), rate(fast)) {
        (Some(a), Some(b)) => format!(" ({a:.1} GB/s against {b:.1} GB/s)"),
        _ => String::new(),
    }
}

/// A phase's host time per launch above this (ns) is not dispatch: the host did one-off work.
pub const COLD_HOST_PER_LAUNCH_NS: i64 = 1_000_000;

/// The device time of a phase: its kernels and copies, ns.
fn device_ns(p: &Phase) -> i64 {
    p.kernel_ns + p.copy_ns
}

/// A phase run once, cold: it has device work, few launches and waits (no loop of them), and a
/// host time far above what launching its work costs (≥ 1 ms per launch): the host time is the
/// first call's set-up (library handles, algorithm selection, module loading), not the code.
pub fn is_cold_single_shot(p: &Phase) -> bool {
    let host = p.wall_ns - device_ns(p);
    let launches = p.launches.max(p.kernels).max(1) as i64;
    device_ns(p) > 0
        && p.launches < REPEATED_CALLS
        && p.waits < REPEATED_CALLS
        && host >= COLD_HOST_PER_LAUNCH_NS * launches
}

/// Phases each run once, cold: ranked by their device time, the host time said to be set-up.
fn cold_comparison(phases: &[Phase], each: RichText) -> RichText {
    let fast = phases.iter().min_by_key(|p| (device_ns(p), p.start_ns));
    let slow = phases.iter().max_by_key(|p| (device_ns(p), -p.start_ns));
    let (Some(fast), Some(slow)) = (fast, slow) else {
        return RichText::default();
    };
    let ratio = device_ns(slow) as f64 / device_ns(fast).max(1) as f64;
    rich!(
        format!("A comparison of {} phases run one after another, each once and cold: ", phases.len()),
        each,
        ". On the device ",
        op(&fast.name),
        format!(" is the fastest, {ratio:.1}× faster than "),
        op(&slow.name),
        format!(
            " ({} against {} of kernels and copies). Their host times are the first calls' set-up (library handles such as cuDNN/cuBLAS, algorithm selection, module loading), paid once, so they do not rank the phases: time each phase again after an untimed first call.",
            dur(device_ns(fast)),
            dur(device_ns(slow))
        )
    )
}

/// The report's main sentence for a trace of phases: each phase, the fastest against the slowest,
/// and why. `None` with fewer than two phases.
pub fn comparison_sentence(phases: &[Phase]) -> Option<RichText> {
    if phases.len() < 2 {
        return None;
    }
    let each = RichText::join(phases.iter().map(phase_words), "; ");
    if phases.iter().all(is_cold_single_shot) {
        return Some(cold_comparison(phases, each));
    }
    let (fast, slow) = fastest_and_slowest(phases)?;
    let ratio = slow.wall_per_run() as f64 / fast.wall_per_run().max(1) as f64;
    let repeated = phases.iter().any(|p| p.runs() > 1);
    let per_run = if repeated { " per run" } else { "" };
    Some(rich!(
        if repeated {
            format!("A comparison of {} variants, each run several times in a row (named regions of the script, not a training or serving step): ", phases.len())
        } else {
            format!("A comparison of {} phases run one after another (named blocks of the script, not a training or serving step): ", phases.len())
        },
        each,
        ". ",
        op(&fast.name),
        format!(" is the fastest, {ratio:.1}× faster than "),
        op(&slow.name),
        format!(
            " ({} against {} of wall time{per_run}; {} against {} on the device); why: ",
            dur(fast.wall_per_run()),
            dur(slow.wall_per_run()),
            dur(fast.device_per_run()),
            dur(slow.device_per_run())
        ),
        why_words(slow, fast)
    ))
}

/// The phases with the least and the most wall time per run (the earlier on a tie).
pub fn fastest_and_slowest(phases: &[Phase]) -> Option<(&Phase, &Phase)> {
    let fast = phases
        .iter()
        .min_by_key(|p| (p.wall_per_run(), p.start_ns))?;
    let slow = phases
        .iter()
        .max_by_key(|p| (p.wall_per_run(), -p.start_ns))?;
    Some((fast, slow))
}
