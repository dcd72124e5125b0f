//! The one text of a float: the shortest that reads back the same, and JavaScript's names for the
//! values JSON has none for.

/// A float as JSON writes it (shortest text that reads back the same), and the names JavaScript gives
/// the values JSON has none for (`NaN`, `Infinity`, `-Infinity`).
pub fn float_text(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "Infinity".into()
    } else {
        "-Infinity".into()
    }
}

#[cfg(test)]
mod tests {
    use super::float_text;

    #[test]
    fn finite_and_non_finite() {
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(1e21), "1000000000000000000000");
        assert_eq!(float_text(f64::NAN), "NaN");
        assert_eq!(float_text(f64::INFINITY), "Infinity");
        assert_eq!(float_text(f64::NEG_INFINITY), "-Infinity");
    }
}
