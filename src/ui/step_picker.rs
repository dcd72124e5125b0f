//! The step picker: two step numbers, Apply and Automatic, what the report and the views are over,
//! and why a pick was refused. Its state is [`crate::page::step_pick::StepPick`]; applying runs
//! [`PageState::pick_steps_text`].

use leptos::prelude::*;

use super::AppState;
use crate::page::page_state::PageState;
use crate::page::step_pick::StepPick;

/// The picker's state for the set shown (tracked through the page's revision).
fn pick_of(state: AppState) -> Memo<Option<StepPick>> {
    Memo::new(move |_| {
        state.revision.track();
        state
            .page
            .with_untracked(|p| p.shown().map(|s| s.steps.clone()))
    })
}

/// `a-b` of a range, for `data-*` attributes ("" for none).
fn range_text(r: Option<(i64, i64)>) -> String {
    r.map(|(a, b)| format!("{a}-{b}")).unwrap_or_default()
}

/// The picker (hidden when the trace has fewer than two steps); `place` names where it is
/// (`report`, `views`) in `data-place`.
#[component]
pub fn StepPicker(state: AppState, place: &'static str) -> impl IntoView {
    let pick = pick_of(state);
    let first = RwSignal::new(String::new());
    let last = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Some((a, b)) = pick.get().and_then(|p| p.shown_range()) {
            first.set(a.to_string());
            last.set(b.to_string());
        }
    });
    let apply = move || {
        let (f, l) = (first.get_untracked(), last.get_untracked());
        super::apply(state, |p: &mut PageState| p.pick_steps_text(&f, &l));
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" {
            apply();
        }
    };
    let offered = move || pick.get().is_some_and(|p| p.offered());
    let attr =
        move |f: fn(&StepPick) -> String| move || pick.get().map(|p| f(&p)).unwrap_or_default();
    view! {
        <div class="step-picker" data-place=place hidden=move || !offered()
            data-available=attr(|p| p.available.iter().map(i64::to_string).collect::<Vec<_>>().join(","))
            data-automatic=attr(|p| range_text(p.automatic))
            data-applied=attr(|p| range_text(p.applied))
            data-pending=attr(|p| p.pending.map(range_text).unwrap_or_default())
            data-views-over=attr(|p| range_text(p.views_over))>
            <label>"Steps "
                <input class="first-step" type="number" aria-label="First step"
                    prop:value=move || first.get()
                    on:input=move |ev| first.set(event_target_value(&ev))
                    on:keydown=on_key/>
            </label>
            <label>" to "
                <input class="last-step" type="number" aria-label="Last step"
                    prop:value=move || last.get()
                    on:input=move |ev| last.set(event_target_value(&ev))
                    on:keydown=on_key/>
            </label>
            <button class="apply-steps" on:click=move |_| apply()>"Apply"</button>
            <button class="automatic-steps secondary"
                disabled=move || pick.get().is_none_or(|p| p.wanted().is_none())
                on:click=move |_| super::apply(state, |p: &mut PageState| p.pick_steps(None))>
                "Automatic"
            </button>
            <span class="step-status muted">{move || pick.get().map(|p| p.status()).unwrap_or_default()}</span>
            <span class="step-error" role="alert">{move || pick.get().and_then(|p| p.error)}</span>
        </div>
    }
}
