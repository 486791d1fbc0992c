//! Loading a spec and everything it imports: stdlib modules embedded in the
//! binary and relative files, with cycle detection.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use exp_diagnostics::limits::MAX_SOURCE_BYTES;
use exp_diagnostics::{closest, Code, Diagnostic, FileId, SourceMap, Span};
use exp_syntax::ast::{self, Item};

/// Reads the files a spec names. The CLI reads the file system; tests can
/// serve files from memory.
pub trait Loader {
    fn read(&self, path: &Path) -> std::io::Result<String>;
}

/// Reads from the file system, with [`read_source`].
pub struct FsLoader;

impl Loader for FsLoader {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        read_source(path)
    }
}

/// Reads a file the compiler was given (a spec, an import, an `empirical`
/// values file) through the bounded reader: only a regular file of at most
/// [`MAX_SOURCE_BYTES`], opened without blocking, so `/dev/zero` is refused
/// instead of read for gigabytes and a FIFO instead of waited on. The error
/// says which limit and is shown under E0204/E0505.
pub fn read_source(path: &Path) -> std::io::Result<String> {
    Ok(exp_files::read_text(path, SOURCE_CAP)?)
}

/// The cap of [`read_source`], for texts that come from elsewhere (an
/// editor's buffer): the same limit and message.
pub const SOURCE_CAP: exp_files::Cap = exp_files::Cap::new(MAX_SOURCE_BYTES, "a file");

/// The stdlib, embedded: `import "std/NAME"`.
pub const STDLIB: &[(&str, &str)] = &[
    ("hpas", include_str!("../../../stdlib/hpas.exp")),
    ("iot", include_str!("../../../stdlib/iot.exp")),
    ("pareto", include_str!("../../../stdlib/pareto.exp")),
    ("rfc2544", include_str!("../../../stdlib/rfc2544.exp")),
    ("structures", include_str!("../../../stdlib/structures.exp")),
];

pub(crate) struct Module {
    pub file: FileId,
    /// Folder that relative paths in this module resolve against (`None` for
    /// the stdlib, whose paths resolve against the root spec's folder).
    pub dir: Option<PathBuf>,
    pub ast: ast::Module,
    /// Alias → module index, with the import's span.
    pub imports: BTreeMap<String, (usize, Span)>,
    /// Aliases of imports that failed (reported): their uses stay silent.
    pub failed_imports: Vec<String>,
}

pub(crate) struct Program {
    /// In dependency order: every module comes after the modules it imports.
    pub modules: Vec<Module>,
    pub root: usize,
}

pub(crate) struct ModuleLoader<'a> {
    pub loader: &'a dyn Loader,
    pub sources: &'a mut SourceMap,
    pub diagnostics: &'a mut Vec<Diagnostic>,
    modules: Vec<Module>,
    loaded: BTreeMap<String, usize>,
    /// Keys of the modules being loaded, for cycle detection.
    stack: Vec<String>,
}

impl<'a> ModuleLoader<'a> {
    pub fn new(loader: &'a dyn Loader, sources: &'a mut SourceMap, diagnostics: &'a mut Vec<Diagnostic>) -> Self {
        ModuleLoader {
            loader,
            sources,
            diagnostics,
            modules: Vec::new(),
            loaded: BTreeMap::new(),
            stack: Vec::new(),
        }
    }

    /// Loads the root spec. Returns `None` if it cannot be read at all.
    pub fn load_root(mut self, name: &str) -> Result<Program, std::io::Error> {
        let path = normalize(Path::new(name));
        let text = self.loader.read(&path)?;
        let root = self.load(
            path.to_string_lossy().into_owned(),
            name.to_string(),
            text,
            parent(&path),
        );
        Ok(Program {
            modules: self.modules,
            root,
        })
    }

    fn load(&mut self, key: String, name: String, text: String, dir: Option<PathBuf>) -> usize {
        let file = self.sources.add(name, text);
        let (ast, diagnostics) = exp_syntax::parse(file, &self.sources.get(file).text);
        self.diagnostics.extend(diagnostics);
        self.stack.push(key.clone());
        let mut imports = BTreeMap::new();
        let mut failed_imports = Vec::new();
        for item in &ast.items {
            if let Item::Import(import) = item {
                let Some((alias, index)) = self.import(import, dir.as_deref()) else {
                    failed_imports.push(default_alias(import));
                    continue;
                };
                {
                    if let Some((_, previous)) = imports.get(&alias) {
                        self.diagnostics.push(
                            Diagnostic::error(Code::E0202, format!("two imports are named `{alias}`"))
                                .primary(import.span, "second import with this name")
                                .secondary(*previous, "first imported here")
                                .help("give one of them another name with `as`"),
                        );
                    } else {
                        imports.insert(alias, (index, import.span));
                    }
                }
            }
        }
        self.stack.pop();
        self.modules.push(Module {
            file,
            dir,
            ast,
            imports,
            failed_imports,
        });
        let index = self.modules.len() - 1;
        self.loaded.insert(key, index);
        index
    }

