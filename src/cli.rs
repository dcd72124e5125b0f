//! The native command line: `summary`, `analyze`, `report`, `events`, `collectives`, `diff`, `merge` and `export` over the same core as the page.

use std::path::{Path, PathBuf};

use crate::analysis::all::{analyze_timed, AnalysisOptions, Mode};
use crate::analysis::critical_path::CriticalPathOptions;
use crate::commands::{self, OutputFormat, ProfileView};
use crate::export::ExportFormat;
use crate::load;
use crate::report::compare_text::CompareTable;
use crate::report::text::{render_analyses, render_timings};
use crate::table::query::{EventQuery, GroupBy, SortBy};
use crate::table::{EventKind, TraceSet};

const USAGE: &str = "\
profile-model: why is my PyTorch job slow? (reads torch.profiler Kineto traces, .json or .json.gz)

usage:
  profile-model summary [--json] PATH                                quick summary
  profile-model analyze [--json] [--compat hta] [--steps A..B] PATH  every deeper analysis
                                                                     (--timings: time of each on stderr;
                                                                     --path-rows N: critical-path segments
                                                                     listed, default 1000, 0 = all)
  profile-model report [--json] [--redact] [--steps A..B] PATH       diagnosis: main finding, bottleneck, actions
                                                                     (--redact: kernel/op names as stable hashes;
                                                                     --steps: over these ProfilerSteps instead
                                                                     of the automatic window)
  profile-model events [FILTERS] [--group-by G] [--sort S] [--desc] [--offset N] [--limit N]
                       [--csv | --json] PATH                         explore the events as a table
      FILTERS: --kind K (kernel, cpu_op, memcpy, runtime, ...; repeatable or K1,K2) --name TEXT
               (name contains, any case) --exact-name NAME (repeatable) --category CAT --stream N
               --min-dur US --rank R (repeatable)
      G: name kind category stream thread rank     S: start duration name count total mean max
      --csv writes every matched row (or group), ignoring --offset/--limit
  profile-model ops [--by-shape] [--json | --csv] PATH               CPU operators: calls, host self/total and
                                                                     device self/total time (--by-shape: by
                                                                     name and input shapes)
  profile-model kernels [--json | --csv] PATH                       GPU kernels: calls, time, launching op,
                                                                     launch configuration, tensor cores
  profile-model memory [--json | --csv] PATH                        memory over time per device, its peak and
                                                                     the blocks alive at the peak (--csv: curve)
  profile-model modules [--json | --csv] PATH                       the nn.Module tree (from with_stack frames)
                                                                     with host and device time per module
  profile-model steps [--json | --csv] PATH                         step time split into kernel, memcpy,
                                                                     memset, communication, runtime,
                                                                     DataLoader, CPU exec and other
      ops, kernels, memory, modules and steps take --steps A..B: over those ProfilerSteps only (the
      host rows starting in them and the device work they launched; memory's curve stays whole)
  profile-model roofline [--json | --csv] [--per-step] [--steps A..B] PATH
                                                                     achieved against possible: FLOPs and
                                                                     bytes per kernel and operator (from
                                                                     record_shapes), TFLOP/s, GB/s, % of the
                                                                     device's roof, compute/memory bound;
                                                                     --per-step: model FLOPs and MFU per step
  profile-model collectives [--json | --csv] PATH...                 collectives across ranks: per rank wait (for
                                                                     the last rank) vs transfer, the late ranks
                                                                     and why, bus bandwidth per operation and
                                                                     size, the parallelism they show (PATH: a
                                                                     folder, or several rank files)
  profile-model diff [--json | --csv TABLE] [--fail-if C] BASE CAND  compare two runs: step time and why it
                                                                     changed (per step, or per ms of GPU
                                                                     window); TABLE: waterfall, categories,
                                                                     kernels, ops, ranks, findings
      --fail-if 'COND[,COND]': a regression gate for CI: exit 1, with one line on stderr per condition
      that holds, e.g. 'step_time>+5%', 'gpu_busy<-3pp', 'data_loading>+2ms', 'communication>+10%'.
      Figures: step_time, gpu_busy, computation, communication, memory, exposed_communication, idle,
      or an idle cause (data_loading, synchronization, dispatch_overhead, ...). A limit is relative (%)
      or in the comparison's unit (ms per step; pp for gpu_busy).
  profile-model sample DIR                                          writes the sample job (4 ranks: a DataLoader
                                                                     stall, launch overhead, a sync, rank 2 late)
  profile-model merge [--json] OUT.json...                          the cross-rank results (stragglers, the
                                                                     per-rank tables) of per-rank
                                                                     `analyze --json` outputs: the reduce step
                                                                     when each rank is analysed on its own
                                                                     (exit 2 when they do not fit together)
  profile-model export [--format F] [--columns A,B,C] PATH -o OUT   the event table as a file, in the seed's
                                                                     DataFrame schema (name, cat, ph, ts, dur,
                                                                     pid, tid, id, [rank,] args_<key>...)
      F: parquet, arrow (Arrow IPC file) or csv; default: from OUT's ending (.parquet, .arrow, .csv).
      --columns: only these columns, in this order. OUT '-' is stdout. A folder of ranks adds a
      'rank' column. Mixed-type args columns are strings; if encoding fails, every args_* column
      is written as strings.
  profile-model mcp                                                  a Model Context Protocol server on stdin/stdout
                                                                     for AI agents: open a trace once, then ask
                                                                     the report, analyses, views, events, diff
                                                                     and export (README: Agents (MCP))
  profile-model help                                                 this text

--cache DIR (any command that reads traces): keep each trace file's table in DIR
(<hash of path, size, mtime>.pmcache.parquet) and read it instead of the JSON while the file is
unchanged; a hit or an unreadable entry is said on stderr. Without --cache nothing is written.

PATH is a trace file, or a folder with one trace file per rank (rank from distributedInfo.rank,
else the file name: rank-3, rank3, rank_3, worker3). A file of a folder that cannot be loaded is
skipped and named in the output (skipped_files in --json). Exit status: 0 ok, 1 bad input, 2 bad
usage, 3 the output could not be written (a closed pipe, as with `| head`, is not an error).
";

/// Parsed command-line options.
#[derive(Default)]
struct Args {
    json: bool,
    compat_hta: bool,
    /// `report`: replace kernel/op/module names by stable short hashes.
    redact: bool,
    steps: Option<(i64, i64)>,
    /// `events`: the query, and CSV output.
    query: EventQuery,
    csv: bool,
    /// `analyze`: print the time of each analysis to stderr.
    timings: bool,
    /// `analyze`: critical-path segments listed (0 = all).
    path_rows: Option<usize>,
    /// `ops`: group by name and input shapes.
    by_shape: bool,
    /// `roofline`: the per-step table (model FLOPs, MFU).
    per_step: bool,
    /// `diff`: one table as CSV.
    diff_csv: Option<crate::report::compare_text::CompareTable>,
    /// `diff --fail-if`: the regression gate's conditions.
    fail_if: Vec<crate::report::regression_gate::GateCondition>,
    /// `export`: the format, the columns (in order) and the output file.
    format: Option<ExportFormat>,
    columns: Option<Vec<String>>,
    output: Option<String>,
    /// `--cache DIR`: where trace files' tables are kept (none: nothing is written).
    cache: Option<PathBuf>,
    positional: Vec<String>,
}

impl Args {
    /// `--json`, `--csv` or text.
    fn output_format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else if self.csv {
            OutputFormat::Csv
        } else {
            OutputFormat::Text
        }
    }
}

