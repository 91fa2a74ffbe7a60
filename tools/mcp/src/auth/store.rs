//! Tokens kept per server in the user's Baton state
//! (`$XDG_STATE_HOME/baton/mcp-oauth/`, else `~/.local/state/baton/...`),
//! one file per server, readable by the user only (0600 in a 0700
//! directory). A file also remembers the server's URL — tokens are never
//! sent to a different URL configured under the same name — and the client
//! secret of a dynamically registered client, which refreshing needs.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

/// The directory of token files, from the environment (`None`: no home,
/// tokens live in memory only).
pub fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |v: String| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    env("XDG_STATE_HOME")
        .and_then(absolute)
        .or_else(|| {
            env("HOME")
                .and_then(absolute)
                .map(|h| h.join(".local/state"))
        })
        .map(|state| state.join("baton/mcp-oauth"))
}

/// What one file holds.
#[derive(Clone, Serialize, Deserialize, Default)]
struct Saved {
    url: String,
    #[serde(default)]
    credentials: Option<StoredCredentials>,
    /// Secret and redirect URI of a client registered for this server.
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    redirect_uri: Option<String>,
}

/// Why a token file could not be read, written or removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenStoreError {
    /// The file is there but cannot be read (or removed).
    #[error("{}: {source}", .path.display())]
    Io {
        /// The token file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file does not hold what Baton writes there.
    #[error("{}: unreadable token file: {source}", .path.display())]
    Corrupt {
        /// The token file.
        path: PathBuf,
        /// Why it cannot be parsed.
        #[source]
        source: serde_json::Error,
    },
    /// The tokens could not be encoded for writing.
    #[error("the tokens cannot be encoded: {0}")]
    Encode(#[source] serde_json::Error),
}

/// The token file of one server (or memory, without a directory).
#[derive(Clone)]
pub struct TokenStore {
    path: Option<PathBuf>,
    url: String,
    memory: Arc<Mutex<Option<Saved>>>,
}

// Not derived: the tokens it holds stay out of logs; where they live is enough.
baton_engine::debug_fields! { TokenStore { path, url, .. } }

impl TokenStore {
    /// A store for `server` at `url`: a file in `dir` named after the server,
    /// or memory only without a directory.
    pub fn new(dir: Option<&Path>, server: &str, url: &str) -> TokenStore {
        TokenStore {
            path: dir.map(|d| d.join(file_name(server))),
            url: url.to_string(),
            memory: Arc::new(Mutex::new(None)),
        }
    }

    /// The token file, when the tokens are kept on disk.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    async fn read(&self) -> Result<Saved, TokenStoreError> {
        let saved = match &self.path {
            None => self.memory.lock().await.clone(),
            Some(path) => match std::fs::read_to_string(path) {
                Ok(text) => Some(serde_json::from_str::<Saved>(&text).map_err(|source| {
                    TokenStoreError::Corrupt {
                        path: path.clone(),
                        source,
                    }
                })?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(source) => {
                    return Err(TokenStoreError::Io {
                        path: path.clone(),
                        source,
                    })
                }
            },
        };
        match saved {
            Some(saved) if saved.url == self.url => Ok(saved),
            // Another URL under the same name: its tokens are not for this one.
            _ => Ok(Saved {
                url: self.url.clone(),
                ..Saved::default()
            }),
        }
    }

    async fn write(&self, saved: Saved) -> Result<(), TokenStoreError> {
        let Some(path) = &self.path else {
            *self.memory.lock().await = Some(saved);
            return Ok(());
        };
        let text = serde_json::to_string_pretty(&saved).map_err(TokenStoreError::Encode)?;
        write_private(path, text.as_bytes()).map_err(|source| TokenStoreError::Io {
            path: path.clone(),
            source,
        })
    }

    /// Remembers the registered client's secret and redirect URI.
    pub async fn save_client(
        &self,
        secret: Option<String>,
        redirect: &str,
    ) -> Result<(), TokenStoreError> {
        let mut saved = self.read().await?;
        saved.client_secret = secret;
        saved.redirect_uri = Some(redirect.to_string());
        self.write(saved).await
    }

    /// The registered client's secret and redirect URI, if any.
    pub async fn client(&self) -> (Option<String>, Option<String>) {
        match self.read().await {
            Ok(s) => (s.client_secret, s.redirect_uri),
            Err(_) => (None, None),
        }
    }

    /// Whether tokens are stored.
    pub async fn has_tokens(&self) -> bool {
        self.read()
            .await
            .is_ok_and(|s| s.credentials.is_some_and(|c| c.token_response.is_some()))
    }

    /// Forgets everything about this server (logout).
    pub async fn remove(&self) -> Result<bool, TokenStoreError> {
        match &self.path {
            None => Ok(self.memory.lock().await.take().is_some()),
            Some(path) => match std::fs::remove_file(path) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
                Err(source) => Err(TokenStoreError::Io {
                    path: path.clone(),
                    source,
                }),
            },
        }
    }
}

/// rmcp's error for a store failure carries text only.
fn internal(e: TokenStoreError) -> AuthError {
    AuthError::InternalError(e.to_string())
}

#[async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let saved = self.read().await.map_err(internal)?;
        Ok(saved.credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut saved = self.read().await.map_err(internal)?;
        saved.credentials = Some(credentials);
        self.write(saved).await.map_err(internal)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let mut saved = self.read().await.map_err(internal)?;
        saved.credentials = None;
        self.write(saved).await.map_err(internal)
    }
}

/// A file name for a server name: safe characters only, so a crafted
/// name cannot point outside the directory.
fn file_name(server: &str) -> String {
    let safe: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Names that differ only in unsafe characters must not share a file.
    let sum = server
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("{safe}-{sum:08x}.json")
}

/// Writes `bytes` to `path` through a 0600 temporary file and a rename, in
/// a 0700 directory, so a reader never sees half a file or other modes.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or(std::io::ErrorKind::InvalidInput)?;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn files_are_private_and_bound_to_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(Some(dir.path()), "../evil name", "http://a/mcp");
        let creds = StoredCredentials::new("cid".into(), None, vec![], None);
        store.save(creds).await.unwrap();
        let path = store.path().unwrap().to_path_buf();
        assert_eq!(path.parent(), Some(dir.path()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(store.load().await.unwrap().is_some());
        let other = TokenStore::new(Some(dir.path()), "../evil name", "http://b/mcp");
        assert!(other.load().await.unwrap().is_none());
        assert!(store.remove().await.unwrap());
        assert!(store.load().await.unwrap().is_none());
    }

    /// A token file that is not JSON: the error names the file, and its
    /// source is the parser's error (the cause is kept, not only its text).
    #[tokio::test]
    async fn a_corrupt_file_is_reported_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(Some(dir.path()), "srv", "http://a/mcp");
        let path = store.path().unwrap().to_path_buf();
        std::fs::write(&path, "not json").unwrap();
        let err = store
            .save_client(None, "http://localhost/cb")
            .await
            .unwrap_err();
        assert!(matches!(err, TokenStoreError::Corrupt { .. }), "{err:?}");
        assert!(err
            .to_string()
            .starts_with(&format!("{}: unreadable token file: ", path.display())));
        let source = std::error::Error::source(&err).unwrap();
        assert!(source.downcast_ref::<serde_json::Error>().is_some());
    }
}
