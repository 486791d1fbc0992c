//! The `monitor` block: system metrics (`system_metrics`) and the CPU and
//! memory of every workload process and of the runner itself
//! (`process_metrics`), sampled at the block's interval on the trial clock.
//!
//! The interval is not scaled by `--time-scale`: it is a sampling rate, not a
//! point on the experiment's timeline. A last sample is taken when the trial
//! ends, so even a trial shorter than one interval gets a row.
//!
//! It audits its own sampling: an interval longer than the bound allows
//! (`monitor_gap_factor` times the requested one) is a gap (V0501).
//!
//! Each `system_metrics` row carries `active_workloads`: the workloads whose
//! processes were alive when it was taken, the label of a diagnosis dataset.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use exp_host::{Column, ColumnType, ProcessSampler, SamplerOptions, SystemSampler};
use exp_plan::Monitor;
use exp_results::{Cell, DType, Schema};

use exp_results::validity::{Bounds, Finding};

use crate::audit::GapWatch;
use crate::cancel::Cancel;
use crate::clock::TrialClock;
use crate::executor::{ExecError, Processes, Tables};

pub fn run(
    monitor: &Monitor,
    clock: TrialClock,
    stop: Cancel,
    tables: Tables,
    processes: Processes,
    bounds: &Bounds,
) -> Result<Option<Finding>, ExecError> {
    let interval = Duration::from_nanos(monitor.interval_ns.max(1_000_000));
    let mut system = SystemSampler::new(SamplerOptions {
        per_cpu: monitor.per_cpu,
    })
    .map_err(host)?;
    // The label: the anomalies whose processes are alive at the sample.
    let system_schema = schema(crate::executor::MONITOR_TABLE, system.columns()).column("active_workloads", DType::Str);
    let system_sink = tables.sink(&system_schema);
    let mut process = ProcessSampler::new();
    let process_schema = schema("process_metrics", process.columns());
    let process_sink = tables.sink(&process_schema);
    process.watch_self();
    let mut watched = BTreeSet::new();

    let mut gaps = GapWatch::default();
    let mut next = clock.start + interval;
    loop {
        let on_time = stop.sleep_until(next);
        let t_ns = clock.now_ns();
        gaps.sample(t_ns, interval, bounds);
        let live = processes.list();
        let mut active: Vec<&str> = live.iter().map(|(workload, _)| workload.as_str()).collect();
        active.sort_unstable();
        active.dedup();
        let mut row: Vec<Cell> = system.sample(t_ns).map_err(host)?;
        row.push(Cell::Str(active.join(",")));
        let mut batch = system_schema.batch();
        batch.push_row(row)?;
        system_sink.write(batch)?;
        if monitor.processes {
            let current: BTreeSet<(String, u32)> = live.into_iter().collect();
            for (workload, pid) in current.difference(&watched) {
                process.watch(workload, *pid);
            }
            for (_, pid) in watched.difference(&current) {
                process.forget(*pid);
            }
            watched = current;
            let mut batch = process_schema.batch();
            for row in process.sample(t_ns) {
                batch.push_row(row)?;
            }
            process_sink.write(batch)?;
        }
        if !on_time {
            return Ok(gaps.finding(interval, bounds));
        }
        // After a stall, skip the missed ticks instead of sampling in a burst.
        next += interval;
        if next < Instant::now() {
            next = Instant::now() + interval;
        }
    }
}

fn schema(name: &str, columns: Vec<Column>) -> Schema {
    columns.into_iter().fold(Schema::new(name), |schema, c| {
        let dtype = match c.ty {
            // Times and durations compute as Int64 (`DType::Ns`).
            ColumnType::U64 if c.name.ends_with("_ns") => DType::Ns,
            ColumnType::U64 => DType::U64,
            ColumnType::F64 => DType::F64,
            ColumnType::Str => DType::Str,
        };
        schema.column(c.name, dtype)
    })
}

fn host(error: exp_host::HostError) -> ExecError {
    ExecError::Monitor(error)
}
