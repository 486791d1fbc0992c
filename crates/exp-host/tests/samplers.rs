//! The samplers on this machine: rows fit their schemas, a CPU burn shows
//! in the system row, watched processes appear and vanish. No tight timing
//! asserts: the machine is shared with compilers and other tests.

use std::process::{Child, Command};
use std::thread;
use std::time::{Duration, Instant};

use exp_host::{Column, ColumnType, ProcessSampler, SamplerOptions, SystemSampler, RUNNER_WORKLOAD};
use exp_results::{Cell, DType, Schema};

/// What the runtime does with the sampler's columns.
fn schema(name: &str, columns: &[Column]) -> Schema {
    columns.iter().fold(Schema::new(name), |schema, c| {
        let dtype = match c.ty {
            ColumnType::U64 => DType::U64,
            ColumnType::F64 => DType::F64,
            ColumnType::Str => DType::Str,
        };
        schema.column(c.name.clone(), dtype)
    })
}

fn value(schema: &Schema, row: &[Cell], name: &str) -> Cell {
    let index = schema
        .columns
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    row[index].clone()
}

fn f64_of(schema: &Schema, row: &[Cell], name: &str) -> f64 {
    match value(schema, row, name) {
        Cell::F64(v) => v,
        other => panic!("{name} is {other:?}"),
    }
}

