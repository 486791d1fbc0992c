//! Topic names and filters (MQTT 3.1.1, 4.7): what a PUBLISH and a
//! SUBSCRIBE may name, and which names a filter matches.

/// A topic name a client may publish to: non-empty, no wildcards, no NUL.
pub(super) fn valid_name(topic: &str) -> bool {
    !topic.is_empty() && !topic.contains(['+', '#', '\0'])
}

/// A topic filter: `+` fills a whole level, `#` a whole last level.
pub(super) fn valid_filter(filter: &str) -> bool {
    if filter.is_empty() || filter.contains('\0') {
        return false;
    }
    let levels: Vec<&str> = filter.split('/').collect();
    levels.iter().enumerate().all(|(i, level)| match *level {
        "#" => i == levels.len() - 1,
        "+" => true,
        other => !other.contains(['+', '#']),
    })
}

/// Whether `filter` (valid) matches `topic` (a valid name). Names starting
/// with `$` are not matched by a filter starting with a wildcard (4.7.2).
pub(super) fn matches(filter: &str, topic: &str) -> bool {
    if topic.starts_with('$') && filter.starts_with(['+', '#']) {
        return false;
    }
    let mut names = topic.split('/');
    for level in filter.split('/') {
        match (level, names.next()) {
            ("#", _) => return true,
            ("+", Some(_)) => {}
            (exact, Some(name)) if exact == name => {}
            _ => return false,
        }
    }
    names.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_as_the_standard_says() {
        let cases = [
            ("fleet/#", "fleet/d1/t", true),
            ("fleet/#", "fleet", true),
            ("#", "a/b", true),
            ("#", "$SYS/x", false),
            ("+/x", "$SYS/x", false),
            ("$SYS/#", "$SYS/x", true),
            ("fleet/+/t", "fleet/d1/t", true),
            ("fleet/+/t", "fleet/d1/u", false),
            ("fleet/+", "fleet/d1/t", false),
            ("fleet/+", "fleet/", true),
            ("+", "a", true),
            ("+", "a/b", false),
            ("a/b", "a/b", true),
            ("a/b", "a/b/c", false),
            ("a/b/c", "a/b", false),
        ];
        for (filter, topic, expected) in cases {
            assert!(valid_filter(filter), "{filter}");
            assert_eq!(matches(filter, topic), expected, "{filter} against {topic}");
        }
    }

    #[test]
    fn wildcards_only_as_whole_levels() {
        for bad in ["", "a/#/b", "a#", "a/b+", "+a", "a\0"] {
            assert!(!valid_filter(bad), "{bad:?}");
        }
        for bad in ["", "a/+", "a/#", "a\0"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        assert!(valid_name("fleet/d1/t"));
    }
}
