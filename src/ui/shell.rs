//! The page's frame after a load: the compact header (trace, device, ranks, span, rank picker,
//! redact switch, a details line of bookkeeping), the verdict card, and the tab bar whose tab lives
//! in the page state and in the URL hash (`page::tabs`).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::status::KeepChoice;
use super::summary::{RankPicker, SetFacts};
use super::AppState;
use crate::page::first_screen::{TraceHeader, Verdict, VerdictFinding};
use crate::page::page_state::PageState;
use crate::page::tabs::Tab;
use crate::protocol::FindingLink;
use crate::report::format;

/// The URL's hash, `#…` (empty when it has none).
fn current_hash() -> String {
    window().location().hash().unwrap_or_default()
}

/// Keeps the tab and the URL hash in step: the hash names the tab at start (and on back/forward);
/// a tab picked (or opened by the page) is written to the hash as a new history entry.
pub fn sync_tab_with_hash(state: AppState) {
    let from_url = move || Tab::from_hash(&current_hash()).unwrap_or_default();
    state.page.update(|p| p.set_tab(from_url()));
    // The hash always names the tab, so that the timeline's part never stands alone (a hash with
    // only a timeline range opens the timeline).
    if let Ok(history) = window().history() {
        let hash = state
            .page
            .with_untracked(|p| p.tab)
            .in_hash(&current_hash());
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
    }
    let tab = state.select(|p| p.tab);
    Effect::new(move |_| {
        let tab = tab.get();
        if Tab::from_hash(&current_hash()) != Some(tab) {
            if let Ok(history) = window().history() {
                let hash = tab.in_hash(&current_hash());
                let _ = history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
            }
        }
    });
    let on_history = move || {
        let tab = from_url();
        if state.page.with_untracked(|p| p.tab) != tab {
            state.page.update(|p| p.set_tab(tab));
        }
    };
    let popstate = window_event_listener(leptos::ev::popstate, move |_| on_history());
    let hashchange = window_event_listener(leptos::ev::hashchange, move |_| on_history());
    // The app lives as long as the page.
    std::mem::forget((popstate, hashchange));
}

/// Shows `tab`.
pub fn go_to_tab(state: AppState, tab: Tab) {
    state.page.update(|p| p.set_tab(tab));
}

/// The tab bar: one button per tab (arrow keys move between them).
#[component]
pub fn TabBar(state: AppState) -> impl IntoView {
    let tab = state.select(|p| p.tab);
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let now = tab.get_untracked();
        let at = Tab::ALL.iter().position(|t| *t == now).unwrap_or(0);
        let n = Tab::ALL.len();
        let next = match ev.key().as_str() {
            "ArrowRight" => Tab::ALL[(at + 1) % n],
            "ArrowLeft" => Tab::ALL[(at + n - 1) % n],
            "Home" => Tab::ALL[0],
            "End" => Tab::ALL[n - 1],
            _ => return,
        };
        ev.prevent_default();
        go_to_tab(state, next);
        if let Some(el) = document()
            .get_element_by_id(&format!("tab-{}", next.as_str()))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    };
    let buttons = Tab::ALL
        .iter()
        .map(|&t| {
            let selected = move || tab.get() == t;
            view! {
                <button
                    type="button"
                    role="tab"
                    class="tab"
                    id=format!("tab-{}", t.as_str())
                    aria-controls=format!("panel-{}", t.panel())
                    aria-selected=move || selected().to_string()
                    tabindex=move || if selected() { "0" } else { "-1" }
                    data-tab=t.as_str()
                    on:click=move |_| go_to_tab(state, t)
                >
                    {t.label()}
                </button>
            }
        })
        .collect_view();
    view! {
        <nav class="tabs" aria-label="Views">
            <div role="tablist" id="tab-bar" aria-label="Views of the results" on:keydown=on_key>
                {buttons}
            </div>
        </nav>
    }
}

/// One tab's panel: always in the page (its state and figures stay), shown only when its tab is.
#[component]
pub fn TabPanel(state: AppState, tab: Tab, children: Children) -> impl IntoView {
    let shown = state.select(|p| p.tab);
    let panel = tab.panel();
    view! {
        <div
            role="tabpanel"
            class="tab-panel"
            id=format!("panel-{panel}")
            aria-labelledby=move || {
                let now = shown.get();
                format!("tab-{}", if now.panel() == panel { now } else { tab }.as_str())
            }
            data-tab=panel
            hidden=move || shown.get().panel() != panel
        >
            {children()}
        </div>
    }
}

