//! Times as run directories write them: Unix nanoseconds, RFC 3339 in
//! UTC, and run ids made from the start time and the plan's hash.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch; 0 before it, saturating far in the future.
pub fn unix_ns(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// RFC 3339 in UTC with millisecond precision, e.g. `2026-11-21T18:30:00.123Z`.
/// Times outside 1970…9999 are clamped (humantime cannot format them).
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(clamp(time)).to_string()
}

/// The largest instant humantime formats: 9999-12-31T23:59:59.999Z.
fn clamp(time: SystemTime) -> SystemTime {
    let last = UNIX_EPOCH + Duration::from_millis(253_402_300_799_999);
    if time < UNIX_EPOCH {
        UNIX_EPOCH
    } else if time > last {
        last
    } else {
        time
    }
}

/// `20261121T183000Z-1a2b3c4d`: UTC start second, then the first 8 hex digits
/// of the plan hash. Sorts by time; the hash tells runs of different plans
/// in the same second apart.
pub fn new_run_id(now: SystemTime, plan_sha256: &str) -> String {
    let seconds = humantime::format_rfc3339_seconds(clamp(now)).to_string();
    let compact: String = seconds.chars().filter(|c| !matches!(c, '-' | ':')).collect();
    let hash: String = plan_sha256.chars().filter(char::is_ascii_hexdigit).take(8).collect();
    let hash = hash.to_ascii_lowercase();
    if hash.is_empty() {
        compact
    } else {
        format!("{compact}-{hash}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_utc_and_sortable() {
        // 2026-11-21T18:30:00Z
        let t = UNIX_EPOCH + Duration::from_secs(1_795_285_800);
        assert_eq!(new_run_id(t, "1A2B3C4D5e6f"), "20261121T183000Z-1a2b3c4d");
        assert_eq!(new_run_id(t + Duration::from_millis(999), "ab"), "20261121T183000Z-ab");
        assert_eq!(new_run_id(UNIX_EPOCH - Duration::from_secs(5), ""), "19700101T000000Z");
        assert_eq!(
            new_run_id(UNIX_EPOCH + Duration::from_secs(u64::MAX / 4), "f"),
            "99991231T235959Z-f"
        );
    }

    #[test]
    fn timestamps() {
        let t = UNIX_EPOCH + Duration::from_nanos(1_795_285_800_123_456_789);
        assert_eq!(rfc3339(t), "2026-11-21T18:30:00.123Z");
        assert_eq!(unix_ns(t), 1_795_285_800_123_456_789);
        assert_eq!(unix_ns(UNIX_EPOCH - Duration::from_secs(1)), 0);
    }
}
