//! The loaded set as shown with "Redact names" on: file names and the summary's kernel names hashed by
//! `report::redact` (the header, the summary, the ranks table and trace health all draw this).

use crate::protocol::{LoadedSet, RankSummary};
use crate::report::redact::{redact_file_name, redact_file_names_in, redact_name, NameKind};

/// Every file name the set mentions (the ranks', the skipped files', the two runs').
fn file_names(set: &LoadedSet) -> Vec<String> {
    let ranks = set.ranks.iter().map(|r| r.file.clone());
    let skipped = set.skipped.iter().map(|s| s.file.clone());
    let runs = set
        .runs
        .iter()
        .flat_map(|r| r.baseline.iter().chain(r.candidate.iter()).cloned());
    ranks.chain(skipped).chain(runs).collect()
}

/// One rank's summary with its file and kernel names hashed; the oddities' examples and words
/// with the set's file names hashed.
fn redact_rank(mut r: RankSummary, files: &[String]) -> RankSummary {
    r.file = redact_file_name(&r.file);
    for k in &mut r.summary.top_kernels {
        k.name = redact_name(NameKind::Kernel, &k.name);
    }
    for d in &mut r.diagnostics {
        d.example = redact_file_names_in(&d.example, files);
        d.description = redact_file_names_in(&d.description, files);
    }
    r
}

/// The set as shown with names hashed: files, top kernels, notes, skipped files and runs.
pub fn redact_loaded(mut set: LoadedSet) -> LoadedSet {
    let files = file_names(&set);
    let hide = |s: &str| redact_file_names_in(s, &files);
    set.ranks = set
        .ranks
        .into_iter()
        .map(|r| redact_rank(r, &files))
        .collect();
    set.notes = set.notes.iter().map(|n| hide(n)).collect();
    for s in &mut set.skipped {
        s.reason = hide(&s.reason);
        s.file = redact_file_name(&s.file);
    }
    if let Some(runs) = &mut set.runs {
        runs.why = hide(&runs.why);
        for f in runs.baseline.iter_mut().chain(runs.candidate.iter_mut()) {
            *f = redact_file_name(f);
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summary::KernelRow;
    use crate::report::redact::redacted_name;

    fn rank(file: &str, kernel: &str) -> RankSummary {
        let mut r: RankSummary = serde_json::from_value(serde_json::json!({
            "rank": 0, "rank_source": "file name", "file": file, "device": null, "file_bytes": 1,
            "text_bytes": 1, "load_ms": 1.0, "diagnostics": [],
            "summary": {"events": 1, "categories": [], "kernels": 1, "kernel_time_us": 1.0,
                "top_kernels": [], "distinct_kernels": 1, "span_us": 1.0, "device": null,
                "rank": null, "world_size": null}
        }))
        .unwrap();
        r.summary.top_kernels.push(KernelRow {
            name: kernel.into(),
            calls: 2,
            total_us: 3.0,
            avg_us: 1.5,
            pct_of_kernel_time: 100.0,
        });
        r
    }

    #[test]
    fn files_kernels_and_notes_are_hashed_and_figures_kept() {
        let set = LoadedSet {
            ranks: vec![rank("llama70b_rank0.json.gz", "gemm_llama")],
            notes: vec!["llama70b_rank1.json.gz could not be read".into()],
            skipped: vec![crate::table::SkippedFile {
                file: "llama70b_rank1.json.gz".into(),
                kind: crate::trace::LoadErrorKind::NotATrace,
                reason: "llama70b_rank1.json.gz is not a trace".into(),
            }],
            ..Default::default()
        };
        let shown = redact_loaded(set);
        let text = serde_json::to_string(&shown).unwrap();
        assert!(!text.contains("llama"), "{text}");
        let r = &shown.ranks[0];
        assert_eq!(
            r.file,
            format!(
                "{}.json.gz",
                redacted_name("trace", "llama70b_rank0.json.gz")
            )
        );
        assert_eq!(
            r.summary.top_kernels[0].name,
            redacted_name("kernel", "gemm_llama")
        );
        assert_eq!(r.summary.top_kernels[0].calls, 2);
        assert_eq!(
            shown.skipped[0].file,
            redact_file_name("llama70b_rank1.json.gz")
        );
        assert!(shown.notes[0].starts_with("trace_"));
    }

    #[test]
    fn a_file_name_keeps_its_ending_and_nothing_else() {
        assert_eq!(redact_file_name(""), "");
        let a = redact_file_name("run/bert.pt.trace.json.gz");
        assert!(
            a.starts_with("trace_") && a.ends_with(".pt.trace.json.gz"),
            "{a}"
        );
        assert!(!a.contains("bert"));
        assert_eq!(redact_file_name("x.csv"), redact_file_name("x.csv"));
        assert_ne!(redact_file_name("x.csv"), redact_file_name("y.csv"));
        assert!(!redact_file_name("model.weird").contains("weird"));
    }
}
