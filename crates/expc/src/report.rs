//! `expc report RUN_DIR`: the MQTT fleet report, if the run has fleets,
//! then per-trial summaries of every table of the run; with `--html` or
//! `--svg`, the run's figures instead; with several run directories, each
//! run against the first. exp-report reads the runs and renders them; this
//! chooses the output and writes it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use exp_report::compare::{compare, compare_points, mismatch, overlay, Options, RunComparison};
use exp_report::figures::{figures, sweep_table, Figure, SweepTable};
use exp_report::html::{page, Tables};
use exp_report::methods::methods_paragraph;
use exp_report::{run_report, RunReport};
use exp_results::{open_run, RunView, Warning};

#[derive(clap::Args)]
pub struct Args {
    /// A run directory (`runs/<experiment>/<run-id>`); more than one
    /// compares each with the first.
    #[arg(required = true, value_name = "RUN_DIR")]
    dirs: Vec<PathBuf>,
    /// Print the summary as JSON for machines.
    #[arg(long)]
    json: bool,
    /// Write the report as one offline HTML file with every figure
    /// (default: report.html in the first run directory; `/dev/null` to
    /// try without keeping it).
    #[arg(long, value_name = "PATH")]
    #[allow(clippy::option_option)] // absent, `--html` or `--html PATH`
    html: Option<Option<PathBuf>>,
    /// Write each figure as DIR/<figure>.svg.
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// Runs compared: the equivalence margin, relative to the baseline's
    /// mean (a metric is `equivalent` when two one-sided tests put the
    /// difference within it).
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = parse_margin)]
    margin: f64,
    /// Count trials an audit found invalid too: in the sweep table and
    /// figures, and in runs compared (left out by default, and counted
    /// with their reasons).
    #[arg(long)]
    include_invalid: bool,
    /// Evaluate the plan's claims again from the run's tables, print
    /// their verdicts and exit 0 if all are supported, 3 if any is
    /// refuted, else 4 if any is inconclusive.
    #[arg(long)]
    check: bool,
    /// Write the claims' verdicts as JUnit XML, one test case per claim.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Compare two sweep points of one run as two runs are compared (Welch
    /// and the equivalence verdict per metric), point A the baseline;
    /// points by index, as the dry run and the manifest number them.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    points: Option<Vec<u32>>,
}

