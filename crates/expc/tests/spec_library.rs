//! The repository's own spec library and examples, tested the way users
//! test theirs: `expc test specs examples --deny-warnings` from the
//! repository root. Every spec checks without a diagnostic, is formatted,
//! and plans to its snapshot in `__snapshots__/` beside it.
//!
//! A plan that changed on purpose: review the diff this test prints, then
//! `cargo run -p expc -- test specs examples --accept` and commit the
//! snapshots with the change.

mod common;

use std::path::Path;

use common::{expc, text};

#[test]
fn the_spec_library_and_the_examples_pass_expc_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = expc()
        .current_dir(&root)
        .args(["test", "specs", "examples", "--deny-warnings"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let out = String::from_utf8_lossy(&output.stdout);
    // Files are discovered, never listed: the library is all there.
    let specs = out.lines().filter(|l| l.starts_with("test ")).count();
    assert!(specs >= 17, "{specs} specs tested:\n{out}");
}
