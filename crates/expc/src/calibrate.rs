//! `expc calibrate`: how faithfully the anomaly kernels reach their targets
//! on this machine. Every number comes from the OS (/proc), not from the
//! kernels' own counters: CPU time from /proc/<pid>/task/*/schedstat,
//! resident memory from /proc/<pid>/statm.

use std::path::PathBuf;
use std::process::ExitCode;
use std::thread::sleep;
use std::time::{Duration, Instant};

use exp_anomaly::{bench, ExitKind, Instance, InstanceConfig, Launcher};
use exp_plan::{Anomaly, AnomalyParams};
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
    /// Print the results as JSON instead of tables.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum What {
    /// cpuoccupy: achieved vs target utilisation, on an idle core and next to a busy competitor.
    Cpuoccupy {
        /// The core to hold.
        #[arg(long, default_value_t = 1)]
        core: u32,
        /// Measured seconds per point (each target is measured twice: idle and contended).
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Target utilisations in percent.
        #[arg(long, value_delimiter = ',', default_value = "0,10,25,50,75,90,100")]
        targets: Vec<f64>,
    },
    /// memleak and memeater: growth of the resident set vs the configured rate.
    Memory {
        /// The core the memory kernels run on.
        #[arg(long, default_value_t = 1)]
        core: u32,
        /// Measured seconds per case.
        #[arg(long, default_value_t = 6.0)]
        seconds: f64,
    },
    /// A STREAM copy loop's throughput alone and next to membw and cachecopy.
    Interference {
        /// The core the copy loop (the victim) runs on.
        #[arg(long, default_value_t = 1)]
        core: u32,
        /// The other core, for anomalies beside the victim (default: another online core).
        #[arg(long)]
        other_core: Option<u32>,
        /// Measured seconds per case.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Size of each of the victim's two arrays (default: STREAM's rule, 4 × the largest cache, at most
        /// 1 GiB); small arrays make a cache-resident victim.
        #[arg(long)]
        array_bytes: Option<u64>,
    },
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let online = exp_host::online_cpus();
    let (What::Cpuoccupy { core, .. } | What::Memory { core, .. } | What::Interference { core, .. }) = &args.what;
    if !online.contains(core) {
        return Err(format!("core {core} is not online (online: {online:?})"));
    }
    if let What::Interference {
        other_core: Some(other),
        ..
    } = &args.what
    {
        if !online.contains(other) {
            return Err(format!("core {other} is not online (online: {online:?})"));
        }
    }
    let mut lab = Lab::new()?;
    let report = match args.what {
        What::Cpuoccupy { core, seconds, targets } => cpuoccupy(&mut lab, core, seconds_arg(seconds)?, &targets)?,
        What::Memory { core, seconds } => memory(&mut lab, core, seconds_arg(seconds)?)?,
        What::Interference {
            core,
            other_core,
            seconds,
            array_bytes,
        } => {
            let other = other_core.or_else(|| exp_host::online_cpus().into_iter().find(|&c| c != core));
            let other = other.ok_or("interference needs a second online core (--other-core)")?;
            let array = array_bytes.unwrap_or_else(|| bench::stream_array_bytes(core));
            if array == 0 {
                return Err("--array-bytes must be positive".into());
            }
            interference(&mut lab, core, other, seconds_arg(seconds)?, array)?
        }
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report.json).map_err(|e| e.to_string())?
        );
    } else {
        out!("{}", report.text);
    }
    Ok(ExitCode::SUCCESS)
}

fn seconds_arg(seconds: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("bad --seconds {seconds}"))
}

/// A table for people and the same numbers for programs.
struct Report {
    text: String,
    json: serde_json::Value,
}

/// Starts anomaly instances as children of this process and cleans up after them.
struct Lab {
    launcher: Launcher,
    scratch: PathBuf,
    next: u32,
}

impl Lab {
    fn new() -> Result<Lab, String> {
        let program = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let scratch = std::env::temp_dir().join(format!("expc-calibrate-{}", std::process::id()));
        Ok(Lab {
            launcher: Launcher {
                program,
                args: vec!["__anomaly-kernel".into()],
            },
            scratch,
            next: 0,
        })
    }

