//! The integration tests of `expc`, one test binary: each module is one
//! concern (its file's comment says which) and runs the built `expc` as a
//! user would. One binary, not one per file, because linking a test binary
//! against the whole workspace costs seconds each, and because one harness
//! can run a module's waits beside another module's work. Tests that load
//! the machine or measure timing take [`common::one_at_a_time`], so they
//! never run beside each other. The papers' reproductions
//! (`reproductions.rs`) are a binary of their own: they run beside nothing.
//!
//!     cargo test -p expc --test suite                  # all of them
//!     cargo test -p expc --test suite claims::         # one module

mod common;
mod hostile_files;
mod lsp_client;
#[path = "../../exp-report/tests/svg_probe.rs"]
mod svg_probe;

mod anomaly_kernels;
mod broker_version;
mod claims;
mod cli;
mod cli_conventions;
mod cli_refusals;
mod durable;
mod faults;
mod fleet_connect;
mod fleet_contention;
mod fleet_faults;
mod fleet_fds;
mod fleet_run;
mod fleet_timing;
mod fleet_tls;
mod hostile_input;
mod input_files;
mod live_metrics;
mod lsp;
mod lsp_bounds;
mod lsp_exit;
mod output_files;
mod parts_agree;
mod plan_bounds;
mod quickstart;
mod readme_polars;
mod repeat_replacement;
mod repeat_until;
mod report_compare;
mod report_figures;
mod report_mqtt;
mod report_sweep;
mod report_warnings;
mod resume;
mod run;
mod run_order;
mod serve_auth;
mod slurm;
mod slurm_script;
mod spec_library;
mod spec_library_runs;
mod split_run;
mod test_command;
mod traffic_rtt_audit;
mod traffic_rtt_models;
mod traffic_run;
mod validity;
mod watch_page;
mod xml_cli;
