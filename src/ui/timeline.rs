//! The timeline: a canvas of the picked rank's GPU streams and CPU threads, drawn from the worker's
//! level-of-detail answers, with wheel/drag/W-A-S-D navigation, a details panel and the view in the
//! URL hash. The logic (range, layout, axis, hit-testing, hash) is `report::timeline_view`.

use crate::page::timeline_walk::{walk, Walk};
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::CanvasRenderingContext2d;

use super::timeline_ranks::{
    draw_ranks, draw_selection, ranks_height, RankMetrics, SelectionReadout,
};
use super::AppState;
use crate::analysis::critical_path::BoundBy;
use crate::analysis::rank_lanes::RankLanesView;
use crate::analysis::timeline::{EventClass, EventDetails, Relation, SearchHit, TimelineRequest};
use crate::page::arrival_marks::arrival_marks;
use crate::page::timeline_select::{rank_row_at, Selection};
use crate::report::timeline_view::{
    duration_label, event_at, hash_of, idle_causes, idle_colour, layout, parse_hash, row_at, ticks,
    wheel_factor, LaneRow, TimelineAnswer, Viewport, AXIS_PX, GUTTER_PX, IDLE_ROW, LANE_PX,
    PATH_ROW,
};

/// Fill colour of an event class.
fn colour(class: EventClass) -> &'static str {
    match class {
        EventClass::Compute => "#4e79a7",
        EventClass::Communication => "#e15759",
        EventClass::Memory => "#f28e2b",
        EventClass::GpuOther => "#9d9da1",
        EventClass::CpuOp => "#59a14f",
        EventClass::Runtime => "#edc948",
        EventClass::Python => "#b07aa1",
        EventClass::Annotation => "#76b7b2",
        EventClass::Other => "#9c755f",
    }
}

/// A request of the timeline to the worker: one rank's lanes, or every rank's GPU busy.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ask {
    Lanes(TimelineRequest),
    Ranks(TimelineRequest),
}

/// Requests to the worker, one at a time: a change while one is out waits, and only the latest
/// waiting one is sent when the answer comes.
#[derive(Clone, Copy, Default)]
struct Requests {
    out_since_ms: Option<f64>,
    waiting: Option<Ask>,
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

fn ask(state: AppState, requests: RwSignal<Requests>, request: Ask) {
    let out = requests.with_untracked(|r| r.out_since_ms);
    // An answer that never came (another rank picked meanwhile) does not block for more than 2 s.
    if out.is_some_and(|t| now_ms() - t < 2000.0) {
        requests.update_untracked(|r| r.waiting = Some(request));
        return;
    }
    requests.update_untracked(|r| {
        r.out_since_ms = Some(now_ms());
        r.waiting = None;
    });
    match request {
        Ask::Lanes(r) => super::apply(state, |p| p.ask_timeline(r)),
        Ask::Ranks(r) => super::apply(state, |p| p.ask_rank_lanes(r)),
    }
}

/// The answer's (start, end, width), to tell whether a range was asked already.
fn answered(start_ns: i64, end_ns: i64, width_px: u32) -> (i64, i64, u32) {
    (start_ns, end_ns, width_px)
}

/// Whether a pointer press starts a selection: with shift, or on the time axis.
fn selects(ev: &web_sys::MouseEvent) -> bool {
    ev.shift_key() || (ev.offset_y() as f64) < AXIS_PX
}

/// The URL hash with `f` applied, written in place (no history entry).
fn rewrite_hash(f: impl FnOnce(&str) -> String) {
    if let Ok(history) = window().history() {
        let current = window().location().hash().unwrap_or_default();
        let _ =
            history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&f(&current)));
    }
}

fn request_of(vp: &Viewport, width: f64) -> TimelineRequest {
    TimelineRequest {
        start_ns: vp.start_ns.floor() as i64,
        end_ns: vp.end_ns.ceil() as i64,
        width_px: width.max(1.0) as u32,
    }
}

/// A range around an event: the event in the middle fifth, at least 20 µs.
fn around(start_ns: i64, dur_ns: i64) -> Viewport {
    let len = (dur_ns as f64 * 5.0).max(20_000.0);
    let mid = start_ns as f64 + dur_ns as f64 / 2.0;
    Viewport {
        start_ns: mid - len / 2.0,
        end_ns: mid + len / 2.0,
    }
}

/// Width of the lanes' area of the canvas, CSS px.
fn lanes_width(canvas: &web_sys::HtmlCanvasElement) -> f64 {
    (canvas.client_width() as f64 - GUTTER_PX).max(50.0)
}

