//! One kernel thread to start, as the planners ([`crate::plan`] for the C
//! kernels, [`crate::net`] for netoccupy) describe it and
//! [`crate::kernels::Workers`] starts it, and the error a kernel's failure
//! becomes. Shared by all of them, so none of them imports another.

use crate::ffi::Ctx;
use crate::AnomalyError;

pub(crate) type Run = Box<dyn FnOnce(&Ctx<'_>) -> Result<(), AnomalyError> + Send>;

/// One kernel thread to start.
pub(crate) struct Job {
    pub name: &'static str,
    /// CPUs the thread may run on; empty: wherever the scheduler likes.
    pub cpus: Vec<u32>,
    /// Whether its counters are the instance's (a netoccupy sink's are not).
    pub counted: bool,
    pub run: Run,
}

/// Maps a kernel's errno to an error that says which kernel and what it was doing.
pub(crate) fn kernel_error(
    kernel: &'static str,
    what: impl Into<String>,
) -> impl FnOnce(std::io::Error) -> AnomalyError {
    let what = what.into();
    move |source| AnomalyError::Kernel { kernel, what, source }
}
