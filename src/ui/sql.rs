//! The SQL tab: a query box, example queries, the answer as a sortable, paged table (CSV download,
//! "Show on timeline" for rows with a rank, ts and dur), the time it took, errors with their place.
//! Draws `page::sql::SqlState`; the engine is `scripts/sql-engine.js` (DuckDB-WASM in its own
//! worker), loaded by a script element when the tab first opens, so the first load fetches none of it.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::AppState;
use crate::page::sql::{SqlAnswer, SqlCell, SqlError, SqlState, SqlStatus, MAX_ROWS};
use crate::protocol::SqlPart;
use crate::report::format;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = profileModelSql, js_name = start, catch)]
    fn engine_start() -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = profileModelSql, js_name = load, catch)]
    fn engine_load(parts: &str, buffers: &js_sys::Array) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_namespace = profileModelSql, js_name = query, catch)]
    fn engine_query(text: &str, max_rows: u32) -> Result<js_sys::Promise, JsValue>;
}

/// The text of a JS error (its `message`), or what it is.
fn error_text(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the SQL engine failed".into())
}

/// Adds `sql-engine.js` to the page once and waits for it to run.
async fn engine_script() -> Result<(), String> {
    let global = js_sys::global();
    if js_sys::Reflect::has(&global, &"profileModelSql".into()).unwrap_or(false) {
        return Ok(());
    }
    let document = window().document().ok_or("no document")?;
    let loaded = js_sys::Promise::new(&mut |resolve, reject| {
        let Ok(script) = document.create_element("script") else {
            let _ = reject.call1(&JsValue::NULL, &"no script element".into());
            return;
        };
        let _ = script.set_attribute("src", "sql-engine.js");
        let _ = script.add_event_listener_with_callback("load", &resolve);
        let _ = script.add_event_listener_with_callback("error", &reject);
        if let Some(head) = document.head() {
            let _ = head.append_child(&script);
        }
    });
    JsFuture::from(loaded)
        .await
        .map(|_| ())
        .map_err(|_| "the page could not load its SQL engine (sql-engine.js)".to_string())
}

async fn started() -> Result<(), String> {
    engine_script().await?;
    let promise = engine_start().map_err(|e| error_text(&e))?;
    JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|e| format!("the SQL engine did not start: {}", error_text(&e)))
}

/// Fetches and starts the engine (while the worker makes the tables).
pub fn start(state: AppState) {
    leptos::task::spawn_local(async move {
        if let Err(message) = started().await {
            state.page.update(|p| p.sql_failed(message));
        }
    });
}

/// Makes the tables from the worker's buffers (one per part).
pub fn load(state: AppState, parts: Vec<SqlPart>, buffers: Vec<JsValue>) {
    leptos::task::spawn_local(async move {
        let made = async {
            started().await?;
            let json = serde_json::to_string(&parts).map_err(|e| e.to_string())?;
            let array: js_sys::Array = buffers.into_iter().collect();
            let promise = engine_load(&json, &array).map_err(|e| error_text(&e))?;
            let ms = JsFuture::from(promise)
                .await
                .map_err(|e| format!("the SQL tables could not be made: {}", error_text(&e)))?;
            Ok::<f64, String>(ms.as_f64().unwrap_or(0.0))
        };
        match made.await {
            Ok(ms) => state.page.update(|p| p.sql_ready(&parts, ms)),
            Err(message) => state.page.update(|p| p.sql_failed(message)),
        }
    });
}

/// Runs a query and hands its answer (or DuckDB's error) to the state.
pub fn run(state: AppState, text: String) {
    leptos::task::spawn_local(async move {
        let answer = async {
            let promise = engine_query(&text, MAX_ROWS as u32).map_err(|e| error_text(&e))?;
            let json = JsFuture::from(promise).await.map_err(|e| error_text(&e))?;
            SqlAnswer::from_json(&json.as_string().unwrap_or_default())
        };
        let answer = answer.await;
        state.page.update(|p| p.sql_answered(answer));
    });
}