fn number<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    let v = v.ok_or(format!("{flag} takes a number"))?;
    v.trim()
        .parse()
        .map_err(|_| format!("{flag} takes a number, found {v:?}"))
}

fn text(flag: &str, v: Option<String>) -> Result<String, String> {
    v.ok_or(format!("{flag} takes a value"))
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => out.json = true,
            "--redact" => out.redact = true,
            "--by-shape" => out.by_shape = true,
            "--per-step" => out.per_step = true,
            "--csv" if out.positional.first().map(String::as_str) == Some("diff") => {
                let v = text("--csv", it.next())?;
                out.diff_csv = Some(CompareTable::parse(&v).ok_or(format!(
                    "diff --csv takes {}, found {v:?}",
                    one_of(CompareTable::ALL.map(CompareTable::as_str))
                ))?);
            }
            "--csv" => out.csv = true,
            "--fail-if" => out
                .fail_if
                .extend(crate::report::regression_gate::parse_conditions(&text(
                    "--fail-if",
                    it.next(),
                )?)?),
            "--desc" => out.query.descending = true,
            "--kind" => {
                let v = text("--kind", it.next())?;
                for k in v.split(',').map(str::trim).filter(|k| !k.is_empty()) {
                    let kind = EventKind::parse(k).ok_or_else(|| {
                        let known: Vec<&str> = EventKind::ALL.iter().map(|e| e.as_str()).collect();
                        format!("--kind takes one of {}, found {k:?}", known.join(", "))
                    })?;
                    out.query.kinds.push(kind);
                }
            }
            "--name" => out.query.name_contains = text("--name", it.next())?,
            "--exact-name" => out.query.names.push(text("--exact-name", it.next())?),
            "--category" => out.query.category = text("--category", it.next())?,
            "--stream" => out.query.stream = Some(number("--stream", it.next())?),
            "--min-dur" => out.query.min_dur_us = Some(number("--min-dur", it.next())?),
            "--rank" => out.query.ranks.push(number("--rank", it.next())?),
            "--offset" => out.query.offset = number("--offset", it.next())?,
            "--limit" => out.query.limit = number("--limit", it.next())?,
            "--group-by" => {
                let v = text("--group-by", it.next())?;
                out.query.group_by = Some(GroupBy::parse(&v).ok_or(format!(
                    "--group-by takes {}, found {v:?}",
                    one_of(GroupBy::ALL.map(GroupBy::as_str))
                ))?);
            }
            "--sort" => {
                let v = text("--sort", it.next())?;
                out.query.sort = SortBy::parse(&v).ok_or(format!(
                    "--sort takes {}, found {v:?}",
                    one_of(SortBy::ALL.map(SortBy::as_str))
                ))?;
            }
            "--format" => {
                let v = text("--format", it.next())?;
                out.format = Some(ExportFormat::parse(&v).ok_or(format!(
                    "--format takes {}, found {v:?}",
                    one_of(ExportFormat::ALL.map(ExportFormat::as_str))
                ))?);
            }
            "--columns" => {
                let v = text("--columns", it.next())?;
                out.columns = Some(
                    v.split(',')
                        .map(str::trim)
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect(),
                );
            }
            "-o" | "--output" => out.output = Some(text(a.as_str(), it.next())?),
            "--cache" => out.cache = Some(PathBuf::from(text("--cache", it.next())?)),
            "--timings" => out.timings = true,
            "--path-rows" => out.path_rows = Some(number("--path-rows", it.next())?),
            "--compat" => match it.next().as_deref() {
                Some("hta") => out.compat_hta = true,
                Some("exact") => out.compat_hta = false,
                other => {
                    return Err(format!(
                        "--compat takes 'hta' (or 'exact'), found {other:?}"
                    ))
                }
            },
            "--steps" => {
                let v = it.next().ok_or("--steps takes a range like 3..5")?;
                out.steps = Some(
                    crate::analysis::step_filter::parse_step_range(&v)
                        .map_err(|e| format!("--steps takes a range like 3..5: {e}"))?,
                );
            }
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            _ => out.positional.push(a),
        }
    }
    Ok(out)
}

