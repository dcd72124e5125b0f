//! Name redaction: kernel/op/module names become stable short hashes (`kernel_3fa2c1`), in the report,
//! the explorer's rows and CSV, the deeper analyses, the views and the timeline alike ([`redacted_name`] is the
//! one definition; the others say which prefix a name gets).

use serde::{Deserialize, Serialize};

use crate::analysis::names::{is_memcpy_name, is_memset_name};
use crate::analysis::timeline::{EventClass, EventDetails, Relation};
use crate::analysis::views::RankViews;
use crate::report::timeline_view::TimelineAnswer;
use crate::table::query::{EventGroup, EventPage, EventRow, GroupBy};
use crate::table::EventKind;

/// FNV-1a 64-bit hash of a name: stable across runs and platforms.
pub fn stable_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `prefix_xxxxxx`: six hex digits of the name's hash.
pub fn redacted_name(prefix: &str, name: &str) -> String {
    format!("{prefix}_{:06x}", stable_hash(name) & 0xff_ffff)
}

/// The endings a redacted file name keeps (they say what the file is, not what it holds), longest
/// first.
const FILE_ENDINGS: [&str; 10] = [
    ".pt.trace.json.gz",
    ".pt.trace.json",
    ".perfetto.json",
    ".json.gz",
    ".parquet",
    ".arrow",
    ".json",
    ".csv",
    ".gz",
    ".md",
];

/// A file name (or path) as shown with names hashed: `trace_xxxxxx` and its ending (`.json.gz`), the
/// same for the same name; an empty name stays empty.
pub fn redact_file_name(name: &str) -> String {
    if name.is_empty() {
        return String::new();
    }
    let ending = FILE_ENDINGS
        .iter()
        .find(|e| name.len() > e.len() && name.ends_with(*e))
        .copied()
        .unwrap_or("");
    format!("{}{ending}", redacted_name("trace", name))
}

/// `text` with each of `files` replaced by its hashed form (for sentences made before redaction
/// that name a file: load notes, skip reasons).
pub fn redact_file_names_in(text: &str, files: &[String]) -> String {
    let mut pairs: Vec<(String, String)> = files
        .iter()
        .filter(|f| !f.is_empty())
        .map(|f| (f.clone(), redact_file_name(f)))
        .collect();
    crate::sort::sort_by(&mut pairs, |a, b| b.0.len().cmp(&a.0.len()));
    replace_all(text, &pairs)
}

/// What a name names, and so how redaction shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameKind {
    /// A GPU kernel: `kernel_…`.
    Kernel,
    /// Anything else named by the program (ops, annotations, Python functions): `op_…`.
    Op,
    /// A module of the model (`Linear_0`): `op_…`, as the views hash them.
    Module,
    /// A trace file: `trace_…` and its ending ([`redact_file_name`]).
    File,
    /// A runtime or driver call (`cudaStreamSynchronize`): kept, it says nothing about the program.
    Runtime,
    /// A copy or set (`Memcpy HtoD (Pageable -> Device)`): kept.
    Copy,
    /// A process or thread as the profiler names it: kept.
    Process,
}

/// `name` hashed with the prefix of its kind (an empty name stays empty; runtime calls, copies and
/// processes are kept).
pub fn redact_name(kind: NameKind, name: &str) -> String {
    if name.is_empty() {
        return String::new();
    }
    match kind {
        NameKind::Kernel => redacted_name("kernel", name),
        NameKind::Op | NameKind::Module => redacted_name("op", name),
        NameKind::File => redact_file_name(name),
        NameKind::Runtime | NameKind::Copy | NameKind::Process => name.to_string(),
    }
}

/// How the name of an event of this kind is hashed; `None`: the name says nothing about the
/// program (runtime and driver calls, copies, syncs, the profiler's own) and is kept, as the
/// report keeps them.
pub fn event_name_kind(kind: EventKind) -> Option<NameKind> {
    match kind {
        EventKind::Kernel => Some(NameKind::Kernel),
        EventKind::CpuOp
        | EventKind::UserAnnotation
        | EventKind::GpuUserAnnotation
        | EventKind::PythonFunction
        | EventKind::Instant
        | EventKind::Flow
        | EventKind::Other => Some(NameKind::Op),
        _ => None,
    }
}

