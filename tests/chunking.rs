//! Chunk boundaries: the same table whether the bytes arrive in 1-byte, 7-byte, 4 KiB or 1 MiB chunks,
//! compressed or not.

use crate::common;

use profile_model::table::{TraceLoader, TraceTable};
use profile_model::trace::source::TextSource;
use profile_model::trace::LoadError;

fn load_in_chunks(name: &str, bytes: &[u8], chunk: usize) -> TraceTable {
    let mut loader = TraceLoader::new(name, Some(bytes.len() as u64));
    for piece in bytes.chunks(chunk) {
        loader.feed(piece).unwrap();
    }
    loader.finish().unwrap()
}

fn check(name: &str, chunks: &[usize]) {
    let path = common::trace(name);
    let raw = std::fs::read(&path).unwrap();
    let text = common::json_text(&path);
    let whole = common::fingerprint(&load_in_chunks(name, &raw, raw.len()));
    assert!(whole.len() > 10);
    for &c in chunks {
        assert_eq!(
            common::fingerprint(&load_in_chunks(name, &raw, c)),
            whole,
            "{name}: raw file in {c}-byte chunks"
        );
        assert_eq!(
            common::fingerprint(&load_in_chunks(name, &text, c)),
            whole,
            "{name}: JSON text in {c}-byte chunks"
        );
    }
}

#[test]
fn small_traces_in_any_chunks() {
    for name in [
        "hta__call_stack_backward_thread.json",
        "hta__simple_add_kineto.json.gz",
        "hta__triton_example.json.gz",
        "hta__amd_mi250_minitoy_train.json.gz",
        "hta__cuda_event_sync.json.gz",
        "hta__critical_path_alexnet.json.gz",
    ] {
        check(name, &[1, 7, 4096, 1 << 20]);
    }
}

#[test]
fn mid_size_traces_in_any_chunks() {
    for name in [
        "hta__sampled_rank-0.json.gz",
        "hta__mtia_inference_rank_0.json.gz",
        "hta__nccl_data.json.gz",
    ] {
        check(name, &[1, 7, 1 << 20]);
    }
}

#[test]
fn largest_trace_in_odd_chunks() {
    check("hta__df_index_resolver.json.gz", &[7, 65_537, 1 << 20]);
}

/// The page's split load: a [`TextSource`] (the second worker) turns raw chunks into text pieces,
/// and the loader parses the pieces with [`TraceLoader::feed_text`].
fn load_split(
    name: &str,
    bytes: &[u8],
    raw_chunk: usize,
    piece: usize,
) -> Result<TraceTable, LoadError> {
    let mut source = TextSource::new(piece);
    let mut loader = TraceLoader::new(name, Some(bytes.len() as u64));
    for raw in bytes.chunks(raw_chunk) {
        let mut pieces = Vec::new();
        let corrupt = source.feed(raw, &mut |t| pieces.push(t.to_vec()));
        assert!(pieces.iter().all(|p| p.len() == piece) || corrupt.is_err());
        for p in &pieces {
            loader.feed_text(p, source.is_gzip(), source.raw_bytes())?;
        }
        if let Err(c) = corrupt {
            loader.text_source_corrupt(c.offset, &c.detail)?;
        }
    }
    let mut pieces = Vec::new();
    let cut = source.finish(&mut |t| pieces.push(t.to_vec()));
    for p in &pieces {
        loader.feed_text(p, source.is_gzip(), source.raw_bytes())?;
    }
    loader.finish_text(source.is_gzip(), source.raw_bytes(), cut)
}

fn load_whole(name: &str, bytes: &[u8]) -> Result<TraceTable, LoadError> {
    let mut loader = TraceLoader::new(name, Some(bytes.len() as u64));
    loader.feed(bytes)?;
    loader.finish()
}

/// What a load gives, for comparing two ways of loading: the table's fingerprint and its byte
/// counts, or the error.
fn outcome(r: Result<TraceTable, LoadError>) -> Result<(Vec<String>, bool, u64, u64), LoadError> {
    r.map(|t| {
        let m = &t.metadata;
        (common::fingerprint(&t), m.gzip, m.file_bytes, m.text_bytes)
    })
}

