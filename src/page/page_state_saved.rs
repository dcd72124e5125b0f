//! The page state's part in this browser's cache: results found, restored, kept (Keep) and
//! forgotten, each rank's tables stored, and the saved results' format read back.

use super::*;

impl PageState {
    /// Saved results exist for the files of the load (or set) with this key.
    pub fn saved_found(&mut self, key: &str) {
        let current = match &self.page {
            Page::Loading { cache_key, .. } => cache_key.as_deref(),
            Page::Loaded(s) => s.cache_key.as_deref(),
            _ => None,
        };
        if current == Some(key) {
            self.saved_available = true;
            if self.keep_offer == KeepOffer::Asking {
                self.keep_offer = KeepOffer::Kept;
            }
        }
    }

    /// "Show the saved results": they replace the load or the results shown. No worker holds them.
    pub fn restore_saved(&mut self, saved: SavedResults, key: String) -> Vec<Effect> {
        let effects = if self.is_loading() {
            vec![Effect::DropLoadWorker]
        } else {
            Vec::new()
        };
        let mut analyses: [Option<Analyses>; 2] = [None, None];
        for all in saved.analyses {
            let slot = (all.mode == Mode::HtaCompat) as usize;
            analyses[slot] = Some(Analyses {
                all,
                timings: Vec::new(),
            });
        }
        let mut steps = crate::page::step_pick::StepPick::default();
        if let Some(r) = &saved.report {
            steps.on_report(&r.plain.context);
        }
        self.page = Page::Restored {
            shown: Box::new(Shown {
                loaded: saved.loaded,
                cache_key: Some(key),
                report: saved.report,
                analyses,
                comparison: None,
                views: None,
                sql: Default::default(),
                steps,
            }),
            why: Detached::Saved,
        };
        self.redact = saved.redact;
        self.rank_index = 0;
        self.revision += 1;
        self.keep_offer = KeepOffer::Hidden;
        self.clear_views();
        self.request_error = None;
        effects
    }

    /// The user said Keep (or No).
    pub fn set_keep(&mut self, offer: KeepOffer) {
        self.keep_offer = offer;
    }

    /// The key of the files being loaded or shown.
    pub fn current_key(&self) -> Option<&str> {
        match &self.page {
            Page::Loading { cache_key, .. } => cache_key.as_deref(),
            _ => self.shown().and_then(|s| s.cache_key.as_deref()),
        }
    }

    /// The user said Keep: the results are stored, and (when a worker holds the trace) its tables
    /// are asked for, to be stored too. Nothing is stored before this.
    pub fn keep(&mut self) -> Vec<Effect> {
        if self.shown().and_then(|s| s.cache_key.as_ref()).is_none() {
            return Vec::new();
        }
        self.keep_offer = KeepOffer::Kept;
        let mut effects = vec![Effect::Save];
        if self.worker_answers() {
            effects.push(Effect::Post(ToWorker::StoreTables));
        }
        effects
    }

    /// The worker's tables arrived: whether to store them under this key (only while the trace
    /// shown is the one kept).
    pub fn tables_wanted(&self) -> Option<String> {
        if self.keep_offer != KeepOffer::Kept || !self.worker_answers() {
            return None;
        }
        self.shown()?.cache_key.clone()
    }

    /// The traces saved in this browser, as the index lists them.
    pub fn saved_listed(&mut self, entries: Vec<SavedEntry>) {
        self.saved = SavedList::of(entries);
    }

    /// A trace was stored (its tables, results and index entry).
    pub fn stored(&mut self, entry: SavedEntry) {
        self.saved.upsert(entry);
    }

    /// Storing the trace of `key` failed: the user is told, what was stored of it goes, and what is
    /// on screen stays.
    pub fn store_failed(&mut self, key: &str, problem: CacheProblem) -> Vec<Effect> {
        self.notice = Some(problem.message().into());
        if self.keep_offer == KeepOffer::Kept {
            self.keep_offer = KeepOffer::Hidden;
        }
        self.saved_available = false;
        self.saved.remove(key);
        vec![Effect::ForgetEntry(key.to_string())]
    }

    /// The saved trace of this key, when its tables are stored (it can be opened without the file).
    pub fn saved_tables(&self, key: &str) -> Option<&SavedEntry> {
        self.saved
            .get(key)
            .filter(|e| e.rank_count() > 0 && e.format == crate::table::store::STORE_FORMAT)
    }

    /// "Open" (or "Show the saved results" for dropped files of this key): the saved tables were
    /// read; a fresh worker rebuilds the set from them, and then the page goes on as after a load.
    /// What was shown stays until it succeeds. The page posts the tables to the load's worker.
    pub fn open_saved(&mut self, key: &str) -> Vec<Effect> {
        if self.saved_tables(key).is_none() {
            // Saved in another storage format, or without its tables.
            return self.saved_broken(key, CacheProblem::Corrupt);
        }
        let effects = self.start_load(Some(key.to_string()));
        self.opening_saved = Some(key.to_string());
        effects
    }

