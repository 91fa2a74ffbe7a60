//! The `oauth` object of an HTTP or SSE server entry. The keys Claude Code
//! has are read as it writes them (`clientId`, `callbackPort`, `scopes`,
//! `authServerMetadataUrl`); the rest are Baton's (`clientSecret`,
//! `clientMetadataUrl`, `grantType`, `privateKeyFile`, `signingAlgorithm`).
//! Every string goes through `${VAR}` expansion, so secrets can stay in the
//! environment.

use serde_json::Value;

use crate::config::{expand, EnvLookup};

/// How Baton obtains tokens for a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// A user approves in a browser (authorization code + PKCE).
    #[default]
    AuthorizationCode,
    /// Machine-to-machine: the client's own credentials (SEP-1046).
    ClientCredentials,
    /// Enterprise-managed (SEP-990): an ID token from the company's
    /// identity provider, exchanged for an ID-JAG, then for an access token.
    IdentityAssertion,
}

/// The identity provider of [`Grant::IdentityAssertion`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IdentityProvider {
    /// The identity provider's issuer URL.
    pub issuer: String,
    /// The identity provider's token endpoint, where the ID token is exchanged
    /// for an ID-JAG.
    pub token_endpoint: String,
    /// Baton's client id at the identity provider.
    pub client_id: String,
    /// Its client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// The user's OIDC ID token (usually `${VAR}`).
    pub id_token: String,
}

/// OAuth settings of one server; all optional.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A client registered out of band (skips dynamic registration).
    pub client_id: Option<String>,
    /// The secret of that client, for a confidential one.
    pub client_secret: Option<String>,
    /// Fixed port of the loopback redirect (`http://localhost:PORT/callback`),
    /// for clients registered with that redirect URI.
    pub callback_port: Option<u16>,
    /// Scopes to request instead of the ones the server suggests.
    pub scopes: Option<Vec<String>>,
    /// An authorization-server metadata document to use instead of discovery.
    pub auth_server_metadata_url: Option<String>,
    /// An HTTPS URL naming this client (a client ID metadata document),
    /// used where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// How tokens are obtained (default: a browser login).
    pub grant: Grant,
    /// PEM private key for `private_key_jwt` client credentials.
    pub private_key_pem: Option<String>,
    /// `ES256` (default), `ES384`, `RS256`, `RS384` or `RS512`.
    pub signing_algorithm: Option<String>,
    /// The company's identity provider, for [`Grant::IdentityAssertion`].
    pub identity_provider: Option<IdentityProvider>,
}

// Secrets never reach logs through a `{:?}`.
// Not derived, like `OAuthSettings`: the secret and the ID token stay out of logs.
baton_engine::debug_fields! {
    IdentityProvider as this {
        issuer, token_endpoint, client_id,
        client_secret: this.client_secret.as_ref().map(|_| "***"), id_token: "***"
    }
}

baton_engine::debug_fields! {
    OAuthSettings as this {
        client_id, client_secret: this.client_secret.as_ref().map(|_| "***"), callback_port, scopes,
        client_metadata_url, grant, private_key_pem: this.private_key_pem.as_ref().map(|_| "***")
    }
}

