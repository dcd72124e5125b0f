//! The `pid` and `tid` of events: interned as text, a GPU stream read from a `tid`, each process's role.

use crate::table::intern::{FxHashMap, Interner};
use crate::trace::dialect::{process_role, ProcessRole};
use crate::trace::IdValue;

/// Interns `pid`/`tid` values, numbers and strings alike, as text.
#[derive(Default)]
pub(super) struct IdInterner {
    pub(super) ints: FxHashMap<i64, u32>,
    /// The last number interned and its id (runs of events share a pid and tid).
    pub(super) last_int: Option<(i64, u32)>,
    pub(super) strings: Interner,
}

impl IdInterner {
    #[inline]
    pub(super) fn intern(&mut self, v: Option<IdValue<'_>>) -> u32 {
        match v {
            Some(IdValue::Int(n)) => {
                if let Some((last, id)) = self.last_int {
                    if last == n {
                        return id;
                    }
                }
                let id = match self.ints.get(&n) {
                    Some(&id) => id,
                    None => {
                        let id = self.strings.intern(n.to_string().as_bytes());
                        self.ints.insert(n, id);
                        id
                    }
                };
                self.last_int = Some((n, id));
                id
            }
            Some(IdValue::Text(t)) => self.strings.intern(t),
            None => self.strings.intern(b""),
        }
    }
}

/// The number a GPU row's `tid` names (`7`, `"stream 7"`, `"stream -3"`), used when `args.stream`
/// is absent.
pub(super) fn stream_from_tid(tid: Option<IdValue<'_>>) -> Option<i64> {
    match tid? {
        IdValue::Int(n) => Some(n),
        IdValue::Text(t) => {
            let mut start = t
                .iter()
                .rposition(|b| !b.is_ascii_digit())
                .map_or(0, |p| p + 1);
            if start > 0 && t[start - 1] == b'-' {
                start -= 1;
            }
            std::str::from_utf8(&t[start..]).ok()?.parse().ok()
        }
    }
}

/// [`stream_from_tid`] of a `tid` as interned text.
pub(super) fn stream_from_tid_text(tid: &str) -> Option<i64> {
    match tid.parse::<i64>() {
        Ok(n) => Some(n),
        Err(_) => stream_from_tid(Some(IdValue::Text(tid.as_bytes()))),
    }
}

/// The role of each process of a dialect that names it ([`process_role`]): from its `process_name`
/// event, or from the pid itself when written as text (the legacy export's `"CPU functions"`).
pub(super) struct ProcessRoles(FxHashMap<u32, ProcessRole>);

impl ProcessRoles {
    pub(super) fn new(pid_strings: &[String], process_names: &[(u32, String)]) -> Self {
        let mut roles = FxHashMap::default();
        for (pid, text) in pid_strings.iter().enumerate() {
            if let Some(r) = process_role(text) {
                roles.insert(pid as u32, r);
            }
        }
        for (pid, name) in process_names {
            if let Some(r) = process_role(name) {
                roles.insert(*pid, r);
            }
        }
        ProcessRoles(roles)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn of(&self, pid: u32) -> Option<ProcessRole> {
        self.0.get(&pid).copied()
    }
}