#[test]
fn split_load_gives_the_same_table() {
    for name in [
        "hta__call_stack_backward_thread.json",
        "hta__simple_add_kineto.json.gz",
        "hta__amd_mi250_minitoy_train.json.gz",
        "hta__sampled_rank-0.json.gz",
    ] {
        let raw = std::fs::read(common::trace(name)).unwrap();
        let want = outcome(load_whole(name, &raw));
        let (_, gzip, file_bytes, text_bytes) = want.clone().unwrap();
        assert_eq!(gzip, name.ends_with(".gz"));
        assert_eq!(file_bytes, raw.len() as u64);
        assert!(text_bytes >= file_bytes);
        for (raw_chunk, piece) in [(1 << 20, 1 << 20), (7, 4096), (65_537, 1), (4096, 3 << 20)] {
            assert_eq!(
                outcome(load_split(name, &raw, raw_chunk, piece)),
                want,
                "{name}: raw chunks of {raw_chunk}, text pieces of {piece}"
            );
        }
    }
}

#[test]
fn split_load_of_damaged_gzip_is_the_same() {
    let name = "hta__sampled_rank-0.json.gz";
    let raw = std::fs::read(common::trace(name)).unwrap();
    let cut = &raw[..raw.len() * 2 / 3];
    let mut damaged = raw.clone();
    let at = raw.len() / 2;
    for b in &mut damaged[at..at + 64] {
        *b = 0xff;
    }
    let mut early = raw.clone();
    for b in &mut early[12..200] {
        *b = 0xff;
    }
    for (what, bytes) in [
        ("cut", cut),
        ("damaged", &damaged[..]),
        ("damaged early", &early[..]),
    ] {
        let want = outcome(load_whole(name, bytes));
        for (raw_chunk, piece) in [(1 << 20, 1 << 20), (4096, 65_536)] {
            assert_eq!(
                outcome(load_split(name, bytes, raw_chunk, piece)),
                want,
                "{what}: raw chunks of {raw_chunk}, text pieces of {piece}"
            );
        }
        match (what, &want) {
            ("damaged early", Err(e)) => assert!(e.message.contains("gzip"), "{}", e.message),
            ("damaged early", Ok(_)) => panic!("a file damaged before any event should not load"),
            (_, Ok((fp, ..))) => {
                let diags = fp.iter().find(|l| l.starts_with("diagnostics")).unwrap();
                assert!(
                    diags.contains("TruncatedTail") || diags.contains("truncated"),
                    "{what}: {diags}"
                );
            }
            (_, Err(e)) => panic!("{what}: {}", e.message),
        }
    }
}