fn burn(cpus: usize, how_long: Duration) {
    let workers: Vec<_> = (0..cpus)
        .map(|_| {
            thread::spawn(move || {
                let start = Instant::now();
                let mut x = 1u64;
                while start.elapsed() < how_long {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                x
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a burner thread panicked");
    }
}

#[test]
fn system_rows_fit_the_schema_and_show_a_cpu_burn() {
    let mut sampler = SystemSampler::new(SamplerOptions { per_cpu: true }).unwrap();
    let schema = schema(SystemSampler::TABLE, &sampler.columns());
    let names: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names[..3], ["t_ns", "interval_ns", "cpu_user_pct"]);
    for n in sampler.cpus() {
        assert!(names.contains(&format!("cpu{n}_iowait_pct").as_str()), "{names:?}");
    }
    let mut batch = schema.batch();
    let cpus = sampler.cpus().len();

    // Other processes may keep the CPUs busy; a burn on every CPU must still
    // raise the user share in one of a few attempts, unless it is saturated.
    let mut seen = Vec::new();
    for attempt in 0..3u64 {
        let _: Vec<Cell> = sampler.sample(attempt * 2).unwrap();
        thread::sleep(Duration::from_millis(300));
        let quiet: Vec<Cell> = sampler.sample(attempt * 2 + 1).unwrap();
        burn(cpus, Duration::from_millis(300));
        let busy: Vec<Cell> = sampler.sample(attempt * 2 + 2).unwrap();

        for row in [&quiet, &busy] {
            let shares: f64 = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
                .iter()
                .map(|s| f64_of(&schema, row, &format!("cpu_{s}_pct")))
                .sum();
            assert!((shares - 100.0).abs() < 1e-6, "{shares}");
            assert!(matches!(value(&schema, row, "mem_total_bytes"), Cell::U64(b) if b > 0));
            batch.push_row(row.clone()).unwrap();
        }
        assert!(matches!(value(&schema, &busy, "interval_ns"), Cell::U64(ns) if ns >= 300_000_000));
        // A niced test run (`nice cargo test`) burns in `nice`, not `user`.
        let user = |row: &Vec<Cell>| f64_of(&schema, row, "cpu_user_pct") + f64_of(&schema, row, "cpu_nice_pct");
        let (quiet_user, busy_user) = (user(&quiet), user(&busy));
        seen.push((quiet_user, busy_user));
        if busy_user > quiet_user || busy_user > 95.0 {
            assert_eq!(batch.rows() % 2, 0);
            return;
        }
    }
    panic!("the burn never raised cpu_user_pct + cpu_nice_pct: (quiet, busy) = {seen:?}");
}

#[test]
fn system_rows_without_per_cpu_columns() {
    let mut sampler = SystemSampler::new(SamplerOptions::default()).unwrap();
    let schema = schema(SystemSampler::TABLE, &sampler.columns());
    assert!(!schema.columns.iter().any(|c| c.name.starts_with("cpu0_")));
    let row: Vec<Cell> = sampler.sample(7).unwrap();
    assert_eq!(value(&schema, &row, "t_ns"), Cell::U64(7));
    schema.batch().push_row(row).unwrap();
}

fn busy_child() -> Child {
    Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .expect("spawn sh")
}

/// The rows' (workload, pid) pairs.
fn who(schema: &Schema, rows: &[Vec<Cell>]) -> Vec<(String, u64)> {
    rows.iter()
        .map(
            |row| match (value(schema, row, "workload"), value(schema, row, "pid")) {
                (Cell::Str(w), Cell::U64(pid)) => (w, pid),
                other => panic!("{other:?}"),
            },
        )
        .collect()
}

#[test]
fn watched_processes_come_and_go() {
    let mut sampler = ProcessSampler::new();
    let schema = schema(ProcessSampler::TABLE, &sampler.columns());
    let mut batch = schema.batch();
    let mut child = busy_child();
    let (me, kid) = (std::process::id(), child.id());
    assert!(sampler.watch("busy", kid));
    assert!(sampler.watch_self());
    assert_eq!(
        sampler.watched().collect::<Vec<_>>(),
        [("busy", kid), (RUNNER_WORKLOAD, me)]
    );

    // Until the busy child has run since it was watched (its schedstat run
    // time, ns, grows): at once on a quiet machine, later on a loaded one.
    let run_ns = || {
        exp_host::pid_thread_schedstat(kid)
            .unwrap()
            .map_or(0, |t| t.values().map(|s| s.run_ns).sum::<u64>())
    };
    let watched_at = run_ns();
    let deadline = Instant::now() + Duration::from_secs(20);
    while run_ns() < watched_at + 200_000_000 {
        assert!(Instant::now() < deadline, "the busy child never ran");
        thread::sleep(Duration::from_millis(20));
    }
    let rows: Vec<Vec<Cell>> = sampler.sample(1);
    assert_eq!(
        who(&schema, &rows),
        [
            ("busy".to_string(), u64::from(kid)),
            ("expc".to_string(), u64::from(me))
        ]
    );
    let busy = &rows[0];
    assert!(f64_of(&schema, busy, "cpu_pct") > 0.0);
    assert!(matches!(value(&schema, busy, "cpu_time_ns"), Cell::U64(ns) if ns > 0));
    assert!(matches!(value(&schema, busy, "rss_bytes"), Cell::U64(b) if b > 0));
    assert_eq!(value(&schema, busy, "threads"), Cell::U64(1));
    assert!(matches!(value(&schema, &rows[1], "threads"), Cell::U64(n) if n >= 1));
    for row in rows {
        batch.push_row(row).unwrap();
    }

    // A killed child that is not reaped yet is a zombie: it has exited.
    child.kill().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while exp_host::pid_stat(kid).unwrap().is_some_and(|s| !s.has_exited()) {
        assert!(Instant::now() < deadline, "the child did not die");
        thread::sleep(Duration::from_millis(10));
    }
    let rows: Vec<Vec<Cell>> = sampler.sample(2);
    assert_eq!(who(&schema, &rows), [("expc".to_string(), u64::from(me))]);
    assert_eq!(sampler.watched().count(), 1, "the exited process is no longer watched");
    child.wait().unwrap();
    assert_eq!(sampler.sample::<Cell>(3).len(), 1);

    assert!(!sampler.watch("gone", kid), "a reaped process cannot be watched");
    assert!(sampler.forget(me));
    assert!(sampler.sample::<Cell>(4).is_empty());
    assert!(sampler.take_errors().is_empty());
}

#[test]
fn cpu_time_keeps_the_work_of_threads_that_exited() {
    let mut sampler = ProcessSampler::new();
    assert!(sampler.watch_self());
    let schema = schema(ProcessSampler::TABLE, &sampler.columns());
    let cpu_time = |rows: &[Vec<Cell>]| match value(&schema, &rows[0], "cpu_time_ns") {
        Cell::U64(ns) => ns,
        other => panic!("{other:?}"),
    };
    let before = cpu_time(&sampler.sample(0));
    // A thread that starts and exits between two samples is lost (see the
    // module docs); one that is sampled while it runs is kept after it exits.
    let (started, running) = std::sync::mpsc::channel();
    let worker = thread::spawn(move || {
        burn(1, Duration::from_millis(50));
        started.send(()).unwrap();
        burn(1, Duration::from_millis(300));
    });
    // Sampled while the worker runs, after it has done some work.
    running.recv().unwrap();
    let during = cpu_time(&sampler.sample(1));
    worker.join().unwrap();
    let after = cpu_time(&sampler.sample(2));
    assert!(during > before, "{before} → {during}");
    assert!(after >= during, "cumulative CPU time never falls: {during} → {after}");
}
