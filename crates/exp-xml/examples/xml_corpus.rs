//! Writes a benchmark corpus for `expc xml extract` (see
//! `bench/xml-extract.sh`), deterministic for a given kind and size.
//!
//! `cargo run --release -p exp-xml --example xml_corpus -- KIND MB OUT [DIR]`
//!
//! - `eventlog`: a Windows System event-log export (`wevtutil qe System
//!   /f:RenderedXml` wrapped in `<Events>`): ten providers with their event
//!   ids, qualifiers, levels, tasks and keywords, sequential record ids,
//!   process and thread ids, timestamps, event data and a rendered message.
//!   Split it at `Event`.
//! - `devices`: device telemetry with 72 numeric elements (gauges,
//!   latencies, ratios and counts drawn from gamma, log-normal, normal,
//!   Weibull, beta, Poisson and geometric laws) and a few categorical ones.
//!   Split it at `reading`.
//! - `fleet`: a device fleet's status reports, about 370 bytes each, with 8
//!   numeric elements and a few categorical ones (7.5 MB is some 20,000
//!   reports). Split it at `reading`.
//!
//! With DIR, the same documents are also written one per file into DIR
//! (created; `000000.xml`, `000001.xml`, … in document order), each file
//! wrapped in the same root element as OUT: both layouts hold the same
//! documents under the same root, so they extract to the same set.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use exp_plan::{Dist, DistValue, Unit};
use exp_stats::{sampler::standard_normal, Rng, Sampler};

const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kind, mb, out, dir) = match args.as_slice() {
        [kind, mb, out] => (kind, mb, out, None),
        [kind, mb, out, dir] => (kind, mb, out, Some(dir)),
        _ => {
            eprintln!("usage: xml_corpus eventlog|devices|fleet MB OUT [DIR]");
            std::process::exit(2);
        }
    };
    let Ok(mb) = mb.parse::<f64>() else {
        eprintln!("MB must be a number, got {mb:?}");
        std::process::exit(2);
    };
    let target = (mb * 1e6) as usize;
    let (root, documents) = match kind.as_str() {
        "eventlog" => ("Events", event_log(target)),
        "devices" => ("telemetry", devices(target)),
        "fleet" => ("fleet", fleet(target)),
        other => {
            eprintln!("unknown corpus kind {other:?}: eventlog, devices or fleet");
            std::process::exit(2);
        }
    };
    let mut text = format!("{DECLARATION}<{root}>\n");
    documents.iter().for_each(|d| text.push_str(d));
    let _ = writeln!(text, "</{root}>");
    if let Err(e) = std::fs::File::create(out).and_then(|mut f| f.write_all(text.as_bytes())) {
        eprintln!("{out}: {e}");
        std::process::exit(1);
    }
    if let Some(dir) = dir {
        if let Err(e) = write_files(Path::new(dir), root, &documents) {
            eprintln!("{dir}: {e}");
            std::process::exit(1);
        }
    }
}

/// One file per document in `dir`, each under its own `root`.
fn write_files(dir: &Path, root: &str, documents: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (i, document) in documents.iter().enumerate() {
        let text = format!("{DECLARATION}<{root}>\n{document}</{root}>\n");
        std::fs::write(dir.join(format!("{i:06}.xml")), text)?;
    }
    Ok(())
}

/// Documents of about `target` bytes in all, drawn by `one` until then.
fn until(target: usize, mut one: impl FnMut(&mut String)) -> Vec<String> {
    let (mut documents, mut total) = (Vec::new(), 0);
    while total < target {
        let mut s = String::new();
        one(&mut s);
        total += s.len();
        documents.push(s);
    }
    documents
}

/// A provider of the System log and how its events look.
struct Provider {
    name: &'static str,
    guid: Option<&'static str>,
    /// (event id, qualifiers, level, task, message template).
    events: &'static [(u32, Option<u32>, u8, u16, &'static str)],
    keywords: &'static str,
    data: fn(&mut Rng, &mut String),
}

const SERVICES: [&str; 8] = [
    "Windows Update",
    "Background Intelligent Transfer Service",
    "Windows Modules Installer",
    "Microsoft Defender Antivirus Service",
    "Windows Error Reporting Service",
    "Delivery Optimization",
    "Print Spooler",
    "WinHTTP Web Proxy Auto-Discovery Service",
];
const STATES: [&str; 2] = ["running", "stopped"];

