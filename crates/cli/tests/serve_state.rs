//! `sbp serve --state` as a process: every send the client saw accepted is there after a
//! kill -9 and a restart; a torn journal tail is cut and said, and the server starts; a state
//! past the links' 2 MB checkpoint limit (and the old 4 MiB read limit) is written on stop and
//! taken up again. Each test is bounded in time.
use fe2o3_amqp::types::messaging::{Body, Message};
use fe2o3_amqp::types::primitives::{Binary, Value};
use fe2o3_amqp::{Connection, Receiver, Sender, Session};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest a test runs.
const BOUND: Duration = Duration::from_secs(120);

/// A running `sbp serve`: its address, what it printed, and the process (killed when dropped).
struct Serve {
    child: Child,
    addr: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Collects what a pipe says, line by line, sending each line on too.
fn collect(
    pipe: impl std::io::Read + Send + 'static,
    into: Arc<Mutex<String>>,
    lines: std::sync::mpsc::Sender<String>,
) {
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            into.lock().unwrap().push_str(&format!("{line}\n"));
            let _ = lines.send(line);
        }
    });
}

/// Starts `sbp serve --state state` on a free port and waits for its address.
fn serve(state: &Path) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbp"))
        .args([
            "serve",
            "--amqp",
            "127.0.0.1:0",
            "--http",
            "none",
            "--quiet",
        ])
        .arg("--state")
        .arg(state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sbp starts");
    let (tx, rx) = std::sync::mpsc::channel();
    let (stdout, stderr) = (Arc::default(), Arc::default());
    collect(
        child.stdout.take().expect("stdout"),
        Arc::clone(&stdout),
        tx,
    );
    let (ignore, _) = std::sync::mpsc::channel();
    collect(
        child.stderr.take().expect("stderr"),
        Arc::clone(&stderr),
        ignore,
    );
    let mut server = Serve {
        child,
        addr: String::new(),
        stdout,
        stderr,
    };
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) {
        if let Some(addr) = line.strip_prefix("sbp serve: AMQP on ") {
            server.addr = addr.to_string();
            return server;
        }
    }
    panic!(
        "sbp serve did not say its address; it said {} and {}",
        server.stdout.lock().unwrap(),
        server.stderr.lock().unwrap()
    );
}

