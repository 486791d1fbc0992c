//! Workspace chores, run as `cargo xtask <task>` (the alias is in
//! `.cargo/config.toml`). One so far: `new-kind NAME`, the scaffold of a
//! workload kind (docs/architecture.md, "Adding a workload kind").
//!
//! A Rust crate rather than a shell script: its test runs in CI like any
//! other, it has no dependencies (it builds in seconds), and it runs the
//! same on every platform cargo does.

mod new_kind;

use std::path::PathBuf;
use std::process::ExitCode;

use new_kind::Options;

const USAGE: &str = "usage: cargo xtask new-kind NAME [--root DIR] [--skip-reference]

  NAME              the block kind: a lowercase identifier (`ticker`, `disk_fill`)
  --root DIR        the workspace to add it to (default: this one)
  --skip-reference  leave docs/language.md's generated reference as it is
                    (regenerating it builds and runs exp-check's docs test)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match new_kind::new_kind(&options) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut args = args.iter();
    match args.next().map(String::as_str) {
        Some("new-kind") => {}
        Some(other) => return Err(format!("unknown task `{other}`")),
        None => return Err("no task given".into()),
    }
    let mut name = None;
    // `cargo xtask` sets the variable at run time: a binary built from a
    // checkout elsewhere that shares the target directory still edits this one.
    let manifest =
        std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), PathBuf::from);
    let mut root = manifest.join("..");
    let mut regenerate_reference = true;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = PathBuf::from(args.next().ok_or("`--root` needs a directory")?),
            "--skip-reference" => regenerate_reference = false,
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            kind if name.is_none() => name = Some(kind.to_string()),
            extra => return Err(format!("unexpected argument `{extra}`")),
        }
    }
    Ok(Options {
        name: name.ok_or("no kind name given")?,
        root,
        regenerate_reference,
    })
}
