//! Revealing streams, files and directory trees; `.gz` files (the
//! generator's gzip output, possibly multi-member) are decompressed and the
//! revealed file is gzip-compressed again under the same name.
//!
//! Nothing is lost whatever happens: the output may not be, hold or lie in
//! the input; everything is written under a temporary name beside the
//! output and renamed into place only when all of it is revealed, so a
//! failed reveal leaves no partial file or directory (a file output follows
//! the output rule of `exp_files::write`: a device or FIFO is written
//! through); and a file none of whose names is in the map is an error (the
//! map is of another extraction), not a silent copy.

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::reveal::Revealer;
use super::ObfuscationMap;
use crate::XmlError;

/// Reveals everything `input` yields into `output`, chunk by chunk.
pub fn reveal<R: Read, W: Write>(map: &ObfuscationMap, input: R, output: W) -> Result<(), XmlError> {
    Revealer::new(map).reveal_stream(input, output, "<stream>").map(drop)
}

/// Reveals a file into the file `output` (written by the output rule: a
/// link followed, a device or FIFO written through, a file replaced whole),
/// or every file under a directory `input` (recursively, in name order)
/// into the same relative paths under the directory `output`, which must
/// not exist yet or be empty. Returns the number of files written.
pub fn reveal_path(map: &ObfuscationMap, input: &Path, output: &Path) -> Result<u64, XmlError> {
    refuse_overlap(input, output)?;
    let revealer = Revealer::new(map);
    if !input.is_dir() {
        let mut target = exp_files::create(output)?;
        reveal_file(&revealer, input, output, &mut target)?;
        target.commit()?;
        return Ok(1);
    }
    exp_files::check_dir(output)?;
    if fs::read_dir(output).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(XmlError::Config(format!(
            "the output directory `{}` is not empty",
            output.display()
        )));
    }
    let temporary = temporary_beside(output)?;
    let result = reveal_tree(&revealer, input, &temporary).and_then(|files| {
        if output.is_dir() {
            // Empty (checked above): replaced by the revealed tree.
            fs::remove_dir(output).map_err(io("replace", output))?;
        }
        fs::rename(&temporary, output).map_err(io("rename into", output))?;
        Ok(files)
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&temporary);
        let _ = fs::remove_file(&temporary);
    }
    result
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> XmlError {
    let path = path.to_path_buf();
    move |source| XmlError::Io { action, path, source }
}

/// Refuses an output that is the input, lies inside an input directory or
/// holds the input (symbolic links and `..` resolved).
fn refuse_overlap(input: &Path, output: &Path) -> Result<(), XmlError> {
    let input_abs = fs::canonicalize(input).map_err(io("open", input))?;
    let output_abs = resolve(output)?;
    if input_abs.starts_with(&output_abs) || output_abs.starts_with(&input_abs) {
        return Err(XmlError::RevealOverInput {
            input: input.to_path_buf(),
            output: output.to_path_buf(),
        });
    }
    Ok(())
}

/// The absolute form of a path that may not exist yet: its nearest existing
/// ancestor canonicalized, the rest appended.
fn resolve(path: &Path) -> Result<PathBuf, XmlError> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(io("resolve", path))?.join(path)
    };
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(existing) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return Ok(out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return Ok(absolute),
        }
    }
}

/// A name beside `output` that nothing else uses.
fn temporary_beside(output: &Path) -> Result<PathBuf, XmlError> {
    let name = output
        .file_name()
        .ok_or_else(|| XmlError::Config(format!("the output `{}` has no file name", output.display())))?;
    let temporary = output.with_file_name(format!(
        ".{}.reveal-{}.partial",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&temporary);
    let _ = fs::remove_file(&temporary);
    Ok(temporary)
}

fn reveal_tree(revealer: &Revealer<'_>, input: &Path, output: &Path) -> Result<u64, XmlError> {
    if input.is_dir() {
        fs::create_dir_all(output).map_err(io("create directory", output))?;
        let mut entries = fs::read_dir(input)
            .map_err(io("read directory", input))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(io("read directory", input))?;
        entries.sort();
        let mut files = 0;
        for path in entries {
            let Some(name) = path.file_name() else { continue };
            files += reveal_tree(revealer, &path, &output.join(name))?;
        }
        return Ok(files);
    }
    let target = BufWriter::new(File::create(output).map_err(io("create", output))?);
    reveal_file(revealer, input, output, target)
}

/// Reveals the file `input` into `target` (the file `output`); a `.gz`
/// input is decompressed and its revealed text compressed again. The input
/// is opened by the bounded reader's rule (a regular file, never a
/// blocking open).
fn reveal_file(revealer: &Revealer<'_>, input: &Path, output: &Path, mut target: impl Write) -> Result<u64, XmlError> {
    let name = input.display().to_string();
    let source = exp_files::open_regular(input)
        .map_err(|e| io("open", input)(e.into()))?
        .file;
    if input.extension().is_some_and(|e| e == "gz") {
        let mut gz = GzEncoder::new(&mut target, Compression::default());
        revealer.reveal_stream(MultiGzDecoder::new(BufReader::new(source)), &mut gz, &name)?;
        gz.finish().map_err(io("write", output))?;
    } else {
        revealer.reveal_stream(source, &mut target, &name)?;
    }
    target.flush().map_err(io("write", output))?;
    match revealer.take_name_counts() {
        (names, 0) if names > 0 => Err(XmlError::MapMismatch { input: name, names }),
        _ => Ok(1),
    }
}
