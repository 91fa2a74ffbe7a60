//! The HTTP exchange: redirects followed by hand, a bounded body.
//!
//! Redirects are followed here rather than by the client so that each hop
//! can be checked and reported: the permission decision was made for the
//! URL the model asked for, so a redirect to another host is not followed
//! (the model is told where it leads and can ask for it, which gets its own
//! permission check), and a redirect to a scheme other than http(s) is
//! refused. The body is read chunk by chunk and abandoned as soon as it
//! passes the size limit, so a huge or endless response costs at most the
//! limit in memory.

use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::{Client, StatusCode, Url};

/// One redirect that was followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hop {
    pub from: Url,
    pub to: Url,
    pub status: StatusCode,
}

/// A completed exchange.
#[derive(Debug)]
pub(super) struct Fetched {
    pub url: Url,
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub hops: Vec<Hop>,
    pub body: Vec<u8>,
}

/// How an exchange ended.
#[derive(Debug)]
pub(super) enum Fetch {
    Done(Fetched),
    /// A redirect to another host, not followed.
    OtherHost {
        hops: Vec<Hop>,
        from: Url,
        to: Url,
        status: StatusCode,
    },
}

pub(super) struct Limits {
    pub max_bytes: u64,
    pub max_redirects: usize,
}

/// Checks that `url` is something WebFetch may fetch.
pub(super) fn check_url(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url.trim()).map_err(|e| {
        format!(
            "`{url}` is not a valid URL ({e}); give a full URL such as https://example.com/page."
        )
    })?;
    check_scheme(&parsed)?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "`{url}` has no host; give a full URL such as https://example.com/page."
        ));
    }
    Ok(parsed)
}

fn check_scheme(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(format!(
            "WebFetch only fetches http and https URLs, not `{other}:` ({url}). Use Read for \
             local files."
        )),
    }
}

/// Hosts are the same if they differ at most by a leading `www.`.
fn same_host(a: &Url, b: &Url) -> bool {
    let norm = |u: &Url| {
        let host = u.host_str().unwrap_or("").to_ascii_lowercase();
        host.strip_prefix("www.")
            .map(str::to_string)
            .unwrap_or(host)
    };
    norm(a) == norm(b)
}

/// Fetches `url`, following same-host redirects. `on_hop` hears each one.
pub(super) async fn fetch(
    client: &Client,
    url: Url,
    limits: &Limits,
    on_hop: impl Fn(&Hop),
) -> Result<Fetch, String> {
    let mut url = url;
    let mut hops: Vec<Hop> = Vec::new();
    loop {
        let mut response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| describe(&e, &url))?;
        let status = response.status();
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if let (true, Some(location)) = (status.is_redirection(), location) {
            let next = url.join(&location).map_err(|e| {
                format!(
                    "{url} redirected ({status}) to `{location}`, which is not a valid URL ({e})."
                )
            })?;
            check_scheme(&next)
                .map_err(|e| format!("{url} redirected ({status}) to {next}. {e}"))?;
            if !same_host(&url, &next) {
                return Ok(Fetch::OtherHost {
                    hops,
                    from: url,
                    to: next,
                    status,
                });
            }
            if hops.len() >= limits.max_redirects {
                return Err(format!(
                    "Gave up after {} redirects (the limit), starting at {}; the last one \
                     pointed to {next}. The site may redirect in a loop.",
                    hops.len(),
                    hops.first().map_or(&url, |h| &h.from),
                ));
            }
            let hop = Hop {
                from: url,
                to: next.clone(),
                status,
            };
            on_hop(&hop);
            hops.push(hop);
            url = next;
            continue;
        }
        if response
            .content_length()
            .is_some_and(|len| len > limits.max_bytes)
        {
            return Err(too_large(&url, limits.max_bytes));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e, &url))? {
            if body.len() as u64 + chunk.len() as u64 > limits.max_bytes {
                return Err(too_large(&url, limits.max_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Fetch::Done(Fetched {
            url,
            status,
            content_type,
            hops,
            body,
        }));
    }
}

fn too_large(url: &Url, max: u64) -> String {
    format!(
        "The response from {url} is larger than the size limit of {} bytes, so it was not \
         fetched. Look for a smaller page (a specific section, a raw or text version).",
        max
    )
}

/// A reqwest error with its causes, which say what actually went wrong
/// ("Connection refused"), unlike its top-level text.
fn describe(err: &reqwest::Error, url: &Url) -> String {
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !causes.contains(&text) {
            causes.push(text);
        }
        source = cause.source();
    }
    let detail = if causes.is_empty() {
        err.to_string()
    } else {
        causes.join(": ")
    };
    if err.is_connect() {
        format!(
            "Could not connect to {} ({detail}). Check the URL; the server may be down or \
             unreachable from here.",
            url.host_str().unwrap_or("the host")
        )
    } else if err.is_timeout() {
        format!("The request to {url} timed out ({detail}).")
    } else {
        format!("Fetching {url} failed: {detail}.")
    }
}
