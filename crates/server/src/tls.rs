//! `--admin-tls ADDR --tls-cert FILE`: the management API over TLS, as the Python and
//! JavaScript administration clients always ask for https. The certificate names this machine
//! only (`localhost`, `127.0.0.1`, `::1`); it is made on the first start (rcgen, a self-signed
//! certificate) and written to FILE (PEM), its private key to FILE.key (readable by its owner
//! only), and both are taken up again on later starts, so a test suite trusts one file for good
//! (docs/SERVE.md: Python's `connection_verify=` or REQUESTS_CA_BUNDLE, Node's
//! NODE_EXTRA_CA_CERTS).
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The names the certificate is for: this machine's, by name and by address.
pub const NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How long a TLS handshake may take before the connection is closed.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The private key's file: FILE.key beside the certificate FILE.
pub fn key_path(cert: &Path) -> PathBuf {
    crate::journal::beside(cert, ".key")
}

/// The certificate and key in `cert` and `cert.key`, or (neither there) made and written; the
/// acceptor serving them, and whether they were made now. One of the two files without the
/// other, or a file that is not what it should be, is refused with the reason (and left as it
/// is).
pub fn acceptor(cert: &Path) -> Result<(TlsAcceptor, bool), String> {
    let key = key_path(cert);
    let folder = crate::journal::folder_of(cert);
    if !folder.is_dir() {
        return Err(format!(
            "{}: the folder {} is not there (make it, or name another file)",
            cert.display(),
            folder.display()
        ));
    }
    let made = if cert.exists() {
        if !key.exists() {
            return Err(format!(
                "{} is there without its key {}: remove it to have a new one made",
                cert.display(),
                key.display()
            ));
        }
        false
    } else {
        // Whoever makes the key file first makes both; a server started at the same moment
        // with the same FILE waits for the certificate instead.
        match make(cert, &key)? {
            true => true,
            false => {
                wait_for(cert, &key)?;
                false
            }
        }
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: not a PEM certificate: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: holds no certificate", cert.display()));
    }
    let private = PrivateKeyDer::from_pem_file(&key)
        .map_err(|e| format!("{}: not a PEM private key: {e}", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| format!("{}: the certificate and its key: {e}", cert.display()))?;
    Ok((TlsAcceptor::from(Arc::new(config)), made))
}

/// How long a start waits for the certificate that another start is making.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Makes a self-signed certificate for [`NAMES`] and writes its key, then it (atomically, so
/// a certificate there is whole); false when the key file is there already (another start
/// is making them).
fn make(cert: &Path, key: &Path) -> Result<bool, String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = match options.open(key) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(format!("cannot write {}: {e}", key.display())),
    };
    let pair = KeyPair::generate().map_err(|e| format!("cannot make a key: {e}"))?;
    let mut params = CertificateParams::new(NAMES.map(String::from).to_vec())
        .map_err(|e| format!("cannot make a certificate: {e}"))?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "sbp serve (localhost)");
    params.distinguished_name = name;
    let certificate = params
        .self_signed(&pair)
        .map_err(|e| format!("cannot make a certificate: {e}"))?;
    use std::io::Write;
    file.write_all(pair.serialize_pem().as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", key.display()))?;
    crate::journal::write_atomically(cert, &certificate.pem())
        .map_err(|e| format!("cannot write {}: {e}", cert.display()))?;
    Ok(true)
}

/// Waits (at most [`WAIT`]) for the certificate another start is making.
fn wait_for(cert: &Path, key: &Path) -> Result<(), String> {
    let deadline = std::time::Instant::now() + WAIT;
    while !cert.exists() {
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "{} is there without its certificate {} after {} s: another sbp serve is \
                 making them, or one stopped before it had; remove {} to have new ones made",
                key.display(),
                cert.display(),
                WAIT.as_secs(),
                key.display()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_is_made_once_and_taken_up_after() {
        let dir = std::env::temp_dir().join(format!("sbp-tls-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder");
        let cert = dir.join("localhost.pem");
        let (_, made) = acceptor(&cert).expect("made");
        assert!(made);
        let first = std::fs::read(&cert).expect("written");
        let (_, made) = acceptor(&cert).expect("taken up");
        assert!(!made);
        assert_eq!(std::fs::read(&cert).expect("kept"), first);
        std::fs::remove_file(key_path(&cert)).expect("removed");
        let e = acceptor(&cert).err().expect("refused");
        assert!(e.contains("without its key"), "{e}");
        let e = acceptor(&dir.join("nowhere").join("c.pem"))
            .err()
            .expect("refused");
        assert!(e.contains("is not there"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn servers_started_at_once_with_one_new_file_share_one_certificate() {
        let dir = std::env::temp_dir().join(format!("sbp-tls-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder");
        let cert = dir.join("localhost.pem");
        let starts: Vec<_> = (0..6)
            .map(|_| {
                let cert = cert.clone();
                std::thread::spawn(move || acceptor(&cert).map(|(_, made)| made))
            })
            .collect();
        let made: Vec<bool> = starts
            .into_iter()
            .map(|t| t.join().expect("no panic").expect("every start serves"))
            .collect();
        assert_eq!(made.iter().filter(|m| **m).count(), 1, "{made:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