/// `load_path` reads in a second thread and parses the text it hands over: the same table (or the
/// same error) as feeding the whole file at once, for whole, cut and damaged files.
#[test]
fn load_path_with_its_reader_thread_gives_the_same_table() {
    let dir = std::env::temp_dir().join(format!("pm-load-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 1.4 MB of gzip, 26 MB of JSON: several pieces and reads either way.
    let source = common::trace("hta__negative_queue_length__rank0.json.gz");
    let gz = std::fs::read(&source).unwrap();
    let plain = common::json_text(&source);
    assert!(
        plain.len() > 3 * (4 << 20),
        "the plain text spans several 4 MiB pieces"
    );
    let mut damaged = gz.clone();
    let at = gz.len() / 2;
    damaged[at..at + 64].fill(0xff);
    let mut early = gz.clone();
    early[12..200].fill(0xff);
    let cases: [(&str, &[u8]); 7] = [
        ("whole.json.gz", &gz),
        ("whole.json", &plain),
        ("cut.json.gz", &gz[..gz.len() * 2 / 3]),
        ("cut.json", &plain[..plain.len() * 2 / 3]),
        ("damaged.json.gz", &damaged),
        ("early.json.gz", &early),
        ("empty.json", b""),
    ];
    for (name, bytes) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let got = outcome(profile_model::table::load_path(&path));
        assert_eq!(got, outcome(load_whole(name, bytes)), "{name}");
        match name {
            "early.json.gz" | "empty.json" => assert!(got.is_err(), "{name} should not load"),
            _ => assert!(got.unwrap().0.len() > 1000, "{name} loads its events"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every dialect and oddity in one text, fed in pieces of every size from 1 to 64 bytes and a few
/// larger: the same table as one piece (events cut at any byte, escapes, exponents, a BOM, CRLF).
#[test]
fn dialect_text_in_pieces_of_every_size() {
    let text = "\u{feff}\r\n{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 2, \"world_size\": 4,},\r\n\
        \"traceEvents\": [\r\n\
        null, 7, \"x\",\r\n\
        {\"ph\": \"X\", \"c\\u0061t\": \"Kernel\", \"name\": \"caf\\u00e9 \\ud83d\\ude00 \\\"k\\\" \\\\ \\/\", \"pid\": \"0\", \"tid\": \"stream 7\", \"ts\": 1.6042036700001235e15, \"dur\": 2.5E1, \"args\": {\"external id\": 3, \"deep\": [[[1, [2]], {\"a\": null}]], \"big\": 18446744073709551616, \"x\": 1e400,}},\r\n\
        {\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":1604203670000100.5},\r\n\
        {\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":1604203670000130.25},\r\n\
        {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"neg\", \"pid\": 0, \"tid\": 7, \"ts\": 1604203670000140, \"dur\": -3},\r\n\
        {\"ph\": \"s\", \"cat\": \"async\", \"name\": \"f\", \"pid\": 1, \"tid\": 1, \"ts\": 1604203670000101, \"id\": \"0x1f\", \"bp\": \"e\"},\r\n\
        {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1604203670000102, \"dur\": 1, \"args\": {\"stream\": \"0x0\", \"correlation\": 5}},\r\n\
        ],\r\n\"deviceProperties\": [{\"name\": \"AMD Instinct MI300X\"}]}\r\n\0\0";
    let bytes = text.as_bytes();
    let whole = load_in_chunks("dialects.json", bytes, bytes.len());
    assert_eq!(whole.len(), 6);
    assert_eq!(whole.metadata.trace_events, 9);
    assert_eq!(whole.metadata.rank, Some(2));
    assert_eq!(
        whole.metadata.device_name.as_deref(),
        Some("AMD Instinct MI300X")
    );
    assert_eq!(whole.name_at(0), "café 😀 \"k\" \\ /");
    assert_eq!(whole.ts_at(0), Some(1_604_203_670_000_123_500));
    assert_eq!(whole.dur_at(1), Some(29_750));
    let want = common::fingerprint(&whole);
    for chunk in (1..=64).chain([127, 1000, 4096]) {
        assert_eq!(
            common::fingerprint(&load_in_chunks("dialects.json", bytes, chunk)),
            want,
            "{chunk}-byte pieces"
        );
        let gz = {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        };
        assert_eq!(
            outcome(load_split("dialects.json", &gz, chunk, chunk)),
            outcome(load_whole("dialects.json", &gz)),
            "gzip in {chunk}-byte pieces"
        );
    }
}

/// Texts that end or start badly give the same table, or the same error, in pieces of any size:
/// an event cut between two keys and followed by zero bytes (a preallocated file the profiler did
/// not finish), and a file that is not JSON (the message shows its first bytes).
#[test]
fn bad_starts_and_ends_in_pieces_of_every_size() {
    let cut = format!(
        "{{\"traceEvents\": [{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 2}},\n\
         {{\"ph\": \"X\", \"cat\": \"kernel\", {}",
        "\0".repeat(64)
    );
    let not_json = "hello, world";
    for text in [cut.as_str(), not_json] {
        let bytes = text.as_bytes();
        let want = outcome(load_whole("odd.json", bytes));
        for chunk in 1..=16 {
            let mut loader = TraceLoader::new("odd.json", Some(bytes.len() as u64));
            let got = bytes
                .chunks(chunk)
                .try_for_each(|p| loader.feed(p))
                .and_then(|()| loader.finish());
            assert_eq!(outcome(got), want, "{chunk}-byte pieces of {text:?}");
            assert_eq!(
                outcome(load_split("odd.json", bytes, chunk, chunk)),
                want,
                "split {chunk}-byte pieces of {text:?}"
            );
        }
    }
    let table = load_whole("odd.json", cut.as_bytes()).unwrap();
    assert_eq!(table.len(), 1);
    let e = load_whole("odd.json", not_json.as_bytes()).unwrap_err();
    assert!(e.message.contains("68 65 6C 6C"), "{e}");
}
