//! Getting tokens for one server: the interactive authorization-code flow
//! (discovery, client choice, PKCE, the `resource` parameter — the protocol
//! work is rmcp's), the client-credentials grant, and step-up when the
//! server asks for more scopes. The user's part goes to the
//! [`UrlOpener`]; the loopback [`Redirect`] completes it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthClientConfig,
    WWWAuthenticateParams,
};
use tokio::sync::Mutex;

use super::listener::Redirect;
use super::opener::UrlOpener;
use super::settings::{Grant, OAuthSettings};
use super::store::TokenStore;

/// Logins in a row without one successful request in between before Baton
/// stops asking (a server that keeps refusing would otherwise loop).
const MAX_LOGINS_IN_A_ROW: u32 = 3;

/// The name Baton registers under.
const CLIENT_NAME: &str = "Baton";

/// Everything needed to (re)authorize one server.
pub struct Authorizer {
    /// The server's configured name (for messages and `baton mcp login`).
    pub server: String,
    /// The server's URL (the resource the tokens are for).
    pub url: String,
    /// The server's `oauth` settings.
    pub settings: OAuthSettings,
    /// Where the tokens are kept.
    pub store: TokenStore,
    /// Shows the authorization URL to the user; `None`: logins that need a
    /// browser fail with [`Authorizer::login_hint`].
    pub opener: Option<Arc<dyn UrlOpener>>,
    /// How long the user has to finish a login.
    pub limit: Duration,
    /// Serialises logins; bumped after each, so requests that failed
    /// during one retry instead of starting another.
    lock: Mutex<()>,
    generation: AtomicU64,
    in_a_row: AtomicU32,
}

// Not derived: the opener is a trait object and the locks say nothing.
baton_engine::debug_fields! { Authorizer { server, url, settings, store, limit, .. } }

impl Authorizer {
    /// An authorizer for `server` at `url` that has not logged in yet.
    pub fn new(
        server: &str,
        url: &str,
        settings: OAuthSettings,
        store: TokenStore,
        opener: Option<Arc<dyn UrlOpener>>,
        limit: Duration,
    ) -> Authorizer {
        Authorizer {
            server: server.to_string(),
            url: url.to_string(),
            settings,
            store,
            opener,
            limit,
            lock: Mutex::new(()),
            generation: AtomicU64::new(0),
            in_a_row: AtomicU32::new(0),
        }
    }

    /// What to tell a user whose server needs a login nobody can do here.
    pub fn login_hint(&self) -> String {
        format!(
            "\"{}\" needs an OAuth login; run `baton mcp login {}` in a terminal \
             (or use a host that can open a URL)",
            self.server, self.server
        )
    }

    /// Counts finished logins; a request refused before the latest one
    /// retries instead of starting another login.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A request went through: logins may be asked again.
    pub fn succeeded(&self) {
        self.in_a_row.store(0, Ordering::Relaxed);
    }

