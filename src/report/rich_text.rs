//! Rich text: the diagnosis's prose as typed inline parts (plain text, a code span, a name with its
//! kind), from the rule that writes it to the screen. The Markdown writer, the text report, the page
//! and redaction read the parts; nothing renders the text and parses it back.
//!
//! Written with [`rich!`](crate::rich): each piece is a part ([`code`], [`kernel`], [`op`], ...), a
//! `String` (plain text, never split: `format!` output goes in as it is) or a `&'static str` literal,
//! whose `` `code` `` spans are the author's markup (a literal holds no data, so its spans are code):
//!
//! ```
//! use profile_model::rich;
//! use profile_model::report::rich_text::{code, kernel};
//! let calls = 3;
//! let t = rich!(kernel("void gemm<float>(int)"), format!(" runs {calls} times; try "), code("torch.compile"), ".");
//! assert_eq!(t.to_markdown(), "`gemm` runs 3 times; try `torch.compile`.");
//! let u = rich!("use `torch.compile` now");
//! assert_eq!(u.parts().len(), 3);
//! ```
//!
//! JSON (`report --json`) writes a text as its Markdown string; the page's binary codec carries the
//! parts.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use crate::report::redact::redact_name;
pub use crate::report::redact::NameKind;
use crate::report::wording::short_name;

/// One part of a [`RichText`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Inline {
    /// Plain text.
    Text(String),
    /// A code span: an API, a setting, a snippet (`torch.compile`).
    Code(String),
    /// A name from the trace: `name` in full (what redaction hashes, the page's tooltip), `shown`
    /// as the text shows it (template arguments dropped).
    Name {
        kind: NameKind,
        name: String,
        shown: String,
    },
}

impl Inline {
    /// The part as Markdown: text as it is, code and names in backticks.
    fn write_markdown(&self, out: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Inline::Text(t) => out.write_str(t),
            Inline::Code(c) => write!(out, "`{c}`"),
            Inline::Name { shown, .. } => write!(out, "`{shown}`"),
        }
    }

    /// The part with its name hashed by its kind (text and code kept).
    pub fn redacted(&self) -> Inline {
        match self {
            Inline::Name { kind, name, .. } => {
                let hashed = redact_name(*kind, name);
                let shown = if hashed == *name {
                    self.shown().to_string()
                } else {
                    hashed.clone()
                };
                Inline::Name {
                    kind: *kind,
                    name: hashed,
                    shown,
                }
            }
            other => other.clone(),
        }
    }

    /// The text the part shows (without backticks).
    pub fn shown(&self) -> &str {
        match self {
            Inline::Text(t) | Inline::Code(t) => t,
            Inline::Name { shown, .. } => shown,
        }
    }
}

/// A code span.
pub fn code(text: impl Into<String>) -> Inline {
    Inline::Code(text.into())
}

/// Plain text from a borrowed string (never split at backticks).
pub fn text(text: impl Into<String>) -> Inline {
    Inline::Text(text.into())
}

/// A name of `kind`, shown as `shown`.
pub fn name_as(kind: NameKind, name: &str, shown: impl Into<String>) -> Inline {
    Inline::Name {
        kind,
        name: name.to_string(),
        shown: shown.into(),
    }
}

/// A name of `kind`, shown in full.
pub fn name(kind: NameKind, name: &str) -> Inline {
    name_as(kind, name, name)
}

/// A kernel, shown by its short name ([`short_name`]).
pub fn kernel(name: &str) -> Inline {
    name_as(NameKind::Kernel, name, short_name(name))
}

/// A kernel shown as `shown` (a short name told apart from another's, [`super::wording::short_names`]).
pub fn kernel_as(name: &str, shown: impl Into<String>) -> Inline {
    name_as(NameKind::Kernel, name, shown)
}

/// An operator (or annotation, Python function), shown in full.
pub fn op(name: &str) -> Inline {
    self::name(NameKind::Op, name)
}

/// An operator shown by its short name ([`short_name`]).
pub fn op_short(name: &str) -> Inline {
    name_as(NameKind::Op, name, short_name(name))
}

/// An operator shown as `shown`.
pub fn op_as(name: &str, shown: impl Into<String>) -> Inline {
    name_as(NameKind::Op, name, shown)
}

/// A runtime or driver call.
pub fn runtime(name: &str) -> Inline {
    self::name(NameKind::Runtime, name)
}

/// A trace file.
pub fn file(name: &str) -> Inline {
    self::name(NameKind::File, name)
}

/// Prose with its code spans and names typed (see the module's doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RichText(Vec<Inline>);