    /// The saved trace of `key` could not be opened (a table missing, or unreadable): the user is
    /// told, the entry goes, and what was shown before stays.
    pub fn saved_broken(&mut self, key: &str, problem: CacheProblem) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.opening_saved.as_deref() == Some(key) && self.end_load(Page::Empty) {
            effects = self.after_end();
        }
        self.notice = Some(problem.message().into());
        self.saved.remove(key);
        if self.current_key() == Some(key) {
            self.saved_available = false;
        }
        effects.push(Effect::ForgetEntry(key.to_string()));
        effects
    }

    /// "Forget" on one saved trace: its entry goes from the list and the store; what is on screen
    /// stays (its results can be kept again).
    pub fn forget_entry(&mut self, key: &str) -> Vec<Effect> {
        let Some(entry) = self.saved.get(key) else {
            return Vec::new();
        };
        self.notice = Some(format!(
            "Forgot {} ({} freed).",
            entry.names(),
            crate::report::format::bytes(entry.bytes())
        ));
        self.saved.remove(key);
        if self.current_key() == Some(key) {
            self.saved_available = false;
            if self.keep_offer == KeepOffer::Kept {
                self.keep_offer = KeepOffer::Hidden;
            }
        }
        vec![Effect::ForgetEntry(key.to_string())]
    }

    /// "Forget saved traces" cleared the cache.
    pub fn forgotten(&mut self, ok: bool) {
        if !ok {
            self.notice = Some("This browser did not let the page clear its saved traces.".into());
            return;
        }
        let freed = self.saved.total_bytes();
        self.saved = SavedList::default();
        self.saved_available = false;
        if self.keep_offer == KeepOffer::Kept {
            self.keep_offer = KeepOffer::Hidden;
        }
        self.notice = Some(format!(
            "Saved traces forgotten ({} freed): nothing is kept in this browser.",
            crate::report::format::bytes(freed)
        ));
    }

    /// What to store when the user keeps the results shown.
    pub fn to_saved(&self) -> Option<(String, SavedResults)> {
        let s = self.shown()?;
        Some((
            s.cache_key.clone()?,
            SavedResults {
                format: SAVED_FORMAT,
                loaded: s.loaded.clone(),
                report: s.report.clone(),
                redact: self.redact,
                analyses: s.analyses.iter().flatten().map(|a| a.all.clone()).collect(),
            },
        ))
    }
}

/// Version of [`SavedResults`]' layout. 1 (implicit) held the report as Markdown and the analyses
/// as untyped JSON; 2 holds both typed.
/// Format 3: the results in the messages' wire format ([`crate::protocol::codec`]); formats 1
/// and 2 were JSON text. Format 4: the critical path typed in that format (3 carried it as JSON text).
pub const SAVED_FORMAT: u32 = 4;

/// What this browser keeps for one set of files (results only, never the trace).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedResults {
    pub format: u32,
    pub loaded: LoadedSet,
    pub report: Option<Reports>,
    /// The report was shown with names hashed.
    #[serde(default)]
    pub redact: bool,
    /// The analyses computed, one per mode.
    #[serde(default)]
    pub analyses: Vec<AllAnalyses>,
}

/// Why saved results cannot be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SavedError {
    /// Saved by an older version of the page (the message says what to do).
    Older,
    /// Saved by a newer version, or damaged.
    Unreadable,
}

impl SavedError {
    pub fn message(&self) -> &'static str {
        match self {
            SavedError::Older => {
                "These results were saved by an older version of this page: load the trace again."
            }
            SavedError::Unreadable => {
                "The saved results could not be read by this version of the page: load the trace again."
            }
        }
    }
}

/// Saved results as this version writes them ([`decode_saved`] reads them back).
pub fn encode_saved(saved: &SavedResults) -> Option<Vec<u8>> {
    crate::protocol::codec::encode(saved).ok()
}

/// Reads saved results (`saved`: the stored bytes, or the UTF-8 of the JSON text formats 1 and 2
/// stored), refusing what this version cannot show politely.
pub fn decode_saved(saved: &[u8]) -> Result<SavedResults, SavedError> {
    /// The first field of [`SavedResults`].
    #[derive(Deserialize)]
    struct Header {
        format: u32,
    }
    if saved.first() == Some(&b'{') {
        // JSON text: formats 1 and 2 (format 1 kept only the report's Markdown).
        return Err(SavedError::Older);
    }
    let (header, _) = crate::protocol::codec::decode_prefix::<Header>(saved)
        .map_err(|_| SavedError::Unreadable)?;
    match header.format {
        SAVED_FORMAT => crate::protocol::codec::decode(saved).map_err(|_| SavedError::Unreadable),
        f if f < SAVED_FORMAT => Err(SavedError::Older),
        _ => Err(SavedError::Unreadable),
    }
}
