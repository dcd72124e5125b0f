//! Comparing two runs on the page: picking a baseline and a candidate, the offer when loaded files
//! look like separate runs, and the comparison itself (headline, waterfall, sortable deltas, CSV).

use leptos::prelude::*;
use web_sys::File;

use super::AppState;
use crate::report::compare::{Comparison, Delta, NamedDelta, Presence, StepSpread};
use crate::report::compare_text::{to_csv, CompareTable};
use crate::report::wording::short_names;

/// Rows of a long table drawn before "N more (in the CSV)".
const MAX_ROWS: usize = 100;

/// Two file pickers (baseline, candidate) and a button that loads both and compares them.
#[component]
pub fn ComparePicker(state: AppState) -> impl IntoView {
    let baseline = RwSignal::new_local(Vec::<File>::new());
    let candidate = RwSignal::new_local(Vec::<File>::new());
    let picked = move |side: RwSignal<Vec<File>, LocalStorage>| {
        move || {
            side.with(|f| match f.len() {
                0 => "none picked".to_string(),
                1 => f[0].name(),
                n => format!("{n} files"),
            })
        }
    };
    let pick = move |side: RwSignal<Vec<File>, LocalStorage>| {
        move |ev: leptos::ev::Event| {
            let input: web_sys::HtmlInputElement = event_target(&ev);
            side.set(super::loader::trace_files_of(input.files()));
        }
    };
    let ready = move || baseline.with(|b| !b.is_empty()) && candidate.with(|c| !c.is_empty());
    let start = move |_| {
        let (b, c) = (baseline.get_untracked(), candidate.get_untracked());
        super::start_compare(state, b, c);
    };
    view! {
        <details class="compare-picker" id="compare-picker">
            <summary>"Compare two runs (before and after a change)"</summary>
            <div class="compare-inputs">
                <label>
                    "Baseline "
                    <input type="file" id="compare-baseline" multiple=true accept=".json,.gz,application/json,application/gzip" on:change=pick(baseline)/>
                    <span class="muted">{picked(baseline)}</span>
                </label>
                <label>
                    "Candidate "
                    <input type="file" id="compare-candidate" multiple=true accept=".json,.gz,application/json,application/gzip" on:change=pick(candidate)/>
                    <span class="muted">{picked(candidate)}</span>
                </label>
                <button id="compare-start" prop:disabled=move || !ready() on:click=start>"Compare"</button>
            </div>
            <p class="muted">"Each side is one file or one file per rank. Both are read in this tab and kept in its worker."</p>
        </details>
    }
}

/// With a trace loaded: compare it (as the baseline) with another run picked now.
#[component]
pub fn CompareWith(state: AppState) -> impl IntoView {
    let shown =
        state.select(|p| p.worker_answers() && p.shown().is_some_and(|s| s.comparison.is_none()));
    move || {
        shown.get().then(|| {
            view! {
                <div class="offer" id="compare-with-offer">
                    <label>
                        "Compare this trace with another run: "
                        <input type="file" id="compare-with" multiple=true accept=".json,.gz,application/json,application/gzip"
                            on:change=move |ev| {
                                let input: web_sys::HtmlInputElement = event_target(&ev);
                                let files = super::loader::trace_files_of(input.files());
                                input.set_value("");
                                if !files.is_empty() {
                                    super::compare_with_loaded(state, files);
                                }
                            }/>
                    </label>
                </div>
            }
        })
    }
}

/// When the loaded files look like separate runs: say so and offer to compare them.
#[component]
pub fn RunsOffer(state: AppState) -> impl IntoView {
    let runs = state.select(|p| {
        let s = p.shown()?;
        s.comparison
            .is_none()
            .then(|| s.loaded.runs.clone())
            .flatten()
    });
    let comparing = state.select(|p| p.comparing);
    move || {
        runs.get().map(|r| {
            view! {
                <div class="offer" id="runs-offer" data-why=r.why.clone()>
                    <span>
                        {format!(
                            "These files look like separate runs, not ranks of one job ({}). Compare {} with {}?",
                            r.why,
                            r.baseline.join(", "),
                            r.candidate.join(", ")
                        )}
                    </span>
                    <button id="compare-runs" prop:disabled=move || comparing.get() on:click=move |_| super::compare_runs(state)>
                        "Compare runs"
                    </button>
                </div>
            }
        })
    }
}

