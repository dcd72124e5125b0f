//! `profile-model mcp`: a Model Context Protocol server over stdio for AI agents, built on the official
//! Rust SDK (`rmcp`). An agent opens a trace (or a rank folder) once and asks follow-up questions of the
//! loaded tables: the report, one analysis, the views, the explorer's events query, a diff, an export.
//! Every answer comes from the same functions the CLI writes with (`crate::commands`), bounded in rows
//! and bytes (`bound`); the open traces and what was computed from them stay in `session`.

mod bound;
pub mod params;
mod session;
mod tools;

use std::path::PathBuf;

use rmcp::ServiceExt;

/// Serves MCP on stdin/stdout until the client closes stdin. `cache`: the CLI's `--cache` folder for
/// trace files' tables. Nothing but the protocol is written to stdout; notes go to stderr.
pub fn serve(cache: Option<PathBuf>) -> Result<(), i32> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(format!("could not start the MCP server: {e}")))?;
    let served = runtime.block_on(async move {
        let server = tools::ProfileServer::new(cache);
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("MCP initialisation failed: {e}"))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP server stopped: {e}"))
    });
    // A blocking read of stdin may still be pending: do not wait for it.
    runtime.shutdown_background();
    served.map_err(fail)
}

fn fail(message: String) -> i32 {
    eprintln!("profile-model: {message}");
    1
}
