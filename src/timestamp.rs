//! Times as RFC 3339 text in UTC: the transcript's timestamps (to the
//! millisecond), file listings and MCP tasks (to the second). One civil
//! date conversion for all of them.

use std::time::{SystemTime, UNIX_EPOCH};

/// `at` to the millisecond: `2026-11-26T02:41:46.123Z`. Times before 1970
/// are read as 1970.
pub(crate) fn millis(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    format!("{}.{:03}Z", civil(secs), since.subsec_millis())
}

/// `at` to the second: `2026-01-02T03:04:05Z`. Times before 1970 are
/// written as they are (a file's clock can be anything).
pub(crate) fn seconds(at: SystemTime) -> String {
    let secs = match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    format!("{}Z", civil(secs))
}

/// `YYYY-MM-DDTHH:MM:SS` for `secs` since 1970-01-01 UTC.
fn civil(secs: i64) -> String {
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = date(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// Year, month, day of the day `days` after 1970-01-01 (proleptic
/// Gregorian; Howard Hinnant's algorithm: eras of 400 years, March-based
/// years).
pub(crate) fn date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // In range by construction: day 1..=31, month 1..=12.
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339() {
        let at = UNIX_EPOCH + Duration::from_millis(1_795_660_906_123);
        assert_eq!(millis(at), "2026-11-26T02:41:46.123Z");
        assert_eq!(millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(millis(leap), "2000-02-29T00:00:00.000Z");
        let s = |secs| seconds(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(s(0), "1970-01-01T00:00:00Z");
        assert_eq!(s(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(s(1_767_323_045), "2026-01-02T03:04:05Z");
        assert_eq!(
            seconds(UNIX_EPOCH - Duration::from_secs(86_400)),
            "1969-12-31T00:00:00Z"
        );
    }
}
