//! `expc traffic`: connection-vector files — convert between formats and
//! structure models, and synthesize them from a spec's distributions.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use exp_plan::{Vectors, WorkloadConfig};
use exp_traffic::cvec::{self, Format, Structure};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TrafficCommand,
}

#[derive(clap::Subcommand)]
enum TrafficCommand {
    /// Convert a connection-vector file: format (original ↔ alternate) and structure model.
    #[command(
        after_help = "Examples:\n  expc traffic convert trace.cvec trace.alt --to alternate\n  expc traffic convert --structure ab trace.cvec trace-ab.cvec"
    )]
    Convert {
        input: PathBuf,
        /// Output file, or `-` for standard output.
        output: PathBuf,
        /// Structure model applied to every connection: atbt (unchanged), ab, blk_seq, blk_conc.
        #[arg(long, default_value = "atbt")]
        structure: String,
        /// Input format: original, alternate or auto.
        #[arg(long, default_value = "auto")]
        from: String,
        /// Output format: original, alternate or auto (the input's).
        #[arg(long, default_value = "auto")]
        to: String,
        /// Skip malformed connections (and count them) instead of failing.
        #[arg(long)]
        lenient: bool,
    },
    /// Write the connection vectors a spec's synthetic `traffic` workload would replay.
    #[command(after_help = "Examples:\n  expc traffic synth specs/traffic/structure-rtt.exp -o synthetic.cvec")]
    Synth {
        spec: PathBuf,
        /// The traffic workload's name (default: the only one with synthetic vectors).
        #[arg(long)]
        workload: Option<String>,
        /// Override the experiment's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Output format: original or alternate.
        #[arg(long, default_value = "original")]
        to: String,
        #[arg(short, long)]
        output: PathBuf,
    },
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    match args.command {
        TrafficCommand::Convert {
            input,
            output,
            structure,
            from,
            to,
            lenient,
        } => {
            let structure: Structure = structure.parse().map_err(|e| format!("--structure: {e}"))?;
            let from = format(&from)?;
            let to = format(&to)?;
            let text = cvec::read_text(&input).map_err(|e| format!("cannot read {e}"))?;
            let mut out = Vec::new();
            let parsed = cvec::convert(
                &text,
                &input.display().to_string(),
                from,
                structure,
                to,
                lenient,
                &mut out,
            )
            .map_err(|e| e.to_string())?;
            write_output(&output, &out)?;
            errln!(
                "{} connections converted ({}), {} skipped",
                parsed.connections.len(),
                structure.name(),
                parsed.skipped.len()
            );
            for skipped in parsed.skipped.iter().take(10) {
                errln!("  skipped connection at line {}: {}", skipped.line, skipped.reason);
            }
            Ok(ExitCode::SUCCESS)
        }
        TrafficCommand::Synth {
            spec,
            workload,
            seed,
            to,
            output,
        } => synth(&spec, workload.as_deref(), seed, &to, &output),
    }
}

fn synth(
    spec: &std::path::Path,
    name: Option<&str>,
    seed: Option<u64>,
    to: &str,
    output: &Path,
) -> Result<ExitCode, String> {
    let Some(plan) = crate::compile_spec(spec, seed).plan else {
        return Ok(ExitCode::FAILURE);
    };
    let candidates: Vec<_> = plan
        .workloads
        .iter()
        .flat_map(|w| &w.variants)
        .filter(|w| name.is_none_or(|n| w.name == n))
        .filter_map(|w| match &w.config {
            WorkloadConfig::Traffic(t) => match &t.vectors {
                Vectors::Synthetic(s) => Some((w.name.clone(), s.clone())),
                Vectors::Trace { .. } => None,
            },
            _ => None,
        })
        .collect();
    let Some((workload, vectors)) = candidates.first() else {
        return Err("the spec has no traffic workload with synthetic vectors (by that name)".into());
    };
    let seed = plan
        .trial(0)
        .and_then(|t| t.seeds.get(workload).copied())
        .unwrap_or(plan.experiment.seed);
    let connections = exp_traffic::synth::synthesize(vectors, seed).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    match format(to)? {
        Format::Alternate => cvec::write_alternate(&mut out, &connections),
        _ => cvec::write_original(&mut out, &connections),
    }
    .map_err(|e| e.to_string())?;
    write_output(output, &out)?;
    errln!("{} connections of `{workload}` (seed {seed})", connections.len());
    Ok(ExitCode::SUCCESS)
}

fn format(name: &str) -> Result<Format, String> {
    Format::from_name(name).ok_or_else(|| format!("unknown format `{name}` (original, alternate or auto)"))
}

fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if path.as_os_str() == "-" {
        // A closed pipe (`| head`) ends the output quietly.
        let _ = std::io::stdout().lock().write_all(bytes);
        return Ok(());
    }
    exp_files::write_file(path, bytes).map_err(|e| e.to_string())
}
