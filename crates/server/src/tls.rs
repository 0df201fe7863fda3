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
    let mut name = cert.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// The certificate and key in `cert` and `cert.key`, or (neither there) made and written; the
/// acceptor serving them, and whether they were made now. One of the two files without the
/// other, or a file that is not what it should be, is refused with the reason (and left as it
/// is).
pub fn acceptor(cert: &Path) -> Result<(TlsAcceptor, bool), String> {
    let key = key_path(cert);
    let made = match (cert.exists(), key.exists()) {
        (true, true) => false,
        (false, false) => {
            make(cert, &key)?;
            true
        }
        (true, false) => {
            return Err(format!(
                "{} is there without its key {}: remove it to have a new one made",
                cert.display(),
                key.display()
            ))
        }
        (false, true) => {
            return Err(format!(
                "{} is there without its certificate {}: remove it to have a new one made",
                key.display(),
                cert.display()
            ))
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

/// Makes a self-signed certificate for [`NAMES`] and writes it and its key.
fn make(cert: &Path, key: &Path) -> Result<(), String> {
    let pair = KeyPair::generate().map_err(|e| format!("cannot make a key: {e}"))?;
    let mut params = CertificateParams::new(NAMES.map(String::from).to_vec())
        .map_err(|e| format!("cannot make a certificate: {e}"))?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "sbp serve (localhost)");
    params.distinguished_name = name;
    let certificate = params
        .self_signed(&pair)
        .map_err(|e| format!("cannot make a certificate: {e}"))?;
    write_private(key, &pair.serialize_pem())
        .map_err(|e| format!("cannot write {}: {e}", key.display()))?;
    crate::journal::write_atomically(cert, &certificate.pem())
        .map_err(|e| format!("cannot write {}: {e}", cert.display()))
}

/// Writes a private key readable by its owner only.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
