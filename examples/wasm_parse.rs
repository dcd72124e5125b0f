//! The loader as a bare WebAssembly module, for profiling the in-browser parse in Node (same V8):
//! `scripts/profile-wasm-parse.sh FILE` builds it and runs `node --cpu-prof` over it.
//! Exports: `buffer(len) -> ptr` (a reusable input buffer), `feed(len) -> 0 | 1`, `finish() -> events`
//! and `analyze() -> critical-path segments` (every analysis, for profiling them the same way).
//! Natively it builds to an empty library.

#[cfg(target_arch = "wasm32")]
mod exports {
    use profile_model::table::TraceLoader;
    use std::cell::RefCell;

    thread_local! {
        static LOADER: RefCell<Option<TraceLoader>> = const { RefCell::new(None) };
        static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    #[no_mangle]
    pub extern "C" fn buffer(len: usize) -> *mut u8 {
        LOADER.with(|l| {
            l.borrow_mut()
                .get_or_insert_with(|| TraceLoader::new("trace.json", None));
        });
        INPUT.with(|b| {
            let mut b = b.borrow_mut();
            b.resize(len, 0);
            b.as_mut_ptr()
        })
    }

    #[no_mangle]
    pub extern "C" fn feed(len: usize) -> u32 {
        INPUT.with(|b| {
            let b = b.borrow();
            LOADER.with(|l| match l.borrow_mut().as_mut() {
                Some(loader) => u32::from(loader.feed(&b[..len]).is_err()),
                None => 1,
            })
        })
    }

    thread_local! {
        static TABLE: RefCell<Option<profile_model::table::TraceTable>> = const { RefCell::new(None) };
    }

    #[no_mangle]
    pub extern "C" fn finish() -> u64 {
        LOADER.with(|l| match l.borrow_mut().take() {
            Some(loader) => loader.finish().map_or(0, |t| {
                let n = t.len() as u64;
                TABLE.with(|k| *k.borrow_mut() = Some(t));
                n
            }),
            None => 0,
        })
    }

    /// Runs every analysis over the loaded table (exact mode); returns the number of critical-path
    /// segments, so the work cannot be optimised away.
    #[no_mangle]
    pub extern "C" fn analyze() -> u64 {
        use profile_model::analysis::all::{analyze, AnalysisOptions};
        use profile_model::table::TraceSet;
        let Some(table) = TABLE.with(|k| k.borrow_mut().take()) else {
            return 0;
        };
        let set = TraceSet::from_tables(vec![table]);
        let all = analyze(&set, &AnalysisOptions::default());
        all.critical_path
            .iter()
            .map(|c| c.result.segments as u64)
            .sum()
    }
}
