//! Chunk boundaries: the same table whether the bytes arrive in 1-byte, 7-byte, 4 KiB or 1 MiB chunks,
//! compressed or not.

mod common;

use profile_model::table::{TraceLoader, TraceTable};

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
