//! How a big rank set is split over several workers, and how their answers about the load are put
//! back together (plain logic, tested natively; the workers themselves are in `shards`).
//!
//! One WebAssembly instance addresses 4 GiB, so a set whose tables would not fit one worker is
//! split into shards: groups of whole ranks, each loaded and analysed by its own worker. The
//! worker the page talks to becomes the coordinator: it plans the shards ([`plan`]), merges their
//! progress per file ([`files_progress`], [`combine_progress`]) and their loaded sets
//! ([`merge_loaded`]), and maps rank indexes between the whole set and each shard ([`RankMap`]).

use crate::protocol::{FileProgress, LoadedSet, Phase, Progress};
pub use crate::protocol::{LoadPlan, ShardOf};
use crate::table::set::{rank_notes, skipped_note};
use crate::table::SkippedFile;

/// A set whose JSON text is estimated above this stays in one worker no longer: its tables (about
/// 0.46x the JSON) and the analyses' working memory would come near one worker's 4 GiB.
pub const SPLIT_ABOVE_TEXT_BYTES: u64 = 1_500_000_000;
/// JSON text one shard worker is given at most when a set is split (about 1.2 GB of tables).
pub const WORKER_TEXT_BUDGET: u64 = 2_500_000_000;
/// Shard workers at most (each also starts a reader worker).
pub const MAX_WORKERS: usize = 16;
/// JSON text per byte of a gzip file, as planned (Kineto JSON inflates 8-15x).
pub const GZIP_TEXT_RATIO: u64 = 12;

/// The JSON text a file is expected to hold. A gzip file says its text's size modulo 4 GiB in its
/// last 4 bytes (`isize`, read when the name ends in `.gz`): taken when it is larger than the file
/// (else the size wrapped, or the file is not gzip), otherwise [`GZIP_TEXT_RATIO`] times the file.
pub fn estimated_text_bytes(name: &str, size: u64, isize: Option<u32>) -> u64 {
    if !name.ends_with(".gz") {
        return size;
    }
    match isize {
        Some(n) if u64::from(n) > size => u64::from(n),
        _ => size.saturating_mul(GZIP_TEXT_RATIO),
    }
}

/// The shards of a load of files of `text` bytes of JSON each, each a list of file indexes in load order;
/// `None` keeps the whole set in one worker. `cores`: the machine's logical processors.
///
/// A set is split when the page asks for it or when its text is over [`SPLIT_ABOVE_TEXT_BYTES`].
/// Then there are as many workers as the cores, and more when the text needs them
/// ([`WORKER_TEXT_BUDGET`] each), never more than the files or [`MAX_WORKERS`]; files go to the
/// least loaded worker, largest first, so that the workers finish together.
pub fn plan(
    text: &[u64],
    ranks_per_worker: Option<usize>,
    cores: usize,
) -> Option<Vec<Vec<usize>>> {
    let files = text;
    if files.len() < 2 {
        return None;
    }
    let total: u64 = text.iter().sum();
    let workers = match ranks_per_worker {
        Some(n) => files.len().div_ceil(n.max(1)),
        None if total > SPLIT_ABOVE_TEXT_BYTES => {
            let by_memory = total.div_ceil(WORKER_TEXT_BUDGET) as usize;
            cores.max(by_memory).min(MAX_WORKERS)
        }
        None => return None,
    }
    .clamp(1, files.len());
    if workers < 2 {
        return None;
    }
    let cap = ranks_per_worker.unwrap_or(usize::MAX);
    let mut order: Vec<usize> = (0..files.len()).collect();
    crate::sort::sort_by_key(&mut order, |&i| std::cmp::Reverse(text[i]));
    let mut shards: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); workers];
    for i in order {
        let least = (0..workers)
            .filter(|&w| shards[w].1.len() < cap)
            .min_by_key(|&w| (shards[w].0, w))
            .unwrap_or(0);
        shards[least].0 += text[i];
        shards[least].1.push(i);
    }
    let mut shards: Vec<Vec<usize>> = shards
        .into_iter()
        .map(|(_, mut files)| {
            crate::sort::sort(&mut files);
            files
        })
        .filter(|f| !f.is_empty())
        .collect();
    crate::sort::sort_by_key(&mut shards, |f| f[0]);
    Some(shards)
}

