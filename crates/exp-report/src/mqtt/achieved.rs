//! The achieved gaps: each device's `sent_ns` differenced in the order of
//! its sends.
//!
//! Rows are written when their outcome is final, not in send order, but
//! most of a device's rows come in order: one pass follows each device's
//! rows in order and differences them as they come, and keeps aside only
//! what an out-of-order row (a straggler: a message lost and recorded late)
//! needs — the stragglers and the rows around each hole they leave — to
//! difference those at the end. If that is more than [`SORT_BUDGET_BYTES`],
//! or a straggler starts an interval (then two in-order rows one seq apart
//! may have come from different intervals), every device's sends are
//! sorted instead, the devices split into partitions (`device mod k`), one
//! pass over the files each, with k chosen so a partition's rows fit the
//! budget.

use std::path::Path;

use super::passes::Fleets;
use super::Failure;
use crate::part_chunks::for_each_chunk;

/// Memory for one partition's rows (32 bytes each): 8 Mi rows.
const SORT_BUDGET_BYTES: u64 = 256 << 20;
const ROW_BYTES: u64 = 32;
/// `sent` of a row that cannot start or end a gap (warm-up, or never sent).
const UNUSABLE: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Send {
    device: u64,
    scheduled: u64,
    seq: u64,
    sent: u64,
}

/// Every fleet's achieved gaps, unsorted. `rows` gives a fleet's rows
/// (warm-up included), to size every vector once; the trial's `total` rows
/// decide the number of partitions if the rows are too far out of order.
pub(crate) fn achieved(files: &[&Path], total: u64, rows: &dyn Fn(&str) -> usize) -> Result<Fleets<Vec<f64>>, Failure> {
    match streamed(files, rows)? {
        Some(gaps) => Ok(gaps),
        None => partitioned(files, total, rows),
    }
}

/// The columns a gap pass reads.
const COLUMNS: [&str; 6] = ["fleet", "device", "seq", "scheduled_ns", "sent_ns", "warmup"];

/// Calls `each` with every row that has a device, seq and scheduled time,
/// and its fleet; `sent` is [`UNUSABLE`] for a row that cannot bound a gap.
/// Stops (reading what is left of the chunk only) once `each` returns false.
fn for_each_send(files: &[&Path], mut each: impl FnMut(&str, Send) -> bool) -> Result<(), Failure> {
    let mut going = true;
    for (index, path) in files.iter().enumerate() {
        if !going {
            break;
        }
        for_each_chunk(path, &COLUMNS, &[], |chunk| {
            if !going {
                return Ok(());
            }
            let fleet = chunk.str("fleet")?;
            let device = chunk.u64("device")?;
            let seq = chunk.u64("seq")?;
            let scheduled = chunk.u64("scheduled_ns")?;
            let sent = chunk.u64("sent_ns")?;
            let warmup = chunk.bool("warmup")?;
            let ids = fleet.iter().zip(device.iter()).zip(seq.iter());
            let times = scheduled.iter().zip(sent.iter()).zip(warmup.iter());
            for (((fleet, device), seq), ((scheduled, sent), warmup)) in ids.zip(times) {
                let (Some(device), Some(seq), Some(scheduled)) = (device, seq, scheduled) else {
                    continue;
                };
                let sent = match (sent, warmup) {
                    (Some(s), Some(false) | None) if s != UNUSABLE => s,
                    _ => UNUSABLE,
                };
                let send = Send {
                    device,
                    scheduled,
                    seq,
                    sent,
                };
                going = each(fleet.unwrap_or_default(), send);
                if !going {
                    break;
                }
            }
            Ok(())
        })
        .map_err(|e| (index, e))?;
    }
    Ok(())
}

/// The gaps in one pass (module docs), or `None` if the rows must be
/// sorted instead.
fn streamed(files: &[&Path], rows: &dyn Fn(&str) -> usize) -> Result<Option<Fleets<Vec<f64>>>, Failure> {
    let budget = SORT_BUDGET_BYTES as usize / std::mem::size_of::<(Send, bool)>();
    let mut fleets = Fleets::<InOrder>::default();
    let mut aside = Some(0usize);
    for_each_send(files, |fleet, send| {
        let stream = fleets.get_or(fleet, || InOrder::with_capacity(rows(fleet)));
        aside = aside.zip(stream.add(send)).map(|(a, b)| a + b).filter(|&a| a <= budget);
        aside.is_some()
    })?;
    if aside.is_none() {
        return Ok(None);
    }
    let mut gaps = Fleets::<Vec<f64>>::default();
    for (fleet, stream) in fleets.iter_mut() {
        *gaps.get(fleet) = std::mem::take(stream).finish();
    }
    Ok(Some(gaps))
}