/// Choices in words: `a, b or c`.
fn one_of<const N: usize>(names: [&str; N]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// Exit status when the output could not be written (a full disk, a closed file).
const EXIT_OUTPUT_FAILED: i32 = 3;

/// Runs the command line; returns the process exit code (0 ok, 1 bad input, 2 bad usage, 3 the
/// output could not be written). A closed pipe (`| head`) is a quiet, successful end.
pub fn run(args: Vec<String>) -> i32 {
    match command_output(args) {
        Ok(text) => write_stdout(&text),
        Err(code) => code,
    }
}

/// Writes the whole output to stdout: 0 when written (or when the reader closed the pipe, as
/// `head` does), [`EXIT_OUTPUT_FAILED`] with a message on stderr for any other write error.
fn write_stdout(text: &str) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("profile-model: could not write the output: {e}");
            EXIT_OUTPUT_FAILED
        }
    }
}

/// The text a command writes to stdout, or its exit code once it has said why on stderr.
fn command_output(args: Vec<String>) -> Result<String, i32> {
    if args
        .iter()
        .any(|a| matches!(a.as_str(), "-h" | "--help" | "help"))
    {
        return Ok(USAGE.to_string());
    }
    let args = parse_args(args).map_err(|e| {
        eprintln!("profile-model: {e}\n\n{USAGE}");
        2
    })?;
    let command = args.positional.first().map(String::as_str);
    if command == Some("diff") {
        return diff(&args);
    }
    if command == Some("sample") {
        return sample(&args);
    }
    if command == Some("merge") {
        return merge(&args);
    }
    if command == Some("collectives") {
        return collectives(&args);
    }
    if command == Some("mcp") {
        return crate::mcp::serve(args.cache.clone()).map(|()| String::new());
    }
    let path = match args.positional.get(1) {
        Some(p) if args.positional.len() == 2 => PathBuf::from(p),
        _ => {
            eprintln!("profile-model: expected a command and one path\n\n{USAGE}");
            return Err(2);
        }
    };
    if command == Some("export") {
        return export(&args, &path);
    }
    const COMMANDS: [&str; 10] = [
        "summary", "analyze", "report", "events", "ops", "kernels", "memory", "modules", "steps",
        "roofline",
    ];
    if !command.is_some_and(|c| COMMANDS.contains(&c)) {
        eprintln!(
            "profile-model: unknown command {}\n\n{USAGE}",
            command.unwrap_or("")
        );
        return Err(2);
    }
    let set = load_set(&path, args.cache.as_deref())?;
    Ok(match command {
        Some("summary") => commands::summary_text(&set, args.json, path.is_dir()),
        Some("analyze") => analyze(&set, &args),
        Some("report") => report(&set, &args)?,
        Some("events") => events(&set, &args),
        Some("roofline") => roofline(&set, &args),
        Some(view) => profile_view(view, &set, &args),
        None => unreachable!("the command was checked above"),
    })
}

