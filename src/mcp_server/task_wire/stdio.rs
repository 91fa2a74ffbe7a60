//! The adapter on stdio: a pump each way between the process's stdin and
//! stdout and rmcp, rewriting the lines that need it (see the parent).

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

use super::{annotate, lift, Pending};

/// What rmcp reads and writes, and the pump that carries its output.
pub(crate) struct Adapted {
    /// rmcp reads the client's messages here.
    pub input: DuplexStream,
    /// rmcp writes its messages here.
    pub output: DuplexStream,
    /// Carries rmcp's output to stdout.
    pub pump: Pump,
}

/// The pump from rmcp to stdout.
pub(crate) struct Pump(JoinHandle<()>);

impl Pump {
    /// Waits (briefly) until what rmcp wrote last has reached stdout, once
    /// rmcp has let go of its end.
    pub(crate) async fn flushed(self) {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.0).await;
    }
}

/// Puts the adapter between `stdin`/`stdout` and rmcp.
pub(crate) fn adapt(
    stdin: impl AsyncRead + Unpin + Send + 'static,
    stdout: impl AsyncWrite + Unpin + Send + 'static,
) -> Adapted {
    let pending = Pending::default();
    let (mut to_rmcp, input) = tokio::io::duplex(256 * 1024);
    let (output, from_rmcp) = tokio::io::duplex(256 * 1024);
    let seen = pending.clone();
    tokio::spawn(async move {
        pump(stdin, &mut to_rmcp, |line| lift(line, &seen)).await;
        let _ = to_rmcp.shutdown().await;
    });
    let out = tokio::spawn(async move {
        let mut stdout = stdout;
        pump(from_rmcp, &mut stdout, |line| annotate(line, &pending)).await;
        let _ = stdout.flush().await;
    });
    Adapted {
        input,
        output,
        pump: Pump(out),
    }
}

/// Copies newline-delimited messages from `from` to `to`, each through
/// `rewrite` (`None`: as it was), until `from` ends or `to` fails.
async fn pump(
    from: impl AsyncRead + Unpin,
    to: &mut (impl AsyncWrite + Unpin),
    rewrite: impl Fn(&[u8]) -> Option<Vec<u8>>,
) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let written = match rewrite(body) {
            Some(new) => to.write_all(&new).await.and(to.write_all(b"\n").await),
            None => to.write_all(&line).await,
        };
        if written.and(to.flush().await).is_err() {
            return;
        }
    }
}
