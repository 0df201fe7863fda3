//! The playground's UI as `sbp serve` serves it: a built folder (`--dist`, tower-http's
//! `ServeDir`), or files held in memory (the `sbp` that scripts/package.sh builds carries the
//! UI inside). Files in memory are served in the encoding the browser takes: brotli or gzip,
//! compressed once when the package was made (`FILE.br`, `FILE.gz` beside `FILE`), or as they
//! are.
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

/// Where the UI's files come from.
#[derive(Clone)]
pub enum Site {
    /// A built `dist/` on disk.
    Folder(PathBuf),
    /// Files held in memory (built into the binary).
    Memory(Arc<Files>),
}

impl Site {
    /// Whether there is a UI to serve (an index.html).
    pub fn is_built(&self) -> bool {
        match self {
            Site::Folder(dist) => dist.join("index.html").is_file(),
            Site::Memory(files) => files.by_path.contains_key("index.html"),
        }
    }

    /// Where it comes from, said to the user.
    pub fn describe(&self) -> String {
        match self {
            Site::Folder(dist) => dist.display().to_string(),
            Site::Memory(_) => "the UI built into sbp".to_string(),
        }
    }
}

/// A set of files by their path below the site's root (`index.html`, `lab/index.html`).
pub struct Files {
    by_path: HashMap<String, File>,
}

struct File {
    plain: &'static [u8],
    brotli: Option<&'static [u8]>,
    gzip: Option<&'static [u8]>,
    content_type: HeaderValue,
    etag: HeaderValue,
}

impl Files {
    /// The files `entries` (path, bytes); `PATH.br` and `PATH.gz` are taken as `PATH`'s
    /// compressed forms when `PATH` is there too.
    pub fn new(entries: impl IntoIterator<Item = (String, &'static [u8])>) -> Files {
        let all: HashMap<String, &'static [u8]> = entries.into_iter().collect();
        let by_path = all
            .iter()
            .filter(|(path, _)| {
                let compressed = path.strip_suffix(".br").or(path.strip_suffix(".gz"));
                !compressed.is_some_and(|plain| all.contains_key(plain))
            })
            .map(|(path, plain)| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                plain.hash(&mut hasher);
                // The catalogs (`.ftl`) are text the page reads.
                let content_type = match path.rsplit_once('.').map(|(_, ext)| ext) {
                    Some("ftl") => "text/plain; charset=utf-8",
                    _ => mime_guess::from_path(path)
                        .first_raw()
                        .unwrap_or("application/octet-stream"),
                };
                let file = File {
                    plain,
                    brotli: all.get(&format!("{path}.br")).copied(),
                    gzip: all.get(&format!("{path}.gz")).copied(),
                    content_type: HeaderValue::from_static(content_type),
                    etag: HeaderValue::from_str(&format!("\"{:016x}\"", hasher.finish()))
                        .unwrap_or(HeaderValue::from_static("\"0\"")),
                };
                (path.clone(), file)
            })
            .collect();
        Files { by_path }
    }

    /// The answer to a GET or HEAD of `uri`: the file (a folder's index.html), 304 when the
    /// browser holds it, a redirect for a folder named without its slash, or 404.
    pub fn answer(&self, method: &Method, uri: &Uri, headers: &HeaderMap) -> Response {
        if method != Method::GET && method != Method::HEAD {
            return (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "GET, HEAD")],
            )
                .into_response();
        }
        let decoded = percent_encoding::percent_decode_str(uri.path()).decode_utf8_lossy();
        let path = decoded.trim_start_matches('/');
        let wanted = if path.is_empty() || path.ends_with('/') {
            format!("{path}index.html")
        } else {
            path.to_string()
        };
        let Some(file) = self.by_path.get(&wanted) else {
            if self.by_path.contains_key(&format!("{path}/index.html")) {
                // From the file's own name, not the request's path: `//lab` is not sent to the
                // host `lab`.
                let to = match uri.query() {
                    Some(q) => format!("/{path}/?{q}"),
                    None => format!("/{path}/"),
                };
                if let Ok(to) = HeaderValue::from_str(&to) {
                    return (StatusCode::PERMANENT_REDIRECT, [(header::LOCATION, to)])
                        .into_response();
                }
            }
            return (StatusCode::NOT_FOUND, "not found\n").into_response();
        };
        let mut answer = HeaderMap::new();
        answer.insert(header::CONTENT_TYPE, file.content_type.clone());
        answer.insert(header::ETAG, file.etag.clone());
        // Revalidated each time: the pages' names are not hashed (index.html, i18n/...).
        answer.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        answer.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        answer.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        let held = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|tags| {
                tags.split(',')
                    .any(|t| t.trim() == "*" || t.trim().trim_start_matches("W/") == file.etag)
            });
        if held {
            return (StatusCode::NOT_MODIFIED, answer).into_response();
        }
        let accepts = |coding: &str| accepts_encoding(headers, coding);
        let body = match (file.brotli, file.gzip) {
            (Some(br), _) if accepts("br") => {
                answer.insert(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
                br
            }
            (_, Some(gz)) if accepts("gzip") => {
                answer.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                gz
            }
            _ => file.plain,
        };
        if method == Method::HEAD {
            answer.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
            return (StatusCode::OK, answer).into_response();
        }
        (StatusCode::OK, answer, body).into_response()
    }
}

