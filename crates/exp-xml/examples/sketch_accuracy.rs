//! How fitting on a sketch compares with fitting every distinct value, on a
//! corpus (decision 0008): per sketch size, the fitting time of all numeric
//! paths, how many winners and runners-up change, and the largest relative
//! difference of a winner's parameters.
//!
//! `cargo run --release -p exp-xml --example sketch_accuracy -- CORPUS.xml SPLIT_AT`
//! (e.g. the `devices` corpus of `examples/xml_corpus.rs`, split at `reading`).

use std::time::Instant;

use exp_xml::set::fit_path;
use exp_xml::{extract, AttributePolicy, Config, Source};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, split_at] = args.as_slice() else {
        eprintln!("usage: sketch_accuracy CORPUS.xml SPLIT_AT");
        std::process::exit(2);
    };
    let data = std::fs::read(corpus).unwrap_or_else(|e| {
        eprintln!("{corpus}: {e}");
        std::process::exit(1);
    });
    let config = Config {
        split_at: Some(split_at.clone()),
        policy: AttributePolicy::Auto { max_distinct: 16 },
        ..Config::default()
    };
    let source = Source::Memory {
        name: corpus.clone(),
        data,
    };
    let x = extract(&[source], &config).unwrap_or_else(|e| {
        eprintln!("{corpus}: {e}");
        std::process::exit(1);
    });
    let started = Instant::now();
    let exact: Vec<_> = x.numeric.iter().map(|s| fit_path(s, 0)).collect();
    println!(
        "every distinct value: {:.1} ms for {} numeric paths",
        started.elapsed().as_secs_f64() * 1e3,
        exact.len()
    );
    for points in [128, 256, 512, 1024] {
        let started = Instant::now();
        let sketched: Vec<_> = x.numeric.iter().map(|s| fit_path(s, points)).collect();
        let elapsed = started.elapsed();
        let (mut winners, mut runners_up, mut worst) = (0, 0, 0.0_f64);
        for (e, s) in exact.iter().zip(&sketched) {
            let runner_up = |p: &exp_xml::set::NumericPath| p.runner_up.as_ref().map(|f| f.family);
            runners_up += usize::from(runner_up(e) != runner_up(s));
            match (&e.fit, &s.fit) {
                (Some(a), Some(b)) if a.family == b.family => {
                    for ((_, x), (_, y)) in a.params.iter().zip(&b.params) {
                        worst = worst.max(((x - y) / x).abs());
                    }
                }
                _ => winners += 1,
            }
        }
        println!(
            "{points:>5} points: {:.1} ms, winner changed on {winners}, runner-up on {runners_up}, winners' parameters within {worst:.1e} relative",
            elapsed.as_secs_f64() * 1e3
        );
    }
}