fn status_view(status: SqlStatus) -> impl IntoView {
    let (state, text) = match status {
        SqlStatus::Closed => ("closed", String::new()),
        SqlStatus::Starting => (
            "starting",
            "Starting the SQL engine (DuckDB-WASM, about 7 MB the first time) and making the tables…".into(),
        ),
        SqlStatus::Ready { events, load_ms } => (
            "ready",
            format!(
                "Tables: events ({} rows), idle; views: kernels, ops, runtime, memcpy. Ready in {}.",
                format::int(events),
                format::millis(load_ms)
            ),
        ),
        SqlStatus::Failed(message) => ("failed", message),
    };
    view! { <p class="muted" id="sql-status" data-state=state>{text}</p> }
}

fn error_view(e: SqlError) -> impl IntoView {
    let caret =
        e.at.map(|(_, col)| format!("{}^", " ".repeat(col.saturating_sub(1))));
    let (line, col) = e.at.unwrap_or((0, 0));
    view! {
        <div class="error" id="sql-error" role="alert" data-line=line.to_string() data-column=col.to_string()>
            <p>{e.text()}</p>
            {e.line_text.map(|l| view! { <pre class="sql-caret">{l}"\n"{caret}</pre> })}
        </div>
    }
}

fn cell_view(cell: SqlCell) -> impl IntoView {
    let class = if cell.is_number() { "num" } else { "" };
    view! { <td class=class>{cell.text()}</td> }
}

fn table_view(state: AppState, sql: SqlState) -> impl IntoView {
    let Some(answer) = sql.answer.clone() else {
        return ().into_any();
    };
    let heads = answer
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let arrow = match sql.sort {
                Some((col, true)) if col == i => " ↓",
                Some((col, false)) if col == i => " ↑",
                _ => "",
            };
            view! {
                <th title=c.type_name.clone()>
                    <button type="button" class="link" data-sort-col=i.to_string()
                        on:click=move |_| state.page.update(|p| { if let Some(s) = p.sql_mut() { s.sort_by(i) } })>
                        {format!("{}{arrow}", c.name)}
                    </button>
                </th>
            }
        })
        .collect_view();
    let has_span = answer.rows() > 0 && (0..answer.rows()).any(|r| answer.span(r).is_some());
    let rows = sql
        .page_rows()
        .into_iter()
        .map(|row| {
            let cells = answer
                .columns
                .iter()
                .map(|c| cell_view(c.values.cell(row)))
                .collect_view();
            let span = answer.span(row);
            let show = has_span.then(|| {
                view! {
                    <td>{span.map(|s| view! {
                        <button type="button" class="link" data-sql-timeline=""
                            on:click=move |_| super::apply(state, |p| p.show_sql_row(s))>"Show on timeline"</button>
                    })}</td>
                }
            });
            view! { <tr>{cells}{show}</tr> }
        })
        .collect_view();
    let pages = sql.pages();
    let page = sql.page;
    let read = answer.rows() as u64;
    let cut = (answer.total_rows > read).then(|| {
        format!(
            " (the first {} are shown; add a LIMIT or an aggregate for the rest)",
            format::int(read)
        )
    });
    let go = move |to: usize| {
        state.page.update(|p| {
            if let Some(s) = p.sql_mut() {
                s.set_page(to)
            }
        })
    };
    view! {
        <p id="sql-summary">
            <span data-metric="sql-rows" data-value=answer.total_rows.to_string()>{format!("{} rows", format::int(answer.total_rows))}</span>
            " in "
            <span data-metric="sql-ms" data-value=answer.ms.to_string()>{format::millis(answer.ms)}</span>
            {cut}
        </p>
        <div class="table-scroll">
            <table id="sql-table" class="data">
                <thead><tr>{heads}{has_span.then(|| view! { <th></th> })}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <div class="pager">
            <button id="sql-prev" class="secondary" disabled=page == 0 on:click=move |_| go(page.saturating_sub(1))>"← Previous"</button>
            <span class="muted">{format!(" page {} of {pages} ", page + 1)}</span>
            <button id="sql-next" class="secondary" disabled=page + 1 >= pages on:click=move |_| go(page + 1)>"Next →"</button>
        </div>
    }
    .into_any()
}

