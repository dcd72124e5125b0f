// The SQL tab's engine glue (loaded by the page only when the SQL tab first opens): DuckDB-WASM in its
// own worker, driven through its message protocol, and Apache Arrow JS to read its answers. Every file
// comes from this page's own origin (duckdb/, copied there by scripts/setup.sh from the pinned npm
// package); DuckDB's automatic extension downloads are turned off, so no request leaves the origin.
//
// The page (src/ui/sql.rs) calls three functions on globalThis.profileModelSql:
//   start()                  fetch and start the engine (once);
//   load(partsJson, buffers) make the tables from the worker's Arrow IPC streams, one per part, then
//                            the views; resolves to the time it took, ms;
//   query(text, maxRows)     run one statement; resolves to a JSON text the page reads into its typed
//                            answer (src/page/sql.rs, SqlAnswer), rejects with DuckDB's message.
(() => {
  const BASE = new URL("./duckdb/", document.baseURI).href;
  let worker = null;
  let nextId = 1;
  const waiting = new Map();
  let ready = null;
  let connection = null;

  function ask(type, data, transfer) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ messageId: id, type, data }, transfer || []);
    });
  }

  function onMessage(event) {
    const m = event.data;
    // Progress reports carry the request's id too (INSTANTIATE_PROGRESS while the wasm compiles,
    // PROGRESS_UPDATE during a query): only the final answer settles a request.
    if (m.type === "INSTANTIATE_PROGRESS" || m.type === "PROGRESS_UPDATE" || m.type === "LOG") return;
    const w = waiting.get(m.requestId);
    if (!w) return;
    waiting.delete(m.requestId);
    if (m.type === "ERROR") w.reject(new Error(m.data && m.data.message ? m.data.message : String(m.data)));
    else w.resolve(m.data);
  }

  function loadArrow() {
    if (globalThis.Arrow) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = BASE + "arrow.js";
      s.onload = () => resolve();
      s.onerror = () => reject(new Error("the page could not load its Arrow reader (duckdb/arrow.js)"));
      document.head.appendChild(s);
    });
  }

  async function run(sql) {
    return ask("RUN_QUERY", [connection, sql]);
  }

  function start() {
    if (ready) return ready;
    ready = (async () => {
      worker = new Worker(BASE + "duckdb-browser-eh.worker.js");
      worker.onmessage = onMessage;
      worker.onerror = (e) => {
        for (const w of waiting.values()) w.reject(new Error("the SQL engine's worker failed: " + (e.message || "unknown error")));
        waiting.clear();
      };
      await Promise.all([ask("INSTANTIATE", [BASE + "duckdb-eh.wasm", null]), loadArrow()]);
      await ask("OPEN", { path: ":memory:", query: { castDecimalToDouble: false } });
      connection = await ask("CONNECT", null);
      // Never fetch an extension from the network (the default would download e.g. json from
      // extensions.duckdb.org): a query that needs one fails with DuckDB's message instead.
      await run("SET autoinstall_known_extensions = false");
      await run("SET autoload_known_extensions = false");
    })();
    ready.catch(() => { ready = null; });
    return ready;
  }

  async function load(partsJson, buffers) {
    const t0 = performance.now();
    await start();
    const parts = JSON.parse(partsJson);
    const names = { events: [], idle: [] };
    await run("DROP VIEW IF EXISTS kernels; DROP VIEW IF EXISTS ops; DROP VIEW IF EXISTS runtime; DROP VIEW IF EXISTS memcpy; DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS idle");
    for (let i = 0; i < parts.length; i++) {
      const table = parts[i].table;
      const name = `__${table}_${i}`;
      await run(`DROP TABLE IF EXISTS ${name}`);
      const bytes = new Uint8Array(buffers[i]);
      await ask("INSERT_ARROW_FROM_IPC_STREAM", [connection, bytes, { name, create: true }], [bytes.buffer]);
      names[table].push(name);
    }
    // One table of each name: a set split over shard workers comes in one part per shard, their
    // columns matched by name (a column one shard lacks is null there).
    for (const table of ["events", "idle"]) {
      const list = names[table];
      if (list.length === 0) continue;
      await run(`CREATE TABLE ${table} AS ` + list.map((n) => `SELECT * FROM ${n}`).join(" UNION ALL BY NAME "));
      for (const n of list) await run(`DROP TABLE ${n}`);
    }
    await run("CREATE VIEW kernels AS SELECT * FROM events WHERE kind = 'kernel'");
    await run("CREATE VIEW ops AS SELECT * FROM events WHERE kind = 'cpu_op'");
    await run("CREATE VIEW runtime AS SELECT * FROM events WHERE kind IN ('runtime', 'driver')");
    await run("CREATE VIEW memcpy AS SELECT * FROM events WHERE kind IN ('memcpy', 'memset')");
    return performance.now() - t0;
  }

  const INT64_MAX = 9223372036854775807n;

  // One column as the page's typed values ({"Int":[...]}, {"Float":[...]}, {"Text":[...]},
  // {"Bool":[...]}), written as JSON text by hand so that 64-bit integers stay exact.
  function columnJson(Arrow, field, vector, rows) {
    const t = field.type;
    const out = new Array(rows);
    const T = Arrow.Type;
    const get = (i) => vector.get(i);
    let kind;
    if (t.typeId === T.Int) {
      kind = "Int";
      for (let i = 0; i < rows; i++) {
        const v = get(i);
        out[i] = v === null || v === undefined ? "null" : (typeof v === "bigint" && v > INT64_MAX ? `${Number(v)}` : `${v}`);
      }
      if (t.bitWidth === 64 && !t.isSigned) kind = "Float";
    } else if (t.typeId === T.Float) {
      kind = "Float";
      for (let i = 0; i < rows; i++) {
        const v = get(i);
        out[i] = v === null || v === undefined || !Number.isFinite(v) ? "null" : `${v}`;
      }
    } else if (t.typeId === T.Decimal) {
      kind = "Float";
      for (let i = 0; i < rows; i++) {
        const v = get(i);
        out[i] = v === null || v === undefined ? "null" : `${Arrow.util.bigNumToNumber(v, t.scale)}`;
      }
    } else if (t.typeId === T.Bool) {
      kind = "Bool";
      for (let i = 0; i < rows; i++) {
        const v = get(i);
        out[i] = v === null || v === undefined ? "null" : (v ? "true" : "false");
      }
    } else {
      kind = "Text";
      const isTime = t.typeId === T.Timestamp || t.typeId === T.Date;
      for (let i = 0; i < rows; i++) {
        const v = get(i);
        if (v === null || v === undefined) out[i] = "null";
        else if (isTime) out[i] = JSON.stringify(new Date(Number(v)).toISOString());
        else if (typeof v === "string") out[i] = JSON.stringify(v);
        else if (typeof v === "bigint") out[i] = JSON.stringify(v.toString());
        else if (typeof v === "object" && typeof v.toJSON === "function") out[i] = JSON.stringify(JSON.stringify(v.toJSON(), (_, x) => (typeof x === "bigint" ? x.toString() : x)));
        else out[i] = JSON.stringify(String(v));
      }
    }
    return `{"name":${JSON.stringify(field.name)},"type_name":${JSON.stringify(String(t))},"values":{"${kind}":[${out.join(",")}]}}`;
  }

  async function query(text, maxRows) {
    await start();
    const t0 = performance.now();
    const bytes = await run(text);
    const ms = performance.now() - t0;
    const Arrow = globalThis.Arrow;
    const table = Arrow.tableFromIPC(bytes);
    const total = table.numRows;
    const rows = Math.min(total, maxRows);
    const columns = table.schema.fields.map((f, i) => columnJson(Arrow, f, table.getChildAt(i), rows));
    return `{"columns":[${columns.join(",")}],"total_rows":${total},"ms":${ms}}`;
  }

  globalThis.profileModelSql = { start, load, query };
})();
