//! Queries over shards: the page's workers each hold some ranks of the set; a coordinator asks each
//! the shard query and merges their pages (or CSVs) into the whole set's.

use super::csv::write_groups;
use super::*;

/// What each shard (a [`TraceSet`] of some of the ranks) must be asked so that [`merge_pages`] of
/// their answers is the whole set's page for `q`: rows from the first, `offset + limit` of them;
/// every group (a group's place depends on all its rows). The page cap is lifted
/// ([`EventQuery::uncapped`]), so a page deep into the rows costs each shard that many rows.
pub fn shard_query(q: &EventQuery) -> EventQuery {
    let mut s = q.clone();
    let limit = page_limit(q);
    s.offset = 0;
    s.limit = if q.group_by.is_some() {
        usize::MAX
    } else {
        q.offset.saturating_add(limit)
    };
    s.uncapped = true;
    s
}

/// The whole set's page for `q` from the pages of its shards (each asked [`shard_query`]`(q)`;
/// disjoint ranks, any order): what [`query_events`] over all the ranks gives. Rows are merged in
/// the query's order, ties by rank then row (so the shards' ranks must all differ). Exact, but for
/// timestamps past 2^52 ns, where two ranks' rows a few ns apart read as the same µs and are then
/// ordered by rank.
pub fn merge_pages(q: &EventQuery, pages: Vec<EventPage>) -> EventPage {
    let mut q = q.clone();
    q.uncapped = false;
    q.limit = page_limit(&q);
    let matched_ns: i64 = pages.iter().map(|p| ns(p.matched_dur_us)).sum();
    let mut page = EventPage {
        matched: pages.iter().map(|p| p.matched).sum(),
        matched_dur_us: us(matched_ns),
        ..Default::default()
    };
    if q.group_by.is_some() {
        let groups = merge_groups(&q, pages.iter().flat_map(|p| &p.groups), matched_ns);
        page.group_count = groups.len() as u64;
        page.groups = groups.into_iter().skip(q.offset).take(q.limit).collect();
    } else {
        let mut lists: Vec<std::vec::IntoIter<EventRow>> =
            pages.into_iter().map(|p| p.rows.into_iter()).collect();
        let mut heads: Vec<Option<EventRow>> = lists.iter_mut().map(|l| l.next()).collect();
        let want = q.offset.saturating_add(q.limit);
        let mut merged = Vec::new();
        while merged.len() < want {
            let best = (0..heads.len())
                .filter(|&i| heads[i].is_some())
                .min_by(|&a, &b| {
                    row_order(&q, heads[a].as_ref().unwrap(), heads[b].as_ref().unwrap())
                        .then(a.cmp(&b))
                });
            let Some(i) = best else { break };
            let next = lists[i].next();
            merged.extend(std::mem::replace(&mut heads[i], next));
        }
        page.rows = merged.into_iter().skip(q.offset).collect();
    }
    page.query = q;
    page
}

/// Whole ns of a time in µs written by [`us`].
fn ns(t_us: f64) -> i64 {
    (t_us * 1000.0).round() as i64
}

/// The order of `sort_hits`, on rows of a page.
fn row_order(q: &EventQuery, a: &EventRow, b: &EventRow) -> std::cmp::Ordering {
    key_order(&a.key(q.sort), &b.key(q.sort), q.descending)
        .then_with(|| (a.rank, a.row).cmp(&(b.rank, b.row)))
}

/// Every group of the shards' groups, each key once, sorted as `q` asks.
fn merge_groups<'g>(
    q: &EventQuery,
    groups: impl Iterator<Item = &'g EventGroup>,
    matched_ns: i64,
) -> Vec<EventGroup> {
    let mut all: BTreeMap<String, Stats> = BTreeMap::new();
    for g in groups {
        let s = Stats {
            count: g.count,
            timed: g.timed,
            total_ns: ns(g.total_us),
            min_ns: g.min_us.map_or(0, ns),
            max_ns: g.max_us.map_or(0, ns),
        };
        all.entry(g.key.clone()).or_default().merge(&s);
    }
    sorted_groups(q, all, matched_ns)
}

/// The whole set's [`export_csv`] of `q` from its shards' (disjoint ranks). Grouped: the groups
/// merged and sorted as the whole set's (exact; keys as the shards wrote them, so a `map_key` of
/// [`export_csv_mapped`] must be the same function everywhere). Not grouped: the shards' CSVs
/// concatenated with one header, in the order given (give them in rank order), each shard's rows
/// in the query's order but not merged into one order, each shard cut at [`MAX_EXPORT_ROWS`].
pub fn merge_csv(q: &EventQuery, csvs: Vec<String>) -> String {
    let mut out = String::new();
    let Some(by) = q.group_by else {
        for (i, csv) in csvs.iter().enumerate() {
            let body = if i == 0 {
                csv.as_str()
            } else {
                csv.split_once('\n').map_or("", |(_, rest)| rest)
            };
            out.push_str(body);
        }
        return out;
    };
    let groups: Vec<EventGroup> = csvs
        .iter()
        .flat_map(|csv| csv.lines().skip(1).filter_map(parse_group_line))
        .collect();
    let matched_ns = groups.iter().map(|g| ns(g.total_us)).sum();
    let merged = merge_groups(q, groups.iter(), matched_ns);
    write_groups(&mut out, by, &merged, &|k| k.to_string());
    out
}

/// One group line of a grouped CSV (`pct_of_matched` is left 0: it is computed again).
fn parse_group_line(line: &str) -> Option<EventGroup> {
    let (key, rest) = if let Some(quoted) = line.strip_prefix('"') {
        let mut key = String::new();
        let mut chars = quoted.char_indices().peekable();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            if c == '"' {
                if chars.peek().map(|x| x.1) == Some('"') {
                    key.push('"');
                    chars.next();
                } else {
                    end = Some(i + 1);
                    break;
                }
            } else {
                key.push(c);
            }
        }
        (key, quoted[end?..].strip_prefix(',')?)
    } else {
        let (k, rest) = line.split_once(',')?;
        (k.to_string(), rest)
    };
    let f: Vec<&str> = rest.split(',').collect();
    if f.len() != 7 {
        return None;
    }
    let num = |s: &str| -> Option<Option<f64>> {
        if s.is_empty() {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    };
    Some(EventGroup {
        key,
        count: f[0].parse().ok()?,
        timed: f[1].parse().ok()?,
        total_us: f[2].parse().ok()?,
        mean_us: num(f[3])?,
        min_us: num(f[4])?,
        max_us: num(f[5])?,
        pct_of_matched: 0.0,
    })
}
