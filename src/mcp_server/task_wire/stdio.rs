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

/// Longest line held to be looked at (rmcp's own limit for one message):
/// a longer one passes through as it comes, unread, and rmcp refuses it.
const HELD: usize = 16 << 20;

/// Copies newline-delimited messages from `from` to `to`, each through
/// `rewrite` (`None`: as it was), until `from` ends or `to` fails.
async fn pump(
    from: impl AsyncRead + Unpin,
    to: &mut (impl AsyncWrite + Unpin),
    rewrite: impl Fn(&[u8]) -> Option<Vec<u8>>,
) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    let mut passing = false;
    loop {
        let available = match reader.fill_buf().await {
            Ok([]) | Err(_) => {
                let _ = to.write_all(&line).await;
                return;
            }
            Ok(available) => available,
        };
        let (chunk, end) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let used = chunk.len();
        let written = if passing {
            to.write_all(chunk).await
        } else if line.len() + used > HELD {
            passing = true;
            let held = std::mem::take(&mut line);
            to.write_all(&held).await.and(to.write_all(chunk).await)
        } else {
            line.extend_from_slice(chunk);
            Ok(())
        };
        reader.consume(used);
        if written.is_err() {
            return;
        }
        if !end {
            continue;
        }
        let sent = if passing {
            passing = false;
            Ok(())
        } else {
            let whole = std::mem::take(&mut line);
            let body = whole.strip_suffix(b"\n").unwrap_or(&whole);
            match rewrite(body) {
                Some(new) => to.write_all(&new).await.and(to.write_all(b"\n").await),
                None => to.write_all(&whole).await,
            }
        };
        if sent.and(to.flush().await).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_rewritten_and_an_overlong_one_passes_unread() {
        let long = vec![b'x'; HELD + 10];
        let mut input = b"a\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nb\nlast without newline");
        let mut out = Vec::new();
        pump(&input[..], &mut out, |l| {
            assert!(l.len() <= HELD, "an overlong line was held");
            (l == b"a").then(|| b"A".to_vec())
        })
        .await;
        let mut want = b"A\n".to_vec();
        want.extend_from_slice(&long);
        want.extend_from_slice(b"\nb\nlast without newline");
        assert!(
            out == want,
            "{} bytes out, {} expected",
            out.len(),
            want.len()
        );
    }
}