impl OAuthSettings {
    /// Parses the entry's `oauth` value (absent or null: defaults).
    pub fn parse(value: Option<&Value>, env: EnvLookup<'_>) -> Result<OAuthSettings, String> {
        let map = match value {
            None | Some(Value::Null) => return Ok(OAuthSettings::default()),
            Some(Value::Object(map)) => map,
            Some(_) => return Err("\"oauth\" must be an object".into()),
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => {
                    let place = format!("oauth.{key}");
                    let s = expand(s, &place, env)?;
                    Ok((!s.trim().is_empty()).then_some(s))
                }
                Some(_) => Err(format!("\"oauth.{key}\" must be a string")),
            }
        };
        let callback_port = match map.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64().and_then(|p| u16::try_from(p).ok()) {
                Some(p) if p > 0 => Some(p),
                _ => return Err("\"oauth.callbackPort\" must be a port number (1-65535)".into()),
            },
        };
        let grant = match text("grantType")?.as_deref() {
            None | Some("authorization_code") => Grant::AuthorizationCode,
            Some("client_credentials") => Grant::ClientCredentials,
            Some("identity_assertion") => Grant::IdentityAssertion,
            Some(other) => {
                return Err(format!(
                    "\"oauth.grantType\" must be authorization_code, client_credentials or identity_assertion, not {other:?}"
                ))
            }
        };
        let private_key_pem = match text("privateKeyFile")? {
            None => text("privateKey")?,
            Some(path) => Some(
                std::fs::read_to_string(&path)
                    .map_err(|e| format!("\"oauth.privateKeyFile\" {path}: {e}"))?,
            ),
        };
        let settings = OAuthSettings {
            client_id: text("clientId")?,
            client_secret: text("clientSecret")?,
            callback_port,
            scopes: text("scopes")?.map(|s| s.split_whitespace().map(str::to_string).collect()),
            auth_server_metadata_url: text("authServerMetadataUrl")?,
            client_metadata_url: text("clientMetadataUrl")?,
            grant,
            private_key_pem,
            signing_algorithm: text("signingAlgorithm")?,
            identity_provider: None,
        };
        let mut settings = settings;
        if settings.grant == Grant::IdentityAssertion {
            let need = |key: &str| -> Result<String, String> {
                text(key)?.ok_or_else(|| format!("identity_assertion needs \"oauth.{key}\""))
            };
            settings.identity_provider = Some(IdentityProvider {
                issuer: need("idpIssuer")?,
                token_endpoint: need("idpTokenEndpoint")?,
                client_id: need("idpClientId")?,
                client_secret: text("idpClientSecret")?,
                id_token: need("idpIdToken")?,
            });
            if settings.client_id.is_none() {
                return Err("identity_assertion needs \"oauth.clientId\"".into());
            }
        }
        if settings.grant == Grant::ClientCredentials
            && (settings.client_id.is_none()
                || (settings.client_secret.is_none() && settings.private_key_pem.is_none()))
        {
            return Err(
                "client_credentials needs \"oauth.clientId\" and \"oauth.clientSecret\" \
                        or \"oauth.privateKeyFile\""
                    .into(),
            );
        }
        if let Some(url) = &settings.auth_server_metadata_url {
            if !url.starts_with("https://") && !url.starts_with("http://localhost") {
                return Err("\"oauth.authServerMetadataUrl\" must start with https://".into());
            }
        }
        Ok(settings)
    }

    /// The redirect URI for a listener on `port`.
    pub fn redirect_uri(port: u16) -> String {
        format!("http://localhost:{port}/callback")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_code_keys_and_expansion() {
        let env = |k: &str| (k == "SECRET").then(|| "s3".to_string());
        let v = json!({"clientId": "abc", "callbackPort": 8765, "scopes": "read write",
                       "clientSecret": "${SECRET}"});
        let s = OAuthSettings::parse(Some(&v), &env).unwrap();
        assert_eq!(s.client_id.as_deref(), Some("abc"));
        assert_eq!(s.callback_port, Some(8765));
        assert_eq!(s.scopes, Some(vec!["read".into(), "write".into()]));
        assert_eq!(s.client_secret.as_deref(), Some("s3"));
        assert!(!format!("{s:?}").contains("s3"));
    }

    #[test]
    fn bad_values_are_errors() {
        let env = |_: &str| None;
        for bad in [
            json!({"callbackPort": 0}),
            json!({"callbackPort": "80"}),
            json!({"grantType": "password"}),
            json!({"grantType": "client_credentials", "clientId": "x"}),
            json!("yes"),
        ] {
            assert!(OAuthSettings::parse(Some(&bad), &env).is_err(), "{bad}");
        }
    }
}