const PROVIDERS: [Provider; 6] = [
    Provider {
        name: "Service Control Manager",
        guid: Some("{555908d1-a6d7-4695-8e1e-26931d2012f4}"),
        events: &[
            (7036, Some(16384), 4, 0, "The {0} service entered the {1} state."),
            (7040, Some(16384), 4, 0, "The start type of the {0} service was changed from demand start to auto start."),
        ],
        keywords: "0x8080000000000000",
        data: |rng, s| {
            let service = SERVICES[rng.below(SERVICES.len() as u64) as usize];
            let state = STATES[rng.below(2) as usize];
            let _ = write!(
                s,
                "<Data Name='param1'>{service}</Data><Data Name='param2'>{state}</Data><Binary>{:X}</Binary>",
                0x5700_0000_0000_u64 + rng.below(1 << 40)
            );
        },
    },
    Provider {
        name: "Microsoft-Windows-Kernel-General",
        guid: Some("{a68ca8b7-004f-d7b6-a698-07e2de0f1f5d}"),
        events: &[
            (1, None, 4, 5, "The system time has changed to {0} from {1}. Change Reason: System time synchronized with the hardware clock."),
            (16, None, 4, 6, "The access history in hive \\??\\C:\\Users\\user\\ntuser.dat was cleared updating {0} keys and creating {1} modified pages."),
        ],
        keywords: "0x8000000000000010",
        data: |rng, s| {
            let _ = write!(
                s,
                "<Data Name='HiveName'>\\??\\C:\\Windows\\ServiceProfiles\\LocalService\\NTUSER.DAT</Data><Data Name='KeysUpdated'>{}</Data><Data Name='DirtyPages'>{}</Data>",
                rng.below(400),
                // Gamma(2, 12): the sum of two exponentials.
                (-12.0 * (rng.open01() * rng.open01()).ln()) as u64
            );
        },
    },
    Provider {
        name: "Microsoft-Windows-Kernel-Processor-Power",
        guid: Some("{0f67e49f-fe51-4e9f-b490-6f2948cc6027}"),
        events: &[(55, None, 4, 47, "Processor {0} in group {1} exposes the following power management capabilities.")],
        keywords: "0x8000000000000000",
        data: |rng, s| {
            let _ = write!(
                s,
                "<Data Name='Group'>0</Data><Data Name='Number'>{}</Data><Data Name='IdleStateCount'>{}</Data><Data Name='NominalFrequency'>{}</Data><Data Name='MaximumPerformancePercentage'>{}</Data><Data Name='MinimumThrottlePercentage'>{}</Data>",
                rng.below(16),
                1 + rng.below(3),
                1800 + 100 * rng.below(20),
                100 + rng.below(60),
                (5.0 + 3.0 * standard_normal(rng)).abs().round()
            );
        },
    },
    Provider {
        name: "EventLog",
        guid: None,
        events: &[
            (6013, Some(32768), 4, 0, "The system uptime is {0} seconds."),
            (6005, Some(32768), 4, 0, "The Event log service was started."),
        ],
        keywords: "0x80000000000000",
        data: |rng, s| {
            let _ = write!(
                s,
                "<Data>{}</Data><Data>60</Data><Data>-60 Coordinated Universal Time</Data><Binary>31002E0030002E0031003900</Binary>",
                (3600.0 * (1.0 + 1.5 * standard_normal(rng)).exp()) as u64
            );
        },
    },
    Provider {
        name: "Microsoft-Windows-Time-Service",
        guid: Some("{06edcfeb-0fd0-4e53-acca-a6f8bbf81bcb}"),
        events: &[(37, None, 4, 0, "The time provider NtpClient is currently receiving valid time data from {0}.")],
        keywords: "0x8000000000000000",
        data: |rng, s| {
            let _ = write!(
                s,
                "<Data Name='TimeSource'>time.windows.com,0x8 (ntp.m|0x8|0.0.0.0:123-&gt;10.0.{}.{}:123)</Data><Data Name='Offset'>{:.6}</Data>",
                rng.below(4),
                rng.below(250),
                0.002 * standard_normal(rng)
            );
        },
    },
    Provider {
        name: "Microsoft-Windows-WindowsUpdateClient",
        guid: Some("{945a8954-c147-4acd-923f-40c45405a658}"),
        events: &[
            (19, None, 4, 1, "Installation Successful: Windows successfully installed the following update: {0}"),
            (44, None, 4, 1, "Windows Update started downloading an update."),
        ],
        keywords: "0x8000000000000018",
        data: |rng, s| {
            let _ = write!(
                s,
                "<Data Name='updateTitle'>Security Intelligence Update for Microsoft Defender Antivirus - KB2267602 (Version 1.{}.{}.0)</Data><Data Name='updateGuid'>{{{:08x}-8cd3-4a4a-b1e5-{:012x}}}</Data><Data Name='updateRevisionNumber'>{}</Data><Data Name='serviceGuid'>{{9482f4b4-e343-43b6-b170-9a65bc822c77}}</Data>",
                380 + rng.below(20),
                rng.below(2000),
                rng.below(1 << 32),
                rng.below(1 << 48),
                200 + rng.below(10)
            );
        },
    },
];

