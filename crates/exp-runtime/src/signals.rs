//! Ctrl-C and SIGTERM: the first asks the run to stop cleanly, the second to
//! stop at once. The caller (the CLI) decides to install this.

use tokio::signal::unix::{signal, SignalKind};

use crate::cancel::{Cancel, Level};
use crate::events::{Event, Events};

/// Escalates `cancel` on every SIGINT or SIGTERM until it reaches `Kill`.
pub async fn escalate_on_signals(cancel: Cancel, events: Events) -> std::io::Result<()> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    loop {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        let level = cancel.escalate();
        events.send(Event::Stopping { level });
        if level == Level::Kill {
            return Ok(());
        }
    }
}
