//! The HTTP side's door and its bounds: who is let in to the UI's files and `/live/...`, and
//! how much the listener holds.
//!
//! - Host: a loopback name (`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`, any port), the
//!   listener's own address when it is a specific one, or a name given with `--allow-host`.
//!   Any other is refused (403): a page of another site whose name was made to point at
//!   this machine (DNS rebinding) sends its own name as Host.
//! - Origin, when sent: one of those names again (`http` or `https`, any port), so a page of
//!   another site cannot act here with the browser's help.
//! - A token, when the listener is reachable from other machines (bound to an address that is
//!   not loopback): the URL `sbp serve` prints carries `?token=...`; a GET with it sets an
//!   HttpOnly, SameSite=Strict cookie that the page's later requests carry. Without either:
//!   401.
//! - Bounds: [`MAX_HTTP_CONNECTIONS`] connections at once (one more is told 503 and closed),
//!   a request's header must arrive within [`HEADER_READ_TIMEOUT`] (an idle kept-alive
//!   connection is closed after as long), and what is written must be read within
//!   [`WRITE_TIMEOUT`].
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a request's header may take to arrive (and an idle connection may wait for the
/// next one) before the connection is closed: a client that sends half a header does not
/// hold its socket for good.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// HTTP connections served at once; one more is told 503 and closed at once.
pub const MAX_HTTP_CONNECTIONS: usize = 512;
/// How long what is written may wait for the client to read it before the connection is
/// dropped: a client that sends requests and never reads the answers does not keep its place.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// The token's random bytes (printed as twice as many hex digits).
const TOKEN_BYTES: usize = 16;

/// Who is let in: the names taken as Host, and the token when the listener is reachable from
/// other machines.
pub struct Door {
    /// Names given with `--allow-host`, lower case, without a port.
    allowed: Vec<String>,
    /// The listener's own address, when it is a specific one (not 0.0.0.0 or [::]).
    own: Option<IpAddr>,
    /// Asked for when the listener is not on loopback.
    token: Option<String>,
    /// The cookie that carries the token (one per port: cookies do not tell ports apart).
    cookie: String,
}

impl Door {
    /// The door of a listener bound to `bound`; a token is made (from the OS's randomness)
    /// when `bound` is not loopback.
    pub fn new(bound: SocketAddr, allow_hosts: &[String]) -> std::io::Result<Door> {
        let mut door = Door::without_token(bound, allow_hosts);
        if !bound.ip().is_loopback() {
            let mut bytes = [0u8; TOKEN_BYTES];
            getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
            door.token = Some(bytes.iter().map(|b| format!("{b:02x}")).collect());
        }
        Ok(door)
    }

    /// The door of a listener whose clients cannot carry a token (the management API's: the
    /// SDKs send only their own headers): names and origins are checked, nothing more.
    pub fn without_token(bound: SocketAddr, allow_hosts: &[String]) -> Door {
        Door {
            allowed: allow_hosts.iter().map(|h| host_name(h)).collect(),
            own: (!bound.ip().is_unspecified()).then_some(bound.ip()),
            token: None,
            cookie: format!("sbp_token_{}", bound.port()),
        }
    }

    /// The token the printed URL carries, when one is asked for.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Whether `name` (a host without its port, lower case) is one this server answers to.
    fn answers_to(&self, name: &str) -> bool {
        // Only what a host name or an address is made of (`evil.com/x.localhost` is neither).
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']' | ':'))
        {
            return false;
        }
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        let ip = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name)
            .parse::<IpAddr>()
            .ok();
        if ip.is_some_and(|ip| ip.is_loopback() || Some(ip) == self.own) {
            return true;
        }
        self.allowed.iter().any(|a| a == name)
    }

    /// Why a request is not let in, as its response; or, when it is, the cookie to set (the
    /// request carried the right token in its query).
    fn admit(&self, headers: &HeaderMap, query: Option<&str>) -> Result<Option<String>, Refusal> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if !host.is_some_and(|h| self.answers_to(&host_name(h))) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                format!(
                    "sbp serve answers only to localhost, *.localhost, 127.x.x.x and [::1] (any \
                     port), its own address, and names given with --allow-host NAME; this \
                     request's Host is {}",
                    shown(host)
                ),
            ));
        }
        for origin in headers.get_all(header::ORIGIN) {
            let origin = origin.to_str().ok();
            let from = origin.and_then(|o| {
                o.strip_prefix("http://")
                    .or_else(|| o.strip_prefix("https://"))
            });
            if !from.is_some_and(|o| !o.contains('/') && self.answers_to(&host_name(o))) {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    format!(
                        "sbp serve takes requests from its own pages only (an Origin of a name it \
                         answers to: localhost, 127.x.x.x, [::1] or --allow-host NAME); this \
                         request's Origin is {}",
                        shown(origin)
                    ),
                ));
            }
        }
        let Some(token) = &self.token else {
            return Ok(None);
        };
        let mut given = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.strip_prefix("token="));
        if given.any(|t| same_token(t, token)) {
            return Ok(Some(format!(
                "{}={token}; HttpOnly; SameSite=Strict; Path=/",
                self.cookie
            )));
        }
        let mut carried = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|c| c.to_str().ok())
            .flat_map(|c| c.split(';'))
            .filter_map(|c| c.trim().strip_prefix(self.cookie.as_str()))
            .filter_map(|c| c.strip_prefix('='));
        if carried.any(|t| same_token(t, token)) {
            return Ok(None);
        }
        Err(refuse(
            StatusCode::UNAUTHORIZED,
            "this sbp serve is reachable from other machines, so it asks for its token: open the \
             URL it printed at start (it carries ?token=...)"
                .to_string(),
        ))
    }
}

