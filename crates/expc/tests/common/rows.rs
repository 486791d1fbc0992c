//! A split run's fleet rows against the same trial run whole: the parts
//! together must have every device and message the whole run has, with the
//! same numbers, fates and schedule.

use std::collections::BTreeMap;
use std::path::Path;

use exp_parquet::Frame;

use super::trial_frames;

/// What a message row must be in a split run as in the whole one; the
/// scheduled time is compared apart (see [`assert_split_matches_whole`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fate {
    pub device: u64,
    pub seq: u64,
    pub status: String,
    pub reason: Option<String>,
    pub warmup: bool,
}

/// Each message of `frame` by (device, seq): its fate and scheduled time.
pub fn messages(frame: &Frame) -> BTreeMap<(u64, u64), (Fate, i64)> {
    let u64s = |name: &str| -> Vec<u64> {
        let column = frame.column(name).unwrap().to_u64s().unwrap();
        column.iter().map(Option::unwrap).collect()
    };
    let strings = |name: &str| -> Vec<Option<String>> {
        let column = frame.column(name).unwrap();
        column.str().unwrap().iter().map(|s| s.map(str::to_string)).collect()
    };
    let (devices, seqs) = (u64s("device"), u64s("seq"));
    let scheduled: Vec<i64> = {
        let column = frame.column("scheduled_ns").unwrap().to_i64s().unwrap();
        column.iter().map(Option::unwrap).collect()
    };
    let (statuses, reasons) = (strings("status"), strings("reason"));
    let warmups: Vec<bool> = frame
        .column("warmup")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect();
    (0..frame.height())
        .map(|i| {
            let fate = Fate {
                device: devices[i],
                seq: seqs[i],
                status: statuses[i].clone().unwrap(),
                reason: reasons[i].clone(),
                warmup: warmups[i],
            };
            ((devices[i], seqs[i]), (fate, scheduled[i]))
        })
        .collect()
}

/// Each device of `frames` (`mqtt_devices`) with its client id and status.
pub fn devices(frames: &[Frame]) -> BTreeMap<u64, (String, String)> {
    let mut found = BTreeMap::new();
    for frame in frames {
        let device = frame.column("device").unwrap().to_u64s().unwrap();
        let client = frame.column("client_id").unwrap().str().unwrap();
        let status = frame.column("status").unwrap().str().unwrap();
        let rows = device.iter().zip(client.iter()).zip(status.iter());
        for ((device, client), status) in rows {
            let previous = found.insert(
                device.unwrap(),
                (client.unwrap().to_string(), status.unwrap().to_string()),
            );
            assert!(previous.is_none(), "device {device:?} has two rows");
        }
    }
    found
}

/// The split run's `trial` has, across its part files, exactly the devices
/// and messages of the whole run's `trial`, with the same fates; and each
/// part's scheduled times are the whole run's moved by one constant (the
/// send phase starts when that process's devices have connected, so only
/// the schedule's origin may differ). Returns the messages compared.
pub fn assert_split_matches_whole(whole: &Path, split: &Path, trial: u32) -> usize {
    let whole_frames = trial_frames(whole, "mqtt_messages", trial);
    assert_eq!(whole_frames.len(), 1, "the whole run writes one part file");
    let expected = messages(&whole_frames[0]);
    let mut seen = BTreeMap::new();
    for (part, frame) in trial_frames(split, "mqtt_messages", trial).iter().enumerate() {
        let mut offset = None;
        for (key, (fate, scheduled)) in messages(frame) {
            let Some((want, want_scheduled)) = expected.get(&key) else {
                panic!("trial {trial}, part {part}: message {key:?} is not in the whole run");
            };
            assert_eq!(&fate, want, "trial {trial}, part {part}: message {key:?}");
            let shift = scheduled - want_scheduled;
            let first = *offset.get_or_insert(shift);
            assert_eq!(
                shift, first,
                "trial {trial}, part {part}: message {key:?} is scheduled {shift} ns from the whole run's time, \
                 the part's others {first} ns"
            );
            assert!(seen.insert(key, fate).is_none(), "message {key:?} in two parts");
        }
    }
    let missing: Vec<_> = expected.keys().filter(|k| !seen.contains_key(k)).collect();
    assert!(missing.is_empty(), "trial {trial}: messages no part has: {missing:?}");
    assert_eq!(
        devices(&trial_frames(split, "mqtt_devices", trial)),
        devices(&trial_frames(whole, "mqtt_devices", trial)),
        "trial {trial}: the devices, their client ids and connections"
    );
    expected.len()
}
