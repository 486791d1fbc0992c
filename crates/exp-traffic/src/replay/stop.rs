//! A stop signal for a running replay (Ctrl-C, or the end of the window
//! it runs in): once fired, no more connections start and running ones are
//! cut, keeping what they measured.

use std::sync::Arc;

use tokio::sync::watch;

/// Cloneable; firing any clone stops every replay given one of them.
/// Firing is sticky: a replay handed an already fired signal starts nothing.
#[derive(Clone, Debug)]
pub struct StopSignal(Arc<watch::Sender<bool>>);

impl StopSignal {
    pub fn new() -> StopSignal {
        StopSignal(Arc::new(watch::Sender::new(false)))
    }

    /// Fires the signal (again is harmless).
    pub fn stop(&self) {
        self.0.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the signal has fired (at once if it already has).
    pub async fn stopped(&self) {
        let mut receiver = self.0.subscribe();
        // The sender lives in `self`, so the channel cannot close first.
        let _ = receiver.wait_for(|fired| *fired).await;
    }
}

impl Default for StopSignal {
    fn default() -> StopSignal {
        StopSignal::new()
    }
}
