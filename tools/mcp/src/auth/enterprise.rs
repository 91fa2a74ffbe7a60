//! Enterprise-managed authorization (SEP-990, "cross-app access"): the
//! user's ID token from the company's identity provider is exchanged there
//! for an ID-JAG (RFC 8693 token exchange), which the MCP server's
//! authorization server takes as a JWT bearer grant (RFC 7523). No browser
//! and no person: the ID token comes from the configuration (usually an
//! environment variable). The exchanges are rmcp's; the result goes to the
//! token store like any other token.

use std::time::{SystemTime, UNIX_EPOCH};

use oauth2::basic::BasicTokenType;
use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    default_oauth_http_client, AuthorizationMetadata, CredentialStore, OAuthTokenResponse,
    StoredCredentials, VendorExtraTokenFields,
};

use super::settings::OAuthSettings;
use super::store::TokenStore;

/// Gets an access token for `resource` and stores it.
pub(super) async fn exchange(
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
    resource: &str,
    store: &TokenStore,
) -> Result<(), String> {
    let Some(idp) = &settings.identity_provider else {
        return Err("identity_assertion needs the identity provider's settings".into());
    };
    let client_id = settings.client_id.clone().unwrap_or_default();
    let issuer = metadata
        .issuer
        .clone()
        .ok_or("the authorization server's metadata names no issuer")?;
    let mut idp_server = EmaAuthorizationServer::new(
        idp.issuer.as_str(),
        idp.token_endpoint.as_str(),
        idp.client_id.as_str(),
    );
    if let Some(secret) = &idp.client_secret {
        idp_server = idp_server.with_client_authentication(
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone())),
        );
    }
    let mut resource_server = EmaAuthorizationServer::new(
        issuer.as_str(),
        metadata.token_endpoint.as_str(),
        client_id.as_str(),
    );
    if let Some(secret) = &settings.client_secret {
        resource_server = resource_server.with_client_authentication(
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone())),
        );
    }
    let http = default_oauth_http_client().map_err(|e| e.to_string())?;
    let mut request =
        EmaExchangeRequest::new_with_id_token(idp_server, resource_server, resource, &idp.id_token);
    if let Some(scopes) = &settings.scopes {
        request = request.with_scopes(scopes.iter().cloned());
    }
    let token = request
        .exchange(&http, &http)
        .await
        .map_err(|e| format!("enterprise-managed authorization: {e}"))?;
    let mut response = OAuthTokenResponse::new(
        token.access_token,
        BasicTokenType::Bearer,
        VendorExtraTokenFields::default(),
    );
    response.set_expires_in(token.expires_in.as_ref());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let credentials = StoredCredentials::new(
        client_id,
        Some(response),
        token.scopes.into_iter().collect(),
        Some(now),
    )
    .with_issuer(Some(issuer));
    store.save(credentials).await.map_err(|e| e.to_string())
}
