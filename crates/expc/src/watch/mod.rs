//! `expc watch RUN_DIR` and `expc run --watch`: a local page that shows a
//! run while it goes, read again from its directory every few seconds
//! (so it works for a run on another host over a shared file system, for
//! shards and split parts, and for a crashed run).
//!
//! `expc run --watch` binds the port and makes the token itself, then runs
//! `expc watch --for-run` at nice 19 once the run has its directory (the
//! socket as its standard input, the token in its environment), so the
//! page's reading and drawing never take the runner's own CPU.
//!
//! Bound to 127.0.0.1 by default, on a free port; every request needs the
//! random token of the printed URL (403 without it), also on another
//! address, which needs `--listen-beyond-loopback`. The page is one HTML
//! document with its styles and script inline; the script fetches only
//! `state` from the same server, and the `Content-Security-Policy` header
//! forbids the browser anything else.

mod page;
mod snapshot;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use exp_runtime::live::Live;

use crate::http::{same_secret, Request, Response};

#[derive(clap::Args)]
pub struct Args {
    /// The run directory: running (`.partial`), finished, crashed, sharded or split.
    run_dir: PathBuf,
    /// Where to listen: a port alone is on 127.0.0.1 [default: 127.0.0.1, a free port].
    #[arg(long, value_name = "ADDR", conflicts_with = "for_run")]
    bind: Option<String>,
    /// Let --bind name an address other than loopback (the token is still required).
    #[arg(long)]
    listen_beyond_loopback: bool,
    /// Seconds between the page's refreshes.
    #[arg(long, value_name = "SECONDS", default_value_t = 3)]
    every: u64,
    /// Internal (`expc run --watch`): serve the listening socket on
    /// standard input with the token in `EXPC_WATCH_TOKEN`, until the
    /// parent process is gone.
    #[arg(long, hide = true)]
    for_run: bool,
}

/// The variable that hands `expc run`'s token to its watch process (not
/// its command line, which every local user can read).
const TOKEN_VARIABLE: &str = "EXPC_WATCH_TOKEN";

