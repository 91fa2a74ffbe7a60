//! The host's part of a login: showing the user a URL to open. Baton never
//! starts a browser itself; whoever embeds it decides (a terminal prints
//! the URL, `baton serve` hands it to its host, a test fetches it).

use async_trait::async_trait;

/// Opens (or shows) an authorization URL for the user.
#[async_trait]
pub trait UrlOpener: Send + Sync {
    /// `server` wants the user to visit `url`; the loopback listener
    /// completes the login when the browser comes back. An error means
    /// nobody can open it (the login then fails at once).
    async fn open(&self, server: &str, url: &str) -> Result<(), String>;
}

/// A plain function as an opener.
pub struct FnOpener<F>(pub F);

// Not derived: the closure has no `Debug`; the wrapper says what it is.
baton_engine::debug_fields! { FnOpener<F> { .. } }

#[async_trait]
impl<F> UrlOpener for FnOpener<F>
where
    F: Fn(&str, &str) -> Result<(), String> + Send + Sync,
{
    async fn open(&self, server: &str, url: &str) -> Result<(), String> {
        (self.0)(server, url)
    }
}