/// Each file's progress, from a worker's progress over its files (read one after the other):
/// the files before `file_index` are read, the one at it is partly read. `sizes`: each file's
/// name and bytes in the order the worker reads them.
pub fn files_progress(sizes: &[(String, u64)], p: &Progress, worker: usize) -> Vec<FileProgress> {
    let mut before = 0u64;
    sizes
        .iter()
        .enumerate()
        .map(|(i, (file, bytes))| {
            let done = if p.phase == Phase::Done || p.phase == Phase::Analysing || i < p.file_index
            {
                *bytes
            } else if i == p.file_index {
                p.bytes_done.saturating_sub(before).min(*bytes)
            } else {
                0
            };
            before += bytes;
            FileProgress {
                file: file.clone(),
                bytes_done: done,
                bytes_total: *bytes,
                worker,
            }
        })
        .collect()
}

/// One progress of a split load from the last progress of each shard (`None`: none yet) and each
/// shard's files. The phase is the least advanced one; the file named is the first one being read.
pub fn combine_progress(
    shards: &[(Option<&Progress>, &[(String, u64)])],
    started_ms: f64,
    now_ms: f64,
) -> Progress {
    let mut files: Vec<FileProgress> = Vec::new();
    let mut phase = Phase::Done;
    for (w, (p, sizes)) in shards.iter().enumerate() {
        let p = p.cloned().unwrap_or_else(|| Progress {
            phase: Phase::Reading,
            bytes_done: 0,
            bytes_total: sizes.iter().map(|s| s.1).sum(),
            file_index: 0,
            file_count: sizes.len(),
            file: String::new(),
            mb_per_s: 0.0,
            files: Vec::new(),
        });
        phase = phase_min(phase, p.phase);
        files.extend(files_progress(sizes, &p, w));
    }
    let bytes_done: u64 = files.iter().map(|f| f.bytes_done).sum();
    let bytes_total: u64 = files.iter().map(|f| f.bytes_total).sum();
    let reading = files
        .iter()
        .position(|f| f.bytes_done > 0 && f.bytes_done < f.bytes_total)
        .or_else(|| files.iter().position(|f| f.bytes_done < f.bytes_total));
    let secs = ((now_ms - started_ms) / 1000.0).max(1e-3);
    Progress {
        phase,
        bytes_done,
        bytes_total,
        file_index: reading.unwrap_or(files.len().saturating_sub(1)),
        file_count: files.len(),
        file: reading.map(|i| files[i].file.clone()).unwrap_or_default(),
        mb_per_s: bytes_done as f64 / 1e6 / secs,
        files,
    }
}

fn phase_min(a: Phase, b: Phase) -> Phase {
    let rank = |p: Phase| Phase::ALL.iter().position(|q| *q == p).unwrap_or(0);
    if rank(a) <= rank(b) {
        a
    } else {
        b
    }
}

/// Where each rank of the whole set is: its shard and its index in that shard's set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankMap {
    /// By index in the whole set (ranks ascending, ties in shard order): (shard, index in it).
    pub places: Vec<(usize, usize)>,
}

impl RankMap {
    /// The whole set's index of a shard's rank.
    pub fn global(&self, shard: usize, local: usize) -> Option<usize> {
        self.places.iter().position(|&p| p == (shard, local))
    }

    /// The shard and its index of a rank of the whole set.
    pub fn local(&self, global: usize) -> Option<(usize, usize)> {
        self.places.get(global).copied()
    }

    /// Every rank of a shard, by its index in the whole set, in the shard's order.
    pub fn of_shard(&self, shard: usize) -> Vec<usize> {
        let mut g: Vec<(usize, usize)> = self
            .places
            .iter()
            .enumerate()
            .filter(|(_, p)| p.0 == shard)
            .map(|(g, p)| (p.1, g))
            .collect();
        crate::sort::sort(&mut g);
        g.into_iter().map(|(_, g)| g).collect()
    }
}