    /// A fresh manager for this server, with the stored tokens (and the
    /// registered client) loaded when there are any.
    pub async fn manager(&self) -> Result<AuthorizationManager, String> {
        let mut manager = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| format!("{}: {e}", self.url))?;
        manager.set_credential_store(self.store.clone());
        if !self.store.has_tokens().await {
            return Ok(manager);
        }
        let metadata = self.discover(&manager, None).await?;
        manager.set_metadata(metadata);
        match manager.initialize_from_store().await {
            Ok(true) => {}
            Ok(false) => return Ok(manager),
            // Discovery failing now should not lose the tokens: the login
            // (or the next start) tries again.
            Err(e) => return Err(format!("OAuth discovery for {}: {e}", self.url)),
        }
        if self.settings.grant == Grant::ClientCredentials {
            let config = self.client_credentials()?;
            manager
                .configure_client_credentials(&config)
                .map_err(|e| e.to_string())?;
        } else if let Ok((client_id, _)) = manager.get_credentials().await {
            let (stored_secret, redirect) = self.store.client().await;
            let secret = self.settings.client_secret.clone().or(stored_secret);
            if let (Some(secret), Some(redirect)) = (secret, redirect) {
                let config = OAuthClientConfig::new(client_id, redirect).with_client_secret(secret);
                manager
                    .configure_client(config)
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(manager)
    }

    /// Gets new tokens into `slot`'s manager after the server refused
    /// (`challenge`: its `WWW-Authenticate`; `more_scope`: a 403 asking for
    /// more). `seen` is [`Authorizer::generation`] when the refused request
    /// started: if a login finished since, this only returns.
    pub async fn reauthorize(
        &self,
        slot: &Mutex<AuthorizationManager>,
        challenge: Option<&str>,
        more_scope: bool,
        seen: u64,
    ) -> Result<(), String> {
        let _one_at_a_time = self.lock.lock().await;
        if self.generation() != seen {
            return Ok(());
        }
        if self.in_a_row.fetch_add(1, Ordering::Relaxed) >= MAX_LOGINS_IN_A_ROW {
            return Err(format!(
                "\"{}\" still refuses after {MAX_LOGINS_IN_A_ROW} logins; giving up",
                self.server
            ));
        }
        let mut manager = slot.lock().await;
        let fresh = self.manager().await?;
        let old = std::mem::replace(&mut *manager, fresh);
        let scopes = if more_scope {
            step_up_scopes(&old, challenge, &self.url).await
        } else {
            Vec::new()
        };
        let result = self.login_into(&mut manager, challenge, scopes).await;
        self.generation.fetch_add(1, Ordering::AcqRel);
        result
    }

    /// A login from scratch (`baton mcp login`), into a new manager.
    pub async fn login(&self, challenge: Option<&str>) -> Result<AuthorizationManager, String> {
        let mut manager = self.manager().await?;
        self.login_into(&mut manager, challenge, Vec::new()).await?;
        Ok(manager)
    }

    async fn login_into(
        &self,
        manager: &mut AuthorizationManager,
        challenge: Option<&str>,
        scopes: Vec<String>,
    ) -> Result<(), String> {
        // Nobody to show a URL to: say how to log in, without asking the
        // network anything.
        if self.settings.grant == Grant::AuthorizationCode && self.opener.is_none() {
            return Err(self.login_hint());
        }
        let metadata = self.discover(manager, challenge).await?;
        let cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if self.settings.grant == Grant::IdentityAssertion {
            super::enterprise::exchange(&self.settings, &metadata, &self.url, &self.store)
                .await
                .map_err(|e| format!("\"{}\": {e}", self.server))?;
            let client_id = self.settings.client_id.clone().unwrap_or_default();
            manager.set_metadata(metadata);
            return manager
                .configure_client_id(&client_id)
                .map_err(|e| e.to_string());
        }
        manager.set_metadata(metadata);
        if self.settings.grant == Grant::ClientCredentials {
            let config = self.client_credentials()?;
            manager
                .validate_client_credentials_metadata(&config)
                .and_then(|()| manager.configure_client_credentials(&config))
                .map_err(|e| format!("client credentials for \"{}\": {e}", self.server))?;
            // rmcp's private_key_jwt exchange is not `Send` (it holds a
            // form serializer across an await), so it runs on a thread of
            // its own, with the manager moved there and back.
            let placeholder = AuthorizationManager::new(self.url.as_str())
                .await
                .map_err(|e| e.to_string())?;
            let taken = std::mem::replace(manager, placeholder);
            let handle = tokio::runtime::Handle::current();
            let (back, result) = tokio::task::spawn_blocking(move || {
                handle.block_on(async {
                    let result = taken.exchange_client_credentials(&config).await;
                    (taken, result.map(|_| ()).map_err(|e| redact(&e)))
                })
            })
            .await
            .map_err(|e| format!("client credentials: {e}"))?;
            *manager = back;
            return result.map_err(|e| format!("client credentials for \"{}\": {e}", self.server));
        }
        let Some(opener) = self.opener.clone() else {
            return Err(self.login_hint());
        };
        let redirect = Redirect::bind(self.settings.callback_port).await?;
        let mut request = AuthorizationRequest::new(redirect.uri()).with_client_name(CLIENT_NAME);
        if let Some(challenge) = challenge {
            request = request.with_challenge(challenge);
        }
        let scopes = match (&self.settings.scopes, scopes.is_empty()) {
            (Some(pinned), true) => pinned.clone(),
            _ => scopes,
        };
        if !scopes.is_empty() {
            request = request.with_scopes(scopes.clone());
        }
        if let Some(url) = &self.settings.client_metadata_url {
            request = request.with_client_metadata_url(url);
        }
        if let Some(id) = &self.settings.client_id {
            request = request.with_preregistered_client(id);
            if let Some(secret) = &self.settings.client_secret {
                request = request.with_client_secret(secret);
            }
        } else if !cimd || self.settings.client_metadata_url.is_none() {
            // Registered here rather than inside rmcp so the secret it gets
            // is kept: refreshing after a restart needs it.
            let wanted = if scopes.is_empty() {
                manager.select_scopes(None, &[])
            } else {
                scopes
            };
            let refs: Vec<&str> = wanted.iter().map(String::as_str).collect();
            let client = manager
                .register_client(CLIENT_NAME, &redirect.uri(), &refs)
                .await
                .map_err(|e| format!("client registration for \"{}\": {e}", self.server))?;
            self.store
                .save_client(client.client_secret.clone(), &redirect.uri())
                .await
                .map_err(|e| e.to_string())?;
            request = request.with_preregistered_client(client.client_id);
            if let Some(secret) = client.client_secret {
                request = request.with_client_secret(secret);
            }
        }
        let placeholder = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| e.to_string())?;
        let taken = std::mem::replace(manager, placeholder);
        let session = match AuthorizationSession::new(taken, request).await {
            Ok(session) => session,
            Err((back, e)) => {
                *manager = back;
                return Err(format!("OAuth login for \"{}\": {e}", self.server));
            }
        };
        let outcome = async {
            opener
                .open(&self.server, session.get_authorization_url())
                .await?;
            let callback = redirect.wait(self.limit).await?;
            session
                .handle_callback_url(&callback)
                .await
                .map(|_| ())
                .map_err(|e| redact(&e))
        }
        .await;
        *manager = session.auth_manager;
        if self.settings.client_id.is_some() {
            let _ = self
                .store
                .save_client(self.settings.client_secret.clone(), &session.redirect_uri)
                .await;
        }
        outcome.map_err(|e| format!("OAuth login for \"{}\": {e}", self.server))
    }

