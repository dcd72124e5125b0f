//! Shared preparation for the GPU analyses: selecting device rows per mode, joining launches by
//! correlation, HTA-compatible rounding and step filter, kernel types, HTA's interval merge and statistics.

use serde::{Deserialize, Serialize};

use super::frame::{in_frame, Frame};
pub use super::names::{
    is_collective_name, is_hta_launch_call, is_hta_queue_launch_call, is_launch_call,
};
use super::names::{
    is_dma_name, is_hta_collective_name, is_hta_memory_name, is_hta_other_name,
    profiler_step_number, NameClass, NameClasses,
};
use super::options::{AnalysisOptions, Mode};
use super::step_filter::{hta_last_step_cut, LastStepCut};
use crate::table::{EventKind, TraceTable};

crate::stable_enum! {
    /// What a device operation does.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum KernelType {
        Computation,
        Communication,
        Memory,
        /// Neither (HTA-compat only: e.g. `Event Sync`); dropped from the type breakdowns.
        Other,
    }
}

impl KernelType {
    /// Bit of the type in overlap masks (COMPUTATION=1, COMMUNICATION=2, MEMORY=4).
    pub fn bit(self) -> u8 {
        match self {
            KernelType::Computation => 1,
            KernelType::Communication => 2,
            KernelType::Memory => 4,
            KernelType::Other => 0,
        }
    }
}

/// Kernel type with HTA 0.5.0's name patterns (anchored, first hit wins).
pub fn hta_kernel_type(name: &str) -> KernelType {
    if is_hta_collective_name(name) {
        KernelType::Communication
    } else if is_hta_memory_name(name) {
        KernelType::Memory
    } else if is_hta_other_name(name) {
        KernelType::Other
    } else {
        KernelType::Computation
    }
}

/// Kernel type by what the event is (exact mode).
pub fn exact_kernel_type(kind: EventKind, name: &str) -> KernelType {
    match kind {
        EventKind::Memcpy | EventKind::Memset => KernelType::Memory,
        // Accelerator DMA (MTIA `dma_request`).
        EventKind::AcceleratorOp if is_dma_name(name) => KernelType::Memory,
        _ if is_collective_name(name) => KernelType::Communication,
        _ => KernelType::Computation,
    }
}

/// One device operation selected for the analyses. Times are ns (in HTA-compat mode already rounded to
/// whole µs, so multiples of 1000).
#[derive(Clone, Copy, Debug)]
pub struct DevRow {
    pub row: u32,
    pub ts: i64,
    pub end: i64,
    pub stream: i64,
    pub name: u32,
    pub kind: EventKind,
    pub ktype: KernelType,
    /// Row of the CPU-side call that launched it (same correlation), if any.
    pub launch: Option<u32>,
}

/// Row by correlation id, the first row given for each id. Correlation ids are usually small dense
/// integers, so a direct table is used when the ids span at most 4 slots per entry; otherwise a
/// sorted list searched by bisection.
#[derive(Clone, Debug, Default)]
pub struct CorrIndex {
    /// Dense form: `rows[c - base]`, `u32::MAX` for none.
    base: i64,
    rows: Vec<u32>,
    /// Sparse form: (id, row) sorted by id, one per id.
    sorted: Vec<(i64, u32)>,
}

impl CorrIndex {
    /// From (correlation id, row) pairs in row order.
    pub fn new(mut pairs: Vec<(i64, u32)>) -> CorrIndex {
        let (Some(lo), Some(hi)) = (
            pairs.iter().map(|p| p.0).min(),
            pairs.iter().map(|p| p.0).max(),
        ) else {
            return CorrIndex::default();
        };
        let span = (hi as i128 - lo as i128 + 1) as u128;
        if span <= 4 * pairs.len() as u128 + 1024 {
            let mut rows = vec![u32::MAX; span as usize];
            for &(c, row) in &pairs {
                let slot = &mut rows[(c - lo) as usize];
                if *slot == u32::MAX {
                    *slot = row;
                }
            }
            return CorrIndex {
                base: lo,
                rows,
                sorted: Vec::new(),
            };
        }
        // Stable and adaptive (ids mostly rise in row order): the first row of an id stays first.
        crate::sort::sort_by_key(&mut pairs, |p| p.0);
        pairs.dedup_by_key(|p| p.0);
        CorrIndex {
            base: 0,
            rows: Vec::new(),
            sorted: pairs,
        }
    }

