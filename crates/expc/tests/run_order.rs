//! The order trials run in (`order = …`), from outside: the dry run lists
//! the trials in that order, a run starts them in it (read back from the
//! manifest's start times), and a shard runs its share in it.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{expc, run_dir};
use exp_plan::Plan;
use exp_results::manifest::{Manifest, TrialStatus};

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-order-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn spec(&self, text: &str) -> PathBuf {
        let path = self.0.join("spec.exp");
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    expc()
        .arg("run")
        .arg(spec)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A sweep of `points` levels × `repetitions` of a short memleak, `order` written if given.
fn sweep_spec(points: u32, repetitions: u32, order: Option<&str>) -> String {
    let order = order.map(|o| format!("  order    = {o}\n")).unwrap_or_default();
    let levels: Vec<String> = (1..=points).map(|i| format!("{i}MiB")).collect();
    format!(
        r#"
experiment "order" {{
  duration = 300ms
  repeat   = {repetitions}
{order}  sweep {{ size = [{}] }}
  anomaly "leak" {{
    kind  = memleak
    size  = size
    rate  = 100/s
    limit = 8MiB
  }}
}}
"#,
        levels.join(", ")
    )
}

/// The trial numbers a dry run lists on its `order` line.
fn listed_order(output: &Output) -> (String, Vec<u32>) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("run order ("))
        .unwrap_or_else(|| panic!("no order line: {}", text(output)));
    let (how, trials) = line.trim().split_once("): ").unwrap();
    let numbers = trials
        .split(", ")
        .take_while(|t| !t.starts_with('…'))
        .map(|t| t.parse().unwrap())
        .collect();
    (how.to_string(), numbers)
}

/// The manifest's trials by the time they started: the order they ran in.
fn started_order(manifest: &Manifest) -> Vec<u32> {
    let mut ran: Vec<_> = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete)
        .map(|t| (t.started_at_unix_ns.unwrap(), t.trial))
        .collect();
    ran.sort_unstable();
    ran.into_iter().map(|(_, trial)| trial).collect()
}

#[test]
fn a_sweep_with_repetitions_runs_randomized_rounds_and_the_dry_run_lists_them() {
    let scratch = Scratch::new("dry");
    let spec = scratch.spec(&sweep_spec(6, 3, None));
    let out = scratch.0.join("runs");
    let dry = run(&spec, &out, &["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    let (how, order) = listed_order(&dry);
    assert_eq!(how, "run order (randomized interleaved, seed 1");
    assert_eq!(order.len(), 18);
    // Round r holds repetition r of every point, the points shuffled.
    for (round, trials) in order.chunks(6).enumerate() {
        let mut points: Vec<u32> = trials.iter().map(|t| t / 3).collect();
        assert!(trials.iter().all(|t| t % 3 == round as u32), "{order:?}");
        assert_ne!(
            points,
            (0..6).collect::<Vec<_>>(),
            "round {round} is shuffled: {order:?}"
        );
        points.sort_unstable();
        assert_eq!(points, (0..6).collect::<Vec<_>>());
    }
    // Seeded: the same order again, another with another seed.
    assert_eq!(listed_order(&run(&spec, &out, &["--dry-run"])).1, order);
    let reseeded = listed_order(&run(&spec, &out, &["--dry-run", "--seed", "2"]));
    assert_eq!(reseeded.0, "run order (randomized interleaved, seed 2");
    assert_ne!(reseeded.1, order);
    // A selection is listed in the same order.
    let some = listed_order(&run(&spec, &out, &["--dry-run", "--trials", "0-5"])).1;
    let expected: Vec<u32> = order.iter().copied().filter(|t| *t <= 5).collect();
    assert_eq!(some, expected);
    let sequential = scratch.spec(&sweep_spec(6, 3, Some("sequential")));
    let listed = listed_order(&run(&sequential, &out, &["--dry-run"]));
    assert_eq!(listed.0, "run order (sequential, point by point");
    assert_eq!(listed.1, (0..18).collect::<Vec<_>>());
    assert!(!out.exists(), "a dry run writes nothing");
}

#[test]
fn a_run_starts_its_trials_in_the_plans_order() {
    let scratch = Scratch::new("run");
    for (order, expected) in [
        ("interleaved", Some(vec![0, 2, 4, 1, 3, 5])),
        ("randomized", None),
        ("sequential", Some(vec![0, 1, 2, 3, 4, 5])),
    ] {
        let spec = scratch.spec(&sweep_spec(3, 2, Some(order)));
        let out = scratch.0.join(format!("runs-{order}"));
        let output = run(&spec, &out, &["--time-scale", "0.5"]);
        assert!(output.status.success(), "{}", text(&output));
        let dir = run_dir(&out).unwrap();
        let manifest = Manifest::read(&dir).unwrap();
        let plan = Plan::from_json(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap();
        assert_eq!(plan.repeat.order.as_str(), order, "plan.json states the order");
        let ran = started_order(&manifest);
        assert_eq!(ran, plan.run_order(), "{order}");
        if let Some(expected) = expected {
            assert_eq!(ran, expected, "{order}");
        }
        // Numbers and seeds do not depend on the order.
        for record in &manifest.trials {
            assert_eq!(plan.trial(record.trial).unwrap().seed, record.seed);
        }
    }
}

#[test]
fn each_shard_runs_its_share_in_the_plans_order() {
    let scratch = Scratch::new("shard");
    let spec = scratch.spec(&sweep_spec(3, 2, Some("randomized")));
    let out = scratch.0.join("runs");
    let mut ran_by_shards = Vec::new();
    for shard in ["0/2", "1/2"] {
        let output = run(&spec, &out, &["--run-id", "r", "--shard", shard, "--time-scale", "0.5"]);
        assert!(output.status.success(), "{}", text(&output));
    }
    let dir = run_dir(&out).unwrap();
    let plan = Plan::from_json(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap();
    for k in 0..2 {
        let fragment = Manifest::read(&dir.join(format!("manifest-shard-{k}.json"))).unwrap();
        let ran = started_order(&fragment);
        let mine: Vec<u32> = plan.run_order().into_iter().filter(|t| ran.contains(t)).collect();
        assert_eq!(ran, mine, "shard {k} runs its trials in the plan's order");
        ran_by_shards.extend(ran);
    }
    ran_by_shards.sort_unstable();
    assert_eq!(ran_by_shards, (0..6).collect::<Vec<_>>());
    let merged = expc().arg("run").arg("--merge").arg(&dir).output().unwrap();
    assert!(merged.status.success(), "{}", text(&merged));
}