/// The loaded set of a split load from each shard's (`None`: nothing of it loaded), with the
/// set's notes worked out again over every rank and the failed files' notes after them.
pub fn merge_loaded(shards: &[Option<LoadedSet>], load_ms: f64) -> (LoadedSet, RankMap) {
    let mut placed: Vec<(i64, usize, usize)> = Vec::new();
    for (s, set) in shards.iter().enumerate() {
        if let Some(set) = set {
            placed.extend(set.ranks.iter().enumerate().map(|(l, r)| (r.rank, s, l)));
        }
    }
    crate::sort::sort_by_key(&mut placed, |&(rank, s, l)| (rank, s, l));
    let ranks: Vec<_> = placed
        .iter()
        .filter_map(|&(_, s, l)| shards[s].as_ref()?.ranks.get(l).cloned())
        .collect();
    let ids: Vec<(i64, String)> = ranks.iter().map(|r| (r.rank, r.file.clone())).collect();
    let skipped: Vec<SkippedFile> = shards
        .iter()
        .flatten()
        .flat_map(|s| s.skipped.iter().cloned())
        .collect();
    let mut notes = rank_notes(&ids);
    notes.extend(skipped.iter().map(|f| skipped_note(&f.file, &f.reason)));
    let memory: Vec<u64> = shards
        .iter()
        .map(|s| s.as_ref().map_or(0, |s| s.worker_memory_bytes))
        .collect();
    let set = LoadedSet {
        ranks,
        notes,
        load_ms,
        read_mode: shards
            .iter()
            .flatten()
            .map(|s| s.read_mode.clone())
            .next()
            .unwrap_or_default(),
        worker_memory_bytes: memory.iter().sum(),
        runs: None,
        worker_memory: memory,
        skipped,
    };
    let map = RankMap {
        places: placed.iter().map(|&(_, s, l)| (s, l)).collect(),
    };
    (set, map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(sizes: &[u64]) -> Vec<(String, u64)> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("rank{i}.json"), *s))
            .collect()
    }

    fn text(sizes: &[u64]) -> Vec<u64> {
        sizes.to_vec()
    }

    #[test]
    fn a_small_set_stays_in_one_worker() {
        assert_eq!(plan(&text(&[100, 200, 300]), None, 8), None);
        assert_eq!(plan(&text(&[3_000_000_000]), None, 8), None);
        assert_eq!(plan(&text(&[3_000_000_000]), Some(1), 8), None);
    }

    #[test]
    fn eight_ranks_of_a_gigabyte_take_the_memory_they_need_or_the_cores() {
        let f = text(&[1_000_000_000; 8]);
        let two_cores = plan(&f, None, 2).unwrap();
        // 8 GB of text needs ceil(8 / 2.5) = 4 workers; 2 cores would give only 2.
        assert_eq!(two_cores.len(), 4);
        assert!(two_cores.iter().all(|s| s.len() == 2));
        assert_eq!(plan(&f, None, 16).unwrap().len(), 8);
        let all: Vec<usize> = two_cores.concat();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn gzip_files_are_planned_by_their_text() {
        // The size the gzip trailer gives, when it is larger than the file.
        assert_eq!(
            estimated_text_bytes("r.json.gz", 58_000_000, Some(1_000_000_000)),
            1_000_000_000
        );
        // A size that wrapped past 4 GiB (smaller than the file): the usual ratio.
        assert_eq!(
            estimated_text_bytes("r.json.gz", 500_000_000, Some(7)),
            500_000_000 * GZIP_TEXT_RATIO
        );
        assert_eq!(estimated_text_bytes("r.json", 500, Some(1 << 30)), 500);
        let f: Vec<u64> = (0..4)
            .map(|_| estimated_text_bytes("r.json.gz", 100_000_000, None))
            .collect();
        // 4 x 1.2 GB of text: split.
        assert_eq!(plan(&f, None, 2).unwrap().len(), 2);
    }

    #[test]
    fn ranks_per_worker_splits_even_a_small_set() {
        let s = plan(&text(&[10, 10, 10]), Some(1), 2).unwrap();
        assert_eq!(s, vec![vec![0], vec![1], vec![2]]);
        let s = plan(&text(&[10, 10, 10, 10, 10]), Some(2), 2).unwrap();
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|f| f.len() <= 2));
    }

    #[test]
    fn uneven_files_are_balanced_largest_first() {
        let s = plan(
            &text(&[
                4_000_000_000,
                1_000_000_000,
                1_000_000_000,
                1_000_000_000,
                1_000_000_000,
            ]),
            None,
            2,
        )
        .unwrap();
        // 8 GB: 4 workers; the 4 GB file alone, the four others shared by the other three.
        assert_eq!(s.len(), 4);
        assert!(s.contains(&vec![0]));
    }

    fn progress(phase: Phase, done: u64, file_index: usize) -> Progress {
        Progress {
            phase,
            bytes_done: done,
            bytes_total: 0,
            file_index,
            file_count: 0,
            file: String::new(),
            mb_per_s: 0.0,
            files: Vec::new(),
        }
    }

    #[test]
    fn each_file_gets_its_share_of_a_workers_progress() {
        let sizes = files(&[100, 50, 30]);
        let got = files_progress(&sizes, &progress(Phase::Parsing, 120, 1), 3);
        let done: Vec<u64> = got.iter().map(|f| f.bytes_done).collect();
        assert_eq!(done, vec![100, 20, 0]);
        assert!(got.iter().all(|f| f.worker == 3));
        let done: Vec<u64> = files_progress(&sizes, &progress(Phase::Analysing, 0, 2), 0)
            .iter()
            .map(|f| f.bytes_done)
            .collect();
        assert_eq!(done, vec![100, 50, 30]);
    }

    #[test]
    fn the_combined_progress_is_the_least_advanced_shard() {
        let a = files(&[100, 100]);
        let b = files(&[300]);
        let pa = progress(Phase::Done, 200, 1);
        let pb = progress(Phase::Parsing, 150, 0);
        let p = combine_progress(&[(Some(&pa), &a), (Some(&pb), &b)], 0.0, 1000.0);
        assert_eq!(p.phase, Phase::Parsing);
        assert_eq!((p.bytes_done, p.bytes_total), (350, 500));
        assert_eq!(p.file_index, 2);
        assert_eq!(p.files.len(), 3);
        let none = combine_progress(&[(None, &a), (Some(&pb), &b)], 0.0, 1000.0);
        assert_eq!(none.phase, Phase::Reading);
        assert_eq!(none.bytes_done, 150);
    }

    fn loaded(ranks: &[i64], memory: u64) -> LoadedSet {
        LoadedSet {
            ranks: ranks
                .iter()
                .map(|&r| crate::protocol::RankSummary {
                    rank: r,
                    rank_source: "distributedInfo".into(),
                    file: format!("rank{r}.json"),
                    device: None,
                    file_bytes: 0,
                    text_bytes: 0,
                    load_ms: 0.0,
                    summary: Default::default(),
                    diagnostics: Vec::new(),
                })
                .collect(),
            worker_memory_bytes: memory,
            ..Default::default()
        }
    }

    #[test]
    fn shards_merge_into_one_set_in_rank_order_with_a_map_both_ways() {
        let mut with_failure = loaded(&[1, 2, 6], 20);
        with_failure.skipped.push(SkippedFile {
            file: "x.json".into(),
            kind: crate::trace::LoadErrorKind::NotJson,
            reason: "not JSON".into(),
        });
        let shards = vec![Some(loaded(&[0, 5, 6], 10)), None, Some(with_failure)];
        let (set, map) = merge_loaded(&shards, 5.0);
        let ranks: Vec<i64> = set.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, vec![0, 1, 2, 5, 6, 6]);
        // Rank 6 is in both shards: only the set as a whole can see it twice.
        assert_eq!(
            set.notes,
            vec![
                "rank 6 appears in more than one file (rank6.json is one); both are kept"
                    .to_string(),
                "ranks missing between 0 and 6: [3, 4]".into(),
                skipped_note("x.json", "not JSON"),
            ]
        );
        assert_eq!(set.skipped.len(), 1);
        assert_eq!(set.worker_memory_bytes, 30);
        assert_eq!(set.worker_memory, vec![10, 0, 20]);
        assert_eq!(map.local(1), Some((2, 0)));
        assert_eq!(map.local(3), Some((0, 1)));
        assert_eq!(map.global(0, 2), Some(4));
        assert_eq!(map.global(2, 2), Some(5));
        assert_eq!(map.global(1, 0), None);
        assert_eq!(map.of_shard(0), vec![0, 3, 4]);
        assert_eq!(map.of_shard(2), vec![1, 2, 5]);
    }
}

