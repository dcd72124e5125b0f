//! Name redaction for exported reports: kernel/op/module names become stable short hashes (`kernel_3fa2c1`).

/// FNV-1a 64-bit hash of a name: stable across runs and platforms.
pub fn stable_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `prefix_xxxxxx`: six hex digits of the name's hash.
pub fn redacted_name(prefix: &str, name: &str) -> String {
    format!("{prefix}_{:06x}", stable_hash(name) & 0xff_ffff)
}

/// Replaces every name of `names` (full form and display form) in `text`, longest first.
pub fn replace_all(text: &str, pairs: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (from, to) in pairs {
        if !from.is_empty() && out.contains(from.as_str()) {
            out = out.replace(from.as_str(), to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_short() {
        assert_eq!(
            redacted_name("kernel", "abc"),
            redacted_name("kernel", "abc")
        );
        assert_ne!(
            redacted_name("kernel", "abc"),
            redacted_name("kernel", "abd")
        );
        assert_eq!(redacted_name("op", "x").len(), "op_".len() + 6);
        // FNV-1a of "" is the offset basis.
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
    }
}
