//! A line diff for `expc fmt --check` and `expc test`: what `expc fmt`
//! would change, line by line.

/// The changed lines between `old` and `new` (a longest common subsequence),
/// each numbered in its own file: `   3 - text` is line 3 of `old`, which
/// goes; `   4 + text` is line 4 of `new`, which comes. So the `+` lines of
/// one group count up like the `-` lines do, and each number can be looked
/// up in the file it belongs to.
/// Files too large for the quadratic table are summarised instead.
pub fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Common lines at either end need no table.
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    if a_mid.len().saturating_mul(b_mid.len()) > 25_000_000 {
        return format!(
            "lines {}–{} differ ({} lines become {})\n",
            head + 1,
            a.len() - tail,
            a_mid.len(),
            b_mid.len()
        );
    }
    // lcs[i][j]: length of the LCS of a_mid[i..] and b_mid[j..].
    let mut lcs = vec![vec![0u32; b_mid.len() + 1]; a_mid.len() + 1];
    for i in (0..a_mid.len()).rev() {
        for j in (0..b_mid.len()).rev() {
            lcs[i][j] = if a_mid[i] == b_mid[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < a_mid.len() || j < b_mid.len() {
        if i < a_mid.len() && j < b_mid.len() && a_mid[i] == b_mid[j] {
            i += 1;
            j += 1;
        } else if i < a_mid.len() && (j == b_mid.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("{:>4} - {}\n", head + i + 1, a_mid[i]));
            i += 1;
        } else {
            out.push_str(&format!("{:>4} + {}\n", head + j + 1, b_mid[j]));
            j += 1;
        }
    }
    if out.is_empty() {
        out.push_str("(only line endings or the final newline differ)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn shows_each_changed_line_with_its_number() {
        let diff = line_diff("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
        assert_eq!(diff, "   2 - b\n   2 + B\n   5 + e\n");
    }

    #[test]
    fn numbers_each_added_line_by_the_new_file() {
        // One line split into three: each `+` line has its own number.
        let old = "experiment \"x\" {\n  fleet \"f\" { devices = 2 qos = 1 }\n}\n";
        let new = "experiment \"x\" {\n  fleet \"f\" {\n    devices = 2\n    qos = 1\n  }\n}\n";
        assert_eq!(
            line_diff(old, new),
            "   2 -   fleet \"f\" { devices = 2 qos = 1 }\n   2 +   fleet \"f\" {\n   3 +     devices = 2\n   4 +     qos = 1\n   5 +   }\n"
        );
        // Lines removed after lines added keep the old file's numbers.
        assert_eq!(
            line_diff("a\nb\nc\n", "x\ny\nz\nc\n"),
            "   1 - a\n   2 - b\n   1 + x\n   2 + y\n   3 + z\n"
        );
    }

    #[test]
    fn says_when_only_line_endings_differ() {
        assert_eq!(
            line_diff("a\n", "a"),
            "(only line endings or the final newline differ)\n"
        );
    }
}