    pub fn get(&self, c: i64) -> Option<u32> {
        if !self.rows.is_empty() {
            let i = c.checked_sub(self.base)?;
            let row = *self.rows.get(usize::try_from(i).ok()?)?;
            return (row != u32::MAX).then_some(row);
        }
        let i = self.sorted.binary_search_by_key(&c, |p| p.0).ok()?;
        Some(self.sorted[i].1)
    }
}

/// One `ProfilerStep#N` annotation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSpan {
    pub step: i64,
    pub row: u32,
    pub ts: i64,
    pub end: i64,
}

/// Everything the GPU analyses of one rank share.
pub struct RankPrep<'a> {
    pub table: &'a TraceTable,
    pub mode: Mode,
    /// Selected device rows, sorted by (ts, row).
    pub dev: Vec<DevRow>,
    /// Correlation → CPU-side row (kept after filtering), for launch joins.
    pub cpu_by_corr: CorrIndex,
    /// Steps found in the trace (all of them, sorted by start).
    pub steps: Vec<StepSpan>,
    /// Steps the analyses cover (after HTA's last-step filter or `opts.steps`).
    pub kept_steps: Vec<i64>,
    /// CPU rows are kept when `ts` is within `[window.0, window.1)`.
    pub window: (i64, i64),
    /// The classes of every name of the table, by name id.
    pub names: NameClasses,
    pub notes: Vec<String>,
}

/// HTA's whole-µs rounding of float-µs timestamps: `ts = ceil(ts)`, `end = floor(ts + dur)` (µs),
/// returned as ns. Integer-µs values are unchanged.
#[inline]
pub fn hta_round(ts_ns: i64, dur_ns: i64) -> (i64, i64) {
    if ts_ns % 1000 == 0 && dur_ns % 1000 == 0 {
        return (ts_ns, ts_ns + dur_ns);
    }
    let ts_f = ns_as_parsed_us(ts_ns);
    let dur_f = ns_as_parsed_us(dur_ns);
    let end = (ts_f + dur_f).floor() as i64 * 1000;
    let ts = ts_f.ceil() as i64 * 1000;
    (ts, end)
}

/// Start and end (ns) of a row as HTA 0.5.0 has them: rounded to whole µs ([`hta_round`]) when
/// pandas reads the file's `ts` column as floats, as written otherwise. A text with digits past the
/// ns is rounded from the double a JSON parser makes of it. `None` without `ts`.
pub fn hta_span(t: &TraceTable, row: usize) -> Option<(i64, i64)> {
    let ts = t.ts_at(row)?;
    // HTA takes durations as written, negative ones too.
    let dur = t.raw_dur_at(row).unwrap_or(0);
    if !t.ts_float {
        return Some((ts, ts + dur));
    }
    if let Some((ts_us, dur_us)) = t.sub_ns_at(row) {
        let ts_f = ts_us.unwrap_or_else(|| ns_as_parsed_us(ts));
        let dur_f = dur_us.unwrap_or_else(|| ns_as_parsed_us(dur));
        return Some((
            ts_f.ceil() as i64 * 1000,
            (ts_f + dur_f).floor() as i64 * 1000,
        ));
    }
    Some(hta_round(ts, dur))
}

/// The double a JSON parser makes of the µs text of exact ns (ulp 0.25 µs at today's epoch):
/// whole µs exact, plus the fraction, rounded once.
fn ns_as_parsed_us(ns: i64) -> f64 {
    ns.div_euclid(1000) as f64 + ns.rem_euclid(1000) as f64 / 1000.0
}

impl<'a> RankPrep<'a> {
    /// When the host launched a device row, as the idle breakdown reads it. Exact mode: its launch
    /// call's start, `None` when the launch is not in the trace. HTA 0.5.0 gives a CUDA row whose
    /// partner is missing `index_correlation = 0` and joins it to the file's first event (index 0):
    /// its launch time is that event's `ts` (none when that event has no `ts`).
    pub fn launch_ts_for_idle(&self, d: &DevRow) -> Option<i64> {
        match d.launch {
            Some(r) => self.span(r as usize).map(|(ts, _)| ts),
            None if self.mode == Mode::HtaCompat
                && self.table.correlation_at(d.row as usize).is_some()
                && !self.table.is_empty() =>
            {
                self.span(0).map(|(ts, _)| ts)
            }
            None => None,
        }
    }

