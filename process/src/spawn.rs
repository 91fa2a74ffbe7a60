//! Starting a command without copying Baton.
//!
//! `std`/`tokio` start a program with `posix_spawn` (the child borrows the
//! parent's memory until it executes) unless a `pre_exec` closure is set;
//! then they `fork`, which copies the page tables of the whole process and
//! tears them down again at `exec`. For a shell started per tool call that
//! copy was the largest single cost: N calls starting together took 1.3×
//! (small process) to 2.9× (50 MB heap) as long as N plain spawns. Yet a
//! shell needs what only code in the child can do: a new session, and
//! `PR_SET_PDEATHSIG` so that it dies with Baton.
//!
//! So [`Launch`] does what `posix_spawn` does inside glibc: `clone` with
//! `CLONE_VM | CLONE_VFORK` onto a small stack of its own, where the child
//! makes a handful of system calls (no allocation, no locks: it shares the
//! parent's memory while other threads run) and executes the program. The
//! calling thread waits until then; everything the child needs is prepared
//! before. An error in the child (no such directory, exec failed) is written
//! to memory the parent reads once the child has gone.
//!
//! The child is waited for through a pidfd (readable once it exits), so no
//! `SIGCHLD` handler and no other owner's child is involved.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use baton_sandbox::{Entry, Prepared};

use nix::libc;
use parking_lot::Mutex;
use tokio::io::unix::AsyncFd;

use super::{new_tag, Isolation, ProcessTree, TAG_VAR};

/// Stack of the child between `clone` and `exec` (it needs a few hundred
/// bytes; the rest is margin), plus a guard page below it.
const STACK: usize = 64 * 1024;

/// A command to start as a [`ProcessTree`] root: like
/// `std::process::Command`, with isolation, the tree's tag and
/// death-with-Baton built in. Standard streams default to `/dev/null`.
#[derive(Debug)]
pub struct Launch {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_removed: Vec<OsString>,
    cwd: Option<PathBuf>,
    stdio: [Option<OwnedFd>; 3],
    /// One more descriptor for the program, at a number of its own.
    extra: Option<(RawFd, OwnedFd)>,
    isolation: Isolation,
    confine: Option<Arc<Prepared>>,
    /// Make standard input (a terminal) the controlling terminal of the
    /// new session.
    ctty: bool,
}

impl Launch {
    /// A launch of `program` (looked up in `PATH` when it has no slash),
    /// in a new session or process group as `isolation` says.
    pub fn new(program: impl Into<OsString>, isolation: Isolation) -> Launch {
        Launch {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_removed: Vec::new(),
            cwd: None,
            stdio: [None, None, None],
            extra: None,
            isolation,
            confine: None,
            ctty: false,
        }
    }