/// `ops`, `kernels`, `memory`, `modules` and `steps`: one view per rank, as text, CSV or JSON.
fn profile_view(view: &str, set: &TraceSet, args: &Args) -> String {
    let view = ProfileView::parse(view).unwrap_or(ProfileView::Steps);
    commands::view_text(view, set, args.by_shape, args.output_format(), args.steps)
}

/// `roofline`: achieved against the device's roof per kernel, operator and (`--per-step`) step.
fn roofline(set: &TraceSet, args: &Args) -> String {
    use crate::report::roofline_text::{roofline_csv, roofline_text};
    let opts = AnalysisOptions {
        steps: args.steps,
        ..AnalysisOptions::default()
    };
    let r = crate::analysis::roofline::roofline(set, &opts);
    if args.json {
        serde_json::to_string_pretty(&r).expect("json") + "\n"
    } else if args.csv {
        roofline_csv(&r, args.per_step)
    } else {
        roofline_text(&r, args.per_step)
    }
}

/// `diff BASELINE CANDIDATE`: the comparison of two runs (each a file or a rank folder).
fn diff(args: &Args) -> Result<String, i32> {
    let [_, baseline, candidate] = args.positional.as_slice() else {
        eprintln!("profile-model: diff takes two paths: BASELINE CANDIDATE\n\n{USAGE}");
        return Err(2);
    };
    let b = load_set(Path::new(baseline), args.cache.as_deref())?;
    let c = load_set(Path::new(candidate), args.cache.as_deref())?;
    let comparison = crate::report::compare::compare(&b, &c);
    let text = commands::diff_text(&comparison, args.json, args.diff_csv);
    if args.fail_if.is_empty() {
        return Ok(text);
    }
    regression_gate(&comparison, &args.fail_if, text)
}