/// What [`rich!`](crate::rich) and [`RichText::push`] take.
pub trait Piece {
    fn push_onto(self, t: &mut RichText);
}

impl Piece for Inline {
    fn push_onto(self, t: &mut RichText) {
        t.push_inline(self);
    }
}

impl Piece for String {
    fn push_onto(self, t: &mut RichText) {
        t.push_inline(Inline::Text(self));
    }
}

/// A literal: its `` `code` `` spans are code (an unclosed backtick is text).
impl Piece for &'static str {
    fn push_onto(self, t: &mut RichText) {
        let mut rest = self;
        while let Some(at) = rest.find('`') {
            let after = &rest[at + 1..];
            let Some(end) = after.find('`') else { break };
            t.push_inline(Inline::Text(rest[..at].to_string()));
            t.push_inline(Inline::Code(after[..end].to_string()));
            rest = &after[end + 1..];
        }
        t.push_inline(Inline::Text(rest.to_string()));
    }
}

impl Piece for RichText {
    fn push_onto(self, t: &mut RichText) {
        for p in self.0 {
            t.push_inline(p);
        }
    }
}

impl Piece for &RichText {
    fn push_onto(self, t: &mut RichText) {
        self.clone().push_onto(t);
    }
}

impl<P: Piece> Piece for Option<P> {
    fn push_onto(self, t: &mut RichText) {
        if let Some(p) = self {
            p.push_onto(t);
        }
    }
}

/// Rich text from pieces: `rich!(kernel(&k.name), format!(" takes {share:.1}%"), " of `torch.compile`")`.
#[macro_export]
macro_rules! rich {
    ($($piece:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut t = $crate::report::rich_text::RichText::default();
        $( t.push($piece); )*
        t
    }};
}

impl RichText {
    /// The parts, in order (adjacent text merged, no empty text).
    pub fn parts(&self) -> &[Inline] {
        &self.0
    }

    /// Appends a piece.
    pub fn push(&mut self, piece: impl Piece) -> &mut Self {
        piece.push_onto(self);
        self
    }

    fn push_inline(&mut self, part: Inline) {
        match (self.0.last_mut(), part) {
            (_, Inline::Text(t)) if t.is_empty() => {}
            (Some(Inline::Text(last)), Inline::Text(t)) => last.push_str(&t),
            (_, p) => self.0.push(p),
        }
    }

    /// The texts joined by `sep`.
    pub fn join(items: impl IntoIterator<Item = RichText>, sep: &'static str) -> RichText {
        let mut out = RichText::default();
        for (n, item) in items.into_iter().enumerate() {
            if n > 0 {
                out.push(Inline::Text(sep.to_string()));
            }
            out.push(item);
        }
        out
    }

    /// The text as Markdown (what `report --json` and the Markdown report write).
    pub fn to_markdown(&self) -> String {
        Markdown(self).to_string()
    }

    /// The text with every name hashed by its kind.
    pub fn redacted(&self) -> RichText {
        RichText(self.0.iter().map(Inline::redacted).collect())
    }

    /// The names it mentions.
    pub fn names(&self) -> impl Iterator<Item = (NameKind, &str)> {
        self.0.iter().filter_map(|p| match p {
            Inline::Name { kind, name, .. } => Some((*kind, name.as_str())),
            _ => None,
        })
    }

    /// The text with `from` replaced by `to` in its plain parts (rule wording; names and code kept).
    pub fn replace_text(&self, from: &str, to: &str) -> RichText {
        let mut out = RichText::default();
        for p in &self.0 {
            match p {
                Inline::Text(t) => out.push_inline(Inline::Text(t.replace(from, to))),
                other => out.push_inline(other.clone()),
            }
        }
        out
    }

    /// The text with its first letter upper-case when it opens with plain text (a sentence's start).
    pub fn capitalised(mut self) -> RichText {
        if let Some(Inline::Text(t)) = self.0.first_mut() {
            let mut c = t.chars();
            if let Some(f) = c.next() {
                *t = f.to_uppercase().collect::<String>() + c.as_str();
            }
        }
        self
    }

