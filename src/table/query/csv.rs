//! CSV of a query: every matched row (or group) in the query's order, RFC 4180 fields.

use std::fmt::Write;

use super::*;

/// The CSV of groups: a header naming the grouping, then one line per group.
pub(super) fn write_groups(
    out: &mut String,
    by: GroupBy,
    groups: &[EventGroup],
    map_key: &dyn Fn(&str) -> String,
) {
    let _ = writeln!(
        out,
        "{},count,timed,total_us,mean_us,min_us,max_us,pct_of_matched",
        by.as_str()
    );
    for g in groups {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{:.4}",
            csv_field(&map_key(&g.key)),
            g.count,
            g.timed,
            g.total_us,
            opt(g.mean_us),
            opt(g.min_us),
            opt(g.max_us),
            g.pct_of_matched
        );
    }
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Every matched row (or every group) of `q` as CSV, in the query's order; offset and limit are ignored.
/// Rows carry their `args` as one compact JSON column. At most [`MAX_EXPORT_ROWS`] rows are written; a
/// final `# cut` line says so when there were more.
pub fn export_csv(set: &TraceSet, q: &EventQuery) -> String {
    export_csv_mapped(set, q, &|r| r, &|k| k.to_string())
}

/// [`export_csv`] with each row, and each group's key, passed through a function first (the page's
/// redact switch hashes the names there).
pub fn export_csv_mapped(
    set: &TraceSet,
    q: &EventQuery,
    map_row: &dyn Fn(EventRow) -> EventRow,
    map_key: &dyn Fn(&str) -> String,
) -> String {
    let mut out = String::new();
    let (mut hits, matched_ns) = all_hits(set, q);
    if let Some(by) = q.group_by {
        let groups = sorted_groups(q, groups_of(set, by, &hits), matched_ns);
        write_groups(&mut out, by, &groups, map_key);
        return out;
    }
    let total = hits.len();
    let keep = total.min(MAX_EXPORT_ROWS);
    sort_hits(set, q, &mut hits, keep);
    let firsts = first_timestamps(set, &hits);
    out.push_str("rank,row,ts_us,start_ms,dur_us,kind,phase,category,name,pid,tid,stream,device,correlation,external_id,args\n");
    for &h in hits.iter().take(keep) {
        let r = map_row(event_row(set, h, &firsts));
        let args = r.args.json_line();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.rank,
            r.row,
            opt(r.ts_us),
            opt(r.start_ms),
            opt(r.dur_us),
            r.kind,
            r.phase,
            csv_field(&r.category),
            csv_field(&r.name),
            csv_field(&r.pid),
            csv_field(&r.tid),
            opt(r.stream),
            opt(r.device),
            opt(r.correlation),
            opt(r.external_id),
            csv_field(&args)
        );
    }
    if total > keep {
        let _ = writeln!(out, "# cut: {keep} of {total} rows written");
    }
    out
}