/// The SQL panel.
pub fn sql_panel(state: AppState) -> impl IntoView {
    let tab = state.select(|p| p.tab);
    let sql = state.select(|p| p.sql().cloned());
    let detached = state.select(crate::page::page_state::PageState::detached);
    let text = RwSignal::new(String::new());
    // The tab opened (or other results are shown while it is open): start the engine once.
    Effect::new(move |_| {
        if tab.get() == crate::page::tabs::Tab::Sql
            && sql.with(|s| s.as_ref().map(|s| s.status.clone())) == Some(SqlStatus::Closed)
        {
            super::apply(state, |p| p.open_sql());
            if let Some(q) = state
                .page
                .with_untracked(|p| p.sql().map(|s| s.query.clone()))
            {
                text.set(q);
            }
        }
    });
    let run_now = move || {
        let q = text.get_untracked();
        super::apply(state, |p| p.run_sql(&q));
    };
    let examples = crate::page::sql::examples()
        .into_iter()
        .enumerate()
        .map(|(i, (title, query))| {
            view! {
                <button type="button" class="secondary" data-example=i.to_string()
                    on:click=move |_| { text.set(query.clone()); run_now(); }>{title}</button>
            }
        })
        .collect_view();
    let csv = move |_| {
        if let Some(csv) = state
            .page
            .with_untracked(|p| p.sql().and_then(SqlState::csv))
        {
            super::view::download(&csv, "text/csv", "profile-model-query.csv");
        }
    };
    view! {
        <section class="panel" id="sql">
            <div class="panel-head">
                <h2>"SQL"</h2>
                <div class="actions">
                    <button id="sql-csv" class="secondary" on:click=csv
                        disabled=move || sql.with(|s| s.as_ref().and_then(|s| s.answer.as_ref()).is_none())>"Download CSV"</button>
                </div>
            </div>
            <p class="muted">"Every event of the trace in DuckDB, in this tab only: "<code>"events"</code>
                " (the export's columns, with "<code>"rank"</code>" and "<code>"kind"</code>"; "<code>"ts"</code>", "<code>"dur"</code>" in µs), "
                <code>"idle"</code>" (the GPU's idle intervals and their cause), and the views "
                <code>"kernels"</code>", "<code>"ops"</code>", "<code>"runtime"</code>", "<code>"memcpy"</code>"."</p>
            {move || match detached.get() {
                Some(why) => view! { <p class="notice" data-state="unavailable">{crate::page::page_state::needs_file_text(why)}</p> }.into_any(),
                None => view! {}.into_any(),
            }}
            {move || sql.get().map(|s| status_view(s.status))}
            <div class="sql-examples">"Examples: "{examples}</div>
            <form id="sql-form" on:submit=move |ev| { ev.prevent_default(); run_now(); }>
                <textarea id="sql-query" rows="8" spellcheck="false" aria-label="SQL query"
                    prop:value=text on:input=move |ev| text.set(event_target_value(&ev))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) { ev.prevent_default(); run_now(); }
                    }></textarea>
                <p>
                    <button id="sql-run" type="submit"
                        disabled=move || sql.with(|s| !matches!(s.as_ref().map(|s| &s.status), Some(SqlStatus::Ready { .. })) || s.as_ref().is_some_and(|s| s.running))>
                        {move || if sql.with(|s| s.as_ref().is_some_and(|s| s.running)) { "Running…" } else { "Run (Ctrl+Enter)" }}
                    </button>
                </p>
            </form>
            {move || sql.get().and_then(|s| s.error).map(error_view)}
            {move || sql.get().map(|s| table_view(state, s))}
        </section>
    }
}

/// The engine's buffers came with the worker's message: the tables are made now.
pub fn tables_came(state: AppState, parts: Vec<SqlPart>, buffers: &[JsValue]) {
    let buffers: Vec<JsValue> = buffers
        .iter()
        .filter(|b| b.is_instance_of::<js_sys::ArrayBuffer>())
        .cloned()
        .collect();
    load(state, parts, buffers);
}
