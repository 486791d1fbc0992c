//! /proc/stat: CPU time in jiffies, context switches, forks and the run queue.

use crate::{parse_error, parse_u64, read, HostError};

const PATH: &str = "/proc/stat";

/// Time one CPU (or all of them, summed) spent in each state, in clock ticks
/// (`USER_HZ`, see [`crate::clock_ticks_per_s`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// All ticks of the CPU. The `guest` and `guest_nice` columns are not
    /// read: the kernel already counts them in `user` and `nice`.
    pub fn total(&self) -> u64 {
        self.as_array().iter().fold(0, |sum, &t| sum.saturating_add(t))
    }

    /// The states in column order: user nice system idle iowait irq softirq steal.
    pub fn as_array(&self) -> [u64; 8] {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
    }

    /// The values after the `cpu`/`cpuN` label. Kernels before 2.6.11 print
    /// fewer than eight; the missing states are 0.
    fn parse(label: &str, words: &[&str]) -> Result<Self, HostError> {
        if words.len() < 4 {
            return Err(parse_error(
                PATH,
                format!("`{label}` has {} values, expected at least 4", words.len()),
            ));
        }
        let mut t = [0u64; 8];
        for (slot, word) in t.iter_mut().zip(words) {
            *slot = parse_u64(PATH, label, Some(word))?;
        }
        let [user, nice, system, idle, iowait, irq, softirq, steal] = t;
        Ok(CpuTimes {
            user,
            nice,
            system,
            idle,
            iowait,
            irq,
            softirq,
            steal,
        })
    }
}

/// The parts of /proc/stat the sampler uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// All CPUs summed (the `cpu` line).
    pub cpu: CpuTimes,
    /// Each online CPU (`cpuN` lines), by CPU number, in file order.
    pub cpus: Vec<(u32, CpuTimes)>,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Processes and threads created since boot.
    pub processes: u64,
    /// Tasks runnable now.
    pub procs_running: u64,
    /// Tasks blocked on I/O now.
    pub procs_blocked: u64,
}

impl ProcStat {
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let mut stat = ProcStat::default();
        let (mut cpu, mut ctxt, mut processes, mut running, mut blocked) = (false, false, false, false, false);
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(label) = words.next() else { continue };
            match label {
                "cpu" => {
                    stat.cpu = CpuTimes::parse(label, &words.collect::<Vec<_>>())?;
                    cpu = true;
                }
                "ctxt" => (stat.ctxt, ctxt) = (parse_u64(PATH, label, words.next())?, true),
                "processes" => (stat.processes, processes) = (parse_u64(PATH, label, words.next())?, true),
                "procs_running" => (stat.procs_running, running) = (parse_u64(PATH, label, words.next())?, true),
                "procs_blocked" => (stat.procs_blocked, blocked) = (parse_u64(PATH, label, words.next())?, true),
                _ => {
                    if let Some(n) = label.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) {
                        stat.cpus.push((n, CpuTimes::parse(label, &words.collect::<Vec<_>>())?));
                    }
                }
            }
        }
        // A missing line would otherwise read as a counter stuck at 0.
        let seen = [
            (cpu, "cpu"),
            (ctxt, "ctxt"),
            (processes, "processes"),
            (running, "procs_running"),
            (blocked, "procs_blocked"),
        ];
        for (seen, name) in seen {
            if !seen {
                return Err(parse_error(PATH, format!("no `{name}` line")));
            }
        }
        Ok(stat)
    }

    /// The times of CPU `n`, if it is online.
    pub fn cpu(&self, n: u32) -> Option<&CpuTimes> {
        self.cpus.iter().find(|(m, _)| *m == n).map(|(_, t)| t)
    }
}

pub fn proc_stat() -> Result<ProcStat, HostError> {
    ProcStat::parse(&read(PATH)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From a 2-CPU VM (the `intr` line shortened).
    const FIXTURE: &str = "\
cpu  200838 0 16689 135789 1044 0 150 1158 0 0
cpu0 97883 0 8183 70997 185 0 24 570 0 0
cpu1 102954 0 8505 64791 859 0 125 587 0 0
intr 1075088 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 15
ctxt 1424571
btime 1795284701
processes 59314
procs_running 1
procs_blocked 0
softirq 472715 0 83299 4 9201 71376 0 553 95514 0 212768
";

    #[test]
    fn parses_the_fixture() {
        let stat = ProcStat::parse(FIXTURE).unwrap();
        assert_eq!(
            stat.cpu,
            CpuTimes {
                user: 200838,
                nice: 0,
                system: 16689,
                idle: 135789,
                iowait: 1044,
                irq: 0,
                softirq: 150,
                steal: 1158
            }
        );
        assert_eq!(stat.cpu.total(), 200838 + 16689 + 135789 + 1044 + 150 + 1158);
        assert_eq!(stat.cpus.len(), 2);
        assert_eq!(stat.cpu(1).unwrap().iowait, 859);
        assert_eq!(stat.cpu(2), None);
        assert_eq!(
            (stat.ctxt, stat.processes, stat.procs_running, stat.procs_blocked),
            (1424571, 59314, 1, 0)
        );
    }

    #[test]
    fn old_kernels_print_fewer_states() {
        let text = "cpu 1 2 3 4\nctxt 1\nprocesses 2\nprocs_running 3\nprocs_blocked 4\n";
        let stat = ProcStat::parse(text).unwrap();
        assert_eq!(stat.cpu.idle, 4);
        assert_eq!(stat.cpu.steal, 0);
    }

    #[test]
    fn damage_is_an_error() {
        let err = ProcStat::parse("cpu 1 2 x 4\n").unwrap_err();
        assert!(err.to_string().contains("`x`"), "{err}");
        let err = ProcStat::parse(&FIXTURE.replace("ctxt", "ctx")).unwrap_err();
        assert!(err.to_string().contains("no `ctxt` line"), "{err}");
        assert!(ProcStat::parse("cpu 1 2\n").is_err());
    }

    #[test]
    fn reads_this_machine() {
        let stat = proc_stat().unwrap();
        assert!(stat.cpu.total() > 0);
        assert!(!stat.cpus.is_empty());
    }
}
