//! `cargo xtask serve`: the web viewer (`dist/`) and a directory of result bundles, over HTTP on
//! 127.0.0.1 only. `bundles/index.json` lists the bundle directories (those with a
//! `manifest.json`), read afresh on every request; `bundles/<name>/...` are their files. Paths
//! are checked component by component and again after resolving links: nothing outside the two
//! directories is served.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{Context, Result, anyhow};
use tiny_http::{Header, Method, Request, Response, StatusCode};

/// A running server; stops when dropped.
pub struct Server {
    pub addr: SocketAddr,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `dist` at `/` and the bundles in `bundles` at `/bundles/` on `127.0.0.1:port`
    /// (`port` 0: any free port).
    pub fn start(dist: &Path, bundles: &Path, port: u16) -> Result<Self> {
        let roots = Roots {
            dist: dist
                .canonicalize()
                .with_context(|| format!("{}: the web viewer is not built", dist.display()))?,
            bundles: bundles
                .canonicalize()
                .with_context(|| format!("{}: no such bundle directory", bundles.display()))?,
        };
        let server = tiny_http::Server::http(("127.0.0.1", port))
            .map_err(|e| anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
        let addr = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| anyhow!("the server has no IP address"))?;
        let server = Arc::new(server);
        let incoming = Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            for request in incoming.incoming_requests() {
                roots.answer(request);
            }
        });
        Ok(Self {
            addr,
            server,
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Serves until the process is stopped.
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[derive(Debug)]
struct Roots {
    dist: PathBuf,
    bundles: PathBuf,
}

/// What a request asks for.
#[derive(Debug, PartialEq)]
enum Target {
    File(PathBuf),
    BundleIndex,
}

impl Roots {
    fn answer(&self, request: Request) {
        let response = if !matches!(request.method(), Method::Get | Method::Head) {
            text(405, "only GET and HEAD")
        } else {
            match self.resolve(request.url()) {
                Ok(Target::BundleIndex) => match bundle_names(&self.bundles) {
                    Ok(names) => with_type(
                        Response::from_data(
                            serde_json::to_vec(&names).unwrap_or_else(|_| b"[]".to_vec()),
                        ),
                        "application/json",
                    ),
                    Err(e) => text(500, &e.to_string()),
                },
                Ok(Target::File(path)) => match std::fs::read(&path) {
                    Ok(bytes) => with_type(Response::from_data(bytes), content_type(&path)),
                    Err(_) => text(404, "not found"),
                },
                Err((code, why)) => text(code, why),
            }
        };
        let _ = request.respond(response);
    }

    /// Maps a request URL to a file under one of the roots, or refuses it.
    fn resolve(&self, url: &str) -> Result<Target, (u16, &'static str)> {
        let path = url.split(['?', '#']).next().unwrap_or("");
        let path = percent_encoding::percent_decode_str(path)
            .decode_utf8()
            .map_err(|_| (400, "the path is not UTF-8 once percent-decoded"))?;
        let parts: Vec<&str> = path
            .trim_start_matches('/')
            .split('/')
            .filter(|p| !p.is_empty())
            .collect();
        for p in &parts {
            let mut components = Path::new(p).components();
            let plain = matches!(components.next(), Some(Component::Normal(_)))
                && components.next().is_none();
            if !plain || p.contains(['\\', '\0']) {
                return Err((403, "outside the served directories"));
            }
        }
        let (root, rest) = match parts.as_slice() {
            [] => (&self.dist, vec!["index.html"]),
            ["bundles", "index.json"] => return Ok(Target::BundleIndex),
            ["bundles", rest @ ..] => (&self.bundles, rest.to_vec()),
            rest => (&self.dist, rest.to_vec()),
        };
        let mut file = root.clone();
        file.extend(rest);
        // Links must not lead out either.
        let real = file.canonicalize().map_err(|_| (404, "not found"))?;
        if !real.starts_with(root) {
            return Err((403, "outside the served directories"));
        }
        if !real.is_file() {
            return Err((404, "not found"));
        }
        Ok(Target::File(real))
    }
}

/// The directories of `dir` that hold a bundle manifest, sorted.
fn bundle_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("manifest.json").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript",
        // instantiateStreaming needs this exact type.
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("arrow") => "application/vnd.apache.arrow.file",
        Some("png") => "image/png",
        Some("css") => "text/css",
        _ => "application/octet-stream",
    }
}

fn with_type<R: std::io::Read>(response: Response<R>, kind: &str) -> Response<R> {
    response
        .with_header(header("Content-Type", kind))
        // Bundles change under a running server when the demo runs again.
        .with_header(header("Cache-Control", "no-store"))
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("ASCII header")
}

fn text(code: u16, why: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    with_type(Response::from_string(why), "text/plain; charset=utf-8")
        .with_status_code(StatusCode(code))
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::*;

    fn get(addr: SocketAddr, path: &str) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        let code = reply[9..12].parse().unwrap();
        let body = reply
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (code, body)
    }

    #[test]
    fn serves_the_viewer_and_bundles_and_nothing_else() {
        let tmp = std::env::temp_dir().join(format!("xtask-serve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let (dist, bundles) = (tmp.join("dist"), tmp.join("results"));
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::create_dir_all(bundles.join("b1/tables")).unwrap();
        std::fs::create_dir_all(bundles.join("not-a-bundle")).unwrap();
        std::fs::write(dist.join("index.html"), "<html>viewer</html>").unwrap();
        std::fs::write(bundles.join("b1/manifest.json"), "{}").unwrap();
        std::fs::write(bundles.join("b1/tables/t.arrow"), "ARROW1").unwrap();
        std::fs::write(tmp.join("secret"), "secret").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.join("secret"), bundles.join("b1/link")).unwrap();

        let server = Server::start(&dist, &bundles, 0).unwrap();
        assert!(server.addr.ip().is_loopback());
        let addr = server.addr;
        assert_eq!(get(addr, "/"), (200, "<html>viewer</html>".into()));
        assert_eq!(get(addr, "/bundles/index.json"), (200, r#"["b1"]"#.into()));
        assert_eq!(get(addr, "/bundles/b1/tables/t.arrow").1, "ARROW1");
        assert_eq!(get(addr, "/bundles/b1/tables/t%2Earrow").1, "ARROW1");
        for outside in [
            "/../secret",
            "/bundles/../../secret",
            "/bundles/%2e%2e/secret",
            "/bundles/b1/..%2F..%2Fsecret",
            "/bundles/b1/link",
        ] {
            let (code, body) = get(addr, outside);
            assert!(code == 403 || code == 404, "{outside}: {code}");
            assert_ne!(body, "secret", "{outside}");
        }
        assert_eq!(get(addr, "/missing.js").0, 404);
        drop(server);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