/// The comparison, once the worker has computed it.
#[component]
pub fn CompareView(state: AppState) -> impl IntoView {
    let comparison = state.select(|p| p.shown().and_then(|s| s.comparison.clone()));
    let comparing = state.select(|p| p.comparing);
    let memory = state.select(|p| p.shown().map_or(0, |s| s.loaded.worker_memory_bytes));
    move || {
        match comparison.get() {
        Some(c) => view! {
            <ComparisonPanel comparison=c/>
            <p class="muted" id="compare-memory" data-metric="compare-worker-memory-bytes" data-value=memory.get().to_string()>
                {format!(
                    "Both runs are held in this tab's worker ({} of WebAssembly memory).",
                    crate::report::format::bytes(memory.get())
                )}
            </p>
        }
        .into_any(),
        None if comparing.get() => view! {
            <section id="compare" class="panel" data-state="loading">
                <h2>"Comparison"</h2>
                <p class="muted">"Comparing the two runs in the worker…"</p>
            </section>
        }
        .into_any(),
        None => ().into_any(),
    }
    }
}

fn ms(x: f64) -> String {
    crate::report::format::decimal(x, 3)
}

fn pct(d: &Delta) -> String {
    match d.change_pct {
        Some(p) => format!("{p:+.1}%"),
        None if d.candidate == 0.0 => "—".into(),
        None => "new".into(),
    }
}

fn sign_class(x: f64) -> &'static str {
    if x < 0.0 {
        "better"
    } else if x > 0.0 {
        "worse"
    } else {
        ""
    }
}

#[component]
fn ComparisonPanel(comparison: Comparison) -> impl IntoView {
    let c = comparison;
    let unit = c.basis.unit();
    let basis = c.basis.as_str();
    let total = c.total.clone();
    let units = (c.baseline.units, c.candidate.units);
    let csv_of = {
        let c = c.clone();
        move |table: CompareTable| {
            let text = to_csv(&c, table);
            super::view::download(
                &text,
                "text/csv",
                &format!("profile-model-compare-{}.csv", table.as_str()),
            );
        }
    };
    let csv = StoredValue::new(csv_of);
    let csv_button = move |table: CompareTable| {
        view! {
            <button class="secondary small" data-csv=table.as_str() on:click=move |_| csv.with_value(|f| f(table))>
                "CSV"
            </button>
        }
    };
    view! {
        <section id="compare" class="panel" data-state="ready" data-basis=basis>
            <h2>"Comparison"</h2>
            <p class="compare-headline" data-metric="compare-headline" data-value=c.headline.clone()>{c.headline.clone()}</p>
            <div class="cards">
                <div class="card" data-metric="compare-total-baseline" data-value=total.baseline.to_string() data-basis=basis>
                    <div class="card-label">{format!("Baseline {} ({unit})", total.key)}</div>
                    <div class="card-figure">{ms(total.baseline)}</div>
                </div>
                <div class="card" data-metric="compare-total-candidate" data-value=total.candidate.to_string() data-basis=basis>
                    <div class="card-label">{format!("Candidate {} ({unit})", total.key)}</div>
                    <div class="card-figure">{ms(total.candidate)}</div>
                </div>
                <div class="card" data-metric="compare-total-change" data-value=total.change.to_string() data-basis=basis>
                    <div class="card-label">"Change"</div>
                    <div class=format!("card-figure {}", sign_class(total.change))>{format!("{} ({})", ms(total.change), pct(&total))}</div>
                </div>
            </div>
            <RunLines comparison=c.clone()/>
            <ul class="warnings">
                {c.warnings.iter().map(|w| view! { <li class="notice" data-warning="">{w.clone()}</li> }).collect_view()}
            </ul>
            <h3>"Where the time changed " {csv_button(CompareTable::Waterfall)}</h3>
            <Waterfall parts=c.waterfall.clone() unit=unit/>
            <h3>"Kernel time by type " {csv_button(CompareTable::Categories)}</h3>
            <DeltaTable rows=c.categories.clone() first="type" metric="compare-category-change" unit=unit/>
            <h3>"Kernels " {csv_button(CompareTable::Kernels)}</h3>
            <NamedTable rows=c.kernels.clone() first="kernel" metric="compare-kernel-change" unit=unit units=units/>
            <h3>"CPU operators (inclusive time) " {csv_button(CompareTable::Ops)}</h3>
            <NamedTable rows=c.ops.clone() first="operator" metric="compare-op-change" unit=unit units=units/>
            <h3>"Ranks " {csv_button(CompareTable::Ranks)}</h3>
            <DeltaTable rows=c.ranks.clone() first="rank" metric="compare-rank-change" unit=unit/>
            {c.steps.clone().map(|(b, k)| view! { <StepsTable baseline=b candidate=k/> })}
            <h3>"Findings " {csv_button(CompareTable::Findings)}</h3>
            <FindingsTable comparison=c.clone() unit=unit/>
        </section>
    }
}

