//! `repeat until` replaces an invalid repetition within its budget (half
//! the rule's maximum per point, at least one; docs/running.md, "repeat
//! until"), asserted from outside: the manifest, the attempts set aside on
//! disk, the trials table read back.

#![allow(clippy::unwrap_used)]

use crate::common::{expc, run_dir, text, trial_frames, Scratch};
use exp_results::manifest::{Manifest, TrialStatus};
use exp_results::validity::Verdict;

/// At a time scale of 1/10,000 the leak's activation lasts 100 µs, too
/// short to leak a block: every attempt is invalid (V0301), so the budget is
/// spent on the first repetition and the others run once each.
const SPEC: &str = r#"
experiment "replaced" {
  duration = 2s
  repeat   = until(ci = 95%, width = 10%, of = "bytes_touched", max = 4)
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 10/s
    limit = 64MiB
    at    = 1s
    for   = 1s
  }
}
"#;

#[test]
fn an_invalid_repetition_is_replaced_within_half_the_maximum() {
    let scratch = Scratch::new("until-replaced");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    let output = expc()
        .arg("run")
        .arg(&spec)
        .args(["--time-scale", "0.0001", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();
    let manifest = Manifest::read(&dir).unwrap();

    // Four repetitions stand, each invalid (nothing could replace them
    // with a valid one); trial 0 ran three times: two replacements, the budget.
    assert_eq!(manifest.trials.len(), 4);
    let attempts: Vec<usize> = manifest.trials.iter().map(|t| t.attempts.len()).collect();
    assert_eq!(attempts, [2, 0, 0, 0], "{}", text(&output));
    for trial in &manifest.trials {
        assert_eq!(trial.status, TrialStatus::Complete);
        assert_eq!(trial.validity.as_ref().unwrap().verdict, Verdict::Invalid);
    }
    for (k, attempt) in manifest.trials[0].attempts.iter().enumerate() {
        assert_eq!(attempt.status, TrialStatus::Complete);
        assert_eq!(attempt.validity.as_ref().unwrap().verdict, Verdict::Invalid);
        let error = attempt.error.as_deref().unwrap();
        assert!(error.contains("V0301") && error.contains("replaced"), "{error}");
        // The replaced attempt's rows are kept, set aside, not deleted.
        let files = attempt.files.as_deref().unwrap();
        assert_eq!(files, format!("attempts/trial=0/attempt-{}", k + 1));
        assert!(dir.join(files).join("tables/trials").is_dir(), "{files}");
    }
    // The trials table holds the standing attempt's row only.
    assert_eq!(
        trial_frames(&dir, "trials", 0)
            .iter()
            .map(|f| f.height())
            .sum::<usize>(),
        1
    );
    // The manifest counts the standing files, not the ones set aside.
    assert_eq!(manifest.tables["trials"].rows, 4);
    assert_eq!(manifest.tables["trials"].files, 4);
    let point = &manifest.points[0];
    assert_eq!(point.repetitions_run, 4);
    assert!(
        point.stop_reason.as_deref().unwrap().contains("maximum of 4"),
        "{point:?}"
    );

    // --include-invalid counts invalid trials: nothing is replaced.
    let again = scratch.0.join("runs-included");
    let output = expc()
        .arg("run")
        .arg(&spec)
        .args(["--time-scale", "0.0001", "--include-invalid", "--out"])
        .arg(&again)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let manifest = Manifest::read(&run_dir(&again).unwrap()).unwrap();
    assert!(manifest.trials.iter().all(|t| t.attempts.is_empty()));
}
