//! Answers bounded in bytes: a text is cut at a line boundary, from a given first line, and the cut is
//! said in a separate note with how to ask for the rest (`line_offset`, `max_bytes`).

/// Bytes an answer holds unless the call asks otherwise.
pub const DEFAULT_MAX_BYTES: usize = 40_000;
/// Most bytes one answer may hold.
pub const MAX_BYTES: usize = 400_000;

/// The part of a text that is sent, and the note on what was left out (none: the whole text).
#[derive(Debug, PartialEq)]
pub struct Bounded {
    pub text: String,
    pub note: Option<String>,
}

/// `text` from line `line_offset` on, whole lines up to `max_bytes` (default [`DEFAULT_MAX_BYTES`],
/// at most [`MAX_BYTES`]; at least one line is sent even when it is longer, cut at a char boundary).
/// `tool` names the tool to call again in the note.
pub fn bound_text(text: &str, line_offset: usize, max_bytes: Option<usize>, tool: &str) -> Bounded {
    let max = max_bytes.unwrap_or(DEFAULT_MAX_BYTES).clamp(1, MAX_BYTES);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let first = line_offset.min(lines.len());
    let (sent, end) = take_lines(&lines[first..], max);
    let end = first + end;
    if first == 0 && sent.len() == text.len() {
        return Bounded {
            text: sent,
            note: None,
        };
    }
    // The last line sent was itself cut (one line longer than max_bytes).
    let line_cut = sent.len() < lines[first..end].iter().map(|l| l.len()).sum::<usize>();
    let note = cut_note(
        first,
        end,
        lines.len(),
        sent.len(),
        text.len(),
        tool,
        line_cut,
    );
    Bounded {
        text: sent,
        note: Some(note),
    }
}

/// Whole lines while they fit in `max` bytes (at least one, cut at a char boundary when too long);
/// returns the text and how many lines it holds.
fn take_lines(lines: &[&str], max: usize) -> (String, usize) {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if out.len() + line.len() > max {
            if i == 0 {
                out.push_str(prefix_within(line, max));
                return (out, 1);
            }
            return (out, i);
        }
        out.push_str(line);
    }
    (out, lines.len())
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
fn prefix_within(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn cut_note(
    first: usize,
    end: usize,
    lines: usize,
    sent: usize,
    total: usize,
    tool: &str,
    line_cut: bool,
) -> String {
    let mut note = format!("[cut: lines {first}..{end} of {lines} sent ({sent} of {total} bytes).");
    if end < lines {
        note += &format!(
            " Call {tool} again with line_offset={end} for the next part, or with a larger max_bytes (at most {MAX_BYTES})."
        );
    } else if line_cut {
        note += &format!(" Line {} was longer than max_bytes: call {tool} again with a larger max_bytes (at most {MAX_BYTES}).", end - 1);
    }
    note.push(']');
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_sent_whole_without_a_note() {
        let b = bound_text("a\nb\n", 0, None, "report");
        assert_eq!(b.text, "a\nb\n");
        assert_eq!(b.note, None);
    }

    #[test]
    fn a_long_text_is_cut_at_a_line_and_says_where_to_go_on() {
        let text = "0123\n".repeat(10); // 50 bytes, 10 lines
        let b = bound_text(&text, 0, Some(12), "report");
        assert_eq!(b.text, "0123\n0123\n");
        let note = b.note.expect("a note");
        assert!(note.contains("lines 0..2 of 10"), "{note}");
        assert!(note.contains("line_offset=2"), "{note}");
        let rest = bound_text(&text, 8, Some(12), "report");
        assert_eq!(rest.text, "0123\n0123\n");
        assert!(!rest.note.expect("a note").contains("line_offset="));
    }

    #[test]
    fn one_line_longer_than_the_bound_is_cut_at_a_char_boundary() {
        let b = bound_text("ééé\n", 0, Some(3), "events");
        assert_eq!(b.text, "é");
        let note = b.note.expect("a cut line is said");
        assert!(
            note.contains("2 of 7 bytes") && note.contains("larger max_bytes"),
            "{note}"
        );
    }

    #[test]
    fn an_offset_past_the_end_sends_nothing_and_says_so() {
        let b = bound_text("a\n", 5, None, "view");
        assert_eq!(b.text, "");
        assert!(b.note.expect("a note").contains("lines 1..1 of 1"));
    }
}