#[component]
pub fn TimelinePanel(state: AppState) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    let viewport = RwSignal::new(None::<Viewport>);
    let collapsed = RwSignal::new(Vec::<u32>::new());
    let requests = RwSignal::new(Requests::default());
    let drag = StoredValue::new(None::<(f64, Viewport, bool)>);
    let answer = state.select(crate::page::page_state::PageState::timeline_shown);
    let rank_index = state.select(|p| p.rank_index);
    let answers = state.select(|p| p.worker_answers());
    let details = state.select(crate::page::page_state::PageState::event_details_shown);
    let search = state.select(|p| p.search.clone());
    let focus = state.select(|p| p.timeline_focus);
    let show_path = RwSignal::new(false);
    let rank_mode = RwSignal::new(false);
    let rank_view = state.select(|p| p.rank_lanes.clone());
    let rank_count = state.select(|p| p.shown().map_or(0, |s| s.loaded.ranks.len()));
    let hash_now = window().location().hash().unwrap_or_default();
    let selection = RwSignal::new(Selection::from_hash(&hash_now));
    // The x (px in the lanes) where a selection drag started.
    let selecting = StoredValue::new(None::<f64>);
    // The collectives' instances, for their last arrivals on the rank lanes.
    let collectives = Memo::new(move |_| {
        state
            .page
            .with(|p| Some(p.shown()?.analyses[0].as_ref()?.all.collectives.clone()))
    });
    // The critical path of the picked rank, as the (exact-mode) analysis found it.
    let path = Memo::new(move |_| {
        let rank = answer.with(|a| a.as_ref().map(|a| a.rank));
        state
            .page
            .with(|p| {
                let all = &p.shown()?.analyses[0].as_ref()?.all;
                let cp = all.critical_path.iter().find(|c| Some(c.rank) == rank)?;
                Some(
                    cp.result
                        .rows
                        .iter()
                        .map(|s| {
                            let start = (s.start_us * 1000.0).round() as i64;
                            (
                                start,
                                start + (s.duration_us * 1000.0).round() as i64,
                                s.bound_by,
                            )
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .unwrap_or_default()
    });
    // The window the report analysed on the picked rank (drawn; outside it is shaded).
    let analysed = Memo::new(move |_| {
        let rank = answer.with(|a| a.as_ref().map(|a| a.rank))?;
        state.page.with(|p| {
            let report = p.shown()?.report.as_ref()?;
            let w = report
                .plain
                .context
                .windows
                .iter()
                .find(|w| w.rank == rank)?;
            ((w.start_ns, w.end_ns) != (w.trace_start_ns, w.trace_end_ns))
                .then_some((w.start_ns, w.end_ns))
        })
    });

    // A new trace or rank: ask for the whole span (or the range the URL names).
    Effect::new(move |_| {
        state.loaded.track();
        let index = rank_index.get();
        if !answers.get() {
            return;
        }
        let from_hash = window()
            .location()
            .hash()
            .ok()
            .and_then(|h| parse_hash(&h))
            .filter(|(r, _)| *r == index)
            .map(|(_, v)| v);
        viewport.set(from_hash);
        rank_mode.set(false);
        requests.set(Requests::default());
        let request = from_hash.map_or(
            TimelineRequest {
                start_ns: 0,
                end_ns: 0,
                width_px: 1200,
            },
            |v| request_of(&v, 1200.0),
        );
        ask(state, requests, Ask::Lanes(request));
    });
    // An answer: the first one sets the range (around a finding's evidence, if one was asked
    // for on this rank); a waiting request goes out.
    Effect::new(move |_| {
        let Some(a) = answer.get() else { return };
        requests.update_untracked(|r| r.out_since_ms = None);
        if viewport.get_untracked().is_none() {
            let at = focus
                .get_untracked()
                .filter(|f| f.rank_index == a.rank_index);
            viewport.set(Some(at.map_or_else(
                || Viewport::new(a.view.start_ns, a.view.end_ns),
                |f| around(f.start_ns, f.dur_ns).within(a.span_ns),
            )));
        }
        if let Some(next) = requests.with_untracked(|r| r.waiting) {
            ask(state, requests, next);
        }
    });
    // A rank-lanes answer: the first sets the range when none is shown yet; a waiting request goes out.
    Effect::new(move |_| {
        let Some(v) = rank_view.get() else { return };
        requests.update_untracked(|r| r.out_since_ms = None);
        if viewport.get_untracked().is_none() {
            viewport.set(Some(Viewport::new(v.start_ns, v.end_ns)));
        }
        if let Some(next) = requests.with_untracked(|r| r.waiting) {
            ask(state, requests, next);
        }
    });
    // The selection lives in the URL hash as its own part.
    Effect::new(move |_| {
        let s = selection.get();
        rewrite_hash(|h| Selection::in_hash(s, h));
    });
    // A finding's evidence was located on the rank shown: zoom there.
    Effect::new(move |_| {
        let Some(f) = focus.get() else { return };
        let span = answer.with_untracked(|a| {
            a.as_ref()
                .filter(|a| a.rank_index == f.rank_index)
                .map(|a| a.span_ns)
        });
        if let (Some(span), Some(_)) = (span, viewport.get_untracked()) {
            viewport.set(Some(around(f.start_ns, f.dur_ns).within(span)));
        }
    });
    // The range changed: ask for it, and keep it in the URL.
    Effect::new(move |_| {
        let ranks = rank_mode.get();
        let (Some(vp), Some(canvas)) = (viewport.get(), canvas_ref.get()) else {
            return;
        };
        let request = request_of(&vp, lanes_width(&canvas));
        let wanted = Some(answered(request.start_ns, request.end_ns, request.width_px));
        if ranks {
            let current = rank_view.with_untracked(|v| {
                v.as_ref()
                    .map(|v| answered(v.start_ns, v.end_ns, v.width_px))
            });
            if current != wanted {
                ask(state, requests, Ask::Ranks(request));
            }
        } else {
            let current = answer.with_untracked(|a| {
                a.as_ref()
                    .map(|a| answered(a.view.start_ns, a.view.end_ns, a.view.width_px))
            });
            if current != wanted {
                ask(state, requests, Ask::Lanes(request));
            }
        }
        let part = hash_of(rank_index.get_untracked(), &vp);
        rewrite_hash(|h| crate::page::tabs::with_part(h, &part));
    });
    // Draw whenever the range, the answer or the layout changes.
    Effect::new(move |_| {
        let vp = viewport.get();
        let collapsed = collapsed.get();
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let sel = selection.get();
        if rank_mode.get() {
            rank_view.with(|v| {
                if let (Some(v), Some(vp)) = (v, vp) {
                    let marks = collectives.with(|c| c.as_ref().map(|c| arrival_marks(c, v)));
                    draw_ranks(&canvas, v, &vp, sel, &marks.unwrap_or_default());
                }
            });
            return;
        }
        answer.with(|a| {
            if let (Some(a), Some(vp)) = (a, vp) {
                let extra = Overlays {
                    analysed: analysed.get(),
                    path: show_path.get().then(|| path.get()),
                    selected: details.with(|d| d.as_ref().map(|d| d.row)),
                    selection: sel,
                    hits: search.with(|s| s.visible(a.rank_index, vp.start_ns, vp.end_ns)),
                };
                draw(&canvas, a, &vp, &collapsed, &extra);
            }
        });
    });

    let span_now = move || {
        if rank_mode.get_untracked() {
            rank_view.with_untracked(|v| v.as_ref().map(|v| v.span_ns))
        } else {
            answer.with_untracked(|a| a.as_ref().map(|a| a.span_ns))
        }
    };
    let set_view = move |v: Viewport| {
        let span = span_now();
        viewport.set(Some(span.map_or(v, |s| v.within(s))));
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        let (Some(vp), Some(canvas)) = (viewport.get_untracked(), canvas_ref.get_untracked())
        else {
            return;
        };
        ev.prevent_default();
        let w = lanes_width(&canvas);
        let at = (ev.offset_x() as f64 - GUTTER_PX) / w;
        if ev.shift_key() || ev.delta_x().abs() > ev.delta_y().abs() {
            let d = if ev.delta_x() != 0.0 {
                ev.delta_x()
            } else {
                ev.delta_y()
            };
            set_view(vp.pan(d / w));
        } else {
            set_view(vp.zoom_at(at, wheel_factor(ev.delta_y())));
        }
    };
    let on_down = move |ev: web_sys::MouseEvent| {
        let x = ev.offset_x() as f64;
        if selects(&ev) && x >= GUTTER_PX {
            selecting.set_value(Some(x - GUTTER_PX));
        } else if let Some(vp) = viewport.get_untracked() {
            drag.set_value(Some((x, vp, false)));
        }
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        if let (Some(x0), Some(vp)) = (selecting.get_value(), viewport.get_untracked()) {
            let x1 = ev.offset_x() as f64 - GUTTER_PX;
            if (x1 - x0).abs() >= 3.0 {
                selection.set(Selection::dragged(&vp, x0, x1, lanes_width(&canvas)));
            }
            return;
        }
        let Some((x0, vp0, _)) = drag.get_value() else {
            return;
        };
        let dx = ev.offset_x() as f64 - x0;
        if dx.abs() >= 3.0 {
            drag.set_value(Some((x0, vp0, true)));
            set_view(vp0.pan(-dx / lanes_width(&canvas)));
        }
    };
    let on_up = move |ev: web_sys::MouseEvent| {
        if selecting.get_value().is_some() {
            selecting.set_value(None);
            return;
        }
        let dragged = drag.get_value().is_some_and(|d| d.2);
        drag.set_value(None);
        if rank_mode.get_untracked() {
            if !dragged {
                click_rank(state, &ev, rank_view, rank_mode, viewport);
            }
            return;
        }
        if !dragged {
            click(
                state,
                &ev,
                canvas_ref,
                viewport,
                collapsed,
                answer,
                show_path.get_untracked(),
            );
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let key = ev.key();
        if key == "Escape" {
            selection.set(None);
            state.page.update(|p| p.clear_event_details());
            return;
        }
        if let Some(v) = viewport.get_untracked().and_then(|vp| vp.key(&key)) {
            ev.prevent_default();
            set_view(v);
            return;
        }
        // Arrow keys walk the drawn events (the selection moves); Enter selects the first one when
        // none is selected.
        let step = match key.as_str() {
            "Enter" => Some(Walk::Right).filter(|_| details.with_untracked(Option::is_none)),
            k => Walk::of_key(k),
        };
        let Some(step) = step.filter(|_| !rank_mode.get_untracked()) else {
            return;
        };
        ev.prevent_default();
        let selected = details.with_untracked(|d| d.as_ref().map(|d| d.row));
        let next = answer.with_untracked(|a| {
            a.as_ref()
                .and_then(|a| walk(a, &collapsed.get_untracked(), selected, step))
        });
        if let Some(e) = next {
            super::apply(state, |p| p.ask_event_details(e.row));
        }
    };
    let reset = move |_| {
        if let Some(span) = span_now() {
            set_view(Viewport::new(span.0, span.1));
        }
    };

    let attr = move |f: fn(&Viewport) -> f64| {
        move || {
            viewport
                .get()
                .map_or(String::new(), |v| format!("{:.3}", f(&v) / 1000.0))
        }
    };
    let drawn = move || {
        answer
            .with(|a| a.as_ref().map_or(0, |a| a.view.drawn_items()))
            .to_string()
    };
    let rank = move || answer.with(|a| a.as_ref().map_or(String::new(), |a| a.rank.to_string()));
    let range_text = move || {
        viewport
            .get()
            .map_or("Asking the worker for the timeline…".to_string(), |v| {
                format!(
                    "{} shown · wheel zooms, drag pans, shift-drag selects, W/A/S/D, click an event or walk them with the arrow keys",
                    duration_label(v.len())
                )
            })
    };
    let height = move || {
        if rank_mode.get() {
            let n = rank_view.with(|v| v.as_ref().map_or(0, |v| v.lanes.len()));
            return format!("height: {}px", ranks_height(n));
        }
        answer.with(|a| {
            let rows = a
                .as_ref()
                .map_or(0, |a| layout(a, &collapsed.get(), show_path.get()).len());
            format!("height: {}px", AXIS_PX + rows.max(1) as f64 * LANE_PX)
        })
    };
    view! {
        <section id="timeline-panel" class="panel" node_ref=state.timeline_panel>
            <div class="panel-head">
                <h2>"Timeline"</h2>
                <label class="check" title="The longest chain of dependent work, as the critical-path analysis found it (coloured by what bounds each segment)">
                    <input id="timeline-critical-path" type="checkbox" prop:checked=move || show_path.get()
                        on:change=move |ev| show_path.set(event_target_checked(&ev))/>
                    " Critical path"
                </label>
                <Show when=move || { rank_count.get() > 1 }>
                    <label class="check" title="One row per rank: how busy its GPU is across the range shown (each rank on its own clock); click a row to open that rank">
                        <input id="timeline-rank-lanes" type="checkbox" prop:checked=move || rank_mode.get()
                            on:change=move |ev| rank_mode.set(event_target_checked(&ev))/>
                        " Rank lanes"
                    </label>
                </Show>
                <button class="link" on:click=reset>"Whole trace"</button>
                <button id="timeline-perfetto" class="link" title="This rank's trace as JSON for ui.perfetto.dev, with the GPU's idle causes and the critical path added as tracks"
                    on:click=move |_| super::apply(state, |p| p.ask_perfetto())>"Download for Perfetto"</button>
            </div>
            <SearchBox state search/>
            <p class="muted" id="timeline-range">{range_text}</p>
            <canvas id="timeline" node_ref=canvas_ref tabindex="0" style=height
                data-visible-start-us=attr(|v| v.start_ns) data-visible-end-us=attr(|v| v.end_ns)
                data-rank=rank data-drawn-items=drawn
                data-mode=move || if rank_mode.get() { "ranks" } else { "lanes" }
                on:wheel=on_wheel on:mousedown=on_down on:mousemove=on_move on:mouseup=on_up
                on:mouseleave=move |_| drag.set_value(None) on:keydown=on_key></canvas>
            <SelectionReadout selection/>
            <RankMetrics view=rank_view shown=Signal::derive(move || rank_mode.get())/>
            <IdleLegend answer/>
            {move || details.get().map(|d| {
                let origin_ns = answer.with_untracked(|a| a.as_ref().map_or(0, |a| a.span_ns.0));
                view! { <Details details=d origin_ns state viewport/> }
            })}
        </section>
    }
}

/// The idle causes drawn in the "GPU idle" row, with their colours.
#[component]
fn IdleLegend(answer: Memo<Option<TimelineAnswer>>) -> impl IntoView {
    move || {
        let causes = answer.with(|a| a.as_ref().map(idle_causes).unwrap_or_default());
        (!causes.is_empty()).then(|| {
            let items = causes
                .into_iter()
                .map(|c| {
                    let style = format!("background: {}", idle_colour(c));
                    let name = c.as_str();
                    view! { <span data-idle-cause=name><i style=style></i>{c.label()}</span> }
                })
                .collect_view();
            view! { <div class="legend timeline-legend">"GPU idle: "{items}</div> }
        })
    }
}

/// A click: on a track's name, open or close it; on an event, show its details.
fn click(
    state: AppState,
    ev: &web_sys::MouseEvent,
    canvas_ref: NodeRef<Canvas>,
    viewport: RwSignal<Option<Viewport>>,
    collapsed: RwSignal<Vec<u32>>,
    answer: Memo<Option<TimelineAnswer>>,
    path_shown: bool,
) {
    let (Some(canvas), Some(vp)) = (canvas_ref.get_untracked(), viewport.get_untracked()) else {
        return;
    };
    let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64 - AXIS_PX);
    let hit = answer.with_untracked(|a| {
        let a = a.as_ref()?;
        let rows = layout(a, &collapsed.get_untracked(), path_shown);
        let row = row_at(&rows, y)?.clone();
        if x < GUTTER_PX {
            return Some(Err(row.track));
        }
        event_at(&a.view, &vp, &row, x - GUTTER_PX, lanes_width(&canvas)).map(Ok)
    });
    match hit {
        Some(Err(track)) => collapsed.update(|c| {
            if let Some(i) = c.iter().position(|t| *t == track) {
                c.remove(i);
            } else {
                c.push(track);
            }
        }),
        Some(Ok(row)) => super::apply(state, |p| p.ask_event_details(row)),
        None => state.page.update(|p| p.clear_event_details()),
    }
}

/// A click on a rank's row (rank lanes): that rank is picked, on the same range, and the mode ends.
fn click_rank(
    state: AppState,
    ev: &web_sys::MouseEvent,
    rank_view: Memo<Option<RankLanesView>>,
    rank_mode: RwSignal<bool>,
    viewport: RwSignal<Option<Viewport>>,
) {
    let y = ev.offset_y() as f64 - AXIS_PX;
    let Some(index) = rank_view.with_untracked(|v| v.as_ref().and_then(|v| rank_row_at(v, y)))
    else {
        return;
    };
    if let Some(vp) = viewport.get_untracked() {
        rewrite_hash(|h| crate::page::tabs::with_part(h, &hash_of(index, &vp)));
    }
    rank_mode.set(false);
    state.page.update(|p| p.pick_rank_lane(index));
}

/// The details panel of the selected event, with its launch or its kernels.
#[component]
fn Details(
    details: EventDetails,
    /// The trace's first timestamp: starts are shown from it.
    origin_ns: i64,
    state: AppState,
    viewport: RwSignal<Option<Viewport>>,
) -> impl IntoView {
    let partners = details
        .partners
        .iter()
        .map(|p| {
            let (row, start, dur) = (p.row, p.start_ns, p.dur_ns);
            let label = match p.relation {
                Relation::LaunchedBy => "Launched by",
                Relation::Launched => "Launched",
            };
            let jump = move |_| {
                if let Some(vp) = viewport.get_untracked() {
                    let len = vp.len().max(dur as f64 * 4.0);
                    let mid = start as f64 + dur as f64 / 2.0;
                    viewport.set(Some(Viewport {
                        start_ns: mid - len / 2.0,
                        end_ns: mid + len / 2.0,
                    }));
                }
                super::apply(state, |p| p.ask_event_details(row));
            };
            view! {
                <li data-partner-row=row.to_string()>
                    {format!("{label}: ")}<code>{p.name.clone()}</code>
                    {format!(" ({})", duration_label(dur as f64))}" "
                    <button class="link partner-jump" on:click=jump>"Go to it"</button>
                </li>
            }
        })
        .collect_view();
    let args = details
        .args
        .iter()
        .map(|(k, v)| view! { <tr><td>{k.clone()}</td><td><code>{v.clone()}</code></td></tr> })
        .collect_view();
    let start_us = details.start_ns as f64 / 1000.0;
    let dur_us = details.dur_ns as f64 / 1000.0;
    view! {
        <aside id="event-details" class="event-details" data-row=details.row.to_string()>
            <h3 data-metric="event-name" data-value=details.name.clone()>{details.name.clone()}</h3>
            <dl class="facts">
                <div><dt>"Track"</dt><dd>{details.track.clone()}</dd></div>
                <div><dt>"Category"</dt><dd>{details.category.clone()}</dd></div>
                <div><dt>"Start"</dt><dd data-metric="event-start-us" data-value=start_us.to_string()>{format!("{} from the trace start", duration_label((details.start_ns - origin_ns) as f64))}</dd></div>
                <div><dt>"Duration"</dt><dd data-metric="event-dur-us" data-value=dur_us.to_string()>{duration_label(details.dur_ns as f64)}</dd></div>
            </dl>
            <ul class="partners">{partners}</ul>
            <div class="table-wrap"><table><tbody>{args}</tbody></table></div>
            <p class="muted">"Escape closes this panel."</p>
        </aside>
    }
}

pub(super) fn context(canvas: &web_sys::HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// Draws the answer at the current range (an answer for another range is stretched until the
/// worker's next one comes, so zoom and pan never wait).
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    a: &TimelineAnswer,
    vp: &Viewport,
    collapsed: &[u32],
    extra: &Overlays,
) {
    let rows = layout(a, collapsed, extra.path.is_some());
    let ratio = window().device_pixel_ratio();
    let (css_w, css_h) = (
        canvas.client_width() as f64,
        AXIS_PX + rows.len().max(1) as f64 * LANE_PX,
    );
    canvas.set_width((css_w * ratio) as u32);
    canvas.set_height((css_h * ratio) as u32);
    let Some(cx) = context(canvas) else { return };
    let _ = cx.scale(ratio, ratio);
    cx.clear_rect(0.0, 0.0, css_w, css_h);
    let w = (css_w - GUTTER_PX).max(50.0);
    draw_axis(&cx, vp, w, css_h, a.span_ns.0 as f64);
    draw_steps(&cx, vp, &a.steps, w, css_h);
    for row in &rows {
        draw_label(&cx, row, w);
        match (row.track, &extra.path) {
            (PATH_ROW, Some(path)) => draw_path(&cx, vp, path, AXIS_PX + row.y, w),
            _ => draw_row(&cx, a, vp, row, w, extra.selected),
        }
    }
    if let Some(window) = extra.analysed {
        draw_window(&cx, vp, window, w, css_h);
    }
    draw_selection(&cx, extra.selection, vp, w, css_h);
    draw_hits(&cx, &extra.hits, vp, w, css_h);
}

/// The search's hits: a band over the lanes and a mark on the axis each, the current one stronger.
fn draw_hits(
    cx: &CanvasRenderingContext2d,
    hits: &[(SearchHit, bool)],
    vp: &Viewport,
    w: f64,
    h: f64,
) {
    for (hit, current) in hits {
        let x0 = GUTTER_PX + vp.x_of(hit.start_ns as f64, w).max(0.0);
        let x1 = (GUTTER_PX + vp.x_of(hit.end_ns as f64, w).min(w)).max(x0 + 2.0);
        let (band, mark) = if *current {
            ("rgba(255,140,0,0.35)", "#ff8c00")
        } else {
            ("rgba(255,210,0,0.18)", "#e6b800")
        };
        cx.set_fill_style_str(band);
        cx.fill_rect(x0, AXIS_PX, x1 - x0, h - AXIS_PX);
        cx.set_fill_style_str(mark);
        cx.fill_rect(x0, AXIS_PX - 6.0, x1 - x0, 6.0);
    }
}

/// A track's name in the gutter, and a line above its first row.
fn draw_label(cx: &CanvasRenderingContext2d, row: &LaneRow, w: f64) {
    let Some(label) = &row.label else { return };
    let y = AXIS_PX + row.y;
    cx.set_fill_style_str("#888");
    let _ = cx.fill_text_with_max_width(label, 4.0, y + 12.0, GUTTER_PX - 8.0);
    cx.set_fill_style_str("rgba(128,128,128,0.15)");
    cx.fill_rect(GUTTER_PX, y, w, 0.5);
}

/// What is drawn over the worker's answer, from the page's own results.
#[derive(Clone, Debug, Default, PartialEq)]
struct Overlays {
    /// The window the report analysed on this rank, when not the whole trace.
    analysed: Option<(i64, i64)>,
    /// The critical path's segments (start, end, bound), when the switch is on.
    path: Option<Vec<(i64, i64, BoundBy)>>,
    /// The row of the event in the details panel.
    selected: Option<u32>,
    /// The selected time range.
    selection: Option<Selection>,
    /// The search's hits in the range, the current one marked.
    hits: Vec<(SearchHit, bool)>,
}

/// Colour of what bounds a critical-path segment.
fn bound_colour(b: BoundBy) -> &'static str {
    match b {
        BoundBy::Cpu => "#edc948",
        BoundBy::GpuCompute => "#4e79a7",
        BoundBy::GpuCommunication => "#e15759",
        BoundBy::GpuKernelLaunchOverhead => "#f28e2b",
        BoundBy::GpuKernelKernelOverhead => "#bab0ac",
        BoundBy::DataLoading => "#b07aa1",
        BoundBy::Nothing => "#d4d4d4",
    }
}

fn draw_path(
    cx: &CanvasRenderingContext2d,
    vp: &Viewport,
    path: &[(i64, i64, BoundBy)],
    y: f64,
    w: f64,
) {
    for &(s, e, b) in path {
        let x0 = vp.x_of(s as f64, w).max(0.0);
        let x1 = vp.x_of(e as f64, w).min(w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_fill_style_str(bound_colour(b));
        cx.fill_rect(GUTTER_PX + x0, y + 2.0, (x1 - x0).max(1.0), LANE_PX - 4.0);
    }
}

/// A dashed line at each step's start, labelled `#N` when there is room.
fn draw_steps(
    cx: &CanvasRenderingContext2d,
    vp: &Viewport,
    steps: &[(i64, i64, i64)],
    w: f64,
    h: f64,
) {
    let visible: Vec<&(i64, i64, i64)> = steps
        .iter()
        .filter(|s| (0.0..=w).contains(&vp.x_of(s.1 as f64, w)))
        .collect();
    if visible.len() > 200 {
        return;
    }
    cx.set_stroke_style_str("rgba(90,90,200,0.6)");
    cx.set_fill_style_str("rgba(90,90,200,0.9)");
    let _ = cx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
    let mut last_label = f64::NEG_INFINITY;
    for &&(n, start, _) in &visible {
        let x = GUTTER_PX + vp.x_of(start as f64, w);
        cx.begin_path();
        cx.move_to(x, AXIS_PX - 6.0);
        cx.line_to(x, h);
        cx.stroke();
        if x - last_label > 40.0 {
            let _ = cx.fill_text(&format!("#{n}"), x + 2.0, AXIS_PX - 8.0);
            last_label = x;
        }
    }
    let _ = cx.set_line_dash(&js_sys::Array::new());
}

/// The GPU's idle stretches, coloured by cause.
fn draw_idle(cx: &CanvasRenderingContext2d, a: &TimelineAnswer, vp: &Viewport, y: f64, w: f64) {
    for s in &a.idle {
        let x0 = vp.x_of(s.start_ns as f64, w).max(0.0);
        let x1 = vp.x_of(s.end_ns as f64, w).min(w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_fill_style_str(idle_colour(s.cause));
        cx.fill_rect(GUTTER_PX + x0, y + 2.0, (x1 - x0).max(1.0), LANE_PX - 4.0);
    }
}

/// Shades what lies outside the window the report analysed (the warm-up left out, ...).
fn draw_window(cx: &CanvasRenderingContext2d, vp: &Viewport, window: (i64, i64), w: f64, h: f64) {
    cx.set_fill_style_str("rgba(128,128,128,0.12)");
    let x0 = vp.x_of(window.0 as f64, w).clamp(0.0, w);
    let x1 = vp.x_of(window.1 as f64, w).clamp(0.0, w);
    if x0 > 0.0 {
        cx.fill_rect(GUTTER_PX, AXIS_PX, x0, h - AXIS_PX);
    }
    if x1 < w {
        cx.fill_rect(GUTTER_PX + x1, AXIS_PX, w - x1, h - AXIS_PX);
    }
}

pub(super) fn draw_axis(cx: &CanvasRenderingContext2d, vp: &Viewport, w: f64, h: f64, origin: f64) {
    cx.set_font("11px system-ui, sans-serif");
    cx.set_fill_style_str("#888");
    cx.set_stroke_style_str("rgba(128,128,128,0.25)");
    for t in ticks(vp, w, origin) {
        let x = GUTTER_PX + t.x;
        cx.begin_path();
        cx.move_to(x, AXIS_PX - 4.0);
        cx.line_to(x, h);
        cx.stroke();
        let _ = cx.fill_text(&t.label, x + 3.0, 13.0);
    }
}

fn draw_row(
    cx: &CanvasRenderingContext2d,
    a: &TimelineAnswer,
    vp: &Viewport,
    row: &LaneRow,
    w: f64,
    selected: Option<u32>,
) {
    let y = AXIS_PX + row.y;
    if row.track == IDLE_ROW {
        draw_idle(cx, a, vp, y, w);
        return;
    }
    let Some(lane) = a
        .view
        .lanes
        .iter()
        .find(|l| l.track == row.track && l.depth == row.depth)
    else {
        return;
    };
    let px_ns = (a.view.end_ns - a.view.start_ns) as f64 / a.view.width_px.max(1) as f64;
    for b in &lane.buckets {
        let t0 = a.view.start_ns as f64 + b.px as f64 * px_ns;
        let x0 = vp.x_of(t0, w);
        let x1 = vp.x_of(t0 + px_ns, w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_global_alpha((b.busy_ns as f64 / px_ns).clamp(0.3, 1.0));
        cx.set_fill_style_str(colour(b.class));
        cx.fill_rect(
            GUTTER_PX + x0.max(0.0),
            y + 1.0,
            (x1 - x0.max(0.0)).max(1.0),
            LANE_PX - 2.0,
        );
    }
    cx.set_global_alpha(1.0);
    for e in &lane.events {
        let x0 = vp.x_of(e.start_ns as f64, w).max(0.0);
        let x1 = vp.x_of(e.end_ns as f64, w).min(w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        let width = (x1 - x0).max(1.0);
        cx.set_fill_style_str(colour(e.class));
        cx.fill_rect(GUTTER_PX + x0, y + 1.0, width, LANE_PX - 2.0);
        if selected == Some(e.row) {
            cx.set_stroke_style_str("#000");
            cx.set_line_width(2.0);
            cx.stroke_rect(GUTTER_PX + x0, y + 1.0, width, LANE_PX - 2.0);
            cx.set_line_width(1.0);
        }
        if width > 40.0 {
            cx.set_fill_style_str("#fff");
            let _ =
                cx.fill_text_with_max_width(&e.name, GUTTER_PX + x0 + 3.0, y + 12.0, width - 6.0);
        }
    }
}

/// The search box: Enter (or Next) searches the picked rank's events by name, then steps through
/// them; Previous steps back; the count says where ("3 of 17").
#[component]
fn SearchBox(
    state: AppState,
    search: Memo<crate::page::timeline_search::TimelineSearch>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let go = move |forward: bool| {
        let t = text.get_untracked();
        let same = search.with_untracked(|s| s.text == t.trim() && !s.waiting);
        if same && forward {
            super::apply(state, |p| p.search_step(true));
        } else if same {
            super::apply(state, |p| p.search_step(false));
        } else {
            super::apply(state, |p| p.search_timeline(&t));
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" {
            ev.prevent_default();
            go(!ev.shift_key());
        }
    };
    let count = move || search.with(|s| s.counter());
    view! {
        <div class="timeline-search" role="search">
            <input id="timeline-search" type="search" placeholder="Search events by name"
                aria-label="Search the timeline's events by name"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=on_key/>
            <button id="timeline-search-prev" class="secondary" title="Previous match (Shift+Enter)"
                on:click=move |_| go(false)>"Previous"</button>
            <button id="timeline-search-next" class="secondary" title="Next match (Enter)"
                on:click=move |_| go(true)>"Next"</button>
            <span id="timeline-search-count" class="muted" data-metric="timeline-search-matches"
                data-value=move || search.with(|s| s.total.to_string())
                data-current=move || search.with(|s| s.current.map(|i| (i + 1).to_string()).unwrap_or_default())
                aria-live="polite">{count}</span>
        </div>
    }
}