/// The compact header of the results shown.
#[component]
pub fn TraceHeaderBar(state: AppState) -> impl IntoView {
    let header = Memo::new(move |_| {
        state
            .loaded
            .with(|l| l.as_ref().map(TraceHeader::of).unwrap_or_default())
    });
    let choices = Memo::new(move |_| {
        state
            .loaded
            .with(|l| l.as_ref().map(SetFacts::of).unwrap_or_default().choices)
    });
    let picked = state.select(|p| p.rank_index);
    let on_pick = Callback::new(move |i: usize| state.page.update(|p| p.pick_rank(i)));
    let redact = state.select(|p| p.redact);
    view! {
        <section class="trace-header" id="trace-header" aria-label="The trace shown">
            <div class="trace-line">
                <h2 class="trace-name" title=move || header.with(|h| h.trace.clone())>
                    {move || header.with(|h| h.trace.clone())}
                </h2>
                <span class="trace-facts">
                    {move || header.with(|h| h.device.clone()).map(|d| view! { <span class="fact">{d}</span> })}
                    <span class="fact">{move || header.with(|h| match h.ranks {
                        1 => "1 rank".to_string(),
                        n => format!("{n} ranks"),
                    })}</span>
                    <span class="fact">{move || format!("span {}", format::micros(header.with(|h| h.span_us)))}</span>
                </span>
                <span class="trace-controls">
                    {move || {
                        let choices = choices.get();
                        (choices.len() > 1).then(|| view! { <RankPicker choices picked on_pick/> })
                    }}
                    <label class="check" title="Replace kernel, op and module names and the file names with stable short hashes in every view and download, so what you share names nothing">
                        <input id="redact-names" type="checkbox" prop:checked=move || redact.get()
                            on:change=move |ev| super::set_redact(state, event_target_checked(&ev))/>
                        " Redact names"
                    </label>
                </span>
            </div>
            <p class="details-line muted" id="load-details">
                {move || header.with(|h| h.details.clone())}
                " · "
                <KeepChoice state/>
            </p>
        </section>
    }
}

/// The verdict card: the main finding, the bottleneck, the top findings with their impact and
/// links to their evidence, and where to look deeper.
#[component]
pub fn VerdictCard(state: AppState) -> impl IntoView {
    let redact = state.select(|p| p.redact);
    let verdict = Memo::new(move |_| {
        state.revision.track();
        redact.track();
        state
            .page
            .with_untracked(|p| p.report_shown().map(|r| Verdict::new(&r)))
    });
    let links_redact = state.select(|p| p.redact);
    let links = Memo::new(move |_| {
        state.revision.track();
        links_redact.track();
        state.page.with_untracked(PageState::finding_links)
    });
    let request_error = state.select(|p| p.request_error.clone());
    let folded = state.select(|p| p.tab != Tab::Report);
    move || {
        match verdict.get() {
        None => view! {
            <section class="verdict panel" id="verdict" data-state="loading" aria-live="polite">
                <p class="muted">{move || request_error.get().unwrap_or_else(|| "Writing the diagnosis…".into())}</p>
            </section>
        }
        .into_any(),
        Some(v) if folded.get() => view! { <VerdictFolded verdict=v state/> }.into_any(),
        Some(v) => view! { <VerdictBody verdict=v links=links.get() state/> }.into_any(),
    }
    }
}

/// The verdict outside the Report tab: one line (the main finding and a link to the report), so the
/// view below gets the screen; a load that lost data keeps its line first.
#[component]
fn VerdictFolded(verdict: Verdict, state: AppState) -> impl IntoView {
    let Verdict {
        data_loss,
        main_finding,
        main_finding_id,
        bottleneck,
        ..
    } = verdict;
    view! {
        <section class="verdict panel verdict-folded" id="verdict" data-state="ready" data-folded="true"
            data-main-finding=main_finding_id aria-labelledby="verdict-title">
            {data_loss.map(|loss| view! { <p class="verdict-loss" role="alert" id="verdict-loss">{loss}</p> })}
            <p class="verdict-line">
                <span class="badge" data-metric="bottleneck" data-value=bottleneck.clone()>{bottleneck.clone()}</span>
                <strong id="verdict-title" class="verdict-main" title=main_finding.clone()>{main_finding.clone()}</strong>
                <button type="button" class="link" data-goto-tab=Tab::Report.as_str()
                    on:click=move |_| go_to_tab(state, Tab::Report)>"The full report"</button>
            </p>
        </section>
    }
}