/// An event's name hashed by its kind (kept when the kind's names say nothing about the program).
pub fn redact_kind_name(kind: EventKind, name: &str) -> String {
    match event_name_kind(kind) {
        Some(k) => redact_name(k, name),
        None => name.to_string(),
    }
}

/// An event's name as shown with names hashed (an unknown kind is hashed as an op).
pub fn redact_event_name(kind: Option<EventKind>, name: &str) -> String {
    match kind {
        Some(k) => redact_kind_name(k, name),
        None => redact_name(NameKind::Op, name),
    }
}

/// An explorer row with its name hashed and its `args` left out (they may hold names and paths).
pub fn redact_event_row(mut r: EventRow) -> EventRow {
    r.name = redact_kind_name(r.kind, &r.name);
    r.args.clear();
    r
}

/// The kind of the names a query's `Name` groups hold: kernels when it asks for kernels only.
fn group_name_kind(kinds: &[EventKind]) -> NameKind {
    if kinds == [EventKind::Kernel] {
        NameKind::Kernel
    } else {
        NameKind::Op
    }
}

/// A group's key hashed when it is a name (`by` [`GroupBy::Name`]) or a thread's name.
pub fn redact_group_key(by: Option<GroupBy>, kinds: &[EventKind], key: &str) -> String {
    match by {
        Some(GroupBy::Name) => redact_name(group_name_kind(kinds), key),
        _ => key.to_string(),
    }
}

/// A page of the explorer with every name hashed.
pub fn redact_event_page(mut page: EventPage) -> EventPage {
    let (by, kinds) = (page.query.group_by, page.query.kinds.clone());
    page.rows = page.rows.into_iter().map(redact_event_row).collect();
    page.groups = page
        .groups
        .into_iter()
        .map(|g| EventGroup {
            key: redact_group_key(by, &kinds, &g.key),
            ..g
        })
        .collect();
    page
}

/// A device event's name hashed as a kernel's, copies and sets (`Memcpy HtoD …`) kept.
fn redact_device_name(name: &str) -> String {
    if is_memcpy_name(name) || is_memset_name(name) {
        name.to_string()
    } else {
        redact_name(NameKind::Kernel, name)
    }
}

/// A timeline event's name as shown with names hashed, by its class.
fn redact_class_name(class: EventClass, name: &str) -> String {
    match class {
        EventClass::Compute | EventClass::Communication | EventClass::Memory => {
            redact_device_name(name)
        }
        EventClass::Runtime => name.to_string(),
        EventClass::GpuOther
        | EventClass::CpuOp
        | EventClass::Python
        | EventClass::Annotation
        | EventClass::Other => redact_name(NameKind::Op, name),
    }
}

/// The timeline's answer with the events' names hashed.
pub fn redact_timeline(mut answer: TimelineAnswer) -> TimelineAnswer {
    for lane in &mut answer.view.lanes {
        for e in &mut lane.events {
            e.name = redact_class_name(e.class, &e.name);
        }
    }
    answer
}

/// An event's details with its name and its partners' names hashed and its `args` left out.
pub fn redact_event_details(mut d: EventDetails) -> EventDetails {
    let kind = crate::trace::dialect::kind_of_category(&d.category);
    d.name = redact_event_name(kind, &d.name);
    d.args.clear();
    for p in &mut d.partners {
        if p.relation == Relation::Launched {
            p.name = redact_device_name(&p.name);
        }
    }
    d
}

/// A module path (`Encoder_0/Linear_1`) with each module's name hashed (the tree stays a tree).
fn redact_module_path(path: &str) -> String {
    path.split('/')
        .map(|m| redact_name(NameKind::Op, m))
        .collect::<Vec<_>>()
        .join("/")
}

