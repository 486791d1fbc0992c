//! Byte sizes on the command line (`expc xml generate --size`, `expc serve`'s limits).

/// Byte sizes: `123`, `10KB`, `1.5GiB`, `500MB` (SI and binary units).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("bad size `{text}`"))?;
    let factor: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown size unit `{other}` (use B, KB, MB, GB, KiB, MiB, GiB)"
            ))
        }
    };
    let bytes = number * factor;
    if !(bytes >= 1.0 && bytes < 2f64.powi(63)) {
        return Err(format!("size `{text}` out of range"));
    }
    Ok(bytes as u64)
}
