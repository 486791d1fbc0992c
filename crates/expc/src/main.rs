//! `expc`: the command line. The only crate that talks to the terminal.

// First: its macros are used by every module below.
#[macro_use]
mod out;

mod calibrate;
mod claims;
mod http;
mod line_diff;
mod live_line;
mod message_json;
mod metrics;
mod out_dir;
mod progress;
mod report;
mod run;
mod run_junit;
mod serve;
mod serving;
mod size;
mod slurm;
mod summary;
mod test;
mod traffic;
mod watch;
mod xml;
mod yaml;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use exp_check::{compile, FsLoader, Options};
use exp_diagnostics::{render_all, Code, RenderStyle};

#[derive(Parser)]
#[command(
    name = "expc",
    version,
    about = "Compile and run declarative experiment specs (.exp)",
    after_help = "Examples:\n  expc check examples/quickstart.exp\n  expc plan examples/quickstart.exp --format yaml\n  expc fmt --check specs/**/*.exp\n  expc explain E0302\n  expc run examples/quickstart.exp\n  expc report runs/quickstart/<run-id>\n\nFiles named for output are replaced whole (a link is followed); a device or FIFO such as /dev/null is written through, not replaced. Files read must be regular files (docs/running.md, \"Files expc reads and writes\")."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check specs and print every diagnostic; exit 1 if any has errors.
    #[command(
        after_help = "Examples:\n  expc check examples/quickstart.exp\n  expc check specs/**/*.exp\n  expc check spec.exp --message-format json"
    )]
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// `json`: one JSON object per diagnostic and line on standard
        /// output (code, severity, message, labels with file, line, column
        /// and byte offsets, notes, help), for editors and CI.
        #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
        message_format: MessageFormat,
    },
    /// Compile a spec to its execution plan (the Plan IR).
    #[command(
        after_help = "Examples:\n  expc plan examples/quickstart.exp\n  expc plan specs/iot/message-size.exp --format yaml --seed 42 -o plan.yaml"
    )]
    Plan {
        file: PathBuf,
        /// [default: yaml when -o names a .yaml or .yml file, else json]
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Override the experiment's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the plan here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Format specs in place (or check that they are formatted); `-` formats standard input to standard output.
    #[command(
        after_help = "Examples:\n  expc fmt examples/*.exp\n  expc fmt --check specs/iot/*.exp\n  expc fmt - < spec.exp > formatted.exp"
    )]
    Fmt {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Change nothing; show what would change and exit 1 if a file is not formatted.
        #[arg(long)]
        check: bool,
    },
    /// Print a shell completion script: `source <(expc completions bash)`.
    #[command(
        after_help = "Examples:\n  source <(expc completions bash)\n  expc completions zsh > ~/.zfunc/_expc\n  expc completions fish > ~/.config/fish/completions/expc.fish"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Test a spec library: every spec checks and is formatted, every plan equals its snapshot.
    #[command(
        after_help = "Snapshots: DIR/__snapshots__/NAME.plan.json beside DIR/NAME.exp (docs/testing.md).\nExit status: 0 all passed, 1 some failed, 2 nothing could be tested.\n\nExamples:\n  expc test\n  expc test specs/ --accept\n  expc test specs/ --junit results.xml\n  expc test specs/iot --run --time-scale 0.01"
    )]
    Test(test::Args),
    /// Explain a diagnostic code with an example and its fix.
    #[command(after_help = "Examples:\n  expc explain E0302\n  expc explain --list")]
    Explain {
        #[arg(required_unless_present = "list")]
        code: Option<String>,
        /// List every code with its title.
        #[arg(long)]
        list: bool,
    },
    /// Run a spec or plan: preflight, trials, Parquet tables and a manifest.
    #[command(
        after_help = "Examples:\n  expc run examples/quickstart.exp\n  expc run specs/anomaly/intensity-sweep.exp --trials 0,5 --time-scale 0.05\n  expc run plan.json --out /data/runs --dry-run"
    )]
    Run(run::Args),
    /// Summarise a run directory: MQTT fleet statistics, then per-trial counts, means and percentiles of every table; its figures as HTML or SVG; several runs compared.
    #[command(
        after_help = "Examples:\n  expc report runs/quickstart/20261121T120000Z-1a2b3c4d\n  expc report RUN_DIR --json > summary.json\n  expc report RUN_DIR --html            # RUN_DIR/report.html, offline\n  expc report RUN_DIR --svg figures/\n  expc report BASELINE_RUN NEW_RUN      # each metric, its change and Welch's p\n  expc report RUN_DIR --points 0 1      # point 1 against point 0 of one run"
    )]
    Report(report::Args),
    /// Watch a run as it goes: a local page (127.0.0.1, a token in its URL) of its progress, trial order, validity flags and figures, read from its directory every few seconds.
    #[command(
        after_help = "Examples:\n  expc watch runs/quickstart/.20261121T120000Z-1a2b3c4d.partial\n  expc watch /shared/runs/study/ID --bind 8080\n  expc run SPEC --watch                  # the same page for the run it starts"
    )]
    Watch(watch::Args),
    /// Measure how faithfully the anomaly kernels reach their targets on this machine.
    #[command(
        after_help = "Examples:\n  expc calibrate cpuoccupy --core 1 --seconds 10\n  expc calibrate memory\n  expc calibrate interference --json"
    )]
    Calibrate(calibrate::Args),
    /// XML synthesis: extract a set from a corpus, generate documents, compare, reveal.
    #[command(
        after_help = "Examples:\n  expc xml extract specs/xml/corpus --split-at event -o set/\n  expc xml generate set/ --documents 100000 -o out/\n  expc xml compare specs/xml/corpus out/ --split-at event"
    )]
    Xml(xml::Args),
    /// Connection vectors: convert formats and structure models, synthesize from a spec.
    #[command(
        after_help = "Examples:\n  expc traffic convert --structure ab trace.cvec trace-ab.cvec\n  expc traffic synth specs/traffic/structure-rtt.exp -o synthetic.cvec"
    )]
    Traffic(traffic::Args),
    /// Accept replayed TCP connections for a spec's `server = "host:port"`; prints the address it listens on.
    #[command(
        after_help = "Examples:\n  expc serve --bind 0.0.0.0:7000 --secret-file serve.secret   (docs/serve.md: the threat model)\n  expc serve --bind 127.0.0.1:0 --max-connections 100 --for 10min"
    )]
    Serve(serve::Args),
    /// Run a study on Slurm: a job array of trial shards, or one job whose `srun` tasks split every trial.
    #[command(
        after_help = "Examples:\n  expc slurm specs/iot/fleet-scaling.exp --shards 8 --partition batch --time 2:00:00 --out /shared/runs --submit\n  expc slurm specs/iot/fleet-scaling.exp --split 4 --cpus-per-task 40 --out /shared/runs --submit --wait"
    )]
    Slurm(slurm::Args),
    /// Language server for editors: the Language Server Protocol on standard input and output.
    #[command(
        after_help = "Editors start it themselves; see docs/editors.md.\n\nExamples:\n  expc lsp\n  expc lsp --cache-dir /tmp/expc-lsp"
    )]
    Lsp {
        /// Where read-only copies of the stdlib and the `expc explain` texts go
        /// (default: $XDG_CACHE_HOME/expc/lsp, else ~/.cache/expc/lsp).
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// Accepted for clients that pass it; standard input and output are the only transport.
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Internal: the child process of one anomaly instance (config on stdin).
    #[command(name = "__anomaly-kernel", hide = true)]
    AnomalyKernel,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum MessageFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Yaml,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            errln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Largest plan file read (`expc run plan.json`, a run directory's
/// `plan.json`, a stored snapshot). A compiled plan holds each block at most
/// 10,000 times (about 20 MB a block).
pub(crate) const PLAN_CAP: exp_files::Cap = exp_files::Cap::new(256 << 20, "a plan file");

pub(crate) fn style() -> RenderStyle {
    if std::io::stderr().is_terminal() {
        RenderStyle::Color
    } else {
        RenderStyle::Plain
    }
}

/// Compiles the experiment of `file` and prints its diagnostics.
pub(crate) fn compile_spec(file: &std::path::Path, seed: Option<u64>) -> exp_check::Compilation {
    let options = Options {
        seed,
        require_experiment: true,
    };
    let compilation = compile(&file.to_string_lossy(), &FsLoader, &options);
    err!(
        "{}",
        render_all(&compilation.diagnostics, &compilation.sources, style())
    );
    compilation
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Check { files, message_format } => {
            let mut failed = false;
            for file in files {
                let compilation = compile(&file.to_string_lossy(), &FsLoader, &Options::default());
                failed |= compilation.has_errors();
                if message_format == MessageFormat::Json {
                    for diagnostic in &compilation.diagnostics {
                        outln!("{}", message_json::diagnostic_json(diagnostic, &compilation.sources));
                    }
                    continue;
                }
                err!(
                    "{}",
                    render_all(&compilation.diagnostics, &compilation.sources, style())
                );
                if !compilation.has_errors() {
                    errln!("{}: ok", file.display());
                }
            }
            Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
        }
        Command::Plan {
            file,
            format,
            seed,
            output,
        } => {
            let Some(plan) = compile_spec(&file, seed).plan else {
                return Ok(ExitCode::FAILURE);
            };
            // JSON straight from the plan (the same bytes as through a
            // `serde_json::Value`, without building one); YAML walks a Value.
            let yaml_file = output.as_deref().is_some_and(yaml::is_yaml_path);
            let format = format.unwrap_or(if yaml_file { Format::Yaml } else { Format::Json });
            let text = match format {
                Format::Json => serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())? + "\n",
                Format::Yaml => yaml::to_yaml(&serde_json::to_value(&plan).map_err(|e| e.to_string())?),
            };
            match output {
                Some(path) => exp_files::write_file(&path, text.as_bytes()).map_err(|e| e.to_string())?,
                None => out!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Fmt { files, check } => fmt(files, check),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "expc", &mut script);
            out!("{}", String::from_utf8_lossy(&script));
            Ok(ExitCode::SUCCESS)
        }
        Command::Test(args) => test::run(args),
        Command::Run(args) => run::run(args),
        Command::Report(args) => report::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Xml(args) => xml::run(args),
        Command::Traffic(args) => traffic::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Slurm(args) => slurm::run(args),
        Command::AnomalyKernel => Ok(exp_anomaly::child_main()),
        Command::Lsp { cache_dir, stdio: _ } => {
            let config = exp_lsp::Config {
                cache_dir: cache_dir.or_else(default_cache_dir),
                ..exp_lsp::Config::default()
            };
            exp_lsp::serve_stdio(&config).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Explain { code, list } => {
            // Write errors (a closed pipe, as in `| head`) end the output quietly.
            let mut out = std::io::stdout().lock();
            if list {
                for code in Code::ALL {
                    let _ = writeln!(out, "{}  {}", code.as_str(), code.title());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let text = code.unwrap_or_default();
            let code = Code::parse(&text)
                .ok_or_else(|| format!("no diagnostic code `{text}`; `expc explain --list` shows them all"))?;
            let _ = writeln!(out, "{}: {}\n\n{}", code.as_str(), code.title(), code.explanation());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `$XDG_CACHE_HOME/expc/lsp`, else `~/.cache/expc/lsp`.
fn default_cache_dir() -> Option<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let cache = nonempty("XDG_CACHE_HOME").or_else(|| nonempty("HOME").map(|home| home.join(".cache")))?;
    Some(cache.join("expc").join("lsp"))
}

fn fmt(files: Vec<PathBuf>, check: bool) -> Result<ExitCode, String> {
    if files.iter().any(|f| f.as_os_str() == "-") {
        if files.len() > 1 {
            return Err("`-` (standard input) is formatted alone, not with files".into());
        }
        return fmt_stdin(check);
    }
    let mut unformatted = false;
    let mut failed = false;
    for path in files {
        let text = exp_check::read_source(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut sources = exp_diagnostics::SourceMap::new();
        let file = sources.add(path.to_string_lossy(), text.clone());
        let (module, diagnostics) = exp_syntax::parse(file, &text);
        if !diagnostics.is_empty() {
            // Never rewrite a file that does not parse: the formatter would drop
            // what it could not read.
            err!("{}", render_all(&diagnostics, &sources, style()));
            failed = true;
            continue;
        }
        let formatted = exp_syntax::format(&module, &text);
        if formatted == text {
            continue;
        }
        if check {
            errln!(
                "{}: not formatted; `-` is the file, `+` what `expc fmt` writes:\n{}",
                path.display(),
                line_diff::line_diff(&text, &formatted)
            );
            unformatted = true;
        } else {
            // The output rule: a link is followed, the file replaced whole, its mode kept.
            exp_files::write_file(&path, formatted.as_bytes()).map_err(|e| e.to_string())?;
            errln!("{}: formatted", path.display());
        }
    }
    Ok(if failed || unformatted {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `expc fmt -`: standard input formatted to standard output; nothing on
/// standard output when it does not parse (an editor keeps its text).
fn fmt_stdin(check: bool) -> Result<ExitCode, String> {
    use std::io::Read;
    let limit = exp_diagnostics::limits::MAX_SOURCE_BYTES;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "standard input holds more than the {} MiB a spec may have",
            limit >> 20
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| "standard input is not UTF-8".to_string())?;
    let mut sources = exp_diagnostics::SourceMap::new();
    let file = sources.add("<stdin>", text.clone());
    let (module, diagnostics) = exp_syntax::parse(file, &text);
    if !diagnostics.is_empty() {
        err!("{}", render_all(&diagnostics, &sources, style()));
        return Ok(ExitCode::FAILURE);
    }
    let formatted = exp_syntax::format(&module, &text);
    if !check {
        out!("{formatted}");
        return Ok(ExitCode::SUCCESS);
    }
    if formatted == text {
        return Ok(ExitCode::SUCCESS);
    }
    errln!(
        "<stdin>: not formatted; `-` is the input, `+` what `expc fmt` writes:\n{}",
        line_diff::line_diff(&text, &formatted)
    );
    Ok(ExitCode::FAILURE)
}
