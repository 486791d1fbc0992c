//! `expc test --junit FILE`: the results as JUnit XML, the report format CI
//! systems read (one `testcase` per spec, `failure` elements with the same
//! text the terminal shows).

use std::fmt::Write;

use super::spec::SpecOutcome;

/// The whole report. `details(outcome)` is the plain text of its failures.
pub fn junit_xml(outcomes: &[SpecOutcome], details: impl Fn(&SpecOutcome) -> String, seconds: f64) -> String {
    let failures = outcomes.iter().filter(|o| !o.failures.is_empty()).count();
    let timestamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let timestamp = timestamp.trim_end_matches('Z');
    let hostname = exp_host::hostname();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{seconds:.3}\"",
        outcomes.len()
    );
    let _ = writeln!(xml, "<testsuites name=\"expc test\" {counts}>");
    let _ = writeln!(
        xml,
        "  <testsuite name=\"expc test\" {counts} timestamp=\"{timestamp}\" hostname=\"{}\">",
        escape(&hostname)
    );
    for outcome in outcomes {
        let name = outcome.spec.to_string_lossy();
        let classname = outcome
            .spec
            .parent()
            .map(|p| p.to_string_lossy().replace('/', "."))
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| ".".into());
        let open = format!(
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
            escape(&name),
            escape(&classname),
            outcome.seconds
        );
        if outcome.failures.is_empty() {
            let _ = writeln!(xml, "{open}/>");
            continue;
        }
        let message = outcome
            .failures
            .iter()
            .map(|f| f.summary())
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(xml, "{open}>");
        let _ = writeln!(
            xml,
            "      <failure message=\"{}\" type=\"{}\">{}</failure>",
            escape(&message),
            escape(outcome.failures[0].summary()),
            escape(&details(outcome))
        );
        let _ = writeln!(xml, "    </testcase>");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Text as XML character data or an attribute value; characters XML 1.0
/// cannot hold (control characters such as a terminal's escapes) become
/// U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(
            escape("a < b & \"c\"\u{1b}[1m"),
            "a &lt; b &amp; &quot;c&quot;\u{FFFD}[1m"
        );
    }
}