/// `expc watch`: serves the page until interrupted.
pub fn run(args: Args) -> Result<ExitCode, String> {
    exp_results::locate_run(&args.run_dir).map_err(|e| e.to_string())?;
    let every = Duration::from_secs(args.every.max(1));
    if args.for_run {
        return serve_for_run(args.run_dir, every);
    }
    let address = crate::http::parse_address(args.bind.as_deref().unwrap_or("127.0.0.1:0"))?;
    let listener = crate::http::bind(address, args.listen_beyond_loopback, "--bind")?;
    let server = Server::new(listener, every)?;
    outln!("watching {} at {}", args.run_dir.display(), server.url());
    outln!(
        "(the page reads the run directory every {} s; Ctrl-C ends the watch)",
        every.as_secs()
    );
    server
        .start(args.run_dir)?
        .join()
        .map_err(|_| "the watch's server thread ended abnormally".to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// The watch process of `expc run --watch`: the socket its parent bound
/// is its standard input; it ends when the parent does (however it ends).
fn serve_for_run(dir: PathBuf, every: Duration) -> Result<ExitCode, String> {
    use std::os::fd::AsFd;
    let token = std::env::var(TOKEN_VARIABLE).map_err(|_| format!("--for-run needs {TOKEN_VARIABLE}"))?;
    let socket = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("no listening socket on standard input: {e}"))?;
    let listener = TcpListener::from(socket);
    listener
        .local_addr()
        .map_err(|e| format!("standard input is not a listening socket: {e}"))?;
    let server = Server { listener, token, every };
    let parent = std::os::unix::process::parent_id();
    server.start(dir)?;
    // Reparented: the runner is gone, and with it the reason to serve.
    while std::os::unix::process::parent_id() == parent {
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(ExitCode::SUCCESS)
}

/// A bound listener and the token its requests must carry.
pub struct Server {
    listener: TcpListener,
    token: String,
    every: Duration,
}

impl Server {
    pub fn new(listener: TcpListener, every: Duration) -> Result<Server, String> {
        Ok(Server {
            listener,
            token: token()?,
            every,
        })
    }

    /// The page's address with its token.
    pub fn url(&self) -> String {
        let address = self
            .listener
            .local_addr()
            .map_or_else(|e| e.to_string(), |a| a.to_string());
        format!("http://{address}/?token={}", self.token)
    }

    /// Serves the page of the run in `dir` on a thread of its own.
    pub fn start(self, dir: PathBuf) -> Result<std::thread::JoinHandle<()>, String> {
        let pages = Pages {
            dir,
            every: self.every,
            figures: Mutex::new(None),
            part: Mutex::new(None),
        };
        let token = self.token;
        crate::http::serve(self.listener, "expc-watch", move |request: &Request| {
            let given = request.query.get("token").map_or("", String::as_str);
            if !same_secret(given, &token) {
                return Response::text(403, "this page needs the token of the URL expc printed\n");
            }
            match request.path.as_str() {
                "/" => with_policy(Response::new(
                    200,
                    "text/html; charset=utf-8",
                    page::shell(&pages.title(), &token, pages.every, &pages.run_part()),
                )),
                "/state" => with_policy(Response::new(
                    200,
                    "text/html; charset=utf-8",
                    pages.run_part().as_bytes(),
                )),
                _ => Response::text(404, "not here\n"),
            }
        })
    }

    /// Serves the page of the run `live` runs in a process of its own, at
    /// the lowest priority (nice 19), started once the run has its
    /// directory; the process ends with this one. Reading the run and
    /// drawing its figures never take the runner's own CPU.
    pub fn start_for_run(self, live: Live) -> Result<(), String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find the expc executable: {e}"))?;
        let Server { listener, token, every } = self;
        std::thread::Builder::new()
            .name("expc-watch-start".into())
            .spawn(move || {
                let dir = loop {
                    if let Some(dir) = live.state().run_dir {
                        break dir;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                };
                if let Err(e) = spawn_for_run(&exe, &dir, listener, &token, every) {
                    errln!("warning: --watch: {e}");
                }
            })
            .map(drop)
            .map_err(|e| format!("cannot start the watch: {e}"))
    }
}

/// `nice -n 19 expc watch DIR --for-run` (without `nice` if it is
/// missing), the listening socket as its standard input.
fn spawn_for_run(exe: &Path, dir: &Path, listener: TcpListener, token: &str, every: Duration) -> Result<(), String> {
    use std::os::fd::OwnedFd;
    use std::process::{Command, Stdio};
    let socket = OwnedFd::from(listener);
    let spare = socket.try_clone().map_err(|e| e.to_string())?;
    let start = |mut command: Command, socket: OwnedFd| {
        command
            .arg("watch")
            .arg(dir)
            .args(["--for-run", "--every", &every.as_secs().to_string()])
            .env(TOKEN_VARIABLE, token)
            .stdin(Stdio::from(socket))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    };
    let mut niced = Command::new("nice");
    niced.args(["-n", "19"]).arg(exe);
    match start(niced, socket) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => start(Command::new(exe), spare)
            .map(drop)
            .map_err(|e| format!("cannot start the watch process: {e}")),
        Err(e) => Err(format!("cannot start the watch process: {e}")),
    }
}

/// The browser may fetch nothing but this server's own paths.
fn with_policy(mut response: Response) -> Response {
    response.headers.push((
        "Content-Security-Policy",
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
         img-src data:; base-uri 'none'; form-action 'none'",
    ));
    response
}

/// 128 random bits in hex, from the kernel.
fn token() -> Result<String, String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot make the watch's token from /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The figures last drawn, and what they were drawn from.
struct Figures {
    fingerprint: Vec<(PathBuf, u64, Option<std::time::SystemTime>)>,
    html: Arc<String>,
}

struct Pages {
    dir: PathBuf,
    every: Duration,
    figures: Mutex<Option<Figures>>,
    /// The run's part last read: when, how long reading it took, and it.
    part: Mutex<Option<(Instant, Duration, Arc<String>)>>,
}

impl Pages {
    fn title(&self) -> String {
        format!("expc watch: {}", self.dir.display())
    }

    /// The run's part as the directory holds it now.
    /// Read again at most every other time reading took (at least 1 s
    /// apart), so that a run of many trials and files costs the watch a
    /// bounded share of a core however often it is asked.
    fn run_part(&self) -> Arc<String> {
        let mut cached = self.part.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((read, took, part)) = cached.as_ref() {
            if read.elapsed() < (*took * 2).max(Duration::from_secs(1)) {
                return part.clone();
            }
        }
        let started = Instant::now();
        let part = Arc::new(self.read_part());
        *cached = Some((started, started.elapsed(), part.clone()));
        part
    }

    fn read_part(&self) -> String {
        let dir = &self.dir;
        let snapshot = match snapshot::read(dir) {
            Ok(snapshot) => snapshot,
            Err(e) => {
                return format!(
                    "<p class=\"warn\">Cannot read {}: {}</p>\n",
                    exp_report::html::escape(&dir.display().to_string()),
                    exp_report::html::escape(&e)
                )
            }
        };
        let plan = load_plan(&snapshot.view.dir);
        let order = plan.as_ref().map(exp_plan::Plan::run_order);
        let figures = self.figures(&snapshot, plan.as_ref());
        page::run_part(&snapshot, order.as_deref(), &figures)
    }

    /// The report's figures of `snapshot`, drawn again only when its files
    /// changed.
    fn figures(&self, snapshot: &snapshot::Snapshot, plan: Option<&exp_plan::Plan>) -> Arc<String> {
        let mut cached = self.figures.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(figures) = cached.as_ref().filter(|f| f.fingerprint == snapshot.fingerprint) {
            return figures.html.clone();
        }
        let html = Arc::new(draw(snapshot, plan));
        *cached = Some(Figures {
            fingerprint: snapshot.fingerprint.clone(),
            html: html.clone(),
        });
        html
    }
}

/// Every figure of the run as `expc report --html` draws it.
fn draw(snapshot: &snapshot::Snapshot, plan: Option<&exp_plan::Plan>) -> String {
    use std::fmt::Write;
    let escape = exp_report::html::escape;
    let (figures, warnings) = match exp_report::figures::figures(&snapshot.view, plan, false) {
        Ok(drawn) => drawn,
        Err(e) => {
            return format!(
                "<p class=\"warn\">The figures could not be drawn: {}</p>\n",
                escape(&e.to_string())
            )
        }
    };
    let mut out = String::from("<section id=\"figures\"><h2>Figures</h2>\n");
    if !snapshot.unfinished_trials.is_empty() {
        let trials: Vec<String> = snapshot.unfinished_trials.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "<p>Trials {} have not finished: their rows are those checkpointed so far (at most a few seconds old).</p>",
            trials.join(", ")
        );
    }
    for figure in &figures {
        match figure.svg() {
            Ok(svg) => {
                let _ = write!(
                    out,
                    "<figure id=\"{}\">\n{svg}\n<figcaption>{}</figcaption></figure>\n",
                    figure.id,
                    escape(&figure.caption)
                );
            }
            Err(e) => {
                let _ = writeln!(out, "<p class=\"warn\">{}: {}</p>", figure.id, escape(&e.to_string()));
            }
        }
    }
    if figures.is_empty() {
        out.push_str("<p>No table of this run has a figure yet.</p>\n");
    }
    for warning in warnings.iter().take(20) {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", escape(&warning.to_string()));
    }
    out.push_str("</section>\n");
    out
}

/// The run's plan (for the trial order and the sweep's values), if readable.
fn load_plan(dir: &Path) -> Option<exp_plan::Plan> {
    let bytes = exp_files::read_bytes(&dir.join("plan.json"), crate::PLAN_CAP).ok()?;
    exp_plan::Plan::from_json(&bytes).ok()
}
