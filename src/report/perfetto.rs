//! A rank's trace written back as Chrome-trace JSON for Perfetto, with what this tool found added
//! as tracks of their own: why the GPU was idle (one track per cause) and the critical path (one
//! event per segment, named by what bounds it).

use std::fmt::Write;

use crate::analysis::critical_path::PathSegment;
use crate::report::attribution::IdleCause;
use crate::report::redact::{redact_kind_name, redact_name, NameKind};
use crate::table::query::row_args;
use crate::table::{ArgCell, EventKind, RowArgs, TraceTable};

/// The process id of the added tracks (far from real pids).
const ADDED_PID: i64 = 999_999_001;

/// `ns` as the µs text of a Chrome trace (`1234.567`).
fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn text(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The ids the table keeps as columns of their own, written back into `args`.
const ID_KEYS: [&str; 4] = ["External id", "correlation", "stream", "device"];

/// The `args` of a row: its sparse columns plus the ids the table keeps as columns of their own
/// (only those ids when redacting: args may hold names, shapes' owners and paths).
fn perfetto_args(t: &TraceTable, row: usize, redact: bool) -> RowArgs {
    let ids = [
        t.external_id_at(row),
        t.correlation_at(row),
        t.args_stream_at(row),
        t.device_at(row),
    ];
    let sparse = row_args(t, row)
        .iter()
        .cloned()
        .filter(|(k, _)| !redact || ID_KEYS.contains(&k.as_str()))
        .collect::<Vec<_>>();
    let id_pairs = ID_KEYS
        .iter()
        .zip(ids)
        .filter_map(|(k, v)| Some((k.to_string(), ArgCell::Int(v?))));
    // A sparse column of an id's key keeps its own value (it comes first; `RowArgs::new` keeps the first).
    RowArgs::new(sparse.into_iter().chain(id_pairs).collect())
}

/// One row as a Chrome-trace event, or `None` for rows Perfetto gets otherwise (metadata).
/// The top-level keys a redacted file keeps (the device and the job's shape; never `traceName`,
/// which is a path).
const KEPT_KEYS: [&str; 5] = [
    "schemaVersion",
    "deviceProperties",
    "distributedInfo",
    "displayTimeUnit",
    "baseTimeNanoseconds",
];

/// A row's name as written: hashed by its kind when redacting.
fn row_name(t: &TraceTable, row: usize, redact: bool) -> String {
    if redact {
        redact_kind_name(t.kind_at(row), t.name_at(row))
    } else {
        t.name_at(row).to_string()
    }
}

fn row_event(t: &TraceTable, row: usize, redact: bool) -> Option<String> {
    if t.kind_at(row) == EventKind::Metadata {
        return None;
    }
    let ts = t.ts_at(row)?;
    let phase = match t.phase_at(row) {
        '\0' => 'X',
        p => p,
    };
    let mut e = format!(
        "{{\"ph\":\"{phase}\",\"cat\":{},\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{}",
        text(t.category_at(row).unwrap_or("")),
        text(&row_name(t, row, redact)),
        id_text(t.pid_at(row)),
        id_text(t.tid_at(row)),
        micros(ts)
    );
    if let Some(d) = t.raw_dur_at(row) {
        let _ = write!(e, ",\"dur\":{}", micros(d));
    }
    if let Some(id) = t.flow_id_at(row) {
        let _ = write!(e, ",\"id\":{id}");
        if phase == 'f' {
            e.push_str(",\"bp\":\"e\"");
        }
    }
    let args = perfetto_args(t, row, redact);
    if !args.is_empty() {
        let _ = write!(e, ",\"args\":{}", args.json_line());
    }
    e.push('}');
    Some(e)
}

/// A pid or tid: a number when it reads as one, else a string.
fn id_text(id: &str) -> String {
    match id.parse::<i64>() {
        Ok(n) => n.to_string(),
        Err(_) => text(id),
    }
}

fn metadata(kind: &str, pid: &str, tid: Option<&str>, name: &str) -> String {
    format!(
        "{{\"ph\":\"M\",\"name\":\"{kind}\",\"pid\":{}{},\"args\":{{\"name\":{}}}}}",
        id_text(pid),
        tid.map_or(String::new(), |t| format!(",\"tid\":{}", id_text(t))),
        text(name)
    )
}

/// The added tracks: idle pieces (tid = cause) and critical-path segments (tid 100).
fn added_events(
    t: &TraceTable,
    idle: &[(i64, i64, IdleCause)],
    path: &[PathSegment],
    redact: bool,
) -> Vec<String> {
    let pid = ADDED_PID.to_string();
    let mut out = vec![metadata(
        "process_name",
        &pid,
        None,
        "Profile Model: why the GPU waits",
    )];
    for (i, cause) in IdleCause::ALL.iter().enumerate() {
        if idle.iter().any(|p| p.2 == *cause) {
            let name = format!("GPU idle: {}", cause.label());
            out.push(metadata("thread_name", &pid, Some(&i.to_string()), &name));
        }
    }
    for &(s, e, cause) in idle {
        out.push(format!(
            "{{\"ph\":\"X\",\"cat\":\"gpu_idle\",\"name\":{},\"pid\":{ADDED_PID},\"tid\":{},\"ts\":{},\"dur\":{}}}",
            text(cause.label()),
            cause.index(),
            micros(s),
            micros(e - s)
        ));
    }
    if !path.is_empty() {
        out.push(metadata("thread_name", &pid, Some("100"), "Critical path"));
    }
    for seg in path {
        let start = (seg.start_us * 1000.0).round() as i64;
        let dur = (seg.duration_us * 1000.0).round() as i64;
        let name = match (&seg.name, seg.row) {
            (Some(_), Some(row)) if redact && (row as usize) < t.len() => {
                row_name(t, row as usize, true)
            }
            (Some(n), _) if redact => redact_name(NameKind::Op, n),
            (Some(n), _) => n.clone(),
            (None, _) => seg.edge_type.as_str().to_string(),
        };
        out.push(format!(
            "{{\"ph\":\"X\",\"cat\":\"critical_path\",\"name\":{},\"pid\":{ADDED_PID},\"tid\":100,\"ts\":{},\"dur\":{},\"args\":{{\"bound_by\":{},\"edge\":{}}}}}",
            text(&name),
            micros(start),
            micros(dur),
            text(seg.bound_by.as_str()),
            text(seg.edge_type.as_str())
        ));
    }
    out
}

/// The rank's trace for Perfetto: every event of the table (names of processes and threads
/// included), then the added tracks. Top-level keys the trace had are kept.
pub fn perfetto_json(
    t: &TraceTable,
    idle: &[(i64, i64, IdleCause)],
    path: &[PathSegment],
    redact: bool,
) -> String {
    let mut out = String::from("{");
    for (key, value) in &t.metadata.top_level {
        if redact && !KEPT_KEYS.contains(&key.as_str()) {
            continue;
        }
        let _ = write!(out, "{}:{},", text(key), value);
    }
    out.push_str("\"traceEvents\":[\n");
    let names = t
        .metadata
        .process_names
        .iter()
        .map(|(pid, name)| metadata("process_name", pid, None, name))
        .chain(t.metadata.thread_names.iter().filter_map(|(key, name)| {
            let (pid, tid) = key.split_once('/')?;
            Some(metadata("thread_name", pid, Some(tid), name))
        }));
    let rows = (0..t.len()).filter_map(|r| row_event(t, r, redact));
    let mut first = true;
    for e in names.chain(rows).chain(added_events(t, idle, path, redact)) {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(&e);
    }
    out.push_str("\n]}\n");
    out
}