/// `diff --fail-if`: writes the comparison, then one line per condition on stderr; exit 1 when any
/// condition holds (a regression), 2 when one cannot be judged on these runs.
fn regression_gate(
    comparison: &crate::report::compare::Comparison,
    conditions: &[crate::report::regression_gate::GateCondition],
    text: String,
) -> Result<String, i32> {
    let verdicts = crate::report::regression_gate::judge(comparison, conditions).map_err(|e| {
        eprintln!("profile-model: --fail-if: {e}");
        2
    })?;
    if !verdicts.iter().any(|v| v.failed) {
        verdicts
            .iter()
            .for_each(|v| eprintln!("profile-model: {}", v.line));
        return Ok(text);
    }
    match write_stdout(&text) {
        0 => {}
        code => return Err(code),
    }
    verdicts
        .iter()
        .filter(|v| v.failed)
        .for_each(|v| eprintln!("profile-model: {}", v.line));
    Err(1)
}

/// `sample DIR`: writes the sample job's rank files (what the page's "Try a sample" loads).
fn sample(args: &Args) -> Result<String, i32> {
    let [_, dir] = args.positional.as_slice() else {
        eprintln!("profile-model: sample takes one folder: sample DIR\n\n{USAGE}");
        return Err(2);
    };
    let dir = Path::new(dir);
    let mut written = String::new();
    for (name, bytes) in crate::sample::sample_files() {
        let path = dir.join(&name);
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, &bytes))
            .map_err(|e| {
                eprintln!("profile-model: could not write {}: {e}", path.display());
                EXIT_OUTPUT_FAILED
            })?;
        written += &format!("{} ({} bytes)\n", path.display(), bytes.len());
    }
    Ok(written)
}

/// `export PATH -o OUT`: the event table as a Parquet, Arrow IPC or CSV file. The output is opened
/// before the trace is read (an unwritable one fails at once) and removed when the export fails.
fn export(args: &Args, path: &Path) -> Result<String, i32> {
    let usage = |message: String| {
        eprintln!("profile-model: {message}\n\n{USAGE}");
        2
    };
    let output = args
        .output
        .clone()
        .ok_or_else(|| usage("export needs the output file: -o OUT".into()))?;
    let format = args
        .format
        .or_else(|| ExportFormat::of_file_name(&output))
        .ok_or_else(|| {
            usage(format!(
                "export needs --format {} (the ending of {output:?} does not say)",
                one_of(ExportFormat::ALL.map(ExportFormat::as_str))
            ))
        })?;
    let to_stdout = output == "-";
    let file = if to_stdout {
        None
    } else {
        Some(std::fs::File::create(&output).map_err(|e| {
            eprintln!("profile-model: could not write {output}: {e}");
            EXIT_OUTPUT_FAILED
        })?)
    };
    let failed = |code: i32| {
        if !to_stdout {
            let _ = std::fs::remove_file(&output);
        }
        code
    };
    let set = load_set(path, args.cache.as_deref()).map_err(failed)?;
    let written = match file {
        Some(f) => commands::export_set(
            &set,
            args.columns.as_deref(),
            format,
            &mut std::io::BufWriter::new(f),
        ),
        None => commands::export_set(
            &set,
            args.columns.as_deref(),
            format,
            &mut std::io::stdout().lock(),
        ),
    };
    let report = written.map_err(|e| {
        if e.exit_code == 2 {
            eprintln!("profile-model: {}", e.message);
        } else {
            eprintln!("profile-model: {output}: {}", e.message);
        }
        failed(e.exit_code)
    })?;
    for note in commands::export_notes(&report) {
        eprintln!("profile-model: {note}");
    }
    let line = commands::export_line(&report, format, &output);
    if to_stdout {
        eprint!("profile-model: {line}");
        Ok(String::new())
    } else {
        Ok(line)
    }
}

