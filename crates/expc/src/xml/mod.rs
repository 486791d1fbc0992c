//! `expc xml`: extract a synthesis set from a corpus, generate documents
//! from it, compare two corpora, and reveal obfuscated output.

mod compare;
mod extract;
mod generate;

use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: XmlCommand,
}

#[derive(clap::Subcommand)]
enum XmlCommand {
    /// Extract structure, categorical values and fitted numeric distributions into a set directory.
    #[command(
        after_help = "Examples:\n  expc xml extract corpus/ -o set/\n  expc xml extract 'logs/*.xml.gz' --split-at event -o set/ --obfuscate --map private/"
    )]
    Extract(extract::Args),
    /// Generate documents from a set directory (deterministic per seed and document index).
    #[command(
        after_help = "Examples:\n  expc xml generate set/ --documents 10000 -o out/\n  expc xml generate set/ --size 10GiB --per-file 1000 --gzip -o out/\n  expc xml generate set/ --documents 1000000 --shard 2/4 -o out/"
    )]
    Generate(generate::Args),
    /// Compare a synthetic corpus with the original: structure, paths, values, sizes, duplicates.
    #[command(
        after_help = "Examples:\n  expc xml compare corpus/ out/\n  expc xml compare corpus/ out/ --split-at event --probe 'sensor@type=temp' --json"
    )]
    Compare(compare::Args),
    /// Map obfuscated documents back to the original strings with the private map.
    #[command(after_help = "Examples:\n  expc xml reveal out/ --map private/ -o revealed/")]
    Reveal(compare::RevealArgs),
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    match args.command {
        XmlCommand::Extract(args) => extract::run(args),
        XmlCommand::Generate(args) => generate::run(args),
        XmlCommand::Compare(args) => compare::run(args),
        XmlCommand::Reveal(args) => compare::reveal(args),
    }
}

/// CPU seconds (user + system, all threads) this process has used.
fn cpu_seconds() -> f64 {
    exp_host::process_cpu_ns().map_or(0.0, |ns| ns as f64 / 1e9)
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// `12.3 MB/s` (with `per` = "/s"), or words when the time rounds to zero:
/// never "NaN MB per CPU-second".
fn rate(bytes: u64, seconds: f64, decimals: usize, per: &str) -> String {
    if seconds > 0.0 {
        format!("{:.*} MB{per}", decimals, megabytes(bytes) / seconds)
    } else {
        format!("MB{per}: time too short to measure")
    }
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}
