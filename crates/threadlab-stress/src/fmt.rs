//! How the stress run writes its counts; the CLI's tables write theirs with the same function
//! (`threadlab-cli` re-exports it from here, so it has one home).

/// A count with thousands separated: `1234567` → `1,234,567`.
///
/// ```
/// assert_eq!(threadlab_stress::fmt::group_thousands(1_234_567), "1,234,567");
/// ```
pub fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::group_thousands;

    #[test]
    fn thousands_are_grouped_by_three_from_the_right() {
        assert_eq!(group_thousands(1234567), "1,234,567");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(0), "0");
    }
}
