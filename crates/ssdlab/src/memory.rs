//! How much memory this process may still allocate: the least of the system's `MemAvailable`,
//! the process's address-space and data-segment limits (`RLIMIT_AS`, `RLIMIT_DATA`, as
//! `ulimit -v`/`prlimit --as` set them) minus what it already uses, and its cgroup's memory limit
//! (v2 `memory.max`, v1 `memory.limit_in_bytes`, for every ancestor cgroup) minus the cgroup's
//! usage. A drive whose tables would not fit is refused with a message instead of aborting.

use std::path::Path;

/// Bytes this process can still allocate, or None when nothing says (not Linux, no /proc).
pub fn available_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    [
        mem_available(),
        rlimit_room(Limit::AddressSpace, status_kib(&status, "VmSize:")),
        rlimit_room(Limit::Data, status_kib(&status, "VmData:")),
        cgroup_room(Path::new("/sys/fs/cgroup"), &cgroups),
    ]
    .into_iter()
    .flatten()
    .min()
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    status_kib(&text, "MemAvailable:")
}

/// A `Key:   123 kB` line of /proc/meminfo or /proc/self/status, in bytes.
fn status_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[derive(Clone, Copy)]
enum Limit {
    AddressSpace,
    Data,
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one libc call, no pointers kept
fn soft_limit(which: Limit) -> Option<u64> {
    let resource = match which {
        Limit::AddressSpace => libc::RLIMIT_AS,
        Limit::Data => libc::RLIMIT_DATA,
    };
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `r`, which lives for the call.
    if unsafe { libc::getrlimit(resource, &raw mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(r.rlim_cur)
}

#[cfg(not(target_os = "linux"))]
fn soft_limit(_which: Limit) -> Option<u64> {
    None
}

fn rlimit_room(which: Limit, used: Option<u64>) -> Option<u64> {
    let limit = soft_limit(which)?;
    Some(limit.saturating_sub(used.unwrap_or(0)))
}

/// Room under the cgroup limits of this process: `cgroups` is /proc/self/cgroup, `root` the
/// cgroup filesystem's mount point. Every ancestor's limit counts (a parent may be tighter).
pub(crate) fn cgroup_room(root: &Path, cgroups: &str) -> Option<u64> {
    let mut best: Option<u64> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (base, limit_file, usage_file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                root.join("memory"),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            if let Some(limit) = read_number(&dir.join(limit_file)) {
                let used = read_number(&dir.join(usage_file)).unwrap_or(0);
                let room = limit.saturating_sub(used);
                best = Some(best.map_or(room, |b| b.min(room)));
            }
            if dir == base || !dir.pop() || !dir.starts_with(&base) {
                break;
            }
        }
    }
    best
}

/// A number in a cgroup file; "max" (v2) and v1's huge "unlimited" values are None.
fn read_number(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: u64 = text.trim().parse().ok()?;
    (v < 1 << 60).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn cgroup_v2_takes_the_tightest_ancestor() {
        let root = std::env::temp_dir().join(format!("ssdlab-cg2-{}", std::process::id()));
        write(&root.join("a/memory.max"), "3000000000\n");
        write(&root.join("a/memory.current"), "1000000000\n");
        write(&root.join("a/b/memory.max"), "max\n");
        write(&root.join("a/b/memory.current"), "500\n");
        assert_eq!(cgroup_room(&root, "0::/a/b\n"), Some(2_000_000_000));
        write(&root.join("a/b/memory.max"), "1500000000\n");
        assert_eq!(cgroup_room(&root, "0::/a/b\n"), Some(1_500_000_000 - 500));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn cgroup_v1_reads_the_memory_controller_only() {
        let root = std::env::temp_dir().join(format!("ssdlab-cg1-{}", std::process::id()));
        write(&root.join("memory/x/memory.limit_in_bytes"), "1073741824\n");
        write(&root.join("memory/x/memory.usage_in_bytes"), "73741824\n");
        write(
            &root.join("memory/memory.limit_in_bytes"),
            "9223372036854771712\n",
        );
        let text = "5:cpu,cpuacct:/x\n4:memory:/x\n";
        assert_eq!(cgroup_room(&root, text), Some(1_000_000_000));
        assert_eq!(cgroup_room(&root, "5:cpu:/x\n"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn status_lines_are_kib() {
        assert_eq!(status_kib("VmSize:\t  2048 kB\n", "VmSize:"), Some(2 << 20));
        assert_eq!(status_kib("VmData: x\n", "VmData:"), None);
    }
}
