//! `expc xml extract`: corpus → set directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use exp_xml::pipeline::{MadeSet, Obfuscation, SetJob};
use exp_xml::{AttributePolicy, Config, Source, SplitSuspicion, XmlError};

use super::{cpu_seconds, megabytes, rate};

#[derive(clap::Args)]
pub struct Args {
    /// Files, directories, globs, `.gz` and `.zip` archives.
    #[arg(required = true)]
    corpus: Vec<String>,
    /// The set directory to write.
    #[arg(short, long)]
    output: PathBuf,
    /// The document element itself, the root's repeated child (`event` in `<log><event>…`, not `log`); default: each file is a document.
    #[arg(long)]
    split_at: Option<String>,
    /// Attribute values in paths: keep all, names only, or auto (kept when at most --max-distinct values).
    #[arg(long, value_enum, default_value_t = Policy::Auto)]
    attributes: Policy,
    /// `auto`: most distinct values an attribute may have to stay in paths.
    #[arg(long, default_value_t = 16)]
    max_distinct: usize,
    /// Paths with at most this many distinct values are categorical, unless
    /// they are count data a discrete family fits better.
    #[arg(long, default_value_t = exp_xml::DEFAULT_CATEGORICAL_THRESHOLD)]
    categorical_threshold: usize,
    /// Replace every string of the set by a seeded random string of the same length.
    #[arg(long, requires = "map")]
    obfuscate: bool,
    /// Private directory for the obfuscation map (never inside the set).
    #[arg(long)]
    map: Option<PathBuf>,
    /// Seed of the obfuscation.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads for reading and fitting; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Also report how many skeletons and paths each attribute policy yields.
    #[arg(long)]
    policies: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Policy {
    Keep,
    Names,
    Auto,
}

impl Policy {
    fn resolve(self, max_distinct: usize) -> AttributePolicy {
        match self {
            Policy::Keep => AttributePolicy::Keep,
            Policy::Names => AttributePolicy::Names,
            Policy::Auto => AttributePolicy::Auto { max_distinct },
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    // Before any work: an output in the way is refused, never replaced.
    exp_files::check_dir(&args.output).map_err(|e| e.to_string())?;
    if let Some(map) = &args.map {
        exp_files::check_dir(map).map_err(|e| e.to_string())?;
    }
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        args.threads
    };
    let sources = exp_xml::expand_inputs(&args.corpus).map_err(|e| e.to_string())?;
    let corpus_bytes = input_bytes(&sources);
    let config = Config {
        split_at: args.split_at.clone(),
        policy: args.attributes.resolve(args.max_distinct),
        categorical_threshold: args.categorical_threshold,
        threads,
    };
    let obfuscation = match (args.obfuscate, &args.map) {
        (false, _) => None,
        (true, Some(map_dir)) => Some(Obfuscation {
            seed: args.seed,
            map_dir,
        }),
        (true, None) => return Err("--obfuscate needs --map PRIVATE_DIR".into()),
    };
    let job = SetJob {
        obfuscation,
        // Nothing is written for a corpus without a document.
        refuse_empty: true,
        cpu_clock: Some(|| Duration::from_secs_f64(cpu_seconds())),
        ..SetJob::new(&args.output)
    };
    let made = exp_xml::extract_set(&sources, &config, &job).map_err(|e| {
        print_map_path(e.map_path.as_deref());
        match &e.error {
            XmlError::NoDocument { skipped } => no_document(&sources, skipped),
            _ => e.to_string(),
        }
    })?;
    print_map_path(made.map.as_ref().map(|m| m.path.as_path()));
    print_summary(&args.output, &made, corpus_bytes);
    let documents = made.set.info.corpus.documents;
    if let Some(suspicion) = SplitSuspicion::check(args.split_at.as_deref(), sources.len(), documents, corpus_bytes) {
        errln!("warning: {suspicion}");
    }
    if args.policies {
        print_policy_counts(&sources, &config, args.max_distinct)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The set's figures and the extraction's throughput.
fn print_summary(output: &Path, made: &MadeSet, corpus_bytes: u64) {
    let set = &made.set;
    let c = &set.info.corpus;
    outln!("set: {}", output.display());
    outln!(
        "corpus: {} documents, {} skipped, {:.1} MB read",
        c.documents,
        set.info.skipped.len(),
        megabytes(corpus_bytes)
    );
    outln!(
        "structures {}  paths {} ({} categorical, {} numeric)  tags {}  attributes {}",
        set.structures.len(),
        set.paths.len(),
        set.paths.len() - set.numeric.len(),
        set.numeric.len(),
        c.unique_tags,
        c.unique_attributes
    );
    for family in &set.info.fitting.families {
        outln!(
            "  {:<18} {:>5} paths ({:.0} %)",
            family.family.name(),
            family.paths,
            family.share * 100.0
        );
    }
    for s in set.info.skipped.iter().take(5) {
        let detail = s.detail.as_deref().unwrap_or_default();
        errln!("skipped: {} at byte {}: {:?} {detail}", s.input, s.position, s.kind);
    }
    // End to end, fitting included: what the user waited for.
    let t = &made.timings;
    let phases = [
        ("extract", t.extract),
        ("fit", t.fit),
        ("obfuscate", t.obfuscate),
        ("write", t.write),
    ];
    let wall = t.wall().as_secs_f64();
    let cpu: f64 = phases
        .iter()
        .map(|(_, p)| p.cpu.unwrap_or_default().as_secs_f64())
        .sum();
    outln!(
        "end to end: {wall:.3} s wall, {cpu:.3} CPU-s: {}, {}",
        rate(corpus_bytes, wall, 1, "/s"),
        rate(corpus_bytes, cpu, 1, " per CPU-second")
    );
    let shown: Vec<String> = phases
        .iter()
        .filter(|(_, p)| !p.wall.is_zero())
        .map(|(name, p)| {
            let cpu = p.cpu.unwrap_or_default().as_secs_f64();
            format!("{name} {:.3} s ({cpu:.3} CPU-s)", p.wall.as_secs_f64())
        })
        .collect();
    outln!("  phases: {}", shown.join(", "));
}

/// How many skeletons and paths each attribute policy yields.
fn print_policy_counts(sources: &[Source], config: &Config, max_distinct: usize) -> Result<(), String> {
    let policies = [
        AttributePolicy::Keep,
        AttributePolicy::Names,
        AttributePolicy::Auto { max_distinct },
    ];
    for count in exp_xml::policy_counts(sources, config, &policies).map_err(|e| e.to_string())? {
        let policy = count.policy.to_string();
        outln!(
            "policy {policy:<26} {:>8} skeletons {:>8} paths",
            count.structures,
            count.paths
        );
    }
    Ok(())
}

/// Where the private obfuscation map went, if one was written.
fn print_map_path(path: Option<&Path>) {
    if let Some(path) = path {
        errln!("obfuscation map: {} (private: keep it out of the set)", path.display());
    }
}

/// Bytes of the inputs as stored (compressed files count compressed).
pub(super) fn input_bytes(sources: &[Source]) -> u64 {
    sources
        .iter()
        .map(|source| match source {
            Source::File(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
            Source::Memory { data, .. } => data.len() as u64,
        })
        .sum()
}

/// Why a corpus gave nothing: each input skipped, where and why (the first
/// five), or that the inputs hold no document at all.
fn no_document(sources: &[Source], skipped: &[exp_xml::Skipped]) -> String {
    let mut message = format!(
        "no well-formed document in the corpus ({} skipped); nothing to extract",
        skipped.len()
    );
    for s in skipped.iter().take(5) {
        message.push_str(&format!("\n  {} at byte {}: {}", s.input, s.position, s.reason));
    }
    if skipped.len() > 5 {
        message.push_str(&format!("\n  … and {} more", skipped.len() - 5));
    }
    if skipped.is_empty() {
        for source in sources.iter().take(5) {
            let name = match source {
                Source::File(path) => path.display().to_string(),
                Source::Memory { name, .. } => name.clone(),
            };
            message.push_str(&format!("\n  {name}: no document (empty, or no element)"));
        }
    }
    message
}
