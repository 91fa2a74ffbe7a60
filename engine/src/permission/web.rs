//! `WebFetch(domain:…)` rules.
//!
//! A rule names a host, not a URL prefix: URL prefixes are easy to get wrong
//! (`https://example.com` also prefixes `https://example.com.evil.net`).
//! `domain:example.com` is that host exactly; `domain:*.example.com` is any
//! subdomain of it. The URL's host is taken from a real URL parser, so user
//! info, ports and percent-encoding cannot disguise it.

/// A parsed `domain:` specifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DomainPattern {
    Exact(String),
    /// Any subdomain of this domain (not the domain itself).
    Subdomains(String),
}

impl DomainPattern {
    pub(crate) fn parse(spec: &str) -> Result<DomainPattern, String> {
        let Some(domain) = spec.trim().strip_prefix("domain:") else {
            return Err(format!(
                "`{spec}`: WebFetch rules take the form `WebFetch(domain:example.com)`"
            ));
        };
        let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
        let (wild, host) = match domain.strip_prefix("*.") {
            Some(host) => (true, host.to_string()),
            None => (false, domain),
        };
        let ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == ':')
            && !host.starts_with('.')
            && !host.contains("..");
        if !ok {
            return Err(format!(
                "`{spec}`: `{host}` is not a domain name (use `domain:example.com` or `domain:*.example.com`)"
            ));
        }
        Ok(if wild {
            DomainPattern::Subdomains(host)
        } else {
            DomainPattern::Exact(host)
        })
    }

    pub(crate) fn matches_url(&self, url: &str) -> bool {
        let Some(host) = host_of(url) else {
            return false;
        };
        match self {
            DomainPattern::Exact(d) => host == *d,
            DomainPattern::Subdomains(d) => host
                .strip_suffix(d.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// The lower-case host of `url`, if it has one.
pub(crate) fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed
        .host_str()?
        .trim_end_matches('.')
        .to_ascii_lowercase();
    Some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_compared_not_prefixes() {
        let p = DomainPattern::parse("domain:example.com").unwrap();
        assert!(p.matches_url("https://example.com/a"));
        assert!(p.matches_url("https://EXAMPLE.com:8443/a"));
        assert!(!p.matches_url("https://example.com.evil.net/"));
        assert!(!p.matches_url("https://example.com@evil.net/"));
        assert!(!p.matches_url("https://docs.example.com/"));
        let sub = DomainPattern::parse("domain:*.example.com").unwrap();
        assert!(sub.matches_url("https://docs.example.com/"));
        assert!(!sub.matches_url("https://example.com/"));
        assert!(!sub.matches_url("https://badexample.com/"));
        assert!(DomainPattern::parse("https://example.com").is_err());
        assert!(DomainPattern::parse("domain:").is_err());
        assert!(DomainPattern::parse("domain:exa mple.com").is_err());
    }
}
