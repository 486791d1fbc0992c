//! `expc xml compare` and `expc xml reveal`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use exp_xml::compare::{compare, CompareConfig, ProbeQuery};
use exp_xml::obfuscate::{read_map, reveal_path};
use exp_xml::{AttributePolicy, Config, SplitSuspicion};

#[derive(clap::Args)]
pub struct Args {
    /// The original corpus (files, directories, globs, .gz, .zip).
    original: String,
    /// The synthetic corpus.
    synthetic: String,
    /// The document element itself (`event` in `<log><event>…`, not `log`), on both sides.
    #[arg(long)]
    split_at: Option<String>,
    /// `auto` attribute policy threshold, as in `expc xml extract`.
    #[arg(long, default_value_t = 16)]
    max_distinct: usize,
    /// Paths with at most this many distinct values are categorical, unless
    /// they are count data a discrete family fits better.
    #[arg(long, default_value_t = exp_xml::DEFAULT_CATEGORICAL_THRESHOLD)]
    categorical_threshold: usize,
    /// Probe query run on both corpora: `TAG@ATTRIBUTE` or `TAG@ATTRIBUTE=VALUE`.
    #[arg(long, value_parser = parse_probe)]
    probe: Option<ProbeQuery>,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let original = exp_xml::expand_inputs(std::slice::from_ref(&args.original)).map_err(|e| e.to_string())?;
    let synthetic = exp_xml::expand_inputs(std::slice::from_ref(&args.synthetic)).map_err(|e| e.to_string())?;
    let config = CompareConfig {
        extraction: Config {
            split_at: args.split_at,
            policy: AttributePolicy::Auto {
                max_distinct: args.max_distinct,
            },
            categorical_threshold: args.categorical_threshold,
            ..Config::default()
        },
        probe: args.probe,
        ..CompareConfig::default()
    };
    let split_at = config.extraction.split_at.clone();
    let comparison = compare(&original, &synthetic, &config).map_err(|e| e.to_string())?;
    let documents = comparison.counts.original.documents;
    let bytes = super::extract::input_bytes(&original);
    if let Some(suspicion) = SplitSuspicion::check(split_at.as_deref(), original.len(), documents, bytes) {
        errln!("warning: the original corpus: {suspicion}");
    }
    let text = if args.json {
        serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())? + "\n"
    } else {
        comparison.to_string()
    };
    // A closed pipe (`| head`) ends the output quietly.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn parse_probe(text: &str) -> Result<ProbeQuery, String> {
    let (tag, rest) = text
        .split_once('@')
        .ok_or("expected TAG@ATTRIBUTE or TAG@ATTRIBUTE=VALUE")?;
    let (attribute, value) = match rest.split_once('=') {
        Some((a, v)) => (a, Some(v.to_string())),
        None => (rest, None),
    };
    if tag.is_empty() || attribute.is_empty() {
        return Err("the tag and the attribute must not be empty".into());
    }
    Ok(ProbeQuery {
        tag: tag.to_string(),
        attribute: attribute.to_string(),
        value,
    })
}

#[derive(clap::Args)]
pub struct RevealArgs {
    /// An obfuscated document file or a directory of them (.gz too).
    input: PathBuf,
    /// The private directory (or `map.json`) written by `expc xml extract --obfuscate --map`.
    #[arg(long)]
    map: PathBuf,
    /// Where to write the revealed file or directory.
    #[arg(short, long)]
    output: PathBuf,
}

pub fn reveal(args: RevealArgs) -> Result<ExitCode, String> {
    let map = read_map(&args.map).map_err(|e| e.to_string())?;
    let files = reveal_path(&map, &args.input, &args.output).map_err(|e| e.to_string())?;
    errln!("revealed {files} files into {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}