/// The middleware over every route (the UI's files too): a request the [`Door`] refuses gets
/// its refusal; one that brought the right token in its query gets the cookie with its
/// response.
pub async fn admit(State(door): State<Arc<Door>>, request: Request, next: Next) -> Response {
    match door.admit(request.headers(), request.uri().query()) {
        Err(refused) => refused.into_response(),
        Ok(cookie) => {
            let mut response = next.run(request).await;
            if let Some(cookie) = cookie.and_then(|c| c.parse().ok()) {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
    }
}

/// Serves `app` on `listener` until the task is dropped: at most [`MAX_HTTP_CONNECTIONS`] at
/// once, each request's header within [`HEADER_READ_TIMEOUT`].
pub async fn serve(listener: TcpListener, app: axum::Router) {
    serve_over(listener, app, None).await
}

/// As [`serve`], each connection over TLS when `tls` is given (its handshake within
/// [`crate::tls::HANDSHAKE_TIMEOUT`]).
pub async fn serve_over(
    listener: TcpListener,
    app: axum::Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let open = Arc::new(tokio::sync::Semaphore::new(MAX_HTTP_CONNECTIONS));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: the next accept may do better.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let Ok(place) = open.clone().try_acquire_owned() else {
            // One too many: told why if its socket takes it now, then closed.
            let _ = stream.try_write(
                format!(
                    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: \
                     close\r\n\r\nsbp serve takes at most {MAX_HTTP_CONNECTIONS} HTTP connections \
                     at once\n"
                )
                .as_bytes(),
            );
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let tls = tls.clone();
        let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
        stream.set_write_timeout(Some(WRITE_TIMEOUT));
        let stream = Box::pin(stream);
        tokio::spawn(async move {
            let http = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .clone();
            match tls {
                None => {
                    let _ = http
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                }
                Some(tls) => {
                    let accepted =
                        tokio::time::timeout(crate::tls::HANDSHAKE_TIMEOUT, tls.accept(stream))
                            .await;
                    if let Ok(Ok(stream)) = accepted {
                        let _ = http
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    }
                }
            }
            drop(place);
        });
    }
}

/// The host part of a Host header or an Origin's authority: lower case, without its port or
/// a trailing dot (an IPv6 address keeps its brackets).
fn host_name(authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6
            .split_once(']')
            .map_or(authority.clone(), |(ip, _)| format!("[{ip}]")),
        None => match authority.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
            _ => authority.clone(),
        },
    };
    host.trim_end_matches('.').to_string()
}

/// Whether `given` is the token, compared in time that does not depend on where they differ.
pub(crate) fn same_token(given: &str, token: &str) -> bool {
    let (given, token) = (given.as_bytes(), token.as_bytes());
    let differ = given
        .iter()
        .zip(token)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(differ) == 0 && given.len() == token.len()
}

/// A header's value as the refusal names it (short, and only what prints).
fn shown(value: Option<&str>) -> String {
    match value {
        None => "missing".to_string(),
        Some(v) => v.chars().filter(|c| !c.is_control()).take(100).collect(),
    }
}

/// Why a request is not let in: its status and the plain message that names the rule.
struct Refusal {
    status: StatusCode,
    why: String,
}

fn refuse(status: StatusCode, why: String) -> Refusal {
    Refusal { status, why }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (
            self.status,
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            self.why + "\n",
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::{host_name, same_token, Door};

    #[test]
    fn a_host_is_its_name_without_the_port() {
        assert_eq!(host_name("LocalHost:8080"), "localhost");
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_name("localhost.:80"), "localhost");
    }

    #[test]
    fn loopback_names_and_the_allowed_ones_are_answered() {
        let door = Door::new("127.0.0.1:8080".parse().unwrap(), &["Box.Lan".into()]).unwrap();
        for name in [
            "localhost",
            "app.localhost",
            "127.0.0.1",
            "127.9.8.7",
            "[::1]",
            "box.lan",
        ] {
            assert!(door.answers_to(name), "{name}");
        }
        for name in [
            "evil.example",
            "evil.example/x.localhost",
            "localhost.evil.example",
            "10.0.0.1",
            "[::2]",
            "",
        ] {
            assert!(!door.answers_to(name), "{name}");
        }
        assert!(door.token().is_none());
    }

    #[test]
    fn the_token_is_compared_whole() {
        assert!(same_token("abcd", "abcd"));
        assert!(!same_token("abc", "abcd"));
        assert!(!same_token("abcde", "abcd"));
        assert!(!same_token("abce", "abcd"));
        assert!(!same_token("", "abcd"));
    }
}
