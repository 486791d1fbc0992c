//! Determinism of the generator and its derived streams.
#![allow(clippy::unwrap_used)]

use exp_stats::rng::splitmix64;
use exp_stats::Rng;

#[test]
fn splitmix64_reference() {
    // Vigna's splitmix64.c from state 0: the first output is the mix of 0x9E3779B97F4A7C15.
    let mut state = 0u64;
    let first = [splitmix64(&mut state), splitmix64(&mut state), splitmix64(&mut state)];
    assert_eq!(first, PINNED_SPLITMIX_0);
}

const PINNED_SPLITMIX_0: [u64; 3] = [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F];

#[test]
fn same_seed_same_sequence_pinned() {
    let mut a = Rng::new(42);
    let mut b = Rng::new(42);
    let xs: Vec<u64> = (0..1000).map(|_| a.next_u64()).collect();
    let ys: Vec<u64> = (0..1000).map(|_| b.next_u64()).collect();
    assert_eq!(xs, ys);
    // Regression pin: changing the algorithm or seeding changes every experiment's data.
    let mut r = Rng::new(42);
    let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
    assert_eq!(got, PINNED_SEED_42);
    assert_ne!(Rng::new(43).next_u64(), Rng::new(42).next_u64());
}

// Computed by an independent Python implementation of SplitMix64 + xoshiro256++.
const PINNED_SEED_42: [u64; 4] = [
    15_021_278_609_987_233_951,
    5_881_210_131_331_364_753,
    18_149_643_915_985_481_100,
    12_933_668_939_759_105_464,
];

#[test]
fn floats_are_in_range() {
    let mut r = Rng::new(1);
    for _ in 0..100_000 {
        let x = r.next_f64();
        assert!((0.0..1.0).contains(&x));
        let y = r.open01();
        assert!(y > 0.0 && y < 1.0);
        assert!(r.below(7) < 7);
    }
    assert_eq!(r.below(0), 0);
}

#[test]
fn forks_and_streams_are_deterministic_and_distinct() {
    let root = Rng::new(2024);
    let mut advanced = root.clone();
    advanced.next_u64();
    // Deterministic; derived from the parent's current state, so fork before drawing.
    assert_eq!(root.fork("mqtt").next_u64(), root.clone().fork("mqtt").next_u64());
    assert_ne!(root.fork("mqtt").next_u64(), advanced.fork("mqtt").next_u64());
    assert_ne!(root.fork("mqtt").next_u64(), root.fork("xml").next_u64());
    assert_eq!(root.stream(7).next_u64(), root.stream(7).next_u64());
    let firsts: std::collections::BTreeSet<u64> = (0..10_000).map(|i| root.stream(i).next_u64()).collect();
    assert_eq!(firsts.len(), 10_000);
    assert_ne!(root.stream(0).next_u64(), root.fork("").next_u64());
    // Deriving does not advance the parent.
    let before = root.clone();
    let _ = root.stream(3);
    assert_eq!(root, before);
}

#[test]
fn streams_look_independent() {
    // Adjacent device streams: correlation of 100k paired uniforms is ≈ 0 (se ≈ 0.0032).
    let root = Rng::new(9);
    let (mut a, mut b) = (root.stream(0), root.stream(1));
    let n = 100_000;
    let pairs: Vec<(f64, f64)> = (0..n).map(|_| (a.next_f64() - 0.5, b.next_f64() - 0.5)).collect();
    let cov: f64 = pairs.iter().map(|(x, y)| x * y).sum::<f64>() / n as f64;
    let corr = cov * 12.0;
    assert!(corr.abs() < 0.016, "corr {corr}");
}