/// What a pipe has said once it says `text` (its reader runs in its own thread), within 10 s.
fn said(pipe: &Mutex<String>, text: &str) -> String {
    for _ in 0..100 {
        let now = pipe.lock().unwrap().clone();
        if now.contains(text) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    pipe.lock().unwrap().clone()
}

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sbp-serve-state-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Sends each body to `orders`, waiting for each disposition: each is accepted.
async fn send_all(addr: &str, bodies: impl Iterator<Item = Vec<u8>>) {
    let mut connection = Connection::open("sender", format!("amqp://{addr}").as_str())
        .await
        .expect("connected");
    let mut session = Session::begin(&mut connection).await.expect("a session");
    let mut sender = Sender::attach(&mut session, "s", "orders")
        .await
        .expect("a sender");
    for body in bodies {
        let outcome = sender
            .send(Message::builder().data(Binary::from(body)).build())
            .await
            .expect("sent");
        assert!(outcome.is_accepted(), "{outcome:?}");
    }
    let _ = sender.close().await;
    let _ = connection.close().await;
}

/// Receives `n` messages from `orders` and completes them; their bodies.
async fn receive_all(addr: &str, n: usize) -> Vec<Vec<u8>> {
    let mut connection = Connection::open("receiver", format!("amqp://{addr}").as_str())
        .await
        .expect("connected");
    let mut session = Session::begin(&mut connection).await.expect("a session");
    let mut receiver = Receiver::attach(&mut session, "r", "orders")
        .await
        .expect("a receiver");
    let mut bodies = Vec::new();
    for i in 0..n {
        let delivery =
            tokio::time::timeout(Duration::from_secs(10), receiver.recv::<Body<Value>>())
                .await
                .unwrap_or_else(|_| panic!("message {} of {n} did not come", i + 1))
                .expect("a delivery");
        let body = match &delivery.message().body {
            Body::Data(batch) => batch.iter().flat_map(|d| d.0.to_vec()).collect(),
            other => panic!("{other:?}"),
        };
        receiver.accept(&delivery).await.expect("accepted");
        bodies.push(body);
    }
    let _ = receiver.close().await;
    let _ = connection.close().await;
    bodies
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

#[test]
fn every_send_accepted_survives_kill_9() {
    let dir = folder("kill");
    let state = dir.join("state.json");
    runtime().block_on(async {
        tokio::time::timeout(BOUND, async {
            let mut first = serve(&state);
            let bodies: Vec<Vec<u8>> = (0..30).map(|i| format!("m{i}").into_bytes()).collect();
            send_all(&first.addr, bodies.clone().into_iter()).await;
            // SIGKILL: no stop, no state written after the one at start.
            first.child.kill().expect("killed");
            first.child.wait().expect("ended");
            let second = serve(&state);
            let noted = said(&second.stdout, "30 steps replayed from");
            assert!(noted.contains("30 steps replayed from"), "{noted}");
            assert_eq!(receive_all(&second.addr, 30).await, bodies);
        })
        .await
        .expect("within the bound");
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_journal_tail_is_cut_with_a_message_and_the_server_starts() {
    let dir = folder("torn");
    let state = dir.join("state.json");
    runtime().block_on(async {
        tokio::time::timeout(BOUND, async {
            let mut first = serve(&state);
            let bodies: Vec<Vec<u8>> = (0..3).map(|i| format!("m{i}").into_bytes()).collect();
            send_all(&first.addr, bodies.clone().into_iter()).await;
            first.child.kill().expect("killed");
            first.child.wait().expect("ended");
            // A crash mid-write: half of a fourth line.
            let mut journal = std::fs::OpenOptions::new()
                .append(true)
                .open(dir.join("state.json.journal"))
                .expect("the journal");
            std::io::Write::write_all(&mut journal, br#"{"index": 3, "at": 9"#).expect("written");
            drop(journal);
            let second = serve(&state);
            let warned = said(&second.stderr, "kept 3 lines");
            assert!(
                warned.contains("kept 3 lines") && warned.contains("half-written"),
                "{warned}"
            );
            assert_eq!(receive_all(&second.addr, 3).await, bodies);
        })
        .await
        .expect("within the bound");
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_state_past_2_mb_is_written_on_stop_and_taken_up() {
    let dir = folder("large");
    let state = dir.join("state.json");
    // 1,100 bodies of 4,000 bytes: the engine's checkpoint is past 2 MB, the file past 4 MiB.
    let bodies: Vec<Vec<u8>> = (0..1_100)
        .map(|i| format!("{i:04}").repeat(1_000).into_bytes())
        .collect();
    runtime().block_on(async {
        tokio::time::timeout(BOUND, async {
            let first = serve(&state);
            send_all(&first.addr, bodies.clone().into_iter()).await;
            // SIGTERM: a clean stop writes the state whole.
            let stopped = Command::new("kill")
                .arg(first.child.id().to_string())
                .status()
                .expect("kill runs");
            assert!(stopped.success());
            let mut first = first;
            first.child.wait().expect("ended");
            let noted = said(&first.stdout, "state written to");
            assert!(noted.contains("state written to"), "{noted}");
            let size = std::fs::metadata(&state).expect("the state").len();
            assert!(size > 4 << 20, "{size} bytes");
            let second = serve(&state);
            let noted = said(&second.stdout, "state taken up from");
            assert!(noted.contains("state taken up from"), "{noted}");
            assert_eq!(receive_all(&second.addr, 1_100).await, bodies);
        })
        .await
        .expect("within the bound");
    });
    let _ = std::fs::remove_dir_all(&dir);
}
