//! `expc xml generate`: set directory → documents, with throughput figures.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use exp_xml::generate::{
    generate_to_dir, generate_to_writer, Amount, GenerateOptions, Generator, Layout, Shard, GENERATOR_VERSION,
};
use exp_xml::set::read_set;

use super::{cpu_seconds, megabytes, rate, seconds};
use crate::size::parse_size;

#[derive(clap::Args)]
pub struct Args {
    /// A set directory written by `expc xml extract`.
    set: PathBuf,
    /// Number of documents to generate.
    #[arg(long, conflicts_with = "size", required_unless_present = "size")]
    documents: Option<u64>,
    /// Generate until this much uncompressed output (e.g. 10GiB, 500MB).
    #[arg(long, value_parser = parse_size)]
    size: Option<u64>,
    /// Output directory, or `-` for standard output (one stream).
    #[arg(short, long)]
    output: PathBuf,
    /// Documents per output file (1: a file per document), wrapped in the corpus's root element when it was split.
    #[arg(long, default_value_t = 1)]
    per_file: u64,
    /// Compress output files with gzip.
    #[arg(long)]
    gzip: bool,
    /// Generate part K of N (1-based, e.g. 2/4) of the documents; the parts together equal a single run.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<Shard>,
    /// Seed: document i depends only on (seed, i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Generator threads; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    if args.output.as_os_str() != "-" {
        // Before any work: an output in the way is refused, never replaced.
        exp_files::check_dir(&args.output).map_err(|e| e.to_string())?;
    }
    let set = read_set(&args.set).map_err(|e| e.to_string())?;
    let generator = Generator::new(&set, args.seed).map_err(|e| e.to_string())?;
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        args.threads
    };
    let amount = match (args.documents, args.size) {
        (Some(n), _) => Amount::Documents(n),
        (None, Some(bytes)) => Amount::Bytes(bytes),
        (None, None) => return Err("give --documents N or --size BYTES".into()),
    };
    let to_stdout = args.output.as_os_str() == "-";
    let layout = match (to_stdout, args.per_file) {
        (true, _) => Layout::Stream,
        (false, 0) => return Err("--per-file must be at least 1".into()),
        (false, 1) => Layout::FilePerDocument,
        (false, n) => Layout::DocumentsPerFile(n),
    };
    let options = GenerateOptions {
        amount,
        shard: args.shard.unwrap_or_default(),
        layout,
        gzip: args.gzip,
        threads,
    };
    let cpu = cpu_seconds();
    let stats = if to_stdout {
        let stdout = std::io::stdout().lock();
        let stats = generate_to_writer(&generator, &options, std::io::BufWriter::new(stdout));
        stats.map_err(|e| e.to_string())?
    } else {
        generate_to_dir(&generator, &options, &args.output).map_err(|e| e.to_string())?
    };
    let cpu = cpu_seconds() - cpu;
    let wall = seconds(stats.wall);
    // Figures go to stderr so they never mix with documents on stdout.
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "generated documents {}..{} ({}) in {} files: {:.1} MB ({:.1} MB written); generator version {GENERATOR_VERSION}",
        stats.first_document,
        stats.first_document + stats.documents,
        stats.documents,
        stats.files,
        megabytes(stats.bytes),
        megabytes(stats.written)
    );
    let _ = writeln!(
        err,
        "throughput: {:.2} s wall, {:.2} CPU-s, {threads} threads: {}, {}; peak RSS {}",
        wall,
        cpu,
        rate(stats.bytes, wall, 0, "/s"),
        rate(stats.bytes, cpu, 0, " per CPU-second"),
        exp_host::peak_rss_bytes().map_or_else(|| "unknown".to_string(), |b| format!("{:.1} MB", megabytes(b)))
    );
    Ok(ExitCode::SUCCESS)
}

/// `K/N`, 1-based on the command line, 0-based inside.
fn parse_shard(text: &str) -> Result<Shard, String> {
    let (k, n) = text.split_once('/').ok_or("expected K/N, e.g. 2/4")?;
    let k: u64 = k.trim().parse().map_err(|_| format!("bad shard number `{k}`"))?;
    let n: u64 = n.trim().parse().map_err(|_| format!("bad shard count `{n}`"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: K must be between 1 and N"));
    }
    Ok(Shard { index: k - 1, count: n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_shards() {
        assert_eq!(parse_size("10GiB"), Ok(10 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("0").is_err());
        assert_eq!(parse_shard("2/4"), Ok(Shard { index: 1, count: 4 }));
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("x").is_err());
    }
}
