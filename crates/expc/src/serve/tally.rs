//! The acceptor's report: replayed connections by status, sessions opened,
//! refusals by reason, bytes. Refusals are printed one by one only at
//! first, so a flood of them cannot flood the log.

use std::collections::BTreeMap;

use exp_traffic::replay::{AcceptorRecord, ConnectionStatus, Refusal};

/// Refusals and failures printed one by one before only counting.
const PRINTED: u64 = 20;

#[derive(Default)]
pub struct Tally {
    /// Replayed connections (not sessions, not refusals).
    pub connections: u64,
    complete: u64,
    short: u64,
    failed: u64,
    sessions: u64,
    refused: BTreeMap<Refusal, u64>,
    printed: u64,
    received: u64,
}

impl Tally {
    pub fn add(&mut self, records: Vec<AcceptorRecord>) {
        for r in records {
            self.received += r.received_bytes;
            if let Some(refusal) = r.refusal {
                *self.refused.entry(refusal).or_default() += 1;
                self.print(&r);
                continue;
            }
            if r.session {
                self.sessions += u64::from(r.status == ConnectionStatus::Complete);
                continue;
            }
            self.connections += 1;
            match r.status {
                ConnectionStatus::Complete => self.complete += 1,
                ConnectionStatus::Short => {
                    self.short += 1;
                    self.print(&r);
                }
                ConnectionStatus::Failed => {
                    self.failed += 1;
                    self.print(&r);
                }
            }
        }
    }

    fn print(&mut self, r: &AcceptorRecord) {
        let Some(error) = &r.error else { return };
        self.printed += 1;
        if self.printed <= PRINTED {
            errln!("connection from {}: {error}", r.peer);
        }
        if self.printed == PRINTED {
            errln!("expc serve: further refusals and failures are only counted");
        }
    }

    /// The closing line: `sent_total` is what the acceptor counted against
    /// its total limit.
    pub fn summary(&self, sent_total: u64) -> String {
        let refused: u64 = self.refused.values().sum();
        let reasons: Vec<String> = Refusal::ALL
            .iter()
            .filter_map(|r| self.refused.get(r).map(|n| format!("{}: {n}", r.label())))
            .collect();
        let reasons = if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        };
        format!(
            "{} connections ({} complete, {} short, {} failed), {} sessions, {refused} refused{reasons}, \
             {} bytes received, {} sent",
            self.connections, self.complete, self.short, self.failed, self.sessions, self.received, sent_total
        )
    }
}
