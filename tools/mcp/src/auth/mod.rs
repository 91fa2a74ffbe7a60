//! OAuth 2.1 for remote (streamable-HTTP) MCP servers, as the MCP
//! authorization spec defines it. The protocol work — metadata discovery
//! (RFC 9728, RFC 8414 / OpenID, the 2025-03-26 fallbacks), dynamic client
//! registration, client ID metadata documents, PKCE S256, the `resource`
//! parameter, refresh, client credentials — is rmcp's `auth` feature;
//! this module decides when to log in, keeps the tokens
//! ([`store`]), and hands the user's part to the host ([`UrlOpener`],
//! completed by the loopback [`listener`]). See docs/mcp.md, "OAuth login".

mod challenge;
mod client;
mod enterprise;
mod listener;
mod login;
mod opener;
mod settings;
mod store;

pub use challenge::challenge_of;
pub use client::{sse_bearer, Guarded, Link, Refusal};
pub use login::Authorizer;
pub use opener::{FnOpener, UrlOpener};
pub use settings::{Grant, IdentityProvider, OAuthSettings};
pub use store::{default_dir, TokenStore, TokenStoreError};