    /// The authorization server's metadata: `oauth.authServerMetadataUrl`,
    /// else rmcp's discovery, else (2025-03-26 servers without resource
    /// metadata) the document at the server's own root even when its
    /// `issuer` names a path below it — accepted only on the server's own
    /// origin, so no other party can slip in endpoints.
    async fn discover(
        &self,
        manager: &AuthorizationManager,
        challenge: Option<&str>,
    ) -> Result<AuthorizationMetadata, String> {
        if let Some(metadata) = self.pinned_metadata().await? {
            return Ok(metadata);
        }
        let error = match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => return Ok(resolution.metadata),
            Err(e) => format!("OAuth discovery for {}: {e}", self.url),
        };
        if !error.contains("issuer mismatch") {
            return Err(error);
        }
        let origin = |u: &str| reqwest::Url::parse(u).ok().map(|u| u.origin());
        let Some(own) = origin(&self.url) else {
            return Err(error);
        };
        let root = format!(
            "{}/.well-known/oauth-authorization-server",
            own.ascii_serialization()
        );
        let Ok(metadata) = fetch_metadata(&root).await else {
            return Err(error);
        };
        let same = |u: &str| origin(u).is_some_and(|o| o == own);
        let issuer_ok = metadata.issuer.as_deref().is_some_and(same);
        if issuer_ok && same(&metadata.authorization_endpoint) && same(&metadata.token_endpoint) {
            Ok(metadata)
        } else {
            Err(error)
        }
    }

    /// `oauth.authServerMetadataUrl`, fetched, instead of discovery.
    async fn pinned_metadata(&self) -> Result<Option<AuthorizationMetadata>, String> {
        let Some(url) = &self.settings.auth_server_metadata_url else {
            return Ok(None);
        };
        fetch_metadata(url).await.map(Some)
    }

    fn client_credentials(&self) -> Result<ClientCredentialsConfig, String> {
        let client_id = self.settings.client_id.clone().unwrap_or_default();
        let scopes = self.settings.scopes.clone().unwrap_or_default();
        if let Some(pem) = &self.settings.private_key_pem {
            let signing_algorithm = match self.settings.signing_algorithm.as_deref() {
                None | Some("ES256") => JwtSigningAlgorithm::ES256,
                Some("ES384") => JwtSigningAlgorithm::ES384,
                Some("RS256") => JwtSigningAlgorithm::RS256,
                Some("RS384") => JwtSigningAlgorithm::RS384,
                Some("RS512") => JwtSigningAlgorithm::RS512,
                Some(other) => return Err(format!("unknown oauth.signingAlgorithm {other:?}")),
            };
            return Ok(ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: pem.as_bytes().to_vec(),
                signing_algorithm,
                token_endpoint_audience: None,
                scopes,
                resource: Some(self.url.clone()),
            });
        }
        Ok(ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: self.settings.client_secret.clone().unwrap_or_default(),
            scopes,
            resource: Some(self.url.clone()),
        })
    }
}

async fn fetch_metadata(url: &str) -> Result<AuthorizationMetadata, String> {
    let response = reqwest::Client::new()
        .get(url)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| format!("{url}: {e}"))?;
    let bytes = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{url}: not authorization-server metadata: {e}"))
}

/// The scopes to ask for on a 403 `insufficient_scope`: those already
/// granted plus those the challenge names.
async fn step_up_scopes(
    old: &AuthorizationManager,
    challenge: Option<&str>,
    url: &str,
) -> Vec<String> {
    let asked = challenge
        .map(|c| challenge_scope(c, url))
        .unwrap_or_default();
    let mut scopes = old.get_current_scopes().await;
    for scope in asked.split_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_string());
        }
    }
    scopes
}

/// The `scope` a `WWW-Authenticate` challenge names.
fn challenge_scope(challenge: &str, url: &str) -> String {
    let Ok(base) = reqwest::Url::parse(url) else {
        return String::new();
    };
    WWWAuthenticateParams::parse(challenge, &base)
        .scope
        .unwrap_or_default()
}

/// Auth errors as text, without anything token-like: rmcp's messages name
/// endpoints and error codes, but a server's error body could echo a code.
fn redact(e: &AuthError) -> String {
    e.to_string().chars().take(300).collect()
}
