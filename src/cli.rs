//! The native command line: `summary` (and later `analyze`, `report`) over the same core as the page.

use std::path::Path;

use crate::analysis::summary::summarize;
use crate::report::markdown::summary_markdown;
use crate::table::load_path;

const USAGE: &str = "\
profile-model: why is my PyTorch job slow? (reads torch.profiler Kineto traces, .json or .json.gz)

usage:
  profile-model summary [--json] PATH    quick summary of a trace file
  profile-model help                     this text
";

/// Runs the command line; returns the process exit code (0 ok, 1 bad input, 2 bad usage).
pub fn run(args: Vec<String>) -> i32 {
    let mut json = false;
    let mut positional: Vec<&str> = Vec::new();
    for a in &args {
        match a.as_str() {
            "--json" => json = true,
            "-h" | "--help" | "help" => {
                print!("{USAGE}");
                return 0;
            }
            s if s.starts_with("--") => {
                eprintln!("profile-model: unknown option {s}\n\n{USAGE}");
                return 2;
            }
            s => positional.push(s),
        }
    }
    match positional.as_slice() {
        ["summary", path] => summary(Path::new(path), json),
        ["report", path] => report(Path::new(path), json),
        [] => {
            eprint!("{USAGE}");
            2
        }
        _ => {
            eprintln!("profile-model: expected a command and a path\n\n{USAGE}");
            2
        }
    }
}

fn summary(path: &Path, json: bool) -> i32 {
    let table = match load_path(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("profile-model: {e}");
            return 1;
        }
    };
    let s = summarize(&table);
    if json {
        let mut v = serde_json::to_value(&s).expect("summary serialises");
        let diags = table.diagnostics.list();
        v["file"] = serde_json::Value::from(table.file.clone());
        v["diagnostics"] = serde_json::to_value(diags).expect("diagnostics serialise");
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", summary_markdown(&s));
        for d in table.diagnostics.list() {
            println!(
                "- note ({:?}, {}×): {} — e.g. {}",
                d.severity, d.count, d.description, d.example
            );
        }
    }
    0
}

fn report(path: &Path, json: bool) -> i32 {
    let table = match load_path(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("profile-model: {e}");
            return 1;
        }
    };
    let r = crate::report::diagnosis::diagnose(&crate::table::TraceSet::single(table));
    if json {
        println!("{}", r.to_json());
    } else {
        print!("{}", r.to_markdown());
    }
    0
}