    /// Start and end (ns) of any row, rounded as the mode says. `None` without ts.
    #[inline]
    pub fn span(&self, row: usize) -> Option<(i64, i64)> {
        if self.mode == Mode::HtaCompat {
            return hta_span(self.table, row);
        }
        let ts = self.table.ts_at(row)?;
        let dur = self.table.dur_at(row).unwrap_or(0);
        Some((ts, ts + dur.max(0)))
    }

    /// The rank's frame in the mode's terms, with the analysed window applied (HTA-compat: its
    /// last-ProfilerStep filter): what the analyses that walk call stacks read.
    pub fn frame(&self) -> Frame {
        let mut f = Frame::new(self.table, self.mode);
        f.keep_window(self.table, self.window);
        f
    }

    pub fn new(table: &'a TraceTable, opts: &AnalysisOptions) -> RankPrep<'a> {
        let compat = opts.mode == Mode::HtaCompat;
        let n = table.len();
        let mut notes = Vec::new();
        let mut prep = RankPrep {
            table,
            mode: opts.mode,
            dev: Vec::new(),
            cpu_by_corr: CorrIndex::default(),
            steps: Vec::new(),
            kept_steps: Vec::new(),
            window: (i64::MIN, i64::MAX),
            names: NameClasses::of(table),
            notes: Vec::new(),
        };
        prep.steps = step_spans(table, opts.mode);
        let mut kept: Vec<i64> = prep.steps.iter().map(|s| s.step).collect();
        kept.sort_unstable();
        kept.dedup();
        if let Some(range) = opts.steps {
            let spans = prep.steps.iter().map(|s| (s.step, s.ts, s.end));
            match super::step_filter::step_range_window(spans, range) {
                None => notes.push(format!(
                    "no ProfilerStep in {}..={}; the analyses cover the whole trace",
                    range.0, range.1
                )),
                Some(window) => {
                    prep.window = window;
                    kept.retain(|&s| super::step_filter::in_step_range(s, range));
                }
            }
        } else if let Some((start, end)) = opts.window_ns {
            prep.window = (start, end);
            kept = prep
                .steps
                .iter()
                .filter(|s| s.ts >= start && s.ts < end)
                .map(|s| s.step)
                .collect();
            kept.sort_unstable();
            kept.dedup();
        } else if let Some(cut) = compat.then(|| hta_step_cut(&prep)).flatten() {
            prep.window = (i64::MIN, cut.cut);
            // The steps are those with an annotation starting before the last one (a step number
            // can repeat: then its earlier spans stay).
            kept = prep
                .steps
                .iter()
                .filter(|s| s.ts < cut.cut)
                .map(|s| s.step)
                .collect();
            kept.sort_unstable();
            kept.dedup();
            let last = cut.last_step_row.map(|r| table.name_at(r as usize));
            if let Some(l) = last.and_then(profiler_step_number) {
                notes.push(format!(
                    "HTA-compat: the last ProfilerStep (#{l}) and everything after its start are left out"
                ));
            }
        }
        prep.kept_steps = kept;

        // CPU-side rows with a correlation, within the window.
        let is_dev = |row: usize| -> bool {
            if compat {
                table.args_stream_at(row).is_some_and(|s| s >= 0)
                    && table.correlation_at(row).is_some_and(|c| c >= 0)
            } else {
                table.kind_at(row).is_gpu_activity()
            }
        };
        let mut launch_calls: Vec<(i64, u32)> = Vec::new();
        for row in 0..n {
            let Some(c) = table.correlation_at(row) else {
                continue;
            };
            if is_dev(row) || table.raw_dur_at(row).is_none() {
                continue;
            }
            let k = table.kind_at(row);
            if matches!(k, EventKind::Flow | EventKind::Metadata | EventKind::Trace) {
                continue;
            }
            if compat && table.category_id_at(row).is_none() {
                continue;
            }
            // Exact mode: only runtime/driver calls launch work.
            if !compat && !matches!(k, EventKind::Runtime | EventKind::Driver) {
                continue;
            }
            let Some((ts, _)) = prep.span(row) else {
                continue;
            };
            if ts < prep.window.0 || ts >= prep.window.1 {
                continue;
            }
            launch_calls.push((c, row as u32));
        }
        prep.cpu_by_corr = CorrIndex::new(launch_calls);
        let filtered = prep.window != (i64::MIN, i64::MAX);
        // Kernel type per (name, kind), worked out once per name: the name tests are text searches.
        let mut type_by_name: Vec<Option<(EventKind, KernelType)>> =
            vec![None; table.name_dictionary().len()];
        let mut kernel_type_of = |name: u32, kind: EventKind| -> KernelType {
            let slot = &mut type_by_name[name as usize];
            match *slot {
                Some((k, ty)) if k == kind => ty,
                _ => {
                    let nm = table.name_of_id(name);
                    let ty = if compat {
                        hta_kernel_type(nm)
                    } else {
                        exact_kernel_type(kind, nm)
                    };
                    *slot = Some((kind, ty));
                    ty
                }
            }
        };
        // Device rows; and the device's wait tasks recorded as synchronisation (exact mode), which
        // join the collectives they sit in ([`collective_waits`]).
        let mut in_window_rows: Vec<u32> = Vec::new();
        for row in 0..n {
            let kind = table.kind_at(row);
            if !compat
                && kind == EventKind::Sync
                && in_frame(table, row, opts.mode)
                && prep.names.of_row(table, row).has(NameClass::DEVICE_WAIT)
                && prep
                    .span(row)
                    .is_some_and(|(ts, _)| ts >= prep.window.0 && ts < prep.window.1)
            {
                in_window_rows.push(row as u32);
            }
            let selected = in_frame(table, row, opts.mode)
                && if compat {
                    table.args_stream_at(row).is_some_and(|s| s != -1)
                } else {
                    kind.is_gpu_activity()
                };
            if !selected {
                continue;
            }
            let Some((ts, end)) = prep.span(row) else {
                continue;
            };
            let launch = table
                .correlation_at(row)
                .and_then(|c| prep.cpu_by_corr.get(c));
            if filtered {
                // HTA keeps GPU rows launched by a kept CPU row; CPU rows with a stream by their ts.
                let keep = if is_dev(row) {
                    if compat {
                        launch.is_some()
                    } else {
                        launch.is_some() || (ts >= prep.window.0 && ts < prep.window.1)
                    }
                } else {
                    ts >= prep.window.0 && ts < prep.window.1
                };
                if !keep {
                    continue;
                }
            }
            let name = table.name_id(row);
            let ktype = kernel_type_of(name, kind);
            prep.dev.push(DevRow {
                row: row as u32,
                ts,
                end,
                stream: table.stream_at(row).unwrap_or(-1),
                name,
                kind,
                ktype,
                launch,
            });
        }
        if !compat {
            collective_waits(&mut prep, &in_window_rows);
        }
        crate::sort::sort_by_key(&mut prep.dev, |d| (d.ts, d.row));
        if compat {
            let neg = prep.dev.iter().filter(|d| d.end < d.ts).count();
            if neg > 0 {
                notes.push(format!(
                    "HTA-compat: whole-µs rounding gives {neg} device events a negative duration"
                ));
            }
        }
        prep.notes = notes;
        prep
    }
}

/// The device's wait tasks inside collectives (Ascend HCCL's `Notify_Wait`, `EVENT_WAIT`:
/// [`NameClass::DEVICE_WAIT`]) belong to the collective they sit in as its waiting part: a wait
/// device row that overlaps a communication row becomes communication, and a wait recorded as
/// synchronisation (`sync_rows`, in the window) that does is added as one. Waits outside any
/// collective (a stream waiting on another) are left as they are.
fn collective_waits(prep: &mut RankPrep, sync_rows: &[u32]) {
    let comm = super::intervals::union(
        prep.dev
            .iter()
            .filter(|d| d.ktype == KernelType::Communication)
            .map(|d| (d.ts, d.end))
            .collect(),
    );
    if comm.is_empty() {
        return;
    }
    let t = prep.table;
    let inside = |ts: i64, end: i64| super::intervals::covered(&comm, ts, end.max(ts + 1)) > 0;
    let is_wait = |name: u32| prep.names.of_name(name).has(NameClass::DEVICE_WAIT);
    let waits: Vec<usize> = (0..prep.dev.len())
        .filter(|&i| {
            let d = &prep.dev[i];
            d.ktype == KernelType::Computation && is_wait(d.name) && inside(d.ts, d.end)
        })
        .collect();
    for i in waits {
        prep.dev[i].ktype = KernelType::Communication;
    }
    for &row in sync_rows {
        let Some((ts, end)) = prep.span(row as usize) else {
            continue;
        };
        if !inside(ts, end) {
            continue;
        }
        prep.dev.push(DevRow {
            row,
            ts,
            end,
            stream: t.stream_at(row as usize).unwrap_or(-1),
            name: t.name_id(row as usize),
            kind: EventKind::Sync,
            ktype: KernelType::Communication,
            launch: None,
        });
    }
}

/// The `ProfilerStep#N` annotations of a table, sorted by (start, row), times in the mode's terms.
/// Exact mode counts the host's annotations only: newer Kineto (and ROCm) also writes each
/// `ProfilerStep#N` on the GPU's timeline (`gpu_user_annotation`), which would count the step twice
/// with a different span. HTA 0.5.0 matches by name alone.
pub fn step_spans(table: &TraceTable, mode: Mode) -> Vec<StepSpan> {
    let dict = table.name_dictionary();
    let step_of_name: Vec<Option<i64>> = (0..dict.len())
        .map(|i| profiler_step_number(dict.value(i)))
        .collect();
    let is_step_kind = |kind: EventKind| {
        kind != EventKind::Metadata
            && (mode == Mode::HtaCompat
                || !(kind.is_gpu_activity() || kind == EventKind::GpuUserAnnotation))
    };
    let mut steps: Vec<StepSpan> = (0..table.len())
        .filter_map(|row| {
            let step = step_of_name[table.name_id(row) as usize]?;
            if table.raw_dur_at(row).is_none() || !is_step_kind(table.kind_at(row)) {
                return None;
            }
            let (ts, end) = super::frame::span_of(table, row, mode)?;
            Some(StepSpan {
                step,
                row: row as u32,
                ts,
                end,
            })
        })
        .collect();
    crate::sort::sort_by_key(&mut steps, |s| (s.ts, s.row));
    steps
}

/// HTA's last-ProfilerStep cut ([`hta_last_step_cut`]) over the rank's HTA frame.
fn hta_step_cut(prep: &RankPrep) -> Option<LastStepCut> {
    let f = Frame::new(prep.table, Mode::HtaCompat);
    hta_last_step_cut(prep.table, &f.member, &f.device, &f.ts)
}

/// HTA's merge: sort by start, a new group starts when `ts > running max(end)`; a group is (first
/// start, max end), so an event with a negative duration (from whole-µs rounding) alone makes a
/// group of negative length. Only for HTA-compat mode.
pub fn hta_merge(mut iv: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    iv.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(iv.len());
    for (s, e) in iv {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Sweeps tagged intervals (tag = bit mask) and returns time per exact combination of active tags
/// (index = mask, 0..8).
pub fn sweep_masks(iv: &[(i64, i64, u8)]) -> [i64; 8] {
    sweep_masks_in(iv, 1)
}

/// [`sweep_masks`] with each piece between two consecutive interval ends cut down to a multiple of
/// `quantum` ns (HTA casts each piece's length to an integer number of µs: `quantum` 1000).
pub fn sweep_masks_in(iv: &[(i64, i64, u8)], quantum: i64) -> [i64; 8] {
    let mut ev: Vec<(i64, i32, u8)> = Vec::with_capacity(iv.len() * 2);
    for &(s, e, b) in iv {
        if e > s && b != 0 {
            ev.push((s, 1, b));
            ev.push((e, -1, b));
        }
    }
    ev.sort_unstable_by_key(|x| (x.0, x.1));
    let mut counts = [0i64; 3];
    let mut out = [0i64; 8];
    let mut prev = i64::MIN;
    for (t, d, b) in ev {
        let mask = (0..3).fold(0usize, |m, i| if counts[i] > 0 { m | 1 << i } else { m });
        if prev != i64::MIN && mask != 0 {
            out[mask] += (t - prev) / quantum * quantum;
        }
        prev = t;
        for (i, c) in counts.iter_mut().enumerate() {
            if b & (1 << i) != 0 {
                *c += d as i64;
            }
        }
    }
    out
}

/// Pandas-style `describe()` of a sample: count, mean, sample std (n−1), min, quartiles, max.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Describe {
    pub count: u64,
    pub mean: f64,
    /// Sample standard deviation (ddof 1); `None` for fewer than two values.
    pub std: Option<f64>,
    pub min: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub max: f64,
}

/// Linear-interpolated percentile (pandas/numpy default) of sorted values, `q` in 0..=1.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Mean and sample std (ddof 1, `None` below two values).
pub fn mean_std(v: &[f64]) -> (f64, Option<f64>) {
    if v.is_empty() {
        return (f64::NAN, None);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, None);
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, Some(var.sqrt()))
}

pub fn describe(mut v: Vec<f64>) -> Describe {
    if v.is_empty() {
        return Describe::default();
    }
    v.sort_unstable_by(|a, b| a.total_cmp(b));
    let (mean, std) = mean_std(&v);
    Describe {
        count: v.len() as u64,
        mean,
        std,
        min: v[0],
        p25: percentile_sorted(&v, 0.25),
        p50: percentile_sorted(&v, 0.5),
        p75: percentile_sorted(&v, 0.75),
        max: v[v.len() - 1],
    }
}

/// ns → µs.
#[inline]
pub fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// Rounds to `d` decimals (as HTA's `round`).
pub fn round_to(x: f64, d: i32) -> f64 {
    let p = 10f64.powi(d);
    (x * p).round() / p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corr_index_keeps_the_first_row_dense_or_sparse() {
        let pairs = vec![(7, 0), (5, 1), (7, 2), (6, 3)];
        let dense = CorrIndex::new(pairs);
        assert!(!dense.rows.is_empty());
        let sparse = CorrIndex::new(vec![(7, 0), (1 << 40, 1), (7, 2), (-3, 3)]);
        assert!(sparse.rows.is_empty());
        assert_eq!(
            [5, 6, 7, 8, 4].map(|c| dense.get(c)),
            [Some(1), Some(3), Some(0), None, None]
        );
        assert_eq!(
            [7, 1 << 40, -3, 0, i64::MIN].map(|c| sparse.get(c)),
            [Some(0), Some(1), Some(3), None, None]
        );
        assert_eq!(CorrIndex::new(Vec::new()).get(0), None);
    }

    #[test]
    fn sweep_splits_exclusive_combinations() {
        // comp [0,10), comm [5,15), mem [12,20)
        let m = sweep_masks(&[(0, 10, 1), (5, 15, 2), (12, 20, 4), (1, 3, 1)]);
        assert_eq!(m[1], 5);
        assert_eq!(m[3], 5);
        assert_eq!(m[2], 2);
        assert_eq!(m[6], 3);
        assert_eq!(m[4], 5);
        assert_eq!(m.iter().sum::<i64>(), 20);
    }

    #[test]
    fn percentiles_interpolate_like_pandas() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 0.25), 1.75);
        assert_eq!(percentile_sorted(&v, 0.5), 2.5);
        assert_eq!(percentile_sorted(&[7.0], 0.75), 7.0);
        let d = describe(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!(d.count, 4);
        assert!((d.std.unwrap() - 1.2909944487).abs() < 1e-9);
        assert_eq!(describe(vec![5.0]).std, None);
    }

    #[test]
    fn rounding_and_names() {
        assert_eq!(hta_round(1_500, 1_000), (2_000, 2_000));
        assert_eq!(hta_round(1_200, 300), (2_000, 1_000));
        assert_eq!(hta_round(3_000, 2_000), (3_000, 5_000));
        assert_eq!(
            hta_kernel_type("ncclKernel_AllReduce"),
            KernelType::Communication
        );
        assert_eq!(
            hta_kernel_type("ncclDevKernel_AllReduce"),
            KernelType::Communication
        );
        assert_eq!(hta_kernel_type("Memcpy HtoD"), KernelType::Memory);
        assert_eq!(hta_kernel_type("Event Sync"), KernelType::Other);
        assert_eq!(
            hta_kernel_type("Stream Wait Event"),
            KernelType::Computation
        );
        assert!(is_collective_name("ncclDevKernel_AllGather_RING_LL"));
        assert!(is_collective_name("rcclGenericKernel"));
        assert!(!is_collective_name("sgemm"));
    }
}
