//! How much room a growing column makes before the next piece of text is read.

/// The capacity a growing column of `len` values (`capacity` now) should have before `next` more
/// bytes of text are read, when `seen` bytes brought those values and about `total` are expected in
/// all; `None` when it has room enough (for 4x the values per byte seen so far, since events are
/// not alike through a file: what overflows the room in a piece makes the `Vec` double).
///
/// A `Vec` doubles when full, so a column ends anywhere between 1x and 2x its length, and in
/// WebAssembly, whose memory never shrinks, the blocks it left behind stay too: the tables are most
/// of the memory a large trace takes. Here a column doubles only while less than an eighth of the
/// file is seen; from then on it grows straight to its projected final length plus 8%, which
/// takes one step when the events are alike through the file (a later step if they are not).
/// Before any text is seen: room for the rows of the first 4 MiB at 128 bytes a row.
pub(super) fn room_for(
    len: usize,
    capacity: usize,
    seen: u64,
    next: u64,
    total: Option<u64>,
) -> Option<usize> {
    if seen == 0 {
        let first = (next.min(4 << 20) / 128) as usize;
        return (capacity < first).then_some(first);
    }
    if len == 0 {
        return None;
    }
    let per_byte = len as f64 / seen as f64;
    let must = len + (per_byte * next as f64 * 4.0) as usize + 16;
    if capacity >= must {
        return None;
    }
    let doubled = must.max(2 * len);
    match total {
        Some(total) if seen.saturating_mul(8) >= total => {
            let projected = (per_byte * total.max(seen + next) as f64 * 1.08) as usize + 16;
            Some(projected.max(len + len / 16).max(must))
        }
        _ => Some(doubled),
    }
}

#[cfg(test)]
mod tests {
    use super::room_for;

    /// Feeds `total` bytes in `piece`-byte steps to a column that gets one value per
    /// `bytes_per_value(offset)` bytes, growing it as `room_for` says (and doubling, as a `Vec`
    /// does, when a piece brings more than the room made). Returns (final length, capacity, steps
    /// made by `room_for`, doublings).
    fn grow(
        total: u64,
        piece: u64,
        bytes_per_value: impl Fn(u64) -> u64,
    ) -> (usize, usize, usize, usize) {
        let (mut len, mut cap, mut steps, mut doublings) = (0usize, 0usize, 0usize, 0usize);
        let mut seen = 0u64;
        while seen < total {
            let next = piece.min(total - seen);
            if let Some(target) = room_for(len, cap, seen, next, Some(total)) {
                assert!(target >= len, "room_for never shrinks a column");
                cap = target;
                steps += 1;
            }
            for offset in seen..seen + next {
                if offset % bytes_per_value(offset) == 0 {
                    if len == cap {
                        cap = (2 * cap).max(4);
                        doublings += 1;
                    }
                    len += 1;
                }
            }
            seen += next;
        }
        (len, cap, steps, doublings)
    }

    #[test]
    fn alike_events_end_within_a_tenth_of_their_length() {
        let (len, cap, steps, doublings) = grow(64 << 20, 256 << 10, |_| 200);
        assert_eq!(len, (64 << 20) / 200 + 1);
        assert!(
            cap >= len && cap as f64 <= len as f64 * 1.1,
            "{cap} for {len}"
        );
        // A few small steps over the first pieces, doubling to an eighth, then one to the end.
        assert!(steps <= 12, "{steps} steps");
        assert_eq!(doublings, 0);
    }

    #[test]
    fn denser_tail_grows_again_without_a_vec_doubling() {
        // 400-byte events for the first half, 100-byte ones after: the projection is low.
        let (len, cap, _, doublings) =
            grow(
                32 << 20,
                256 << 10,
                |o| if o < 16 << 20 { 400 } else { 100 },
            );
        assert!(
            cap >= len && (cap as f64) < len as f64 * 1.3,
            "{cap} for {len}"
        );
        assert_eq!(doublings, 0);
    }

    #[test]
    fn before_any_text_only_the_first_pieces_are_reserved() {
        assert_eq!(
            room_for(0, 0, 0, 1 << 30, Some(1 << 30)),
            Some((4 << 20) / 128)
        );
        assert_eq!(room_for(0, 1 << 20, 0, 1 << 30, Some(1 << 30)), None);
        // Unknown size: doubling.
        assert_eq!(room_for(1000, 1000, 200_000, 1000, None), Some(2000));
        // An args column nobody has used yet stays empty.
        assert_eq!(room_for(0, 0, 1 << 20, 1 << 20, Some(1 << 30)), None);
    }
}
