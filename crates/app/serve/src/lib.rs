//! The web viewer's files and a directory of result bundles over HTTP (`yosoku serve`,
//! `cargo xtask serve`, the browser test), on 127.0.0.1 only. `bundles/index.json` lists the bundle directories (those with a
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
        .filter(|e| yosoku_bundle::fs::is_bundle(&e.path()))
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

    /// A served tree in a fresh temporary directory: the viewer's index, one bundle with a
    /// table and a link out, a directory that is not a bundle, and a secret beside them.
    struct Tree {
        tmp: PathBuf,
        dist: PathBuf,
        bundles: PathBuf,
    }

    impl Tree {
        fn new(tag: &str) -> Self {
            let tmp = std::env::temp_dir().join(format!("yosoku-{tag}-{}", std::process::id()));
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
            Self { tmp, dist, bundles }
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }

    /// Requests that must be refused, each a way out of the served directories.
    const OUTSIDE: &[&str] = &[
        "/../secret",
        "/bundles/../../secret",
        "/bundles/%2e%2e/secret",
        "/bundles/%2E%2E/%2e%2e/secret",
        "/bundles/b1/..%2F..%2Fsecret",
        "/bundles/b1/..%5c..%5csecret",
        "/bundles/b1/%252e%252e/%252e%252e/secret",
        "/bundles/%c0%ae%c0%ae/secret",
        "/bundles/b1/%00/../../secret",
        "/bundles/b1/link",
        "//etc/passwd",
        "/bundles//etc/passwd",
        "/%2fetc%2fpasswd",
    ];

    #[test]
    fn serves_the_viewer_and_bundles_and_nothing_else() {
        let tree = Tree::new("serve");
        let server = Server::start(&tree.dist, &tree.bundles, 0).unwrap();
        assert!(server.addr.ip().is_loopback());
        let addr = server.addr;
        assert_eq!(get(addr, "/"), (200, "<html>viewer</html>".into()));
        assert_eq!(get(addr, "/bundles/index.json"), (200, r#"["b1"]"#.into()));
        assert_eq!(get(addr, "/bundles/b1/tables/t.arrow").1, "ARROW1");
        assert_eq!(get(addr, "/bundles/b1/tables/t%2Earrow").1, "ARROW1");
        for outside in OUTSIDE {
            let (code, body) = get(addr, outside);
            assert!([400, 403, 404].contains(&code), "{outside}: {code}");
            assert!(
                !body.contains("secret") && !body.contains("root:"),
                "{outside}"
            );
        }
        assert_eq!(get(addr, "/missing.js").0, 404);
    }

    /// Sends `bytes` and reads whatever comes back until the server closes or 2 s pass.
    fn exchange(addr: SocketAddr, bytes: &[u8]) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let _ = stream.write_all(bytes);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut reply = Vec::new();
        let _ = stream.read_to_end(&mut reply);
        String::from_utf8_lossy(&reply).into_owned()
    }

    #[test]
    fn bad_requests_are_answered_and_the_server_keeps_serving() {
        let tree = Tree::new("serve-bad");
        let server = Server::start(&tree.dist, &tree.bundles, 0).unwrap();
        let addr = server.addr;
        let long_url = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(100_000));
        let many_headers = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            (0..2000)
                .map(|i| format!("X-{i}: {i}\r\n"))
                .collect::<String>()
        );
        let bad: Vec<(&str, Vec<u8>)> = vec![
            ("garbage", b"\x00\x01\x02 not http at all\r\n\r\n".to_vec()),
            ("empty", Vec::new()),
            ("no version", b"GET /\r\n\r\n".to_vec()),
            (
                "unknown method",
                b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            ),
            (
                "POST with a body",
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello".to_vec(),
            ),
            (
                "body shorter than its length",
                b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc".to_vec(),
            ),
            (
                "header without a colon",
                b"GET / HTTP/1.1\r\nnonsense\r\n\r\n".to_vec(),
            ),
            ("cut mid-line", b"GET /bundles/b1/tab".to_vec()),
            (
                "not UTF-8 once decoded",
                b"GET /%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            ),
            ("100 kB URL", long_url.into_bytes()),
        ];
        for (what, bytes) in &bad {
            let reply = exchange(addr, bytes);
            // Answered with an error status, or the connection closed; never a file.
            assert!(
                reply.is_empty()
                    || reply.starts_with("HTTP/1.")
                        && !reply.starts_with("HTTP/1.1 200")
                        && !reply.starts_with("HTTP/1.0 200"),
                "{what}: {reply:.200}"
            );
            assert_eq!(get(addr, "/").0, 200, "after {what}");
        }
        // Large but well formed: answered (the viewer's index), or refused; the server lives on.
        let reply = exchange(addr, many_headers.as_bytes());
        assert!(
            reply.is_empty() || reply.starts_with("HTTP/1."),
            "{reply:.200}"
        );
        assert_eq!(get(addr, "/").0, 200, "after 2000 headers");
        // A client that connects and sends nothing does not hold the others up.
        let idle = std::net::TcpStream::connect(addr).unwrap();
        assert_eq!(get(addr, "/bundles/index.json").0, 200);
        drop(idle);
    }

    /// What the load client reports, one line: `answered <n> of <m>, wrong <w>, ...`.
    fn load(addr: SocketAddr, clients: usize, per_client: usize) -> String {
        let paths: &[(&str, u16)] = &[
            ("/", 200),
            ("/bundles/index.json", 200),
            ("/bundles/b1/tables/t.arrow", 200),
            ("/missing.js", 404),
            ("/bundles/%2e%2e/secret", 403),
        ];
        let started = std::time::Instant::now();
        let results: Vec<(usize, usize, Vec<f64>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    scope.spawn(move || {
                        let (mut answered, mut wrong) = (0, 0);
                        let mut latencies = Vec::with_capacity(per_client);
                        for i in 0..per_client {
                            let (path, expected) = paths[(c + i) % paths.len()];
                            let sent = std::time::Instant::now();
                            let (code, _) = get(addr, path);
                            latencies.push(sent.elapsed().as_secs_f64() * 1e3);
                            answered += 1;
                            if code != expected {
                                wrong += 1;
                            }
                        }
                        (answered, wrong, latencies)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let wall = started.elapsed().as_secs_f64();
        let answered: usize = results.iter().map(|r| r.0).sum();
        let wrong: usize = results.iter().map(|r| r.1).sum();
        let mut latencies: Vec<f64> = results.into_iter().flat_map(|r| r.2).collect();
        latencies.sort_by(f64::total_cmp);
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
        format!(
            "answered {answered} of {}, wrong {wrong}, {:.0} requests/s, latency median {:.2} ms, 99th percentile {:.2} ms, max {:.2} ms",
            clients * per_client,
            answered as f64 / wall,
            at(0.5),
            at(0.99),
            at(1.0)
        )
    }

    /// The load test's second process (run by the test below, ignored otherwise).
    #[test]
    #[ignore = "the client process of keeps_serving_under_load_from_another_process"]
    fn load_client() {
        let addr: SocketAddr = std::env::var("YOSOKU_LOAD_ADDR").unwrap().parse().unwrap();
        println!("LOAD {}", load(addr, 8, 500));
    }

    #[test]
    fn keeps_serving_under_load_from_another_process() {
        let tree = Tree::new("serve-load");
        let server = Server::start(&tree.dist, &tree.bundles, 0).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tests::load_client", "--ignored", "--nocapture"])
            .env("YOSOKU_LOAD_ADDR", server.addr.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = stdout
            .lines()
            .find_map(|l| l.strip_prefix("LOAD "))
            .unwrap_or_else(|| panic!("no report in {stdout}"));
        eprintln!("load test: {report}");
        assert!(
            report.starts_with("answered 4000 of 4000, wrong 0,"),
            "{report}"
        );
        assert_eq!(get(server.addr, "/").0, 200);
    }
}
