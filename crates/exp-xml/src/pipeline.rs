//! Corpus → set directory: the one pipeline behind `expc xml extract` and
//! the runtime's `xml` workload.
//!
//! [`extract_set`] extracts the corpus, fits every numeric path, optionally
//! obfuscates the set (writing the private map first, so a map refused for
//! lying inside the set leaves nothing written) and writes the set
//! directory. Each phase is timed ([`SetTimings`]); a failure says in which
//! phase it came ([`SetError`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::obfuscate::{self, ObfuscationMap};
use crate::set::{write_set, SetOptions, SynthesisSet};
use crate::{extract, Config, Source, XmlError};

/// Where and how [`extract_set`] writes a set.
#[derive(Debug, Clone, Copy)]
pub struct SetJob<'a> {
    /// The set directory to write.
    pub set_dir: &'a Path,
    /// Replace every string of the set (see [`obfuscate`]).
    pub obfuscation: Option<Obfuscation<'a>>,
    /// Fail with [`XmlError::NoDocument`] before anything is written when
    /// the corpus has no well-formed document; otherwise such a corpus
    /// makes an empty set.
    pub refuse_empty: bool,
    /// CPU time the process has used so far, to time the phases in CPU
    /// time too; `None` times them by the wall clock only.
    pub cpu_clock: Option<fn() -> Duration>,
}

impl<'a> SetJob<'a> {
    /// Writes `set_dir`, not obfuscated, accepting an empty corpus, timed by
    /// the wall clock only.
    pub fn new(set_dir: &'a Path) -> Self {
        Self {
            set_dir,
            obfuscation: None,
            refuse_empty: false,
            cpu_clock: None,
        }
    }
}

/// How to obfuscate a set.
#[derive(Debug, Clone, Copy)]
pub struct Obfuscation<'a> {
    pub seed: u64,
    /// The private directory for the map; never the set directory or inside
    /// it.
    pub map_dir: &'a Path,
}

/// What [`extract_set`] made.
#[derive(Debug, Clone)]
pub struct MadeSet {
    /// The set as written (obfuscated when asked).
    pub set: SynthesisSet,
    /// With [`SetJob::obfuscation`]: the map and the file it was written to.
    pub map: Option<WrittenMap>,
    pub timings: SetTimings,
}

/// An obfuscation map and where it was written.
#[derive(Debug, Clone)]
pub struct WrittenMap {
    pub map: ObfuscationMap,
    pub path: PathBuf,
}

/// The time one phase took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTime {
    pub wall: Duration,
    /// CPU time of the whole process (all threads) during the phase, with
    /// [`SetJob::cpu_clock`].
    pub cpu: Option<Duration>,
}

/// The time each phase of [`extract_set`] took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SetTimings {
    /// Reading the corpus.
    pub extract: PhaseTime,
    /// Fitting the numeric paths.
    pub fit: PhaseTime,
    /// Obfuscating the set and writing the map (zero without obfuscation).
    pub obfuscate: PhaseTime,
    /// Writing the set directory.
    pub write: PhaseTime,
}

impl SetTimings {
    /// Wall time of all the phases.
    pub fn wall(&self) -> Duration {
        self.extract.wall + self.fit.wall + self.obfuscate.wall + self.write.wall
    }
}

/// A phase of [`extract_set`] that can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetPhase {
    Extract,
    Obfuscate,
    WriteMap,
    WriteSet,
}

/// Why [`extract_set`] failed, and in which phase. Displays as the
/// underlying error.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct SetError {
    pub phase: SetPhase,
    pub error: XmlError,
    /// The private map, when it was written before the failure (writing the
    /// set failed): it holds the original strings.
    pub map_path: Option<PathBuf>,
}

impl SetError {
    fn new(phase: SetPhase) -> impl FnOnce(XmlError) -> SetError {
        move |error| SetError {
            phase,
            error,
            map_path: None,
        }
    }
}

/// Extracts `sources` with `config`, fits the set on `config.threads`
/// threads, obfuscates it if asked and writes it to `job.set_dir`. The set
/// is [`SynthesisSet::from_extraction`] of [`extract`], with the default
/// [`SetOptions`] but for the threads and the split root.
pub fn extract_set(sources: &[Source], config: &Config, job: &SetJob<'_>) -> Result<MadeSet, SetError> {
    let mut timings = SetTimings::default();
    let extraction =
        timed(job, &mut timings.extract, || extract(sources, config)).map_err(SetError::new(SetPhase::Extract))?;
    if job.refuse_empty && extraction.summary.documents == 0 {
        let skipped = extraction.summary.skipped;
        return Err(SetError::new(SetPhase::Extract)(XmlError::NoDocument { skipped }));
    }
    let options = SetOptions {
        threads: config.threads,
        split_root: extraction.summary.split_root.clone(),
        ..SetOptions::default()
    };
    let mut set = timed(job, &mut timings.fit, || {
        SynthesisSet::from_extraction(extraction, config, &options)
    });
    let mut map = None;
    if let Some(obfuscation) = job.obfuscation {
        let (hidden, written) = timed(job, &mut timings.obfuscate, || {
            obfuscate_set(&set, obfuscation, job.set_dir)
        })?;
        set = hidden;
        map = Some(written);
    }
    timed(job, &mut timings.write, || write_set(&set, job.set_dir)).map_err(|error| SetError {
        phase: SetPhase::WriteSet,
        error,
        map_path: map.as_ref().map(|m| m.path.clone()),
    })?;
    Ok(MadeSet { set, map, timings })
}

/// The obfuscated set and its map, written to the private directory.
fn obfuscate_set(
    set: &SynthesisSet,
    obfuscation: Obfuscation<'_>,
    set_dir: &Path,
) -> Result<(SynthesisSet, WrittenMap), SetError> {
    let (hidden, map) = obfuscate::obfuscate(set, obfuscation.seed).map_err(SetError::new(SetPhase::Obfuscate))?;
    let path = obfuscate::write_map(&map, obfuscation.map_dir, set_dir).map_err(SetError::new(SetPhase::WriteMap))?;
    Ok((hidden, WrittenMap { map, path }))
}

/// Runs `f`, recording its wall (and, with a clock, CPU) time in `time`.
fn timed<T>(job: &SetJob<'_>, time: &mut PhaseTime, f: impl FnOnce() -> T) -> T {
    let (wall, cpu) = (Instant::now(), job.cpu_clock.map(|clock| clock()));
    let result = f();
    time.wall = wall.elapsed();
    time.cpu = job
        .cpu_clock
        .zip(cpu)
        .map(|(clock, start)| clock().saturating_sub(start));
    result
}
