"""`profile-model mcp` driven by a real MCP client: the official Python SDK (`mcp`, pinned in requirements.txt).

Starts the server over stdio as an agent's host does, then:
  - lists the tools (every tool the README names, each with a described input schema),
  - opens a shared trace (the answer names its trace_id),
  - asks the report as JSON and compares it with `profile-model report --json` (a separate CLI run),
  - asks an events query (kernels, grouped by name, largest total first) and compares it with
    `profile-model events ... --json`, and the kernel count with the trace's own JSON (gzip + json here),
  - checks that a follow-up call on the loaded trace is faster than opening it,
  - asks for an unknown trace id and expects an error that says to call open_trace.

usage: python check_mcp.py PROFILE_MODEL_CLI TRACES_DIR
Exits non-zero with a message at the first difference.
"""

import asyncio
import gzip
import json
import os
import subprocess
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters

TRACE = "hta__df_index_resolver.json.gz"
TOOLS = {"open_trace", "list_traces", "close_trace", "report", "analysis", "view", "events", "diff", "export"}


def fail(message):
    print(f"check_mcp: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


def cli_json(cli, *args):
    out = subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def kernels_in_json(path):
    with gzip.open(path, "rb") as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    return sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "kernel")


def texts(result):
    return [c.text for c in result.content if c.type == "text"]


async def call_text(client, tool, arguments):
    result = await client.call_tool(tool, arguments)
    check(not result.is_error, f"{tool} {arguments}: {texts(result)}")
    return texts(result)[0]


async def check_tools(client):
    listed = await client.list_tools()
    names = {t.name for t in listed.tools}
    check(TOOLS <= names, f"tools missing: {TOOLS - names}")
    for t in listed.tools:
        check(len(t.description or "") > 20, f"{t.name} has no real description")
        check(t.input_schema.get("type") == "object", f"{t.name}: {t.input_schema}")
    events = next(t for t in listed.tools if t.name == "events")
    check("kernel" in events.input_schema["properties"]["kinds"]["items"]["enum"], "events.kinds lists kernel")


async def run(cli, trace):
    params = StdioServerParameters(command=cli, args=["mcp"])
    async with Client(params, read_timeout_seconds=120) as client:
        await check_tools(client)

        t0 = time.perf_counter()
        opened = await call_text(client, "open_trace", {"path": trace})
        report = json.loads(await call_text(client, "report", {"trace_id": 1, "format": "json", "max_bytes": 400000}))
        cold = time.perf_counter() - t0
        check(opened.startswith("trace_id: 1\n"), f"open_trace: {opened[:200]}")
        check(report == cli_json(cli, "report", "--json", trace), "report --json differs from the MCP report")

        t0 = time.perf_counter()
        query = {"trace_id": 1, "kinds": ["kernel"], "group_by": "name", "sort": "total", "descending": True,
                 "limit": 20, "format": "json"}
        page = json.loads(await call_text(client, "events", query))
        follow_up = time.perf_counter() - t0
        cli_page = cli_json(cli, "events", "--kind", "kernel", "--group-by", "name", "--sort", "total", "--desc",
                            "--limit", "20", "--json", trace)
        check(page["groups"] == cli_page["groups"], "events groups differ from `events --json`")
        check(page["matched"] == kernels_in_json(trace), f"kernels: {page['matched']} vs the trace's JSON")
        check(follow_up < cold, f"a follow-up ({follow_up:.3f} s) is not faster than open + report ({cold:.3f} s)")

        missing = await client.call_tool("report", {"trace_id": 42})
        check(missing.is_error and "open_trace" in texts(missing)[0], f"unknown id: {texts(missing)}")
        print(f"check_mcp: ok ({len(page['groups'])} kernel groups of {page['matched']} kernels; "
              f"open + report {cold:.2f} s, follow-up events {follow_up * 1000:.0f} ms)")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_mcp.py PROFILE_MODEL_CLI TRACES_DIR")
    cli, traces = sys.argv[1], sys.argv[2]
    asyncio.run(run(cli, os.path.join(traces, TRACE)))


if __name__ == "__main__":
    main()
