//! The diagnosis report as Leptos components, one per section of [`ReportModel`].

use leptos::prelude::*;

use crate::page::report_view::{FindingLine, IdleLine, KernelLine, ReportModel, NOTHING_FOUND};
use crate::report::format;
use crate::report::rich_text::{Inline as Part, RichText};

/// Rich text as the rule typed it: code spans and names as `<code>` (a name with its kind in
/// `data-name-kind` and its full form as the tooltip).
#[component]
pub fn Inline(text: RichText) -> impl IntoView {
    text.parts()
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.clone().into_any(),
            Part::Code(c) => view! { <code>{c.clone()}</code> }.into_any(),
            Part::Name { kind, name, shown } => view! {
                <code data-name-kind=crate::stable_name::serde_name(kind).to_string() title=name.clone()>{shown.clone()}</code>
            }
            .into_any(),
        })
        .collect_view()
}

#[component]
fn MainFinding(text: RichText) -> impl IntoView {
    view! {
        <h2>"Trace Analysis Summary"</h2>
        <p data-section="main-finding"><strong>"Main Finding"</strong>": "<Inline text=text/></p>
    }
}

#[component]
fn TopKernels(kernels: Vec<KernelLine>) -> impl IntoView {
    let body = if kernels.is_empty() {
        view! { <p>"No GPU kernels in this trace."</p> }.into_any()
    } else {
        view! {
            <table>
                <thead><tr>
                    <th class="num">"% Time"</th><th class="num">"Calls"</th>
                    <th class="num">"Avg (μs)"</th><th>"Kernel"</th>
                </tr></thead>
                <tbody>
                    <For each=move || kernels.clone() key=|k| k.name.clone() children=move |k| view! {
                        <tr data-kernel=k.name.clone()>
                            <td class="num">{format!("{:.1}", k.pct)}</td>
                            <td class="num">{k.calls.to_string()}</td>
                            <td class="num">{format!("{:.2}", k.avg_us)}</td>
                            <td><code>{k.shown.replace('`', "'")}</code></td>
                        </tr>
                    }/>
                </tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <div data-section="top-kernels">
            <h3>"Top GPU Kernels (by time)"</h3>
            {body}
        </div>
    }
}

#[component]
fn BottleneckSection(label: String, reason: RichText) -> impl IntoView {
    view! {
        <div data-section="bottleneck">
            <h3>{format!("Bottleneck: {label}")}</h3>
            <p><Inline text=reason/></p>
        </div>
    }
}

#[component]
fn FindingItem(finding: FindingLine) -> impl IntoView {
    let FindingLine {
        id,
        title,
        detail,
        explanation,
        actions,
        evidence,
        ..
    } = finding;
    view! {
        <li data-finding-id=id>
            <strong><Inline text=title/></strong>" ("<Inline text=detail/>"). "<Inline text=explanation/>
            <ul>
                {actions.into_iter().map(|a| view! { <li><Inline text=a/></li> }).collect_view()}
                {evidence.map(|e| view! { <li><Inline text=e/></li> })}
            </ul>
        </li>
    }
}

#[component]
fn FindingsList(findings: Vec<FindingLine>) -> impl IntoView {
    let empty = findings.is_empty();
    view! {
        <div data-section="findings">
            <h3>"Recommendations"</h3>
            <ol>
                {empty.then(|| view! { <li><Inline text=RichText::from(NOTHING_FOUND)/></li> })}
                <For each=move || findings.clone() key=|f| f.id.clone() children=move |f| view! { <FindingItem finding=f/> }/>
            </ol>
        </div>
    }
}

#[component]
fn DeeperOffer(analyses: String) -> impl IntoView {
    view! {
        <p data-section="deeper-offer">
            <strong>"Want deeper analysis?"</strong>{format!(" I can also show: {analyses}.")}
        </p>
    }
}

/// The whole report.
/// What was analysed, and what the trace holds.
#[component]
fn ContextLine(analysed: String, holds: Vec<String>, main_id: String) -> impl IntoView {
    view! {
        <p class="muted" data-section="context" data-holds=holds.join(" ") data-main-finding=main_id>
            <em>{analysed}</em>
        </p>
    }
}

/// Where the GPU idle time goes: one row per cause, summing to the idle time.
#[component]
fn IdleAttribution(rows: Vec<IdleLine>) -> impl IntoView {
    if rows.is_empty() {
        return ().into_any();
    }
    view! {
        <div data-section="idle-attribution">
            <h3>"Where the GPU idle time goes"</h3>
            <div class="table-wrap"><table>
                <thead><tr><th>"Cause"</th><th class="num">"Time"</th><th class="num">"% of window"</th><th>"Host busy in"</th></tr></thead>
                <tbody>
                    <For each=move || rows.clone() key=|r| r.cause.clone() let:r>
                        <tr data-cause=r.cause.clone()>
                            <td>{r.label.clone()}</td>
                            <td class="num" data-metric="idle-cause-us" data-cause=r.cause.clone() data-value=r.time_us.to_string()>{format::micros(r.time_us)}</td>
                            <td class="num" data-metric="idle-cause-pct" data-cause=r.cause.clone() data-value=r.pct_of_window.to_string()>{format!("{:.1} %", r.pct_of_window)}</td>
                            <td><Inline text=r.ops.clone()/></td>
                        </tr>
                    </For>
                </tbody>
            </table></div>
        </div>
    }
    .into_any()
}

/// Facts about the trace that are not recommendations.
#[component]
fn Notes(notes: Vec<RichText>) -> impl IntoView {
    if notes.is_empty() {
        return ().into_any();
    }
    view! {
        <div data-section="notes">
            <h3>"Notes"</h3>
            <ul>{notes.into_iter().map(|n| view! { <li><Inline text=n/></li> }).collect_view()}</ul>
        </div>
    }
    .into_any()
}

#[component]
pub fn ReportView(model: ReportModel) -> impl IntoView {
    let ReportModel {
        main_finding,
        main_finding_id,
        analysed,
        holds,
        idle,
        notes,
        kernels,
        bottleneck,
        findings,
        deeper_analyses,
        ..
    } = model;
    view! {
        <MainFinding text=main_finding/>
        <ContextLine analysed=analysed holds=holds main_id=main_finding_id/>
        <TopKernels kernels=kernels/>
        <BottleneckSection label=bottleneck.0 reason=bottleneck.1/>
        <IdleAttribution rows=idle/>
        <FindingsList findings=findings/>
        <Notes notes=notes/>
        <DeeperOffer analyses=deeper_analyses/>
    }
}