/// One fleet's devices followed in order of (scheduled, seq).
#[derive(Default)]
struct InOrder {
    /// By device number.
    devices: Vec<Option<Followed>>,
    gaps: Vec<f64>,
    /// Rows whose gaps are not known yet; `true` for a straggler.
    aside: Vec<(Send, bool)>,
}

/// A device's first and last in-order rows.
#[derive(Debug, Clone, Copy)]
struct Followed {
    first: (u64, u64),
    last: Send,
}

/// Devices numbered beyond this many are not followed in a vector.
const MAX_DEVICES: u64 = 1 << 24;

impl InOrder {
    fn with_capacity(rows: usize) -> InOrder {
        InOrder {
            gaps: Vec::with_capacity(rows),
            ..InOrder::default()
        }
    }

    /// Follows `send`; returns how many rows it put aside, or `None` when
    /// only sorting gives the gaps: a straggler that starts an interval
    /// after the device's first in-order row.
    fn add(&mut self, send: Send) -> Option<usize> {
        if send.device >= MAX_DEVICES {
            // A device number no fleet gives: keep it for the final sort.
            self.aside.push((send, true));
            return Some(1);
        }
        let device = send.device as usize;
        if device >= self.devices.len() {
            self.devices.resize(device + 1, None);
        }
        let key = |s: &Send| (s.scheduled, s.seq);
        let before = self.aside.len();
        let followed = self.devices[device];
        match followed.map(|f| f.last) {
            // A straggler before it will need it.
            None => self.aside.push((send, false)),
            Some(last) if key(&send) <= key(&last) => {
                if send.seq == 0 && followed.is_some_and(|f| key(&send) > f.first) {
                    return None;
                }
                self.aside.push((send, true));
                return Some(1);
            }
            Some(last) if send.seq == last.seq.wrapping_add(1) => {
                if last.sent != UNUSABLE && send.sent != UNUSABLE {
                    self.gaps.push(send.sent as f64 - last.sent as f64);
                }
            }
            // A new interval or a hole: both sides, so that every
            // straggler finds its neighbours among the rows aside.
            Some(last) => self.aside.extend([(last, false), (send, false)]),
        }
        self.devices[device] = Some(Followed {
            first: followed.map_or(key(&send), |f| f.first),
            last: send,
        });
        Some(self.aside.len() - before)
    }

    /// The gaps, with those of the rows put aside: in their order, a pair
    /// one seq apart is a gap, unless neither is a straggler (then they came
    /// in order and their gap is counted already).
    fn finish(mut self) -> Vec<f64> {
        self.aside
            .sort_unstable_by_key(|(s, straggler)| (s.device, s.scheduled, s.seq, !straggler));
        self.aside.dedup_by_key(|(s, _)| (s.device, s.scheduled, s.seq));
        for pair in self.aside.windows(2) {
            let ((a, a_late), (b, b_late)) = (pair[0], pair[1]);
            if (a_late || b_late) && gap_pair(&a, &b) {
                self.gaps.push(b.sent as f64 - a.sent as f64);
            }
        }
        self.gaps
    }
}

/// Whether `b` follows `a` in order (both usable): a gap.
fn gap_pair(a: &Send, b: &Send) -> bool {
    a.device == b.device && b.seq == a.seq.wrapping_add(1) && a.sent != UNUSABLE && b.sent != UNUSABLE
}

