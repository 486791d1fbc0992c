//! Open documents: the editor's text wins over the file on disk, for the
//! compiler (an overlay `Loader`) and for every feature that reads an import.
//!
//! Both are held to the CLI's rules: a file on disk is read by the bounded
//! reader (`exp_check::read_source`: a regular file of at most 16 MiB,
//! never a blocking open, so an imported FIFO cannot stall the worker), and
//! an editor's text over 16 MiB is refused as a file that large would be
//! (E0204 at the top of the document; no other feature analyses it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use exp_check::Loader;
use lsp_types::Uri;

use crate::library::{self, ImportTarget, Library};

#[derive(Debug, Clone)]
pub struct Document {
    pub uri: Uri,
    /// The file, for `file:` URIs (normalised as the compiler's loader does).
    pub path: Option<PathBuf>,
    pub version: i32,
    pub text: Arc<str>,
}

impl Document {
    /// Larger than the compiler reads a file: only its one diagnostic.
    pub fn too_large(&self) -> bool {
        within_cap(&self.text).is_err()
    }
}

#[derive(Default)]
pub struct Documents {
    open: HashMap<Uri, Document>,
}

impl Documents {
    pub fn open(&mut self, uri: Uri, version: i32, text: String) {
        let path = crate::uri::to_path(&uri).map(|p| library::normalize(&p));
        self.open.insert(
            uri.clone(),
            Document {
                uri,
                path,
                version,
                text: text.into(),
            },
        );
    }

    pub fn update(&mut self, uri: &Uri, version: i32, text: String) {
        if let Some(document) = self.open.get_mut(uri) {
            document.version = version;
            document.text = text.into();
        }
    }

    pub fn close(&mut self, uri: &Uri) -> Option<Document> {
        self.open.remove(uri)
    }

    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.open.get(uri)
    }

    pub fn all(&self) -> impl Iterator<Item = &Document> {
        self.open.values()
    }

    /// The texts the compiler should read instead of the disk.
    pub fn overlay(&self) -> Overlay {
        Overlay::of(self.open.values())
    }

    /// A copy of every open document (their texts are shared, not copied).
    pub fn snapshot(&self) -> Vec<Document> {
        self.open.values().cloned().collect()
    }
}

/// Open documents by path, then the file system.
#[derive(Clone, Default)]
pub struct Overlay {
    files: HashMap<PathBuf, Arc<str>>,
}

impl Overlay {
    pub fn of<'a>(documents: impl IntoIterator<Item = &'a Document>) -> Overlay {
        Overlay {
            files: documents
                .into_iter()
                .filter_map(|d| Some((d.path.clone()?, d.text.clone())))
                .collect(),
        }
    }

    pub fn insert(&mut self, path: PathBuf, text: Arc<str>) {
        self.files.insert(path, text);
    }

    pub fn text(&self, path: &Path) -> Option<String> {
        self.read(path).ok()
    }

    /// The file and text an import of `importer` names (a stdlib module's file
    /// is its copy in the library, when there is one).
    pub fn import(&self, library: &Library, importer: &Path, target: &str) -> Option<(Option<PathBuf>, String)> {
        match library::resolve_import(importer, target)? {
            ImportTarget::Std { module, text } => Some((library.stdlib_path(module), text.to_string())),
            ImportTarget::File(path) => {
                let text = self.text(&path)?;
                Some((Some(path), text))
            }
        }
    }
}

impl Loader for Overlay {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        match self.files.get(path) {
            Some(text) => within_cap(text).map(|()| text.to_string()),
            None => exp_check::read_source(path),
        }
    }
}

/// An editor's text is held to the cap of a file on disk, with its message.
fn within_cap(text: &str) -> std::io::Result<()> {
    let cap = exp_check::SOURCE_CAP;
    match text.len() as u64 {
        size if size > cap.bytes => Err(exp_files::ReadError::TooLarge { size: Some(size), cap }.into()),
        _ => Ok(()),
    }
}
