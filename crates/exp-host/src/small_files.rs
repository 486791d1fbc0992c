//! The small files of /proc and /sys the host facts are read from: a
//! file's trimmed text, a CPU list. A leaf the fact modules (`facts.rs`,
//! `cpu_facts.rs`, `system_facts.rs`, `net_facts.rs`) share.

/// Where the kernel lists the CPUs and their properties.
pub(crate) const CPU_DIR: &str = "/sys/devices/system/cpu";

/// A small file's text without surrounding white space; `None` if it
/// cannot be read or is empty.
pub(crate) fn read_trimmed(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// CPU numbers from a list like `0-3,6`.
pub(crate) fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    cpus.extend(a..=b);
                }
            }
            None => cpus.extend(part.parse::<u32>().ok()),
        }
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
    }
}