    fn start(&mut self, cores: Vec<u32>, params: AnomalyParams, run_for: Duration) -> Result<Instance, String> {
        self.next += 1;
        let config = InstanceConfig {
            instance: format!("calibrate-{}", self.next),
            anomaly: Anomaly { cores, params },
            seed: u64::from(self.next),
            scratch_dir: self.scratch.join(self.next.to_string()),
            run_for,
        };
        exp_anomaly::spawn(&self.launcher, &config).map_err(|e| e.to_string())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Stops an instance and turns a failure into an error message.
fn finish(instance: Instance) -> Result<(), String> {
    match instance.stop(Duration::from_secs(2)).map_err(|e| e.to_string())?.status {
        ExitKind::Failed(why) => Err(format!("the anomaly failed: {why}")),
        _ => Ok(()),
    }
}

/// Time `core` was not available to an idle-seeking task so far, in ns, from
/// /proc/stat: user + nice + system + irq + softirq + steal (guest time is
/// already inside user; steal is time the hypervisor gave the virtual CPU to
/// someone else), in the kernel's clock ticks.
fn core_busy_ns(core: u32) -> Result<u64, String> {
    let stat = exp_host::proc_stat().map_err(|e| e.to_string())?;
    let t = stat
        .cpu(core)
        .ok_or_else(|| format!("core {core} is not in /proc/stat"))?;
    let busy = t.user + t.nice + t.system + t.irq + t.softirq + t.steal;
    Ok(busy.saturating_mul(1_000_000_000) / exp_host::clock_ticks_per_s().max(1))
}

/// Over `window`: the utilisation (percent) of each instance, from its CPU
/// time in /proc, and the share of `core` that other processes took.
fn cpu_shares(instances: &mut [&mut Instance], core: u32, window: Duration) -> Result<(Vec<f64>, f64), String> {
    let mut before = Vec::new();
    for instance in instances.iter_mut() {
        before.push(instance.sample().map_err(|e| e.to_string())?.cpu_time_ns);
    }
    let busy_before = core_busy_ns(core)?;
    let start = Instant::now();
    sleep(window);
    let busy = core_busy_ns(core)?.saturating_sub(busy_before);
    let wall = start.elapsed().as_nanos() as f64;
    let mut shares = Vec::new();
    for (instance, before) in instances.iter_mut().zip(before) {
        let after = instance.sample().map_err(|e| e.to_string())?.cpu_time_ns;
        shares.push(after.saturating_sub(before) as f64 / wall * 100.0);
    }
    let others = (busy as f64 / wall * 100.0 - shares.iter().sum::<f64>()).max(0.0);
    Ok((shares, others))
}

/// Time the children get to start up before measuring.
const WARMUP: Duration = Duration::from_millis(500);
/// Margin beyond the measured window in each child's `run_for`.
const MARGIN: Duration = Duration::from_secs(3);

fn cpuoccupy(lab: &mut Lab, core: u32, seconds: Duration, targets: &[f64]) -> Result<Report, String> {
    let run_for = WARMUP + seconds + MARGIN;
    let cpu = |percent: f64| AnomalyParams::Cpuoccupy {
        utilization_ratio: percent / 100.0,
    };
    let mut text = format!(
        "cpuoccupy on core {core}, {:.0} s per point. achieved = CPU time of the child's threads \
         (/proc/<pid>/task/*/schedstat) / wall time.\n\
         others = what other processes and the hypervisor (steal) took of core {core}: /proc/stat busy + steal\n\
         time minus the children's.\n\
         idle: expected = min(target, 100 - others).\n\
         contended: next to a cpuoccupy 100 % pinned to the same core; expected = min(target, (100 - others) / 2),\n\
         the fair share of two busy tasks.\n\n",
        seconds.as_secs_f64()
    );
    text.push_str("        |               idle core                |                 contended core\n");
    text.push_str("target  | achieved  others  expected   error    | achieved  competitor  others  expected   error\n");
    let mut rows = Vec::new();
    for &target in targets {
        if !(0.0..=100.0).contains(&target) {
            return Err(format!("target {target} is not a percentage"));
        }
        let mut alone = lab.start(vec![core], cpu(target), run_for)?;
        sleep(WARMUP);
        let (shares, idle_others) = cpu_shares(&mut [&mut alone], core, seconds)?;
        finish(alone)?;
        let idle = shares[0];
        let idle_expected = target.min(100.0 - idle_others);

        let mut competitor = lab.start(vec![core], cpu(100.0), run_for)?;
        let mut occupier = lab.start(vec![core], cpu(target), run_for)?;
        sleep(WARMUP);
        let (shares, others) = cpu_shares(&mut [&mut occupier, &mut competitor], core, seconds)?;
        finish(occupier)?;
        finish(competitor)?;
        let (contended, rival) = (shares[0], shares[1]);
        let expected = target.min((100.0 - others) / 2.0);
        text.push_str(&format!(
            "{target:>5.0} % | {idle:>7.2} % {idle_others:>6.2} % {idle_expected:>7.2} % {:>+7.2}    | \
             {contended:>7.2} % {rival:>9.2} % {others:>6.2} % {expected:>7.2} % {:>+7.2}\n",
            idle - idle_expected,
            contended - expected
        ));
        rows.push(json!({
            "target_percent": target,
            "idle": { "achieved_percent": idle, "others_percent": idle_others,
                      "expected_percent": idle_expected, "error_points": idle - idle_expected },
            "contended": { "achieved_percent": contended, "competitor_percent": rival, "others_percent": others,
                           "expected_percent": expected, "error_points": contended - expected },
        }));
    }
    let json = json!({ "kind": "cpuoccupy", "core": core, "seconds": seconds.as_secs_f64(), "points": rows });
    Ok(Report { text, json })
}

fn memory(lab: &mut Lab, core: u32, seconds: Duration) -> Result<Report, String> {
    const MB: u64 = 1_000_000;
    let cases = [
        (
            "memleak 20 MB x 1/s (default)",
            AnomalyParams::Memleak {
                size_bytes: 20 * MB,
                rate_per_s: 1.0,
                limit_bytes: 0,
            },
        ),
        (
            "memleak 20 MB x 5/s (HPAS)",
            AnomalyParams::Memleak {
                size_bytes: 20 * MB,
                rate_per_s: 5.0,
                limit_bytes: 0,
            },
        ),
        (
            "memeater 35 MB / 1 s (default)",
            AnomalyParams::Memeater {
                buffer_bytes: 35 * MB,
                interval_ns: 1_000_000_000,
                limit_bytes: 0,
            },
        ),
        (
            "memeater 35 MB / 200 ms (HPAS)",
            AnomalyParams::Memeater {
                buffer_bytes: 35 * MB,
                interval_ns: 200_000_000,
                limit_bytes: 0,
            },
        ),
    ];
    let mut text = format!(
        "memory kernels on core {core}, {:.0} s each; growth = resident set (/proc/<pid>/statm, sampled every \
         10 ms) between the first and the last step seen / the time between them\n\n",
        seconds.as_secs_f64()
    );
    text.push_str("case                             configured MB/s   measured MB/s    ratio   steps\n");
    let mut rows = Vec::new();
    for (name, mut params) in cases {
        let rate = exp_anomaly::configured_growth_bytes_per_s(&params).ok_or("not a memory anomaly")?;
        // A limit beyond the window, so every step in it is a full one.
        let limit = (rate * (seconds.as_secs_f64() + 2.0)) as u64;
        let step = match &mut params {
            AnomalyParams::Memleak {
                size_bytes,
                limit_bytes,
                ..
            } => {
                *limit_bytes = limit;
                *size_bytes
            }
            AnomalyParams::Memeater {
                buffer_bytes,
                limit_bytes,
                ..
            } => {
                *limit_bytes = limit;
                *buffer_bytes
            }
            _ => return Err("not a memory anomaly".into()),
        };
        let mut instance = lab.start(vec![core], params, seconds + MARGIN)?;
        let start = Instant::now();
        let mut samples = Vec::new();
        while start.elapsed() < seconds {
            samples.push((
                start.elapsed().as_secs_f64(),
                instance.sample().map_err(|e| e.to_string())?.rss_bytes,
            ));
            sleep(Duration::from_millis(10));
        }
        finish(instance)?;
        let (steps, measured) =
            growth_from_steps(&samples, step).ok_or(format!("{name}: fewer than two steps seen"))?;
        text.push_str(&format!(
            "{name:<32} {:>15.2} {:>15.2} {:>8.4} {:>7}\n",
            rate / 1e6,
            measured / 1e6,
            measured / rate,
            steps
        ));
        rows.push(json!({
            "case": name, "configured_bytes_per_s": rate, "measured_bytes_per_s": measured,
            "ratio": measured / rate, "steps": steps,
        }));
    }
    let json = json!({ "kind": "memory", "core": core, "seconds": seconds.as_secs_f64(), "cases": rows });
    Ok(Report { text, json })
}

/// Growth rate from (seconds, RSS) samples of a kernel that grows in steps of
/// `step` bytes: step k is seen when the RSS first reaches the first sample +
/// (k − ½) steps; the rate is the growth between the first and last step seen
/// over the time between them. Returns (steps seen, bytes/s).
fn growth_from_steps(samples: &[(f64, u64)], step: u64) -> Option<(u64, f64)> {
    let base = samples.first()?.1 as f64;
    let mut seen: Vec<f64> = Vec::new();
    for &(t, rss) in samples {
        while rss as f64 >= base + (seen.len() as f64 + 0.5) * step as f64 {
            seen.push(t);
        }
    }
    let (first, last) = (*seen.first()?, *seen.last()?);
    if seen.len() < 2 || last <= first {
        return None;
    }
    Some((
        seen.len() as u64,
        (seen.len() - 1) as f64 * step as f64 / (last - first),
    ))
}

fn interference(lab: &mut Lab, core: u32, other: u32, seconds: Duration, array: u64) -> Result<Report, String> {
    let run_for = seconds + Duration::from_secs(30); // the victim's fill takes a while on big arrays
    let cache = |level: &str| AnomalyParams::Cachecopy {
        cache: level.into(),
        multiplier: 1.0,
        rate_ratio: 1.0,
    };
    let membw = AnomalyParams::Membw {
        buffer_bytes: 256 << 20,
        rate_ratio: 1.0,
    };
    let cases: Vec<(String, Option<(u32, AnomalyParams)>)> = vec![
        ("alone".into(), None),
        (format!("membw 256 MiB, core {other}"), Some((other, membw))),
        (format!("cachecopy L1, core {other}"), Some((other, cache("L1")))),
        (format!("cachecopy L2, core {other}"), Some((other, cache("L2")))),
        (format!("cachecopy L3, core {other}"), Some((other, cache("L3")))),
        (format!("cachecopy L1, core {core} (same)"), Some((core, cache("L1")))),
        (format!("cachecopy L2, core {core} (same)"), Some((core, cache("L2")))),
        (format!("cachecopy L3, core {core} (same)"), Some((core, cache("L3")))),
        // Again at the end: how much the machine drifted while measuring.
        ("alone (again)".into(), None),
    ];
    let mut text = format!(
        "victim: STREAM copy of {:.2} MiB arrays on core {core}, {:.0} s per case; MB/s counts bytes read + \
         written.\nslowdown = first alone / this. per CPU-s = throughput while the victim is on a CPU, which \
         leaves out\ntime lost to sharing the core (with the anomaly or with other processes).\n\n",
        array as f64 / (1u64 << 20) as f64,
        seconds.as_secs_f64()
    );
    text.push_str(
        "condition                          MB/s  slowdown  MB/s per CPU-s  slowdown  victim CPU  anomaly CPU\n",
    );
    let mut rows = Vec::new();
    let mut alone: Option<(f64, f64)> = None;
    for (name, anomaly) in cases {
        let mut instance = match anomaly {
            Some((on, params)) => Some(lab.start(vec![on], params, run_for)?),
            None => None,
        };
        sleep(Duration::from_secs(1)); // the anomaly fills its arrays first
        let before = match instance.as_mut() {
            Some(i) => Some((i.sample().map_err(|e| e.to_string())?.cpu_time_ns, Instant::now())),
            None => None,
        };
        let victim = bench::stream_copy(Some(core), array, seconds, 1).map_err(|e| e.to_string())?;
        let mut anomaly_cpu = None;
        if let (Some(mut instance), Some((cpu0, t0))) = (instance.take(), before) {
            let cpu1 = instance.sample().map_err(|e| e.to_string())?.cpu_time_ns;
            anomaly_cpu = Some(cpu1.saturating_sub(cpu0) as f64 / t0.elapsed().as_nanos() as f64 * 100.0);
            finish(instance)?;
        }
        let (mb_per_s, mb_per_cpu_s) = (victim.mb_per_s(), victim.mb_per_cpu_s());
        let (alone_wall, alone_cpu) = *alone.get_or_insert((mb_per_s, mb_per_cpu_s));
        let (slowdown, cpu_slowdown) = (alone_wall / mb_per_s, alone_cpu / mb_per_cpu_s);
        text.push_str(&format!(
            "{name:<30} {mb_per_s:>8.0} {slowdown:>8.2}x {mb_per_cpu_s:>15.0} {cpu_slowdown:>8.2}x {:>9.1} % {:>11}\n",
            victim.cpu_share() * 100.0,
            anomaly_cpu.map_or("-".to_string(), |c| format!("{c:.1} %"))
        ));
        rows.push(json!({
            "condition": name, "mb_per_s": mb_per_s, "slowdown": slowdown, "mb_per_cpu_s": mb_per_cpu_s,
            "cpu_slowdown": cpu_slowdown, "victim_cpu_percent": victim.cpu_share() * 100.0,
            "anomaly_cpu_percent": anomaly_cpu,
        }));
    }
    let json =
        json!({ "kind": "interference", "core": core, "other_core": other, "array_bytes": array, "cases": rows });
    Ok(Report { text, json })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_from_a_staircase() {
        // 10 MB steps every 0.5 s, sampled every 10 ms, on a 3 MB base.
        let samples: Vec<(f64, u64)> = (0..300)
            .map(|i| i as f64 * 0.01)
            .map(|t| (t, 3_000_000 + 10_000_000 * (1 + (t / 0.5) as u64)))
            .collect();
        let (steps, rate) = growth_from_steps(&samples, 10_000_000).unwrap();
        assert_eq!(steps, 5);
        assert!((rate / 20e6 - 1.0).abs() < 0.01, "{rate}");
        assert_eq!(growth_from_steps(&samples[..10], 10_000_000), None);
    }
}
