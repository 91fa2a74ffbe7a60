//! `baton mcp login NAME` and `baton mcp logout NAME`: OAuth for one
//! configured remote server from a terminal. Login prints the URL to open
//! (Baton starts no browser), waits for the loopback redirect and stores
//! the tokens in the user's Baton state; logout forgets them. Tokens are
//! never printed.

use std::path::PathBuf;
use std::sync::Arc;

use baton::mcp::auth::{Authorizer, FnOpener, TokenStore};
use baton::mcp::{LoadOptions, ServerSpec, TransportSpec};

use super::{CliError, Common};

/// The entry named `name`, from the same places a session reads.
fn find(common: &Common, name: &str) -> Result<(ServerSpec, String), CliError> {
    let loaded = baton::mcp::load(
        &LoadOptions {
            project_dir: common.cwd.clone().unwrap_or_else(|| PathBuf::from(".")),
            home: std::env::var_os("HOME").map(PathBuf::from),
            config_files: common.mcp.config.clone(),
            settings_file: common.settings.clone(),
            strict: common.mcp.strict,
        },
        &baton::mcp::process_env,
    );
    let Some(spec) = loaded.servers.into_iter().find(|s| s.name == name) else {
        return Err(CliError::Usage(format!(
            "no MCP server named \"{name}\" is configured (.mcp.json, ~/.claude.json, --mcp-config)"
        )));
    };
    let url = match &spec.transport {
        TransportSpec::Http { url, .. } | TransportSpec::Sse { url, .. } => url.clone(),
        TransportSpec::Stdio { .. } => {
            return Err(CliError::Usage(format!(
                "\"{name}\" is a stdio server; OAuth is for remote (http, sse) servers"
            )))
        }
        // A transport added to the MCP client later: this login knows
        // only the HTTP ones.
        other => {
            return Err(CliError::Usage(format!(
                "\"{name}\" is a {} server; OAuth is for remote (http, sse) servers",
                other.kind()
            )))
        }
    };
    Ok((spec, url))
}

fn authorizer(spec: &ServerSpec, url: &str, terminal: bool) -> Authorizer {
    let opts = baton::mcp::ClientOptions::from_env(".", &baton::mcp::process_env);
    let store = TokenStore::new(opts.oauth_dir.as_deref(), &spec.name, url);
    let opener = terminal.then(|| {
        Arc::new(FnOpener(|server: &str, url: &str| {
            eprintln!("To log in to \"{server}\", open this URL in a browser:\n\n  {url}\n");
            eprintln!("Waiting for the browser to come back...");
            Ok(())
        })) as Arc<dyn baton::mcp::auth::UrlOpener>
    });
    Authorizer::new(
        &spec.name,
        url,
        spec.oauth.clone(),
        store,
        opener,
        opts.oauth_limit,
    )
}

pub(super) async fn login(common: &Common, name: &str) -> Result<(), CliError> {
    let (spec, url) = find(common, name)?;
    let auth = authorizer(&spec, &url, true);
    let challenge = baton::mcp::auth::challenge_of(&url).await;
    auth.login(challenge.as_deref())
        .await
        .map_err(CliError::Failed)?;
    match auth.store.path() {
        Some(path) => eprintln!("Logged in to \"{name}\"; tokens kept in {}", path.display()),
        None => eprintln!("Logged in to \"{name}\" (no state directory: tokens were not kept)"),
    }
    Ok(())
}

pub(super) async fn logout(common: &Common, name: &str) -> Result<(), CliError> {
    let (spec, url) = find(common, name)?;
    let auth = authorizer(&spec, &url, false);
    let removed = auth
        .store
        .remove()
        .await
        .map_err(|e| CliError::Failed(e.to_string()))?;
    if removed {
        eprintln!("Logged out of \"{name}\" (stored tokens removed).");
    } else {
        eprintln!("No stored tokens for \"{name}\".");
    }
    Ok(())
}