/// The TensorBoard-style views with operator, kernel and module names hashed (shapes, figures and
/// device names kept).
pub fn redact_views(mut v: RankViews) -> RankViews {
    for row in v
        .operators
        .rows
        .iter_mut()
        .chain(v.operators_by_shape.rows.iter_mut())
    {
        row.name = redact_name(NameKind::Op, &row.name);
        for frame in &mut row.call_stack {
            *frame = redact_name(NameKind::Op, frame);
        }
        for k in &mut row.kernels {
            k.name = redact_name(NameKind::Kernel, &k.name);
        }
    }
    for row in &mut v.kernels.rows {
        row.name = redact_name(NameKind::Kernel, &row.name);
        if let Some(op) = &mut row.top_operator {
            *op = redact_name(NameKind::Op, op);
        }
    }
    for live in v
        .memory
        .devices
        .iter_mut()
        .flat_map(|d| d.alive_at_peak.iter_mut())
    {
        if let Some(op) = &mut live.operator {
            *op = redact_name(NameKind::Op, op);
        }
    }
    for row in &mut v.modules.rows {
        row.path = redact_module_path(&row.path);
        row.name = redact_name(NameKind::Op, &row.name);
    }
    v
}

/// Replaces every name of `names` (full form and display form) in `text`, longest first.
pub fn replace_all(text: &str, pairs: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (from, to) in pairs {
        if !from.is_empty() && out.contains(from.as_str()) {
            out = out.replace(from.as_str(), to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_short() {
        assert_eq!(
            redacted_name("kernel", "abc"),
            redacted_name("kernel", "abc")
        );
        assert_ne!(
            redacted_name("kernel", "abc"),
            redacted_name("kernel", "abd")
        );
        assert_eq!(redacted_name("op", "x").len(), "op_".len() + 6);
        // FNV-1a of "" is the offset basis.
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn event_names_are_hashed_by_their_kind_as_the_report_hashes_them() {
        let gemm = "void gemm<float>(int)";
        assert_eq!(
            redact_event_name(Some(EventKind::Kernel), gemm),
            redacted_name("kernel", gemm)
        );
        assert_eq!(
            redact_event_name(Some(EventKind::CpuOp), "aten::mm"),
            redacted_name("op", "aten::mm")
        );
        assert_eq!(
            redact_event_name(Some(EventKind::Runtime), "cudaLaunchKernel"),
            "cudaLaunchKernel"
        );
        assert_eq!(redact_event_name(None, "x"), redacted_name("op", "x"));
        assert_eq!(redact_name(NameKind::Kernel, ""), "");
        let mut row: EventRow = serde_json::from_value(serde_json::json!({
            "rank": 0, "row": 1, "ts_us": null, "start_ms": null, "dur_us": null, "kind": "kernel",
            "phase": "X", "category": "kernel", "name": gemm, "pid": "0", "tid": "7", "stream": 7,
            "device": 0, "correlation": 1, "external_id": null, "args": {"grid": "[1, 1, 1]"}
        }))
        .unwrap();
        row = redact_event_row(row);
        assert_eq!(row.name, redacted_name("kernel", gemm));
        assert!(row.args.is_empty());
        assert_eq!(
            redact_group_key(Some(GroupBy::Name), &[EventKind::Kernel], gemm),
            redacted_name("kernel", gemm)
        );
        assert_eq!(redact_group_key(Some(GroupBy::Stream), &[], "7"), "7");
    }

    #[test]
    fn the_views_hash_ops_kernels_and_modules_and_keep_their_figures() {
        use crate::analysis::views::kernel_table::KernelRow;
        use crate::analysis::views::modules::ModuleRow;
        use crate::analysis::views::operators::OperatorRow;
        let mut v = RankViews::default();
        v.operators.rows.push(OperatorRow {
            name: "aten::mm".into(),
            calls: 3,
            ..Default::default()
        });
        v.kernels.rows.push(KernelRow {
            name: "gemm".into(),
            top_operator: Some("aten::mm".into()),
            ..Default::default()
        });
        v.modules.rows.push(ModuleRow {
            path: "Net_0/Linear_0".into(),
            name: "Linear_0".into(),
            ..Default::default()
        });
        let r = redact_views(v);
        let op = redacted_name("op", "aten::mm");
        assert_eq!(r.operators.rows[0].name, op);
        assert_eq!(r.operators.rows[0].calls, 3);
        assert_eq!(r.kernels.rows[0].name, redacted_name("kernel", "gemm"));
        assert_eq!(r.kernels.rows[0].top_operator.as_deref(), Some(op.as_str()));
        let linear = redacted_name("op", "Linear_0");
        assert_eq!(
            r.modules.rows[0].path,
            format!("{}/{linear}", redacted_name("op", "Net_0"))
        );
        assert_eq!(r.modules.rows[0].name, linear);
    }
}