    /// Makes standard input, which must be a terminal (the slave side of a
    /// PTY), the controlling terminal of the program's new session, so that
    /// Ctrl-C typed into it interrupts the foreground job and `/dev/tty`
    /// opens. Only with [`Isolation::Session`].
    pub fn controlling_terminal(&mut self) -> &mut Launch {
        self.ctty = true;
        self
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Launch {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Sets a variable on top of this process's environment (later calls
    /// win).
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Launch {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Leaves a variable of this process's environment out (overrides set
    /// with [`Launch::env`] still apply).
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Launch {
        self.env_removed.push(key.as_ref().to_owned());
        self
    }

    /// The program's working directory (default: this process's).
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Launch {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// The program's standard input (default: `/dev/null`).
    pub fn stdin(&mut self, fd: OwnedFd) -> &mut Launch {
        self.stdio[0] = Some(fd);
        self
    }

    /// The program's standard output (default: `/dev/null`).
    pub fn stdout(&mut self, fd: OwnedFd) -> &mut Launch {
        self.stdio[1] = Some(fd);
        self
    }

    /// The program's standard error (default: `/dev/null`).
    pub fn stderr(&mut self, fd: OwnedFd) -> &mut Launch {
        self.stdio[2] = Some(fd);
        self
    }

    /// Gives the program `fd` as descriptor number `target` (above 2), for
    /// a side channel such as a report of the final directory.
    pub fn fd(&mut self, target: RawFd, fd: OwnedFd) -> &mut Launch {
        self.extra = Some((target, fd));
        self
    }

    /// Confines the program (and everything it starts) by `sandbox`, entered
    /// in the child just before it executes the program.
    pub fn confine(&mut self, sandbox: Arc<Prepared>) -> &mut Launch {
        self.confine = Some(sandbox);
        self
    }

    /// Starts the program. Must run inside a tokio runtime (the child is
    /// waited for through it), on a thread that lives as long as the
    /// program should: `PR_SET_PDEATHSIG` fires when the *thread* that
    /// started the child ends (a tokio worker or the `block_on` thread,
    /// never a `spawn_blocking` task).
    pub fn spawn(mut self) -> io::Result<(Child, ProcessTree)> {
        sweep_orphans();
        let tag = new_tag();
        let env = self.environment(&tag)?;
        let mut args = vec![cstring(&self.program)?];
        for arg in &self.args {
            args.push(cstring(arg)?);
        }
        let cwd = self
            .cwd
            .as_deref()
            .map(|d| cstring(d.as_os_str()))
            .transpose()?;
        let vars: Vec<CString> = env
            .iter()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                CString::new(kv).map_err(|_| nul_error())
            })
            .collect::<io::Result<_>>()?;
        let program = self.program.clone();
        let session = self.isolation == Isolation::Session;
        let ctty = session && self.ctty;
        // Kept alive until the child has executed: its entry points into it.
        let confine = self.confine.clone();
        let extra = match self.extra.take() {
            Some((target, fd)) if target > 2 => Some((target, high_fd(Some(fd), true)?)),
            Some(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an extra descriptor must be numbered above 2",
                ))
            }
            None => None,
        };
        let stdio = self.stdio_fds()?;
        // Pointers into `args` and `vars`, which outlive the child's start.
        let argv = null_terminated(&args);
        let envp = null_terminated(&vars);
        let mut path = resolve(&program, &env, true)?;
        let pid = loop {
            let child = ChildArgs {
                path: path.0.as_ptr(),
                argv: argv.as_ptr(),
                envp: envp.as_ptr(),
                cwd: cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
                fds: stdio.each_ref().map(|fd| fd.as_raw_fd()),
                extra: extra
                    .as_ref()
                    .map_or((-1, -1), |(t, fd)| (fd.as_raw_fd(), *t)),
                session,
                ctty,
                parent: super::table::own_pid(),
                confine: confine.as_ref().map(|p| p.entry()),
                clone_flags: confine.as_ref().map_or(0, |p| p.clone_flags()),
                errno: AtomicI32::new(0),
                step: AtomicI32::new(0),
            };
            match start(&child) {
                Ok(pid) => break pid,
                // The remembered path went stale (the program was moved):
                // look it up again, once.
                Err((STEP_EXEC, _)) if path.1 => path = resolve(&program, &env, false)?,
                Err((_, err)) => return Err(err),
            }
        };
        let child = Child::new(pid);
        let Some(tree) = ProcessTree::new(pid, &tag) else {
            return Err(io::Error::other(
                "the command vanished before it could be tracked",
            ));
        };
        Ok((child, tree))
    }

    /// This process's environment with the overrides and the tag on top.
    fn environment(&self, tag: &str) -> io::Result<Vec<(OsString, OsString)>> {
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(k, _)| !self.env_removed.contains(k))
            .collect();
        let overrides = self
            .env
            .iter()
            .cloned()
            .chain([(TAG_VAR.into(), tag.into())]);
        for (key, value) in overrides {
            if key.is_empty() || key.as_bytes().contains(&b'=') {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("invalid environment variable name {key:?}"),
                ));
            }
            match env.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => env.push((key, value)),
            }
        }
        Ok(env)
    }

    /// The three standard fds, each numbered 3 or above (so that putting
    /// one in place cannot overwrite another in the child).
    fn stdio_fds(self) -> io::Result<[OwnedFd; 3]> {
        let [a, b, c] = self.stdio;
        Ok([high_fd(a, false)?, high_fd(b, true)?, high_fd(c, true)?])
    }
}