fn event_log(target: usize) -> Vec<String> {
    let mut rng = Rng::new(7);
    let mut record: u64 = 104_233;
    let mut time_ms: u64 = 1_700_000_000_000;
    until(target, |s| {
        let provider = &PROVIDERS[rng.below(PROVIDERS.len() as u64) as usize];
        let (id, qualifiers, level, task, message) = provider.events[rng.below(provider.events.len() as u64) as usize];
        record += 1;
        time_ms += (-rng.open01().ln() * 40_000.0) as u64;
        s.push_str("<Event xmlns='http://schemas.microsoft.com/win/2004/08/events/event'><System>");
        match provider.guid {
            Some(guid) => {
                let _ = write!(
                    s,
                    "<Provider Name='{}' Guid='{guid}' EventSourceName='{}'/>",
                    provider.name, provider.name
                );
            }
            None => {
                let _ = write!(s, "<Provider Name='{}'/>", provider.name);
            }
        }
        match qualifiers {
            Some(q) => {
                let _ = write!(s, "<EventID Qualifiers='{q}'>{id}</EventID>");
            }
            None => {
                let _ = write!(s, "<EventID>{id}</EventID>");
            }
        }
        let (secs, ms) = (time_ms / 1000, time_ms % 1000);
        let _ = write!(
            s,
            "<Version>{}</Version><Level>{level}</Level><Task>{task}</Task><Opcode>0</Opcode><Keywords>{}</Keywords><TimeCreated SystemTime='{}.{ms:03}{:04}Z'/><EventRecordID>{record}</EventRecordID><Correlation/><Execution ProcessID='{}' ThreadID='{}'/><Channel>System</Channel><Computer>WS-{:03}.corp.example</Computer><Security{}/></System><EventData>",
            rng.below(3),
            provider.keywords,
            iso_seconds(secs),
            rng.below(10_000),
            [4, 816, 1204, 2968][rng.below(4) as usize],
            4 * (1 + rng.below(3000)),
            rng.below(3),
            if rng.below(3) == 0 { " UserID='S-1-5-18'" } else { "" },
        );
        (provider.data)(&mut rng, s);
        let _ = writeln!(
            s,
            "</EventData><RenderingInfo Culture='en-US'><Message>{message}</Message><Level>Information</Level><Task></Task><Opcode>Info</Opcode><Channel>System</Channel><Provider>{}</Provider><Keywords><Keyword>Classic</Keyword></Keywords></RenderingInfo></Event>",
            provider.name
        );
    })
}

