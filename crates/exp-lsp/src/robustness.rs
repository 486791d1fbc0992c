//! Every feature at every position of every spec in the repository, whole
//! and cut off mid-way (as while typing): answers, never a panic.

use std::path::{Path, PathBuf};

use lsp_types::Uri;

use crate::completion::{complete, Options};
use crate::context::Context;
use crate::documents::{Documents, Overlay};
use crate::library::Library;
use crate::{hover, navigate, semantic, symbols};

fn spec_files() -> Vec<PathBuf> {
    let root = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut folders: Vec<PathBuf> = ["specs", "examples", "stdlib", "tests/ui"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "exp") {
                files.push(path.canonicalize().unwrap());
            }
        }
    }
    files.sort();
    files
}

fn every_feature(text: &str, path: &Path, offsets: impl Iterator<Item = usize>) -> usize {
    let overlay = Overlay::default();
    let library = Library::none();
    let documents = Documents::default();
    let uri: Uri = crate::uri::from_path(path).unwrap();
    let context = Context::new(text, Some(path), &overlay, &library);
    let mut answers = 0;
    for offset in offsets {
        answers += complete(&context, offset, &Options { snippets: true }).len();
        answers += usize::from(hover::hover(&context, offset, &[]).is_some());
        answers += usize::from(navigate::definition(&context, &uri, offset).is_some());
        answers += navigate::references(&context, &uri, offset, &documents).len();
    }
    answers += semantic::tokens(&context).len();
    answers += symbols::outline(text).len();
    answers += symbols::format(text).map_or(0, |edits| edits.len());
    answers
}

#[test]
fn every_position_of_every_spec_gets_an_answer() {
    let files = spec_files();
    assert!(files.len() > 60, "{}", files.len());
    let mut answers = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let offsets = (0..=text.len()).filter(|&o| text.is_char_boundary(o));
        answers += every_feature(&text, path, offsets);
        // Cut off at every line end: the file as it is being typed.
        for (end, _) in text.match_indices('\n') {
            answers += every_feature(&text[..end], path, std::iter::once(end));
        }
    }
    // Not a bound, a sign the features ran: most positions have an answer.
    assert!(answers > 10_000, "{answers}");
}
