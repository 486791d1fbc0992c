//! Compiling a spec held in memory, shared by the integration tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use exp_check::{compile, Compilation, Loader, Options};
use exp_plan::Plan;

/// Serves files from memory.
pub struct Memory(pub HashMap<PathBuf, String>);

impl Loader for Memory {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not in memory"))
    }
}

/// `text` compiled as the root file `x.exp`.
pub fn compile_text(text: &str) -> Compilation {
    let loader = Memory(HashMap::from([(PathBuf::from("x.exp"), text.to_string())]));
    compile("x.exp", &loader, &Options::default())
}

/// The plan of `text`, which must compile without a diagnostic.
pub fn plan_of(text: &str) -> Plan {
    let compilation = compile_text(text);
    let codes: Vec<_> = compilation.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.is_empty(), "{codes:?}");
    compilation.plan.unwrap()
}