/// Every device's sends sorted, in partitions (module docs).
fn partitioned(files: &[&Path], total: u64, rows: &dyn Fn(&str) -> usize) -> Result<Fleets<Vec<f64>>, Failure> {
    let partitions = total.saturating_mul(ROW_BYTES).div_ceil(SORT_BUDGET_BYTES).max(1);
    // Device numbers are dense, so `device mod k` splits evenly; 1/16 extra
    // absorbs the remainder without a reallocation.
    let share = |fleet: &str| {
        let n = rows(fleet) as u64 / partitions;
        usize::try_from(n + n / 16 + 16).unwrap_or(usize::MAX)
    };
    let mut gaps = Fleets::<Vec<f64>>::default();
    for partition in 0..partitions {
        let mut sends = Fleets::<Vec<Send>>::default();
        // Every fired message is kept, usable or not, so `seq` runs without
        // holes within an interval and restarts at 0 in the next:
        // consecutive rows are one gap apart only when their seqs are.
        for_each_send(files, |fleet, send| {
            if send.device % partitions == partition {
                sends.get_or(fleet, || Vec::with_capacity(share(fleet))).push(send);
            }
            true
        })?;
        for (fleet, sends) in sends.iter_mut() {
            sends.sort_unstable_by_key(|s| (s.device, s.scheduled, s.seq));
            let out = gaps.get_or(fleet, || Vec::with_capacity(rows(fleet)));
            for pair in sends.windows(2) {
                if gap_pair(&pair[0], &pair[1]) {
                    out.push(pair[1].sent as f64 - pair[0].sent as f64);
                }
            }
        }
    }
    Ok(gaps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_gaps(sends: &[Send]) -> Vec<f64> {
        let mut sends = sends.to_vec();
        sends.sort_unstable_by_key(|s| (s.device, s.scheduled, s.seq));
        let mut gaps: Vec<f64> = sends
            .windows(2)
            .filter(|p| gap_pair(&p[0], &p[1]))
            .map(|p| p[1].sent as f64 - p[0].sent as f64)
            .collect();
        gaps.sort_unstable_by(f64::total_cmp);
        gaps
    }

    #[test]
    fn streamed_gaps_are_the_sorted_ones_whatever_the_arrival_order() {
        let mut rng = exp_stats::Rng::new(5);
        let (mut streamed, mut sorted_instead) = (0, 0);
        for case in 0..400 {
            // Devices with intervals of 1–8 messages, some unusable.
            let mut sends = Vec::new();
            for device in 0..4u64 {
                let mut t = 1_000;
                for _interval in 0..3 {
                    for seq in 0..1 + (rng.next_f64() * 8.0) as u64 {
                        t += 100 + (rng.next_f64() * 50.0) as u64;
                        let sent = if rng.next_f64() < 0.1 {
                            UNUSABLE
                        } else {
                            t + (rng.next_f64() * 30.0) as u64
                        };
                        sends.push(Send {
                            device,
                            scheduled: t,
                            seq,
                            sent,
                        });
                    }
                    t += 10_000;
                }
            }
            // Rows arrive by outcome: some much later than the rest.
            let late = [0.0, 0.05, 0.3][case % 3];
            let mut arrival: Vec<(f64, Send)> = sends
                .iter()
                .map(|s| {
                    let delay = if rng.next_f64() < late {
                        50_000.0 * rng.next_f64()
                    } else {
                        0.0
                    };
                    (s.scheduled as f64 + delay, *s)
                })
                .collect();
            arrival.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut stream = InOrder::default();
            if arrival.iter().all(|(_, s)| stream.add(*s).is_some()) {
                let mut gaps = stream.finish();
                gaps.sort_unstable_by(f64::total_cmp);
                assert_eq!(gaps, sorted_gaps(&sends), "case {case}");
                streamed += 1;
            } else {
                sorted_instead += 1;
            }
        }
        assert!(
            streamed > 200 && sorted_instead > 0,
            "{streamed} streamed, {sorted_instead} sorted"
        );
        // A device's first message recorded last (it was lost) needs no sort.
        let sends: Vec<Send> = (0..6u64)
            .map(|seq| Send {
                device: 3,
                scheduled: 1_000 * (seq + 1),
                seq,
                sent: 1_000 * (seq + 1) + seq,
            })
            .collect();
        let mut stream = InOrder::default();
        for send in sends[1..].iter().chain(&sends[..1]) {
            assert!(stream.add(*send).is_some());
        }
        let mut gaps = stream.finish();
        gaps.sort_unstable_by(f64::total_cmp);
        assert_eq!(gaps, sorted_gaps(&sends));
    }
}