/// `5%` → 0.05; the margin is written as a percentage, above 0.
fn parse_margin(text: &str) -> Result<f64, String> {
    let number = text
        .trim()
        .strip_suffix('%')
        .ok_or_else(|| format!("write the margin as a percentage, e.g. `5%` (got `{text}`)"))?;
    match number.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p.is_finite() => Ok(p / 100.0),
        _ => Err(format!(
            "the margin must be a percentage above 0, e.g. `5%` (got `{text}`)"
        )),
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let views = args
        .dirs
        .iter()
        .map(|dir| open_run(dir).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if (args.check || args.junit.is_some()) && views.len() > 1 {
        return Err("`--check` and `--junit` take one run directory".into());
    }
    if args.check {
        return check(&views[0], &args);
    }
    if let Some(points) = &args.points {
        return print_point_comparison(&views, points, &args);
    }
    if args.html.is_some() || args.svg.is_some() {
        return write_figures(&args, &views);
    }
    match views.as_slice() {
        [one] => print_report(one, &args),
        [baseline, others @ ..] => print_comparison(baseline, others, &args),
        [] => Ok(ExitCode::SUCCESS),
    }
}

/// `--check`: the claims' verdicts from the tables, as text or JSON, and
/// the exit status they give.
fn check(view: &RunView, args: &Args) -> Result<ExitCode, String> {
    let plan = load_plan(&view.dir).ok_or_else(|| format!("{}: no readable plan.json", view.dir.display()))?;
    let (claims, warnings) = crate::claims::evaluate(view, Some(&plan), args.include_invalid);
    warn(&warnings);
    write_junit(view, args, &claims)?;
    let text = if args.json {
        serde_json::to_string_pretty(&claims).map_err(|e| e.to_string())? + "\n"
    } else if claims.is_empty() {
        "the plan has no claims\n".to_string()
    } else {
        exp_report::claims::text(&claims)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(crate::claims::exit_code(&claims))
}

/// `expc run --junit FILE`: the claims of the run at `dir`, evaluated from
/// its tables and written as `expc report DIR --junit FILE` writes them.
pub(crate) fn write_run_junit(dir: &Path, path: &Path, include_invalid: bool) -> Result<(), String> {
    let view = open_run(dir).map_err(|e| e.to_string())?;
    let plan = load_plan(&view.dir);
    let (claims, warnings) = crate::claims::evaluate(&view, plan.as_ref(), include_invalid);
    warn(&warnings);
    crate::claims::write_junit(path, &run_name(&view), &claims)
}

fn write_junit(view: &RunView, args: &Args, claims: &[exp_results::claims::ClaimRecord]) -> Result<(), String> {
    match &args.junit {
        Some(path) => crate::claims::write_junit(path, &run_name(view), claims),
        None => Ok(()),
    }
}

fn print_report(view: &RunView, args: &Args) -> Result<ExitCode, String> {
    let (json, include_invalid) = (args.json, args.include_invalid);
    let RunReport { summary, mqtt, traffic } = run_report(view);
    let plan = load_plan(&view.dir);
    let (claims, claim_warnings) = crate::claims::evaluate(view, plan.as_ref(), include_invalid);
    warn(&claim_warnings);
    write_junit(view, args, &claims)?;
    let sweep = sweep_table(&view.manifest, plan.as_ref(), include_invalid);
    let methods = methods_paragraph(&view.manifest, plan.as_ref(), &sweep);
    let text = if json {
        let value = exp_report::json::report(&summary, mqtt.as_ref(), traffic.as_ref()).map_err(|e| e.to_string())?;
        let mut value = exp_report::json::with_validity(value, &view.manifest);
        if let Some(fields) = value.as_object_mut() {
            if !claims.is_empty() {
                fields.insert(
                    "claims".into(),
                    serde_json::to_value(&claims).map_err(|e| e.to_string())?,
                );
            }
            fields.insert("sweep".into(), sweep.to_json());
            fields.insert("methods".into(), methods.into());
        }
        serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n"
    } else {
        let mut text = exp_report::claims::text(&claims);
        text.push_str(&exp_report::text::report(
            view,
            &summary,
            mqtt.as_ref(),
            traffic.as_ref(),
        ));
        text.push_str(&exp_report::text::sweep::render(&sweep, &view.manifest));
        text.push_str(&format!("\n{methods}\n"));
        text
    };
    // A closed pipe (`| head`) ends the output quietly.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    warn(&summary.warnings);
    Ok(ExitCode::SUCCESS)
}

fn warn(warnings: &[Warning]) {
    for warning in warnings {
        errln!("warning: {}: {}", warning.path.display(), warning.message);
    }
}

/// Each run against the baseline, as text or JSON.
fn print_comparison(baseline: &RunView, others: &[RunView], args: &Args) -> Result<ExitCode, String> {
    let comparisons = comparisons(baseline, others, args);
    let text = if args.json {
        let values = comparisons
            .iter()
            .map(exp_report::json::comparison)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        serde_json::to_string_pretty(&values).map_err(|e| e.to_string())? + "\n"
    } else {
        comparisons.iter().map(exp_report::text::compare::render).collect()
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// `--points A B`: point B of one run against its point A, as text or JSON.
fn print_point_comparison(views: &[RunView], points: &[u32], args: &Args) -> Result<ExitCode, String> {
    let ([view], [a, b]) = (views, points) else {
        return Err("--points compares two points of one run: give one run directory".into());
    };
    if args.html.is_some() || args.svg.is_some() {
        return Err("--points prints a table; it draws no figures (leave out --html and --svg)".into());
    }
    let options = Options {
        margin: args.margin,
        include_invalid: args.include_invalid,
    };
    let plan = load_plan(&view.dir);
    let comparison = compare_points((&view.manifest, plan.as_ref()), *a, *b, options).map_err(|e| e.to_string())?;
    let text = if args.json {
        let value = exp_report::json::comparison(&comparison).map_err(|e| e.to_string())?;
        serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n"
    } else {
        exp_report::text::compare::render(&comparison)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// Each of `others` against `baseline`, with a warning for each that is not
/// a run of the baseline's plan and for each with nothing to compare.
fn comparisons(baseline: &RunView, others: &[RunView], args: &Args) -> Vec<RunComparison> {
    let options = Options {
        margin: args.margin,
        include_invalid: args.include_invalid,
    };
    let baseline_plan = load_plan(&baseline.dir);
    others
        .iter()
        .map(|other| {
            warn(mismatch(baseline, other).as_slice());
            let other_plan = load_plan(&other.dir);
            let c = compare(
                (&baseline.manifest, baseline_plan.as_ref()),
                (&other.manifest, other_plan.as_ref()),
                options,
            );
            if args.json && c.metrics.is_empty() {
                errln!("warning: {}: no metric at a point both runs have", other.dir.display());
            }
            c
        })
        .collect()
}

/// `--html` and `--svg`: every figure of one run, or of the runs overlaid.
fn write_figures(args: &Args, views: &[RunView]) -> Result<ExitCode, String> {
    let plans: Vec<_> = views.iter().map(|view| load_plan(&view.dir)).collect();
    let mut per_run = Vec::new();
    for (view, plan) in views.iter().zip(&plans) {
        let (figures, mut warnings) = figures(view, plan.as_ref(), args.include_invalid).map_err(|e| e.to_string())?;
        warnings.extend(exp_report::expected::missing_tables(view));
        warn(&warnings);
        per_run.push((run_name(view), figures));
    }
    let ids: Vec<Vec<String>> = per_run
        .iter()
        .map(|(_, figures)| figures.iter().map(|f| f.id.clone()).collect())
        .collect();
    let mut manifests: Vec<_> = views.iter().map(|v| v.manifest.clone()).collect();
    let (figures, tables_owned) = match views {
        [one] => {
            let plan = plans[0].as_ref();
            // The claims as the tables give them now, at the top of the page.
            let (claims, warnings) = crate::claims::evaluate(one, plan, args.include_invalid);
            warn(&warnings);
            write_junit(one, args, &claims)?;
            manifests[0].claims = claims;
            let table = sweep_table(&one.manifest, plan, args.include_invalid);
            let methods = methods_paragraph(&one.manifest, plan, &table);
            (per_run.remove(0).1, Owned::Sweep(table, methods))
        }
        [baseline, others @ ..] => (overlay(per_run), Owned::Diffs(comparisons(baseline, others, args))),
        [] => return Ok(ExitCode::SUCCESS),
    };
    if figures.is_empty() {
        errln!("warning: {}", no_figures_why(views, &ids));
    }
    if let Some(dir) = &args.svg {
        write_svgs(dir, &figures)?;
    }
    if let Some(path) = &args.html {
        let path = path.clone().unwrap_or_else(|| views[0].dir.join("report.html"));
        let runs: Vec<_> = manifests.iter().zip(&plans).map(|(m, p)| (m, p.as_ref())).collect();
        let tables = match &tables_owned {
            Owned::Sweep(table, methods) => Tables::Sweep { table, methods },
            Owned::Diffs(diffs) => Tables::Comparison(diffs),
        };
        let html = page(&runs, &figures, &tables).map_err(|e| e.to_string())?;
        exp_files::write_file(&path, html.as_bytes()).map_err(|e| e.to_string())?;
        errln!("wrote {} ({} figures)", path.display(), figures.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// Why there is no figure to write: a run with no table a figure is drawn
/// from, or runs without a figure in common (only those are overlaid).
fn no_figures_why(views: &[RunView], ids: &[Vec<String>]) -> String {
    let listed = |ids: &[String]| {
        let mut shown: Vec<&str> = ids.iter().take(4).map(String::as_str).collect();
        if ids.len() > 4 {
            shown.push("…");
        }
        shown.join(", ")
    };
    let empty: Vec<String> = views
        .iter()
        .zip(ids)
        .filter(|(_, ids)| ids.is_empty())
        .map(|(view, _)| run_name(view))
        .collect();
    if !empty.is_empty() {
        return format!(
            "no figures: {} {} no table a figure is drawn from (see `expc report` for its tables)",
            empty.join(", "),
            if empty.len() == 1 { "has" } else { "have" }
        );
    }
    let each: Vec<String> = views
        .iter()
        .zip(ids)
        .map(|(view, ids)| format!("{} has {}", run_name(view), listed(ids)))
        .collect();
    format!(
        "no figures: runs are overlaid only in the figures every one has, and these have none in common ({})",
        each.join("; ")
    )
}

enum Owned {
    Sweep(SweepTable, String),
    Diffs(Vec<RunComparison>),
}

fn write_svgs(dir: &Path, figures: &[Figure]) -> Result<(), String> {
    exp_files::create_dir(dir).map_err(|e| e.to_string())?;
    for figure in figures {
        let svg = figure.svg().map_err(|e| e.to_string())?;
        exp_files::write_file(&dir.join(format!("{}.svg", figure.id)), svg.as_bytes()).map_err(|e| e.to_string())?;
    }
    errln!("wrote {} figures to {}", figures.len(), dir.display());
    Ok(())
}

/// The run's plan, for the sweep's values and the metrics' units; a run
/// without a readable `plan.json` still gets its tables' figures.
fn load_plan(dir: &Path) -> Option<exp_plan::Plan> {
    let bytes = exp_files::read_bytes(&dir.join("plan.json"), crate::PLAN_CAP).ok()?;
    exp_plan::Plan::from_json(&bytes).ok()
}

/// `experiment/run-id`.
fn run_name(view: &RunView) -> String {
    format!("{}/{}", view.manifest.experiment, view.manifest.run_id)
}