    fn import(&mut self, import: &ast::Import, dir: Option<&Path>) -> Option<(String, usize)> {
        let target = import.path.value.as_str();
        let (key, name, stem) = if let Some(module) = target.strip_prefix("std/") {
            (format!("std/{module}"), format!("std/{module}.exp"), module.to_string())
        } else if target.starts_with("./") || target.starts_with("../") {
            let path = normalize(&dir.unwrap_or(Path::new("")).join(target));
            let stem = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let display = path.to_string_lossy().into_owned();
            (display.clone(), display, stem)
        } else {
            self.diagnostics.push(
                Diagnostic::error(Code::E0204, format!("cannot import `{target}`"))
                    .primary(import.path.span, "not a stdlib module or relative path")
                    .help("write `std/NAME` for the stdlib, or a path starting with `./` or `../`"),
            );
            return None;
        };
        let alias = import.alias.as_ref().map_or(stem, |a| a.name.clone());
        debug_assert_eq!(alias, default_alias(import));
        if let Some(position) = self.stack.iter().position(|k| *k == key) {
            let mut cycle: Vec<&str> = self.stack[position..].iter().map(String::as_str).collect();
            cycle.push(&key);
            self.diagnostics.push(
                Diagnostic::error(Code::E0203, format!("import cycle: {}", cycle.join(" → ")))
                    .primary(import.span, "this import closes the cycle")
                    .help("move what both files need into a third file that imports neither"),
            );
            return None;
        }
        if let Some(&index) = self.loaded.get(&key) {
            return Some((alias, index));
        }
        let text = if let Some(module) = target.strip_prefix("std/") {
            match STDLIB.iter().find(|(n, _)| *n == module) {
                Some((_, text)) => (*text).to_string(),
                None => {
                    let suggestion = closest(module, STDLIB.iter().map(|(n, _)| *n));
                    let known: Vec<&str> = STDLIB.iter().map(|(n, _)| *n).collect();
                    self.diagnostics.push(
                        Diagnostic::error(Code::E0204, format!("no stdlib module `{target}`"))
                            .primary(import.path.span, "not in the stdlib")
                            .with_help(suggestion.map(|s| format!("did you mean `std/{s}`?")))
                            .note(format!("stdlib modules: {}", known.join(", "))),
                    );
                    return None;
                }
            }
        } else {
            match self.loader.read(Path::new(&key)) {
                Ok(text) => text,
                Err(error) => {
                    self.diagnostics.push(
                        Diagnostic::error(Code::E0204, format!("cannot read `{key}`"))
                            .primary(import.path.span, error.to_string())
                            .note("relative imports resolve from the importing file's folder"),
                    );
                    return None;
                }
            }
        };
        let module_dir = if target.starts_with("std/") {
            None
        } else {
            parent(Path::new(&key))
        };
        let index = self.load(key, name, text, module_dir);
        Some((alias, index))
    }
}

/// The name an import binds: its `as` alias, else the file stem.
pub(crate) fn default_alias(import: &ast::Import) -> String {
    match &import.alias {
        Some(alias) => alias.name.clone(),
        None => stem_alias(&import.path.value),
    }
}

/// The name `import "target"` binds without `as`: the file stem.
pub fn stem_alias(target: &str) -> String {
    Path::new(target)
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

fn parent(path: &Path) -> Option<PathBuf> {
    Some(path.parent().map_or_else(PathBuf::new, Path::to_path_buf))
}

/// Lexical normalisation (`a/./b/../c` → `a/c`), so one file has one key
/// whether or not it exists and wherever expc runs.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("a/./b/../c.exp")), PathBuf::from("a/c.exp"));
        assert_eq!(normalize(Path::new("./x.exp")), PathBuf::from("x.exp"));
    }

    #[test]
    fn every_stdlib_file_is_embedded() {
        let dir = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../../stdlib");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "exp"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let embedded: Vec<String> = STDLIB.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(on_disk, embedded);
    }
}