/// `YYYY-MM-DDTHH:MM:SS` of a Unix time (proleptic Gregorian, UTC).
fn iso_seconds(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A seeded sampler of the project's distributions (`exp_stats::Sampler`).
fn sampler(dist: Dist) -> Sampler {
    Sampler::new(&DistValue {
        unit: Unit::Count,
        dist,
    })
    .expect("valid constant parameters")
}

/// How one numeric device metric is drawn and written.
enum Law {
    /// A distribution, written with this many decimals.
    Dist(Sampler, usize),
    /// Beta(a, b) as Ga/(Ga + Gb) from two gamma samplers, 4 decimals.
    Beta(Sampler, Sampler),
}

impl Law {
    fn draw(&self, rng: &mut Rng) -> f64 {
        match self {
            Law::Dist(d, _) => d.sample(rng),
            Law::Beta(a, b) => {
                let x = a.sample(rng);
                x / (x + b.sample(rng))
            }
        }
    }

    fn decimals(&self) -> usize {
        match self {
            Law::Dist(_, decimals) => *decimals,
            Law::Beta(..) => 4,
        }
    }
}

const GROUPS: [&str; 6] = ["cpu", "mem", "disk", "net", "power", "radio"];

/// 72 metrics: 12 per group, each group cycling through the laws; counts
/// are written as integers, the rest with 1–3 decimals.
fn metric_laws() -> Vec<(String, Law)> {
    let mut out = Vec::new();
    for (g, group) in GROUPS.iter().enumerate() {
        for i in 0..12 {
            let scale = (1 + g * 12 + i) as f64;
            let decimals = 1 + i % 3;
            let law = match i % 7 {
                0 => Law::Dist(
                    sampler(Dist::Gamma {
                        shape: 2.0 + (i % 3) as f64,
                        scale,
                    }),
                    decimals,
                ),
                1 => Law::Dist(
                    sampler(Dist::Lognormal {
                        shape: 0.6,
                        scale: (1.0 + 0.1 * scale).exp(),
                        location: 0.0,
                    }),
                    decimals,
                ),
                2 => Law::Dist(
                    sampler(Dist::Normal {
                        mean: 50.0 + scale,
                        sd: 4.0 + scale * 0.1,
                    }),
                    decimals,
                ),
                3 => Law::Dist(
                    sampler(Dist::Weibull {
                        shape: 1.5,
                        scale: 10.0 * scale,
                    }),
                    decimals,
                ),
                4 => Law::Beta(
                    sampler(Dist::Gamma { shape: 2.0, scale: 1.0 }),
                    sampler(Dist::Gamma { shape: 5.0, scale: 1.0 }),
                ),
                5 => Law::Dist(sampler(Dist::Poisson { mean: 12.0 }), 0),
                _ => Law::Dist(sampler(Dist::Geometric { p: 0.3 }), 0),
            };
            out.push((format!("{group}_{i:02}"), law));
        }
    }
    out
}

fn devices(target: usize) -> Vec<String> {
    let mut rng = Rng::new(11);
    let laws = metric_laws();
    until(target, |s| {
        let _ = write!(
            s,
            "<reading device='dev-{:04}'><model>{}</model><fw>2.{}</fw>",
            rng.below(500),
            ["sx10", "sx20", "lx5"][rng.below(3) as usize],
            rng.below(4)
        );
        for (name, law) in &laws {
            let value = law.draw(&mut rng);
            let _ = write!(s, "<{name}>{value:.prec$}</{name}>", prec = law.decimals());
        }
        let _ = writeln!(
            s,
            "<status>{}</status></reading>",
            ["ok", "ok", "ok", "degraded", "fault"][rng.below(5) as usize]
        );
    })
}

/// A fleet device's status report: identity and place (categorical), 8
/// numeric readings, a status.
fn fleet(target: usize) -> Vec<String> {
    let mut rng = Rng::new(13);
    let battery = sampler(Dist::Normal { mean: 78.0, sd: 9.0 });
    let temperature = sampler(Dist::Gamma { shape: 9.0, scale: 4.5 });
    let latency = sampler(Dist::Lognormal {
        shape: 0.5,
        scale: 20.0,
        location: 0.0,
    });
    let uptime = sampler(Dist::Weibull {
        shape: 1.3,
        scale: 250_000.0,
    });
    let retries = sampler(Dist::Poisson { mean: 3.0 });
    let errors = sampler(Dist::Geometric { p: 0.4 });
    let load = (
        sampler(Dist::Gamma { shape: 2.0, scale: 1.0 }),
        sampler(Dist::Gamma { shape: 3.0, scale: 1.0 }),
    );
    let mut time_s: u64 = 1_700_000_000;
    until(target, |s| {
        time_s += 1 + rng.below(20);
        let device = rng.below(2000);
        let x = load.0.sample(&mut rng);
        let _ = writeln!(
            s,
            "<reading device='fd-{device:05}' site='site-{}'><time>{}Z</time><model>{}</model><firmware>4.{}.{}</firmware>\
             <battery>{:.1}</battery><temperature>{:.2}</temperature><rssi>{}</rssi><latency>{:.3}</latency>\
             <uptime>{:.0}</uptime><load>{:.4}</load><retries>{}</retries><errors>{}</errors>\
             <status>{}</status><note>scheduled report</note></reading>",
            device % 12,
            iso_seconds(time_s),
            ["fx100", "fx200", "fx210", "gx9"][rng.below(4) as usize],
            rng.below(3),
            rng.below(12),
            battery.sample(&mut rng).clamp(0.0, 100.0),
            temperature.sample(&mut rng),
            -40 - rng.below(60) as i64,
            latency.sample(&mut rng),
            uptime.sample(&mut rng),
            x / (x + load.1.sample(&mut rng)),
            retries.sample(&mut rng),
            errors.sample(&mut rng),
            ["ok", "ok", "ok", "ok", "degraded", "fault"][rng.below(6) as usize]
        );
    })
}
