//! One trace event as read from the JSON text: fields borrowed from the input where possible.

/// An id field (`pid`, `tid`) that traces write as a number or as a string (`"stream 7"`, `"Spans"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IdValue<'a> {
    Int(i64),
    Text(&'a [u8]),
}

/// One value of `args`. Strings are unescaped; arrays and objects are kept as compact JSON text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgValue<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(&'a [u8]),
    /// An array or object, as compact JSON (no white space outside strings).
    Json(&'a [u8]),
}

/// How an event's `ts` was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TsForm {
    #[default]
    Missing,
    /// A JSON integer (`1682725898079292`).
    Int,
    /// A JSON number with a fraction or an exponent (`1712195495519689.047`).
    Float,
    /// Anything else (a string, ...).
    Other,
}

/// The fields of one event that the tables keep. Strings point into the input or into the reader's
/// scratch space; they live until the next event is read.
#[derive(Clone, Debug, Default)]
pub struct RawEvent<'a> {
    /// Index of this entry in `traceEvents` (0-based, counting every entry).
    pub index: u64,
    /// First byte of `ph`.
    pub phase: Option<u8>,
    pub name: Option<&'a [u8]>,
    pub category: Option<&'a [u8]>,
    pub pid: Option<IdValue<'a>>,
    pub tid: Option<IdValue<'a>>,
    /// `ts` in integer nanoseconds (the JSON gives µs, int or float; ns digits are kept exactly).
    pub ts_ns: Option<i64>,
    /// `dur` in integer nanoseconds.
    pub dur_ns: Option<i64>,
    /// `ts` and `dur` as a JSON parser reads them (µs, f64), only when the text has digits past the
    /// ns (e.g. `11.689600000000002`, as scripts that scale durations write).
    pub ts_us: Option<f64>,
    pub dur_us: Option<f64>,
    /// How `ts` was written (pandas reads a `ts` column with a float or a gap as float64).
    pub ts_form: TsForm,
    /// Flow id (`id` of `s`/`f`/`t`/`b`/`e` events): a number, or a hex string parsed as one.
    pub id: Option<i64>,
    /// `id` was present but neither a number nor a hex string.
    pub bad_id: bool,
    /// Flow binding point (`bp`), first byte (`e` = enclosing slice).
    pub binding_point: Option<u8>,
    /// `args` in the order written.
    pub args: Vec<(&'a [u8], ArgValue<'a>)>,
}

impl<'a> RawEvent<'a> {
    pub fn clear(&mut self) {
        self.phase = None;
        self.name = None;
        self.category = None;
        self.pid = None;
        self.tid = None;
        self.ts_ns = None;
        self.dur_ns = None;
        self.ts_us = None;
        self.dur_us = None;
        self.ts_form = TsForm::Missing;
        self.id = None;
        self.bad_id = false;
        self.binding_point = None;
        self.args.clear();
    }
}

/// Receives events as the reader finds them (the table builder implements it).
pub trait EventSink {
    fn event(&mut self, event: &RawEvent<'_>);
    /// An entry of `traceEvents` that is not an object (counted, not kept).
    fn non_object_entry(&mut self, index: u64);
}
