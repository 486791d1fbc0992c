use super::*;

fn ms(values: &[u64]) -> Vec<Duration> {
    values.iter().copied().map(Duration::from_millis).collect()
}

fn measured(values: &[u64]) -> Vec<Option<Duration>> {
    ms(values).into_iter().map(Some).collect()
}

fn rtts(assigned: &[Assigned]) -> Vec<Duration> {
    assigned.iter().map(|a| a.rtt).collect()
}

fn paths(assigned: &[Assigned]) -> Vec<u32> {
    assigned.iter().map(|a| a.path.expect("a path")).collect()
}

fn mode(count: usize, rtts: PathRtts, assign: Assignment) -> RttMode {
    RttMode::Paths(Paths { count, rtts, assign })
}

#[test]
fn simple_modes() {
    let r = measured(&[10, 20, 60]);
    assert_eq!(rtts(&RttMode::None.assign(&r).expect("ok")), ms(&[0, 0, 0]));
    let c = RttMode::Constant(Duration::from_millis(7));
    assert_eq!(rtts(&c.assign(&r).expect("ok")), ms(&[7, 7, 7]));
    assert_eq!(rtts(&RttMode::Mean.assign(&r).expect("ok")), ms(&[30, 30, 30]));
    let own = RttMode::PerConnection.assign(&r).expect("ok");
    assert_eq!(rtts(&own), ms(&[10, 20, 60]));
    assert!(own.iter().all(|a| a.path.is_none()), "no paths outside the paths mode");
    assert!(RttMode::Mean.assign(&[]).expect("ok").is_empty());
    // A connection without `r` counts as 0.
    let partial = [Some(Duration::from_millis(30)), None];
    assert_eq!(
        rtts(&RttMode::PerConnection.assign(&partial).expect("ok")),
        ms(&[30, 0])
    );
}

#[test]
fn quantile_paths_sit_at_the_bin_midpoints() {
    // Sorted: 5 10 20 30 50 80 90; q = 1/6, 1/2, 5/6 fall on positions 1, 3, 5.
    let r = measured(&[80, 5, 20, 90, 10, 30, 50]);
    let m = mode(3, PathRtts::Quantiles, Assignment::RoundRobin);
    assert_eq!(m.path_rtts(&r).expect("ok"), ms(&[10, 30, 80]));
    // Between order statistics: interpolated.
    let two = mode(2, PathRtts::Quantiles, Assignment::RoundRobin);
    let got = two.path_rtts(&measured(&[10, 20])).expect("ok");
    assert_eq!(got, [12_500, 17_500].map(Duration::from_micros));
    // Connections without `r` are left out; none at all gives 0.
    let partial = [None, Some(Duration::from_millis(40)), None];
    assert_eq!(two.path_rtts(&partial).expect("ok"), ms(&[40, 40]));
    assert_eq!(m.path_rtts(&[]).expect("ok"), ms(&[0, 0, 0]));
}

#[test]
fn round_robin_ignores_the_connections_own_rtt() {
    let r = measured(&[80, 5, 20, 90, 10, 30, 50]);
    let got = mode(3, PathRtts::Quantiles, Assignment::RoundRobin)
        .assign(&r)
        .expect("ok");
    assert_eq!(paths(&got), vec![0, 1, 2, 0, 1, 2, 0]);
    assert_eq!(rtts(&got), ms(&[10, 30, 80, 10, 30, 80, 10]));
}

#[test]
fn by_rtt_groups_connections_by_their_own_rtt() {
    // Groups by own RTT: 5 10 20 | 30 50 | 80 90.
    let r = measured(&[80, 5, 20, 90, 10, 30, 50]);
    let got = mode(3, PathRtts::Quantiles, Assignment::ByRtt).assign(&r).expect("ok");
    assert_eq!(paths(&got), vec![2, 0, 0, 2, 0, 1, 1]);
    assert_eq!(rtts(&got), ms(&[80, 10, 10, 80, 10, 30, 30]));
    // One path: everyone on it; as many paths as connections: one each,
    // in the order of their own RTTs.
    let one = mode(1, PathRtts::Quantiles, Assignment::ByRtt).assign(&r).expect("ok");
    assert!(one.iter().all(|a| a.path == Some(0)));
    let all = mode(7, PathRtts::Quantiles, Assignment::ByRtt).assign(&r).expect("ok");
    assert_eq!(paths(&all), vec![5, 0, 2, 6, 1, 3, 4]);
}

#[test]
fn given_rtts_in_path_order() {
    let r = measured(&[40, 10, 30, 20]);
    let given = PathRtts::Given(ms(&[50, 5]));
    let robin = mode(2, given.clone(), Assignment::RoundRobin).assign(&r).expect("ok");
    assert_eq!(rtts(&robin), ms(&[50, 5, 50, 5]));
    // By RTT: the fastest half on the first path, whatever its RTT.
    let grouped = mode(2, given, Assignment::ByRtt).assign(&r).expect("ok");
    assert_eq!(rtts(&grouped), ms(&[5, 50, 5, 50]));
    let wrong = mode(3, PathRtts::Given(ms(&[1, 2])), Assignment::RoundRobin);
    assert!(wrong.assign(&r).is_err(), "3 paths with 2 RTTs");
    assert!(mode(0, PathRtts::Quantiles, Assignment::RoundRobin).assign(&r).is_err());
}

#[test]
fn random_assignment_is_deterministic_per_seed_and_uses_every_path() {
    let r = measured(&vec![25; 1000]);
    let with = |seed| {
        paths(
            &mode(10, PathRtts::Quantiles, Assignment::Random { seed })
                .assign(&r)
                .expect("ok"),
        )
    };
    assert_eq!(with(7), with(7));
    assert_ne!(with(7), with(8));
    let mut counts = [0usize; 10];
    for path in with(7) {
        counts[path as usize] += 1;
    }
    // 100 expected per path; binomial sd ≈ 9.5, so 50..150 is > 5 sd.
    assert!(counts.iter().all(|&c| (50..150).contains(&c)), "{counts:?}");
}

#[test]
fn even_split_sizes() {
    let sizes: Vec<usize> = split_evenly(&[0; 7], 3).iter().map(|g| g.len()).collect();
    assert_eq!(sizes, vec![3, 2, 2]);
}
