//! Cancellation shared by the orchestrator, async executors and the blocking
//! threads that supervise child processes.
//!
//! Two levels, one per Ctrl-C: the first asks every workload to stop cleanly
//! (SIGTERM to children, tables finalised); the second means stop now
//! (SIGKILL, no grace periods) — files are still finalised.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Running,
    Stop,
    Kill,
}

#[derive(Clone)]
pub struct Cancel {
    inner: Arc<Inner>,
}

struct Inner {
    level: AtomicU8,
    changed: watch::Sender<u8>,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Default for Cancel {
    fn default() -> Self {
        Self::new()
    }
}

impl Cancel {
    pub fn new() -> Self {
        let (changed, _) = watch::channel(0);
        Cancel {
            inner: Arc::new(Inner {
                level: AtomicU8::new(0),
                changed,
                lock: Mutex::new(()),
                wake: Condvar::new(),
            }),
        }
    }

    /// Escalates one level (Running → Stop → Kill) and returns the new level.
    pub fn escalate(&self) -> Level {
        let previous = self
            .inner
            .level
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| Some((l + 1).min(2)));
        let level = decode(previous.map_or(2, |l| (l + 1).min(2)));
        self.notify();
        level
    }

    /// Raises the level to at least `level`.
    pub fn raise(&self, level: Level) {
        self.inner.level.fetch_max(level as u8, Ordering::SeqCst);
        self.notify();
    }

    fn notify(&self) {
        let level = self.inner.level.load(Ordering::SeqCst);
        self.inner.changed.send_replace(level);
        let _guard = self.inner.lock.lock();
        self.inner.wake.notify_all();
    }

    pub fn level(&self) -> Level {
        decode(self.inner.level.load(Ordering::SeqCst))
    }

    pub fn is_cancelled(&self) -> bool {
        self.level() != Level::Running
    }

    /// Blocks until `deadline` or cancellation; true when the deadline came.
    pub fn sleep_until(&self, deadline: Instant) -> bool {
        let mut guard = match self.inner.lock.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        loop {
            if self.is_cancelled() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            guard = match self.inner.wake.wait_timeout(guard, deadline - now) {
                Ok((g, _)) => g,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Waits until `deadline` or cancellation; true when the deadline came.
    pub async fn sleep_until_async(&self, deadline: Instant) -> bool {
        let mut changed = self.inner.changed.subscribe();
        if self.is_cancelled() {
            return false;
        }
        tokio::select! {
            _ = tokio::time::sleep_until(deadline.into()) => !self.is_cancelled(),
            _ = changed.wait_for(|l| *l > 0) => false,
        }
    }

    /// Resolves when the level reaches `level`.
    pub async fn reached(&self, level: Level) {
        let mut changed = self.inner.changed.subscribe();
        let _ = changed.wait_for(|l| *l >= level as u8).await;
    }
}

fn decode(level: u8) -> Level {
    match level {
        0 => Level::Running,
        1 => Level::Stop,
        _ => Level::Kill,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn escalates_in_two_steps() {
        let cancel = Cancel::new();
        assert_eq!(cancel.level(), Level::Running);
        assert_eq!(cancel.escalate(), Level::Stop);
        assert_eq!(cancel.escalate(), Level::Kill);
        assert_eq!(cancel.escalate(), Level::Kill);
    }

    #[test]
    fn blocking_sleep_wakes_on_cancel() {
        let cancel = Cancel::new();
        let other = cancel.clone();
        let sleeper = std::thread::spawn(move || other.sleep_until(Instant::now() + Duration::from_secs(60)));
        std::thread::sleep(Duration::from_millis(50));
        cancel.escalate();
        assert!(!sleeper.join().unwrap(), "woken by cancellation, not the deadline");
        assert!(Cancel::new().sleep_until(Instant::now() + Duration::from_millis(5)));
    }

    #[tokio::test]
    async fn async_sleep_wakes_on_cancel() {
        let cancel = Cancel::new();
        let other = cancel.clone();
        let sleeper =
            tokio::spawn(async move { other.sleep_until_async(Instant::now() + Duration::from_secs(60)).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.escalate();
        assert!(!sleeper.await.unwrap());
    }
}