#[cfg(test)]
mod protocol_tests {
    //! The report's parts cross the worker boundary inside the protocol's messages.
    use crate::analysis::all::AnalysisOptions;
    use crate::protocol::codec::{decode, encode};
    use crate::protocol::shard::{part_bytes, shard_only_bytes, FromShard, ShardOnly};
    use crate::protocol::ToWorker;
    use crate::report::gather_parts::{context_of, context_parts, gather_parts};
    use crate::table::{TraceLoader, TraceSet};

    fn set() -> TraceSet {
        let dir =
            std::env::var("PROFILE_MODEL_TRACES").unwrap_or_else(|_| "../shared/traces".into());
        let tables = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"]
            .iter()
            .filter_map(|f| {
                let path = std::path::Path::new(&dir).join(f);
                let bytes = std::fs::read(&path).ok()?;
                let mut loader = TraceLoader::new(f, Some(bytes.len() as u64));
                loader.feed(&bytes).ok()?;
                loader.finish().ok()
            })
            .collect();
        TraceSet::from_tables(tables)
    }

    #[test]
    fn report_parts_survive_the_tagged_messages() {
        let set = set();
        if set.ranks.is_empty() {
            eprintln!("traces missing: skipped");
            return;
        }
        let parts = context_parts(&set);
        let only = ShardOnly::ContextParts {
            parts: parts.clone(),
        };
        assert_eq!(read_part(7, &only), only, "context parts read back");
        let context = context_of(&parts);
        let ask = ToWorker::Part {
            id: 8,
            request: Box::new(ToWorker::GatherParts {
                context: Box::new(context.clone()),
            }),
        };
        let bytes = encode(&ask).unwrap();
        let back: ToWorker = decode(&bytes).expect("gather request read back");
        assert_eq!(encode(&back).unwrap(), bytes);
        // The context read back is the context sent (its JSON, fields left out and all).
        let ToWorker::Part { request, .. } = back else {
            panic!("a part")
        };
        let ToWorker::GatherParts { context: back } = *request else {
            panic!("gather parts")
        };
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&context).unwrap()
        );
        let gathered = gather_parts(&set, &context, &AnalysisOptions::default());
        let only = ShardOnly::GatherParts { parts: gathered };
        assert_eq!(read_part(8, &only), only, "gather parts read back");
    }

    #[test]
    fn a_page_of_events_crosses_with_its_args() {
        use crate::protocol::FromWorker;
        use crate::table::query::{query_events, EventQuery};
        let set = set();
        if set.ranks.is_empty() {
            eprintln!("traces missing: skipped");
            return;
        }
        let page = query_events(&set, &EventQuery::default());
        assert!(
            page.rows.iter().any(|r| !r.args.is_empty()),
            "rows with args"
        );
        let bytes = encode(&FromWorker::Events(page.clone())).unwrap();
        let Ok(FromWorker::Events(back)) = decode(&bytes) else {
            panic!("a page of events comes back as one")
        };
        assert_eq!(back, page);
    }

    /// Every message the page reads of a real set comes back from the wire format equal (JSON
    /// compared, as the page and the CLI see them).
    #[test]
    fn the_page_s_messages_cross_the_wire_format() {
        use crate::protocol::FromWorker;
        use crate::report::diagnosis::diagnose;
        let set = set();
        if set.ranks.is_empty() {
            eprintln!("traces missing: skipped");
            return;
        }
        let report = diagnose(&set);
        let messages = [
            FromWorker::Analysis {
                analysis: crate::analysis::all::analyze(&set, &AnalysisOptions::default()),
                timings: Vec::new(),
            },
            FromWorker::Report {
                redacted: report.redacted(),
                report,
            },
            FromWorker::Views {
                views: crate::analysis::views::all_views(&set),
                steps: Some((0, 1)),
            },
        ];
        for msg in messages {
            let bytes = encode(&msg).unwrap();
            let back: FromWorker = decode(&bytes).unwrap_or_else(|e| {
                panic!(
                    "{e}: {}",
                    crate::protocol::codec::variant_names::<FromWorker>()
                        [crate::protocol::codec::variant_index(&bytes).unwrap() as usize]
                )
            });
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(&msg).unwrap()
            );
        }
    }

    /// `only` sent as a shard's answer to request `id`, as the coordinator reads it.
    fn read_part(id: u64, only: &ShardOnly) -> ShardOnly {
        let bytes = part_bytes(id, &shard_only_bytes(only).unwrap());
        match FromShard::read(&bytes).expect("a shard's part") {
            FromShard::Part { id: got, answer } => {
                assert_eq!(got, id);
                match *answer {
                    FromShard::Only(back) => back,
                    other => panic!("expected the report's parts, got {other:?}"),
                }
            }
            other => panic!("expected a part, got {other:?}"),
        }
    }
}