#[component]
fn VerdictBody(verdict: Verdict, links: Vec<FindingLink>, state: AppState) -> impl IntoView {
    let Verdict {
        data_loss,
        main_finding,
        main_finding_id,
        bottleneck,
        bottleneck_reason,
        findings,
        more,
    } = verdict;
    let items = findings
        .into_iter()
        .map(|f| {
            let link = links.iter().find(|l| l.id == f.id).cloned();
            view! { <VerdictItem finding=f link state/> }
        })
        .collect_view();
    let deeper = [
        (Tab::Overview, "the overview"),
        (Tab::Operators, "operators"),
        (Tab::Kernels, "kernels"),
        (Tab::Memory, "memory"),
        (Tab::Analyses, "the deeper analyses"),
        (Tab::Timeline, "the timeline"),
        (Tab::Explore, "every event"),
        (Tab::Compare, "a comparison with another run"),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (tab, text))| {
        view! {
            {(i > 0).then_some(" · ")}
            <button type="button" class="link" data-goto-tab=tab.as_str() on:click=move |_| go_to_tab(state, tab)>{text}</button>
        }
    })
    .collect_view();
    view! {
        <section class="verdict panel" id="verdict" data-state="ready" data-main-finding=main_finding_id aria-labelledby="verdict-title">
            {data_loss.map(|loss| view! { <p class="verdict-loss" role="alert" id="verdict-loss">{loss}</p> })}
            <p class="verdict-kicker"><span class="badge" data-metric="bottleneck" data-value=bottleneck.clone()>{bottleneck.clone()}</span></p>
            <h2 id="verdict-title" class="verdict-main">{main_finding}</h2>
            {(!bottleneck_reason.is_empty()).then(|| view! { <p class="muted verdict-why">{bottleneck_reason}</p> })}
            <ol class="verdict-findings">{items}</ol>
            {(more > 0).then(|| view! {
                <p class="muted">
                    {format!("{more} more finding{} in ", if more == 1 { "" } else { "s" })}
                    <button type="button" class="link" on:click=move |_| go_to_tab(state, Tab::Report)>"the full report"</button>
                    "."
                </p>
            })}
            <p class="verdict-deeper"><strong>"Want deeper analysis? "</strong>"See "{deeper}"."</p>
        </section>
    }
}

/// One finding: its title, its impact as a bar, and its evidence.
#[component]
fn VerdictItem(
    finding: VerdictFinding,
    link: Option<FindingLink>,
    state: AppState,
) -> impl IntoView {
    let VerdictFinding {
        id,
        title,
        impact,
        impact_pct,
    } = finding;
    let evidence = link.map(|l| {
        let here = l.clone();
        view! {
            <span class="verdict-links">
                <button type="button" class="link" data-verdict-events=l.id.clone() on:click=move |_| super::open_finding(state, &l)>"Events"</button>
                " · "
                <button type="button" class="link" data-verdict-timeline=here.id.clone()
                    on:click=move |_| super::apply(state, |p| p.locate(&here))>"On the timeline"</button>
            </span>
        }
    });
    let shown = if impact.is_empty() {
        "impact not measured".to_string()
    } else {
        impact
    };
    let (item_id, bar_label) = (id.clone(), shown.clone());
    view! {
        <li class="verdict-finding" data-verdict-finding=item_id>
            <div class="verdict-finding-head">
                <span class="verdict-finding-title">{title}</span>
                {evidence}
            </div>
            <div class="impact">
                <div class="impact-track" role="img" aria-label=bar_label>
                    <div class="impact-bar" style=format!("width: {impact_pct:.1}%")></div>
                </div>
                <span class="impact-text muted" data-metric="verdict-impact-pct" data-finding=id data-value=impact_pct.to_string()>
                    {shown}
                </span>
            </div>
        </li>
    }
}
