//! Numbers for people: thousands separators, µs/ms/s, MB, percentages, and HTML escaping.

/// `1234567` → `1,234,567`.
pub fn int(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed integer with thousands separators.
pub fn signed(n: i64) -> String {
    if n < 0 {
        format!("-{}", int(n.unsigned_abs()))
    } else {
        int(n as u64)
    }
}

/// A decimal with `decimals` digits and thousands separators in the integer part.
pub fn decimal(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let text = format!("{:.*}", decimals, x.abs());
    let (whole, frac) = match text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (text.as_str(), None),
    };
    let whole = int(whole.parse().unwrap_or(0));
    let sign = if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    match frac {
        Some(f) => format!("{sign}{whole}.{f}"),
        None => format!("{sign}{whole}"),
    }
}

/// A number with sensible precision: integers exact, others with 3-4 significant digits.
pub fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return signed(x as i64);
    }
    let a = x.abs();
    let decimals = if a >= 1000.0 {
        1
    } else if a >= 100.0 {
        2
    } else if a >= 1.0 {
        3
    } else if a >= 0.001 {
        4
    } else {
        return format!("{x:.3e}");
    };
    decimal(x, decimals)
}

/// A duration given in µs: `812.4 µs`, `12.35 ms`, `3.208 s`.
pub fn micros(us: f64) -> String {
    let a = us.abs();
    if a < 1000.0 {
        format!("{} µs", decimal(us, if a >= 100.0 { 1 } else { 2 }))
    } else if a < 1e6 {
        format!("{} ms", decimal(us / 1e3, 2))
    } else {
        format!("{} s", decimal(us / 1e6, 3))
    }
}

/// A duration given in ms.
pub fn millis(ms: f64) -> String {
    micros(ms * 1000.0)
}

/// Bytes for people: `532 B`, `12.3 KB`, `1.5 MB`, `2.1 GB` (powers of 10).
pub fn bytes(b: u64) -> String {
    let x = b as f64;
    if x < 1e3 {
        format!("{b} B")
    } else if x < 1e6 {
        format!("{} KB", decimal(x / 1e3, 1))
    } else if x < 1e9 {
        format!("{} MB", decimal(x / 1e6, 1))
    } else {
        format!("{} GB", decimal(x / 1e9, 2))
    }
}

/// A percentage (0-100) with one decimal.
pub fn pct(p: f64) -> String {
    format!("{} %", decimal(p, 1))
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}
