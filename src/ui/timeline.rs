//! The timeline: a canvas of the picked rank's GPU streams and CPU threads, drawn from the worker's
//! level-of-detail answers, with wheel/drag/W-A-S-D navigation, a details panel and the view in the
//! URL hash. The logic (range, layout, axis, hit-testing, hash) is `report::timeline_view`.

use crate::page::timeline_walk::{walk, Walk};
use leptos::html::Canvas;
use leptos::prelude::*;

pub(super) use super::timeline_draw::{context, draw_axis};
use super::timeline_draw::{draw, Overlays};
use super::timeline_panels::{Details, IdleLegend, SearchBox};
use super::timeline_ranks::{draw_ranks, ranks_height, RankMetrics, SelectionReadout};
use super::AppState;
use crate::analysis::rank_lanes::RankLanesView;
use crate::analysis::timeline::TimelineRequest;
use crate::page::arrival_marks::arrival_marks;
use crate::page::timeline_select::{rank_row_at, Selection};
use crate::report::timeline_view::{
    duration_label, event_at, hash_of, layout, parse_hash, row_at, wheel_factor, TimelineAnswer,
    Viewport, AXIS_PX, GUTTER_PX, LANE_PX,
};

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
    let walked = state.select(|p| p.timeline_walked);
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
    // The arrow keys walked to an event out of view: pan (or widen) to show it.
    Effect::new(move |_| {
        let Some(w) = walked.get() else { return };
        let span = answer.with_untracked(|a| {
            a.as_ref()
                .filter(|a| a.rank_index == w.rank_index)
                .map(|a| a.span_ns)
        });
        if let (Some(span), Some(vp)) = (span, viewport.get_untracked()) {
            let to = vp.reveal(w.start_ns, w.start_ns + w.dur_ns);
            if to != vp {
                viewport.set(Some(to.within(span)));
            }
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
        // Arrow keys walk the events (the selection moves; left/right along the lane wherever the
        // next event is, up/down to the lanes drawn); Enter selects the first one when none is.
        let step = match key.as_str() {
            "Enter" => Some(Walk::Right).filter(|_| details.with_untracked(Option::is_none)),
            k => Walk::of_key(k),
        };
        let Some(step) = step.filter(|_| !rank_mode.get_untracked()) else {
            return;
        };
        ev.prevent_default();
        let selected = details.with_untracked(|d| d.as_ref().map(|d| d.row));
        // Left/right from a selected event: the worker finds the next one on its lane, drawn or not.
        if let (Some(row), Walk::Left | Walk::Right) = (selected, step) {
            super::apply(state, |p| p.walk_timeline(row, step == Walk::Right));
            return;
        }
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
            {move || focus.get().filter(|f| f.outside).map(|_| view! {
                <p class="notice" id="timeline-outside-window">
                    "None of these events is inside the analysed steps: the longest over the whole trace is shown."
                </p>
            })}
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