#[component]
fn RunLines(comparison: Comparison) -> impl IntoView {
    let line = |label: &'static str, s: &crate::report::compare::RunSide| {
        let steps = s
            .step_ms
            .map(|m| format!("{} steps, {m:.2} ms per step", s.steps))
            .unwrap_or_else(|| "no profiler steps".into());
        format!(
            "{label}: {} — {} rank(s), {steps}, GPU busy {:.1}% of {:.1} ms, {}",
            s.files
                .iter()
                .map(|f| crate::page::compared_runs::picked_name(f))
                .collect::<Vec<_>>()
                .join(", "),
            s.ranks,
            s.busy_pct,
            s.window_ms,
            s.device.as_deref().unwrap_or("device not named")
        )
    };
    view! {
        <ul class="run-lines">
            <li data-run="baseline">{line("Baseline", &comparison.baseline)}</li>
            <li data-run="candidate">{line("Candidate", &comparison.candidate)}</li>
        </ul>
    }
}

/// The parts of the step (or window) and their change, as bars around a zero line.
#[component]
fn Waterfall(parts: Vec<Delta>, unit: &'static str) -> impl IntoView {
    let largest = parts
        .iter()
        .map(|d| d.change.abs())
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    view! {
        <div class="waterfall">
            {parts
                .into_iter()
                .map(|d| {
                    let width = format!("width: {:.1}%", 50.0 * d.change.abs() / largest);
                    let side = if d.change < 0.0 { "bar-left" } else { "bar-right" };
                    let title = format!("{}: {} → {} {unit} ({})", d.key, ms(d.baseline), ms(d.candidate), pct(&d));
                    view! {
                        <div class="waterfall-row" title=title>
                            <span class="waterfall-key">{d.key.clone()}</span>
                            <span class="waterfall-track">
                                <span class=format!("waterfall-bar {side} {}", sign_class(d.change)) style=width></span>
                            </span>
                            <span class="num" data-metric="compare-part-change" data-part=d.key.clone() data-value=d.change.to_string()>
                                {format!("{:+.3} {unit}", d.change)}
                            </span>
                        </div>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// One table row: a name (with a tag such as "(new)"), its numbers, and the figure's attributes.
#[derive(Clone)]
struct Row {
    name: String,
    shown_name: String,
    tag: &'static str,
    /// baseline, candidate, change, change %, then any extra columns.
    values: Vec<Option<f64>>,
    change: Delta,
}

/// A table sorted by a click on a column header (again: the other way).
#[component]
fn SortableTable(
    headers: Vec<String>,
    rows: Vec<Row>,
    metric: &'static str,
    /// The `data-*` attribute naming the row (`data-name`, `data-key`).
    #[prop(default = "data-key")]
    key_attr: &'static str,
) -> impl IntoView {
    // Column 3 (the change) by its size, largest first, to begin with.
    let sort = RwSignal::new((3usize, true));
    let total = rows.len();
    let rows = StoredValue::new(rows);
    let sorted = move || {
        let (col, desc) = sort.get();
        let mut r = rows.get_value();
        crate::sort::sort_by(&mut r, |a, b| {
            let o = if col == 0 {
                // By the name shown, as a reader sees it (the full name breaks ties).
                let key = |x: &Row| x.shown_name.to_lowercase();
                key(a).cmp(&key(b)).then_with(|| a.name.cmp(&b.name))
            } else {
                let key = |x: &Row| {
                    let v = x
                        .values
                        .get(col - 1)
                        .copied()
                        .flatten()
                        .unwrap_or(f64::NEG_INFINITY);
                    if col == 3 {
                        v.abs()
                    } else {
                        v
                    }
                };
                key(a).total_cmp(&key(b))
            };
            if desc {
                o.reverse()
            } else {
                o
            }
        });
        r.truncate(MAX_ROWS);
        r
    };
    let header = move |(i, h): (usize, String)| {
        let numeric = i > 0;
        let aria = move || match sort.get() {
            (c, true) if c == i => "descending",
            (c, false) if c == i => "ascending",
            _ => "none",
        };
        let mark = move || match aria() {
            "descending" => "▼",
            "ascending" => "▲",
            _ => "",
        };
        // The change column sorts by the size of the change, either way.
        let title = (i == 3).then_some("Sorted by the size of the change");
        view! {
            <th class:num=numeric data-col=i aria-sort=aria title=title>
                <button type="button" class="sort"
                    on:click=move |_| sort.update(|s| *s = if s.0 == i { (i, !s.1) } else { (i, i > 0) })>
                    {h}<span class="sort-mark" aria-hidden="true">{mark}</span>
                </button>
            </th>
        }
    };
    view! {
        <div class="table-wrap">
            <table class="sortable" data-table=metric>
                <thead><tr>{headers.into_iter().enumerate().map(header).collect_view()}</tr></thead>
                <tbody>
                    {move || sorted().into_iter().map(|r| {
                        let cells = r.values.iter().enumerate().map(|(i, v)| {
                            let text = match (i, v) {
                                (3, _) => pct(&r.change),
                                (4.., Some(x)) => crate::report::format::int(*x as u64),
                                (_, Some(x)) => ms(*x),
                                (_, None) => "—".into(),
                            };
                            view! { <td class="num">{text}</td> }
                        }).collect_view();
                        let row = view! {
                            <tr>
                                <td class="name" title=r.name.clone()><span class="name-text">{r.shown_name.clone()}<span class="muted">{r.tag}</span></span></td>
                                {cells}
                            </tr>
                        };
                        row.attr("data-metric", metric)
                            .attr("data-value", r.change.change.to_string())
                            .attr(key_attr, r.name.clone())
                    }).collect_view()}
                </tbody>
            </table>
            {(total > MAX_ROWS).then(|| view! { <p class="muted">{format!("{} more rows in the CSV.", total - MAX_ROWS)}</p> })}
        </div>
    }
}

fn delta_row(d: &Delta) -> Row {
    Row {
        name: d.key.clone(),
        shown_name: d.key.clone(),
        tag: "",
        values: vec![
            Some(d.baseline),
            Some(d.candidate),
            Some(d.change),
            d.change_pct,
        ],
        change: d.clone(),
    }
}

#[component]
fn DeltaTable(
    rows: Vec<Delta>,
    first: &'static str,
    metric: &'static str,
    unit: &'static str,
) -> AnyView {
    let headers = vec![
        first.to_string(),
        format!("baseline ({unit})"),
        format!("candidate ({unit})"),
        format!("change ({unit})"),
        "change %".into(),
    ];
    if rows.is_empty() {
        return view! { <p class="muted empty-table" data-table=metric>{format!("No {first} has a figure in either run.")}</p> }.into_any();
    }
    view! { <SortableTable headers=headers rows=rows.iter().map(delta_row).collect() metric=metric/> }.into_any()
}

#[component]
fn NamedTable(
    rows: Vec<(String, NamedDelta)>,
    first: &'static str,
    metric: &'static str,
    unit: &'static str,
    /// What each run's per-unit figures are divided by (its steps × ranks, or ms of window): the
    /// calls are shown as counts, per-unit calls times this.
    units: (f64, f64),
) -> AnyView {
    if rows.is_empty() {
        return view! { <p class="muted empty-table" data-table=metric>{format!("Neither run recorded a {first} in its analysed window.")}</p> }.into_any();
    }
    let headers = vec![
        first.to_string(),
        format!("baseline ({unit})"),
        format!("candidate ({unit})"),
        format!("change ({unit})"),
        "change %".into(),
        "calls, baseline".into(),
        "calls, candidate".into(),
    ];
    // Short names, told apart where two would read the same (template arguments, then more).
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    let shown = short_names(&names);
    let rows: Vec<Row> = rows
        .iter()
        .zip(shown)
        .map(|((name, d), shown_name)| Row {
            name: name.clone(),
            shown_name,
            tag: match d.presence {
                Presence::Both => "",
                Presence::Added => " (new)",
                Presence::Removed => " (gone)",
            },
            values: vec![
                Some(d.time.baseline),
                Some(d.time.candidate),
                Some(d.time.change),
                d.time.change_pct,
                Some((d.calls.baseline * units.0).round()),
                Some((d.calls.candidate * units.1).round()),
            ],
            change: d.time.clone(),
        })
        .collect();
    view! { <SortableTable headers=headers rows=rows metric=metric key_attr="data-name"/> }
        .into_any()
}

/// Mean and spread of the analysed steps of each run.
#[component]
fn StepsTable(baseline: StepSpread, candidate: StepSpread) -> impl IntoView {
    let row = |label: &'static str, s: StepSpread| {
        view! {
            <tr data-run=label data-metric="compare-step-mean-ms" data-value=s.mean_ms.to_string()>
                <td>{label}</td>
                <td class="num">{s.count}</td>
                <td class="num">{ms(s.mean_ms)}</td>
                <td class="num">{ms(s.std_ms)}</td>
                <td class="num">{ms(s.min_ms)}</td>
                <td class="num">{ms(s.max_ms)}</td>
            </tr>
        }
    };
    view! {
        <h3>"Steps"</h3>
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th>"run"</th><th class="num">"steps"</th><th class="num">"mean ms"</th>
                    <th class="num">"std ms"</th><th class="num">"min ms"</th><th class="num">"max ms"</th>
                </tr></thead>
                <tbody>{row("baseline", baseline)}{row("candidate", candidate)}</tbody>
            </table>
        </div>
    }
}

/// The findings' order under a header's sort: by name or change (A to Z, any case), or by a run's
/// recoverable time; ties keep the comparison's order.
fn findings_order(
    findings: &[crate::report::compare::FindingChange],
    sort: Option<crate::page::analyses_view::sort::SortBy>,
) -> Vec<usize> {
    use crate::page::analyses_view::sort::SortDir;
    let mut order: Vec<usize> = (0..findings.len()).collect();
    let Some(s) = sort else { return order };
    let text = |i: usize| match s.column {
        0 => finding_words(&findings[i]).to_lowercase(),
        _ => change_words(findings[i].change).to_string(),
    };
    let figure = |i: usize| match s.column {
        2 => findings[i].impact.baseline,
        _ => findings[i].impact.candidate,
    };
    order.sort_by(|&a, &b| {
        let o = if s.column < 2 {
            text(a).cmp(&text(b))
        } else {
            figure(a).total_cmp(&figure(b))
        };
        match s.dir {
            SortDir::Ascending => o,
            SortDir::Descending => o.reverse(),
        }
    });
    order
}

#[component]
fn FindingsTable(comparison: Comparison, unit: &'static str) -> AnyView {
    use crate::page::analyses_view::sort::SortBy;
    if comparison.findings.is_empty() {
        return view! {
            <p class="muted empty-table" data-table="compare-findings">
                "Neither run has a finding: no rule's threshold was crossed in either report, so nothing appeared, went or changed."
            </p>
        }
        .into_any();
    }
    let sort = RwSignal::new(None::<SortBy>);
    let headers = [
        ("finding".to_string(), false),
        ("change".to_string(), false),
        (format!("recoverable, baseline ({unit})"), true),
        (format!("candidate ({unit})"), true),
    ];
    let head = headers
        .into_iter()
        .enumerate()
        .map(|(i, (h, numeric))| {
            let aria = move || SortBy::aria_of(sort.get(), i);
            let on_click = move |_| sort.update(|s| *s = Some(SortBy::after_click(*s, i, numeric)));
            view! {
                <th class:num=numeric aria-sort=aria data-col=i.to_string()>
                    <button type="button" class="sort" on:click=on_click>
                        {h}<span class="sort-mark" aria-hidden="true">{move || match aria() {
                            "ascending" => "▲",
                            "descending" => "▼",
                            _ => "",
                        }}</span>
                    </button>
                </th>
            }
        })
        .collect_view();
    let findings = comparison.findings.clone();
    let rows = move || {
        findings_order(&findings, sort.get())
            .into_iter()
            .map(|i| {
                let f = &findings[i];
                let change = f.change.as_str();
                let title = f
                    .candidate_headline
                    .as_ref()
                    .or(f.baseline_headline.as_ref())
                    .map(|h| h.plain())
                    .unwrap_or_default();
                view! {
                    <tr data-metric="compare-finding-impact-change" data-value=f.impact.change.to_string() data-finding=f.id.as_str() data-change=change>
                        <td title=title><span class="name-text">{finding_words(f)}</span></td>
                        <td>{change_words(f.change)}</td>
                        <td class="num">{ms(f.impact.baseline)}</td>
                        <td class="num">{ms(f.impact.candidate)}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <div class="table-wrap">
            <table class="sortable" data-table="compare-findings">
                <thead><tr>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

/// A finding as the page names it: its title, or its id in words for a comparison saved before
/// titles were kept.
fn finding_words(f: &crate::report::compare::FindingChange) -> String {
    if f.title.is_empty() {
        f.id.as_str().replace('_', " ")
    } else {
        f.title.plain()
    }
}

fn change_words(kind: crate::report::compare::FindingChangeKind) -> &'static str {
    use crate::report::compare::FindingChangeKind as K;
    match kind {
        K::Appeared => "new in the candidate",
        K::Disappeared => "gone in the candidate",
        K::Changed => "changed",
        K::Unchanged => "about the same",
    }
}
