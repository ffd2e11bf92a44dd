//! Upstream servers' processes end with workbench on Windows: a job object.
//!
//! On Linux a stdio server gets `PR_SET_PDEATHSIG` (in `super::Upstreams::spawn`); macOS has no
//! such signal, and `kill_on_drop` covers every exit but `kill -9` there. On Windows every
//! server is started suspended ([`prepare`]), put into one job object of this process that has
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, and only then resumed ([`adopt`]): the job's only handle
//! is workbench's, so when workbench ends (any way, `TerminateProcess` included) Windows closes
//! the handle and ends every process in the job, the servers' own children too (`npx` starts
//! `node`), since a child started inside a job belongs to it. Starting suspended means no child
//! can start a process of its own before it is in the job.
//!
//! The servers also start with `CREATE_NO_WINDOW`: workbench runs without a console under Claude
//! Desktop, and a console program started from it would otherwise open a window of its own.

/// Sets up `cmd` before it is spawned (Windows: suspended, no console window).
pub(super) fn prepare(cmd: &mut tokio::process::Command) {
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{CREATE_NO_WINDOW, CREATE_SUSPENDED};
        cmd.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    }
    #[cfg(not(windows))]
    let _ = cmd;
}

/// Puts the just-spawned server `pid` into workbench's job and lets it run (Windows). An error
/// leaves the server suspended: the caller drops its handle, which kills it.
pub(super) fn adopt(pid: Option<u32>) -> std::io::Result<()> {
    #[cfg(windows)]
    {
        let pid = pid.ok_or_else(|| std::io::Error::other("the server process has no id (it already exited)"))?;
        imp::adopt(pid)
    }
    #[cfg(not(windows))]
    {
        let _ = pid;
        Ok(())
    }
}

#[cfg(windows)]
mod imp {
    use std::io::Error;
    use std::sync::OnceLock;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
    };
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation, SetInformationJobObject,
    };
    use windows_sys::Win32::System::Threading::{
        OpenProcess, OpenThread, PROCESS_SET_QUOTA, PROCESS_TERMINATE, ResumeThread, THREAD_SUSPEND_RESUME,
    };

    /// A handle closed when dropped.
    struct Owned(HANDLE);

    impl Drop for Owned {
        fn drop(&mut self) {
            // SAFETY: the handle was returned open by the API that made it and is closed once.
            unsafe { CloseHandle(self.0) };
        }
    }

    fn checked(h: HANDLE, what: &str) -> std::io::Result<Owned> {
        if h.is_null() || h == INVALID_HANDLE_VALUE {
            Err(Error::other(format!("{what}: {}", Error::last_os_error())))
        } else {
            Ok(Owned(h))
        }
    }

    /// The process's one job (its handle kept open, as a `usize`, until the process ends).
    fn job() -> std::io::Result<HANDLE> {
        static JOB: OnceLock<Result<usize, String>> = OnceLock::new();
        let made = JOB.get_or_init(|| {
            // SAFETY: plain Win32 calls with valid arguments; the struct is plain data, zeroed
            // is a valid value of it.
            unsafe {
                let h = CreateJobObjectW(std::ptr::null(), std::ptr::null());
                if h.is_null() {
                    return Err(format!("CreateJobObjectW: {}", Error::last_os_error()));
                }
                let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                let ok = SetInformationJobObject(
                    h,
                    JobObjectExtendedLimitInformation,
                    (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                    std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                );
                if ok == 0 {
                    let e = Error::last_os_error();
                    CloseHandle(h);
                    return Err(format!("SetInformationJobObject: {e}"));
                }
                Ok(h as usize)
            }
        });
        match made {
            Ok(h) => Ok(*h as HANDLE),
            Err(e) => Err(Error::other(format!("no job object for upstream servers ({e})"))),
        }
    }

    pub(super) fn adopt(pid: u32) -> std::io::Result<()> {
        let job = job()?;
        // SAFETY: Win32 calls on a handle this function opened (closed by `Owned`) and the job's.
        unsafe {
            let process = checked(OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid), "OpenProcess")?;
            if AssignProcessToJobObject(job, process.0) == 0 {
                return Err(Error::other(format!("AssignProcessToJobObject: {}", Error::last_os_error())));
            }
        }
        resume(pid)
    }

    /// Resumes every thread of `pid` (a process started suspended has one).
    fn resume(pid: u32) -> std::io::Result<()> {
        // SAFETY: the snapshot handle is owned; THREADENTRY32 is plain data with its size set.
        unsafe {
            let snap = checked(CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0), "CreateToolhelp32Snapshot")?;
            let mut entry: THREADENTRY32 = std::mem::zeroed();
            entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
            let mut resumed = 0;
            let mut more = Thread32First(snap.0, &mut entry) != 0;
            while more {
                if entry.th32OwnerProcessID == pid {
                    let thread = checked(OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID), "OpenThread")?;
                    if ResumeThread(thread.0) == u32::MAX {
                        return Err(Error::other(format!("ResumeThread: {}", Error::last_os_error())));
                    }
                    resumed += 1;
                }
                more = Thread32Next(snap.0, &mut entry) != 0;
            }
            if resumed == 0 {
                return Err(Error::other(format!("no thread of process {pid} to resume")));
            }
            Ok(())
        }
    }
}