/// Whether the request's Accept-Encoding takes `coding` (named, with no `q=0`).
fn accepts_encoding(headers: &HeaderMap, coding: &str) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let named = parts.next().is_some_and(|c| c.eq_ignore_ascii_case(coding));
            // `q=0` (any case, any zeros) refuses it; a weight that is not a number does too.
            let refused = parts.any(|p| {
                let Some((name, weight)) = p.split_once('=') else {
                    return false;
                };
                name.trim().eq_ignore_ascii_case("q")
                    && weight
                        .trim()
                        .parse::<f32>()
                        .map_or(true, |q| q.is_nan() || q <= 0.0)
            });
            named && !refused
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Files {
        Files::new([
            ("index.html".to_string(), &b"<!doctype html>home"[..]),
            ("index.html.br".to_string(), &b"BR"[..]),
            ("index.html.gz".to_string(), &b"GZ"[..]),
            ("lab/index.html".to_string(), &b"lab"[..]),
            ("app.wasm".to_string(), &b"\0asm"[..]),
            ("only.gz".to_string(), &b"a file of its own"[..]),
        ])
    }

    fn get(files: &Files, path: &str, headers: &[(&'static str, &'static str)]) -> Response {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(*k, HeaderValue::from_static(v));
        }
        files.answer(&Method::GET, &path.parse().unwrap(), &map)
    }

    async fn body(r: Response) -> Vec<u8> {
        axum::body::to_bytes(r.into_body(), 1 << 20)
            .await
            .unwrap()
            .to_vec()
    }

    #[tokio::test]
    async fn a_file_in_the_encoding_the_browser_takes() {
        let files = files();
        let r = get(&files, "/", &[("accept-encoding", "gzip, deflate, br")]);
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "text/html");
        assert_eq!(body(r).await, b"BR");
        let r = get(
            &files,
            "/index.html",
            &[("accept-encoding", "br;q=0, gzip")],
        );
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(body(r).await, b"GZ");
        let r = get(&files, "/index.html", &[]);
        assert!(r.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(body(r).await, b"<!doctype html>home");
        let r = get(&files, "/app.wasm", &[("accept-encoding", "br")]);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(body(r).await, b"\0asm");
        // A .gz without its plain file is a file of its own.
        let r = get(&files, "/only.gz", &[]);
        assert_eq!(body(r).await, b"a file of its own");
    }

    #[tokio::test]
    async fn folders_redirects_revalidation_and_what_is_not_there() {
        let files = files();
        let r = get(&files, "/lab/", &[]);
        assert_eq!(body(r).await, b"lab");
        let r = get(&files, "/lab?lang=de", &[]);
        assert_eq!(r.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(r.headers()[header::LOCATION], "/lab/?lang=de");
        // Not to the host `lab`: the address is the file's own.
        let r = get(&files, "//lab?x=1", &[]);
        assert_eq!(r.headers()[header::LOCATION], "/lab/?x=1");
        let r = get(&files, "/", &[("accept-encoding", "br;q=NaN")]);
        assert!(r.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(r.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        for missing in [
            "/nothing",
            "/../index.html.br",
            "/lab/../../etc/passwd",
            "/%ZZ",
        ] {
            assert_eq!(get(&files, missing, &[]).status(), StatusCode::NOT_FOUND);
        }
        let etag = get(&files, "/", &[]).headers()[header::ETAG].clone();
        for tag in [etag, HeaderValue::from_static("*")] {
            let mut held = HeaderMap::new();
            held.insert(header::IF_NONE_MATCH, tag);
            let r = files.answer(&Method::GET, &"/".parse().unwrap(), &held);
            assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        }
        let r = files.answer(&Method::POST, &"/".parse().unwrap(), &HeaderMap::new());
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert!(files.by_path.contains_key("index.html"));
        assert!(!files.by_path.contains_key("index.html.br"));
    }
}
