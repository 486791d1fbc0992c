//! Ctrl-C and SIGTERM: the first asks the run to stop cleanly, the second to
//! stop at once. The caller (the CLI) decides to install this.

use tokio::signal::unix::{signal, SignalKind};

use crate::cancel::{Cancel, Level};
use crate::events::{Event, Events};

/// Takes over SIGINT and SIGTERM now (call it inside the runtime, before
/// the run starts, so no signal can arrive between the run directory's
/// creation and the handlers) and returns the loop that escalates `cancel`
/// on each of them until it reaches `Kill`.
pub fn install(
    cancel: Cancel,
    events: Events,
) -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        loop {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            let level = cancel.escalate();
            events.send(Event::Stopping { level });
            if level == Level::Kill {
                return;
            }
        }
    })
}