fn high_fd(fd: Option<OwnedFd>, write: bool) -> io::Result<OwnedFd> {
    let fd = match fd {
        Some(fd) => fd,
        None => std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .open("/dev/null")?
            .into(),
    };
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicating an fd we own; the new one is owned by the result.
    let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` is a fresh fd nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| nul_error())
}

fn nul_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "an argument or environment entry contains a NUL byte",
    )
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain([std::ptr::null()])
        .collect()
}

/// Starts the child and reports how it went: its pid once it executed the
/// program, or the step that failed (its exit status already collected).
fn start(args: &ChildArgs) -> Result<libc::pid_t, (i32, io::Error)> {
    let pid = clone_vfork(args).map_err(|e| (0, e))?;
    // The child has executed the program or exited: `args` is ours again.
    let errno = args.errno.load(Ordering::SeqCst);
    if errno == 0 {
        return Ok(pid);
    }
    let mut status = 0;
    // SAFETY: reaping our own child, which has exited.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let step = args.step.load(Ordering::SeqCst);
    let what = match step {
        STEP_ISOLATE => "could not start a new session or group",
        STEP_DEATHSIG => "could not tie the command to Baton's life",
        STEP_PARENT => "Baton exited while starting the command",
        STEP_STDIO => "could not set up standard input and output",
        STEP_CWD => "could not enter the working directory",
        STEP_CONFINE => "could not confine the command (OS sandbox)",
        STEP_FDS => "could not close the descriptors Baton inherited",
        _ => "could not execute the program",
    };
    let err = io::Error::from_raw_os_error(errno);
    Err((step, io::Error::new(err.kind(), format!("{what}: {err}"))))
}

/// The last program found on a `PATH`: `(program, PATH, path)`.
type Found = (OsString, OsString, PathBuf);
static FOUND: Mutex<Option<Found>> = Mutex::new(None);

/// The program's path: as given when it names a path, else the first
/// executable file of that name on the command's own `PATH` (as `execvp`
/// would find it, done here because the child may not allocate).
fn resolve(
    program: &OsStr,
    env: &[(OsString, OsString)],
    remembered: bool,
) -> io::Result<(CString, bool)> {
    if program.as_bytes().contains(&b'/') {
        return Ok((cstring(program)?, false));
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    // Every shell is `bash` on the same PATH: looking it up each time cost
    // a `statx` per PATH entry per call.
    if remembered {
        if let Some((p, dirs, found)) = FOUND.lock().as_ref() {
            if p == program && *dirs == path {
                return Ok((cstring(found.as_os_str())?, true));
            }
        }
    }
    for dir in path.as_bytes().split(|&b| b == b':') {
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(program);
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
            let found = cstring(candidate.as_os_str())?;
            // A relative entry depends on the directory: not remembered.
            if candidate.is_absolute() {
                *FOUND.lock() = Some((program.to_owned(), path, candidate));
            }
            return Ok((found, false));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} was not found on PATH", program.to_string_lossy()),
    ))
}

const STEP_ISOLATE: i32 = 1;
const STEP_DEATHSIG: i32 = 2;
const STEP_PARENT: i32 = 3;
const STEP_STDIO: i32 = 4;
const STEP_CWD: i32 = 5;
const STEP_EXEC: i32 = 6;
const STEP_CONFINE: i32 = 7;
const STEP_FDS: i32 = 8;

/// Everything the child reads, prepared by the parent; the child writes
/// only `errno` and `step`.
struct ChildArgs {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    fds: [RawFd; 3],
    /// `(source, target)`, or `(-1, -1)`.
    extra: (RawFd, RawFd),
    session: bool,
    ctty: bool,
    parent: libc::pid_t,
    /// The sandbox to enter before executing, and the namespaces it needs.
    confine: Option<Entry>,
    clone_flags: libc::c_int,
    errno: AtomicI32,
    step: AtomicI32,
}

/// A stack for the child, with a guard page below it. One per thread that
/// starts commands, kept for the thread's life: a thread starts one child
/// at a time (it is suspended until the child has executed), so the stack
/// is always free when the thread asks.
struct ChildStack {
    base: *mut libc::c_void,
}

const PAGE: usize = 4096;

impl ChildStack {
    fn map() -> io::Result<ChildStack> {
        // SAFETY: a private anonymous mapping, owned by the result.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STACK + PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the lowest page of our own mapping becomes the guard page.
        unsafe { libc::mprotect(base, PAGE, libc::PROT_NONE) };
        Ok(ChildStack { base })
    }

    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of our mapping (stacks grow down).
        unsafe { self.base.cast::<u8>().add(STACK + PAGE).cast() }
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: our mapping, no longer used by any child.
        unsafe { libc::munmap(self.base, STACK + PAGE) };
    }
}

thread_local! {
    static CHILD_STACK: std::cell::RefCell<Option<ChildStack>> = const { std::cell::RefCell::new(None) };
}

/// Starts the child; returns its pid once it has executed the program or
/// exited.
fn clone_vfork(args: &ChildArgs) -> io::Result<libc::pid_t> {
    CHILD_STACK.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            *slot = Some(ChildStack::map()?);
        }
        let Some(stack) = slot.as_ref() else {
            return Err(io::Error::other("no stack for the child"));
        };
        // SAFETY: all signals blocked on this thread while the child shares
        // its memory: a handler must not run in the child before it has
        // reset the dispositions. The child does its work in `child_main`,
        // touching only its stack and `args`; this thread is suspended until
        // it has executed the program or exited, then restores its mask.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let pid = libc::clone(
                child_main,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | args.clone_flags,
                args as *const ChildArgs as *mut libc::c_void,
            );
            let err = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if pid < 0 {
                return Err(err);
            }
            Ok(pid)
        }
    })
}

/// The child, between `clone` and `exec`. Only system calls: it shares the
/// parent's memory (other threads may hold locks) and must not allocate or
/// unwind.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `ChildArgs`, alive until this child
    // executes or exits (the parent is suspended meanwhile); every pointer
    // in it is valid and NUL-terminated as prepared by `Launch::spawn`.
    unsafe {
        let args = &*(arg as *const ChildArgs);
        let fail = |step: i32| -> libc::c_int {
            args.errno
                .store(*libc::__errno_location(), Ordering::SeqCst);
            args.step.store(step, Ordering::SeqCst);
            libc::_exit(127)
        };
        // Handlers point into the parent's code and must not run here;
        // SIGPIPE goes back to its default too (Rust ignores it, a shell
        // pipeline like `yes | head` needs it). Other ignored signals stay
        // ignored, as with `std::process::Command`.
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for sig in 1..65 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            let handler = current.sa_sigaction;
            if handler == libc::SIG_DFL || (handler == libc::SIG_IGN && sig != libc::SIGPIPE) {
                continue;
            }
            libc::sigaction(sig, &default, std::ptr::null_mut());
        }
        let isolated = if args.session {
            libc::setsid()
        } else {
            libc::setpgid(0, 0)
        };
        if isolated < 0 {
            return fail(STEP_ISOLATE);
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return fail(STEP_DEATHSIG);
        }
        // Baton may have died before the prctl: nobody would send it then.
        if libc::getppid() != args.parent {
            *libc::__errno_location() = libc::ESRCH;
            return fail(STEP_PARENT);
        }
        for (target, &fd) in args.fds.iter().enumerate() {
            if libc::dup2(fd, target as libc::c_int) < 0 {
                return fail(STEP_STDIO);
            }
        }
        if args.ctty && libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
            return fail(STEP_STDIO);
        }
        if !args.cwd.is_null() && libc::chdir(args.cwd) != 0 {
            return fail(STEP_CWD);
        }
        // Before the sandbox, which may refuse `/proc` to the fallback; the
        // sandbox's own descriptors are close-on-exec already, and the
        // extra descriptor is placed below, without the flag.
        if !super::descriptors::close_inherited() {
            return fail(STEP_FDS);
        }
        if let Some(entry) = &args.confine {
            if let Err(err) = baton_sandbox::enter(entry) {
                *libc::__errno_location() = err.errno();
                return fail(STEP_CONFINE);
            }
        }
        // After the sandbox: the extra descriptor's number may be one the
        // sandbox still needed (its ruleset, its channel).
        let (source, target) = args.extra;
        if source >= 0 {
            // Same number: dup2 does nothing, and close-on-exec would
            // close it at exec; clear the flag instead.
            let placed = if source == target {
                libc::fcntl(source, libc::F_SETFD, 0)
            } else {
                libc::dup2(source, target)
            };
            if placed < 0 {
                return fail(STEP_STDIO);
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(args.path, args.argv, args.envp);
        fail(STEP_EXEC)
    }
}

/// A started program. Dropping it before it was waited for kills it and
/// reaps it (later, if it takes a moment to die).
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

impl Child {
    fn new(pid: libc::pid_t) -> Child {
        // SAFETY: pidfd_open on our own, not yet reaped child.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = (fd >= 0)
            .then(|| {
                // SAFETY: a fresh fd owned by nobody else.
                let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
                tokio::runtime::Handle::try_current().ok()?;
                // SAFETY: the `OwnedFd` keeps the fd open and unchanged for
                // as long as the `AsyncFd` owns it.
                unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
            })
            .flatten();
        Child {
            pid,
            pidfd,
            status: None,
        }
    }

    /// The program's process id (also its session or group id).
    pub fn id(&self) -> i32 {
        self.pid
    }

    /// The exit status if the program has ended (reaping it).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = reap(self.pid)?;
        }
        Ok(self.status)
    }

    /// Waits for the program to end. Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match &self.pidfd {
                Some(fd) => {
                    let mut ready = fd.readable().await?;
                    self.status = reap(self.pid)?;
                    if self.status.is_none() {
                        ready.clear_ready();
                    }
                }
                // A kernel without pidfds (before 5.3): ask now and then.
                None => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // SAFETY: our own child, not yet reaped, so the pid is still ours.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        if !matches!(reap(self.pid), Ok(Some(_))) {
            ORPHANS.lock().push(self.pid);
        }
    }
}

/// Killed children that had not died yet when dropped; reaped at the next
/// start of a command.
static ORPHANS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

fn sweep_orphans() {
    ORPHANS.lock().retain(|&pid| matches!(reap(pid), Ok(None)));
}

/// `waitpid(pid, WNOHANG)`: the status if it has ended.
fn reap(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status = 0;
    // SAFETY: waiting for one specific child of ours.
    match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
        0 => Ok(None),
        n if n == pid => Ok(Some(ExitStatus::from_raw(status))),
        _ => Err(io::Error::last_os_error()),
    }
}
