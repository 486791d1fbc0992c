//! Named network namespaces (created with iproute2 so `ip netns list` shows
//! them and they can be inspected with `ip netns exec`), threads that run
//! inside one, and removal of namespaces left behind by crashed runs.

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::thread::JoinHandle;

use super::{sys, EmulateError};

/// Runs `ip ARGS` and returns its stdout, or a typed error naming the
/// command and its stderr.
pub(crate) fn ip(args: &[&str]) -> Result<String, EmulateError> {
    let command = format!("ip {}", args.join(" "));
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| EmulateError::io(format!("cannot run `{command}` (is iproute2 installed?)"), e))?;
    if !output.status.success() {
        return Err(EmulateError::Command {
            command,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// A network namespace this process created; removed again on drop.
#[derive(Debug)]
pub(crate) struct Namespace {
    name: String,
    handle: Arc<File>,
}

impl Namespace {
    pub(crate) fn create(name: &str) -> Result<Namespace, EmulateError> {
        ip(&["netns", "add", name])?;
        let opened = ["/run/netns", "/var/run/netns"]
            .iter()
            .map(|dir| Path::new(dir).join(name))
            .find(|path| path.exists())
            .ok_or_else(|| {
                EmulateError::io(
                    format!("namespace {name} was added but has no file under /run/netns"),
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                )
            })
            .and_then(|path| File::open(&path).map_err(|e| EmulateError::io(format!("opening {}", path.display()), e)));
        match opened {
            Ok(file) => Ok(Namespace {
                name: name.to_string(),
                handle: Arc::new(file),
            }),
            Err(e) => {
                let _ = ip(&["netns", "delete", name]);
                Err(e)
            }
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n NAME ARGS` (a command inside this namespace).
    pub(crate) fn ip(&self, args: &[&str]) -> Result<String, EmulateError> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Runs `f` on a new thread that first joins this namespace; sockets it
    /// creates (and threads it spawns) belong to the namespace.
    pub(crate) fn spawn<T, F>(&self, f: F) -> Result<JoinHandle<Result<T, EmulateError>>, EmulateError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let handle = self.handle.clone();
        let name = self.name.clone();
        std::thread::Builder::new()
            .name(format!("ns-{name}"))
            .spawn(move || {
                sys::enter_net_namespace(&handle)
                    .map_err(|e| EmulateError::io(format!("entering network namespace {name}"), e))?;
                Ok(f())
            })
            .map_err(|e| EmulateError::io("spawning a thread", e))
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Devices inside go with it once the last thread and fd leave.
        let _ = ip(&["netns", "delete", &self.name]);
    }
}

/// Names of all named network namespaces.
pub(crate) fn list_namespaces() -> Result<Vec<String>, EmulateError> {
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// Removes namespaces named `PREFIX-PID-…` whose creating process `PID` no
/// longer runs (left behind by a crash or kill -9) and returns their names.
/// Namespaces of live processes are left alone.
pub fn cleanup_stale_namespaces(prefix: &str) -> Result<Vec<String>, EmulateError> {
    let mut removed = Vec::new();
    for name in list_namespaces()? {
        let Some(pid) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !exp_host::process_exists(pid) {
            ip(&["netns", "delete", &name])?;
            removed.push(name);
        }
    }
    Ok(removed)
}