/// `merge`: the cross-rank results of per-rank `analyze --json` outputs (exit 2 when they cannot be
/// merged: not an analyze output, a rank twice, mixed modes).
fn merge(args: &Args) -> Result<String, i32> {
    use crate::analysis::merge::{merge, parse_part, MergeError};
    let files = &args.positional[1..];
    let fail = |e: MergeError| {
        eprintln!("profile-model: merge: {e}");
        2
    };
    if files.is_empty() {
        eprintln!("profile-model: merge needs one or more analyze --json outputs\n\n{USAGE}");
        return Err(2);
    }
    let mut parts = Vec::with_capacity(files.len());
    for file in files {
        let bytes = std::fs::read(file).map_err(|e| {
            fail(MergeError::Unreadable {
                file: file.clone(),
                reason: e.to_string(),
            })
        })?;
        let text = String::from_utf8_lossy(&bytes);
        parts.push(parse_part(file, &text).map_err(fail)?);
    }
    let merged = merge(parts).map_err(fail)?;
    Ok(if args.json {
        // Through `Value`, whose map sorts the keys, as `analyze --json`.
        let doc = serde_json::to_value(&merged).unwrap_or(serde_json::Value::Null);
        serde_json::to_string_pretty(&doc).expect("json") + "\n"
    } else {
        crate::report::text::render_merged(&merged)
    })
}

fn analyze(set: &TraceSet, args: &Args) -> String {
    let opts = AnalysisOptions {
        mode: if args.compat_hta {
            Mode::HtaCompat
        } else {
            Mode::Exact
        },
        steps: args.steps,
        critical_path: CriticalPathOptions {
            max_rows: args.path_rows,
            ..Default::default()
        },
        ..Default::default()
    };
    let clock = std::time::Instant::now();
    let (all, timings) = analyze_timed(set, &opts, &|| clock.elapsed().as_secs_f64() * 1000.0);
    if args.timings {
        eprint!("{}", render_timings(&timings));
    }
    if args.json {
        commands::pretty_json(&commands::analyses_json(set, &all))
    } else {
        render_analyses(&all)
    }
}

/// `collectives PATH...`: a folder, or several rank files, as one set.
fn collectives(args: &Args) -> Result<String, i32> {
    use crate::analysis::collectives::collectives_prepared;
    use crate::analysis::gpu::RankPrep;
    use crate::report::collectives_text::{collectives_text, per_rank_grid};
    let paths: Vec<PathBuf> = args.positional[1..].iter().map(PathBuf::from).collect();
    let set = match paths.as_slice() {
        [] => {
            eprintln!("profile-model: collectives takes a folder or rank files\n\n{USAGE}");
            return Err(2);
        }
        [one] => load_set(one, args.cache.as_deref())?,
        many => {
            let set = TraceSet::from_loads(load::load_parallel(many, args.cache.as_deref()));
            for f in &set.skipped {
                eprintln!("profile-model: {}", f.reason);
            }
            if set.is_empty() {
                return Err(1);
            }
            set
        }
    };
    let opts = AnalysisOptions {
        steps: args.steps,
        ..Default::default()
    };
    let preps: Vec<(i64, RankPrep)> = set
        .ranks
        .iter()
        .map(|r| (r.rank, RankPrep::new(&r.table, &opts)))
        .collect();
    let (_, c) = collectives_prepared(&preps);
    Ok(if args.json {
        serde_json::to_string_pretty(&c).expect("json") + "\n"
    } else if args.csv {
        per_rank_grid(&c).to_csv()
    } else {
        collectives_text(&c)
    })
}

/// `report [--steps A..B]`: the diagnosis over the automatic window or the chosen steps (a range
/// no rank has, or one some rank lacks, is said on stderr: exit 1).
fn report(set: &TraceSet, args: &Args) -> Result<String, i32> {
    let report = crate::report::diagnosis::diagnose_steps(set, args.steps).map_err(|e| {
        eprintln!("profile-model: report --steps: {e}");
        1
    })?;
    Ok(commands::report_text(&report, args.json, args.redact))
}

fn events(set: &TraceSet, args: &Args) -> String {
    // `--csv` wins over `--json` here (every matched row), as it always has.
    let format = if args.csv {
        OutputFormat::Csv
    } else {
        args.output_format()
    };
    commands::events_text(set, &args.query, format)
}

/// Loads a file or a rank folder (see [`load::load_set`]); says why on stderr when nothing could be
/// loaded (exit 1), and the folder's notes when it could.
fn load_set(path: &Path, cache: Option<&Path>) -> Result<TraceSet, i32> {
    let set = load::load_set(path, cache).map_err(|failure| {
        for line in &failure.lines {
            eprintln!("profile-model: {line}");
        }
        1
    })?;
    for note in &set.notes {
        eprintln!("profile-model: note: {note}");
    }
    Ok(set)
}