    /// The text as read, without Markdown: each part's shown text.
    pub fn plain(&self) -> String {
        self.0.iter().map(Inline::shown).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether its Markdown contains `pat`.
    pub fn contains(&self, pat: &str) -> bool {
        self.to_markdown().contains(pat)
    }

    /// Whether its Markdown starts with `pat`.
    pub fn starts_with(&self, pat: &str) -> bool {
        self.to_markdown().starts_with(pat)
    }

    /// Whether its Markdown ends with `pat`.
    pub fn ends_with(&self, pat: &str) -> bool {
        self.to_markdown().ends_with(pat)
    }

    /// A plain-text part holding a backtick: a code span written into a `String` (a site not
    /// converted to [`rich!`](crate::rich)'s parts); the tests ask that there is none.
    pub fn stray_backtick(&self) -> Option<&str> {
        self.0.iter().find_map(|p| match p {
            Inline::Text(t) if t.contains('`') => Some(t.as_str()),
            _ => None,
        })
    }
}

/// The text as Markdown (what `{}` writes). A rule never formats a `RichText` into a `String`
/// (that flattens its names into text redaction cannot see): it passes it to [`rich!`](crate::rich)
/// as a piece. The stray-backtick check ([`RichText::stray_backtick`]) catches a flattened one.
struct Markdown<'a>(&'a RichText);

impl fmt::Display for RichText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Markdown(self).fmt(f)
    }
}

impl fmt::Display for Markdown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.0 .0 {
            p.write_markdown(f)?;
        }
        Ok(())
    }
}

impl From<String> for RichText {
    fn from(s: String) -> Self {
        rich!(s)
    }
}

impl From<&'static str> for RichText {
    fn from(s: &'static str) -> Self {
        rich!(s)
    }
}

impl From<Inline> for RichText {
    fn from(p: Inline) -> Self {
        rich!(p)
    }
}

impl PartialEq<&str> for RichText {
    fn eq(&self, other: &&str) -> bool {
        self.to_markdown() == *other
    }
}

impl PartialEq<str> for RichText {
    fn eq(&self, other: &str) -> bool {
        self.to_markdown() == other
    }
}

/// JSON and other formats people read: the Markdown string; the binary codec: the parts.
impl Serialize for RichText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.collect_str(&Markdown(self))
        } else {
            self.0.serialize(s)
        }
    }
}

/// JSON's string is read back as one plain part (its Markdown, written again as it was); the
/// binary codec's parts as they were.
impl<'de> Deserialize<'de> for RichText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            Ok(RichText(vec![Inline::Text(String::deserialize(d)?)]))
        } else {
            Ok(RichText(Vec::<Inline>::deserialize(d)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_split_their_code_spans_and_strings_do_not() {
        let t = rich!("use `torch.compile` now");
        assert_eq!(
            t.parts(),
            [
                Inline::Text("use ".into()),
                Inline::Code("torch.compile".into()),
                Inline::Text(" now".into())
            ]
        );
        assert_eq!(rich!("a `b").parts(), [Inline::Text("a `b".into())]);
        let s = String::from("x `y` z");
        assert_eq!(rich!(s).parts(), [Inline::Text("x `y` z".into())]);
        assert!(rich!("").is_empty());
    }

    #[test]
    fn markdown_writes_code_and_names_in_backticks_and_merges_text() {
        let t = rich!(
            "the ",
            format!("{} ", 3),
            kernel("void gemm<float>(int)"),
            " and ",
            op("aten::mm")
        );
        assert_eq!(t.to_markdown(), "the 3 `gemm` and `aten::mm`");
        assert_eq!(t.parts().len(), 4);
        assert_eq!(
            RichText::join([rich!(code("a")), rich!(code("b"))], ", ").to_markdown(),
            "`a`, `b`"
        );
    }

    #[test]
    fn redaction_hashes_each_name_by_its_kind() {
        let gemm = "void gemm<float>(int)";
        let t = rich!(
            kernel(gemm),
            " then ",
            op("aten::mm"),
            " in ",
            runtime("cudaMemcpyAsync"),
            " ",
            code("x")
        );
        let r = t.redacted();
        let k = crate::report::redact::redacted_name("kernel", gemm);
        let o = crate::report::redact::redacted_name("op", "aten::mm");
        assert_eq!(
            r.to_markdown(),
            format!("`{k}` then `{o}` in `cudaMemcpyAsync` `x`")
        );
        assert_eq!(
            rich!(file("a/run.pt.trace.json")).redacted().to_markdown(),
            format!(
                "`{}`",
                crate::report::redact::redact_file_name("a/run.pt.trace.json")
            )
        );
    }

    #[test]
    fn json_is_the_markdown_string_and_the_codec_keeps_the_parts() {
        let t = rich!("a ", kernel("void k<1>()"), " b");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"a `k` b\"");
        let back: RichText = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_markdown(), t.to_markdown());
        let bytes = crate::protocol::codec::encode(&t).unwrap();
        let back: RichText = crate::protocol::codec::decode(&bytes).unwrap();
        assert_eq!(back, t);
    }
}
