//! Revealing streams, files and directory trees; `.gz` files (the
//! generator's gzip output, possibly multi-member) are decompressed and the
//! revealed file is gzip-compressed again under the same name.

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

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

/// Reveals a file into the file `output`, or every file under a directory
/// `input` (recursively, in name order) into the same relative paths under
/// the directory `output`. Returns the number of files written.
pub fn reveal_path(map: &ObfuscationMap, input: &Path, output: &Path) -> Result<u64, XmlError> {
    reveal_tree(&Revealer::new(map), input, output)
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> XmlError {
    let path = path.to_path_buf();
    move |source| XmlError::Io { action, path, source }
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
    let name = input.display().to_string();
    let source = File::open(input).map_err(io("open", input))?;
    let target = BufWriter::new(File::create(output).map_err(io("create", output))?);
    if input.extension().is_some_and(|e| e == "gz") {
        let mut gz = GzEncoder::new(target, Compression::default());
        revealer.reveal_stream(MultiGzDecoder::new(BufReader::new(source)), &mut gz, &name)?;
        let mut target = gz.finish().map_err(io("write", output))?;
        target.flush().map_err(io("write", output))?;
    } else {
        revealer.reveal_stream(source, target, &name)?;
    }
    Ok(1)
}
