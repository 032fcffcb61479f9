//! TLS to PostgreSQL as libpq's `sslmode` means it, through rustls:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (default) | when the server offers it | not verified (libpq's behaviour) |
//! | `require` | always | not verified, unless `sslrootcert` is given: then as `verify-ca` |
//! | `verify-ca` | always | chain to `sslrootcert` (else the system's roots) |
//! | `verify-full` | always | as `verify-ca`, and issued for the URL's host |
//!
//! Without verification, TLS still encrypts and the handshake's signatures are checked, but a
//! machine in the middle can present its own certificate: production clusters should use
//! `verify-full`.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode as WireSslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::{StoreError, StoreResult};

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(value: &str) -> StoreResult<Self> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(StoreError::Config(format!(
                    "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
                )));
            }
        })
    }

    /// What `tokio-postgres` is told: whether TLS is attempted and whether it is required.
    pub(crate) fn wire(self) -> WireSslMode {
        match self {
            SslMode::Disable => WireSslMode::Disable,
            SslMode::Prefer => WireSslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => WireSslMode::Require,
        }
    }
}

/// The TLS settings of one store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub mode: SslMode,
    /// `sslrootcert`: a PEM file of the certificate authorities to trust.
    pub root_cert: Option<PathBuf>,
}

impl TlsSettings {
    /// The verification actually applied (`require` with a root certificate is `verify-ca`).
    fn effective(&self) -> SslMode {
        match self.mode {
            SslMode::Require if self.root_cert.is_some() => SslMode::VerifyCa,
            mode => mode,
        }
    }

    /// The connector for these settings.
    pub(crate) fn connector(&self) -> StoreResult<MakeRustlsConnect> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| StoreError::Config(format!("TLS for PostgreSQL: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> = match self.effective() {
            SslMode::Disable | SslMode::Prefer | SslMode::Require => {
                Arc::new(Unverified(Arc::clone(&provider)))
            }
            mode @ (SslMode::VerifyCa | SslMode::VerifyFull) => {
                let roots = Arc::new(self.roots()?);
                let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| StoreError::Config(format!("TLS for PostgreSQL: {e}")))?;
                if mode == SslMode::VerifyFull {
                    webpki
                } else {
                    Arc::new(AnyName(webpki))
                }
            }
        };
        let config = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }

    fn roots(&self) -> StoreResult<RootCertStore> {
        let mut roots = RootCertStore::empty();
        match &self.root_cert {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    StoreError::Config(format!("sslrootcert {}: {e}", path.display()))
                })?;
                let mut found = 0;
                for cert in rustls_pemfile_certs(&pem) {
                    roots.add(cert).map_err(|e| {
                        StoreError::Config(format!("sslrootcert {}: {e}", path.display()))
                    })?;
                    found += 1;
                }
                if found == 0 {
                    return Err(StoreError::Config(format!(
                        "sslrootcert {} holds no PEM certificate",
                        path.display()
                    )));
                }
            }
            None => {
                for cert in rustls_native_certs::load_native_certs().certs {
                    // A certificate the system ships but rustls cannot parse is skipped.
                    let _ = roots.add(cert);
                }
            }
        }
        Ok(roots)
    }
}

/// The certificates of a PEM file.
fn rustls_pemfile_certs(pem: &[u8]) -> Vec<CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem)
        .filter_map(Result::ok)
        .collect()
}

/// Accepts any certificate but still checks that the server holds its key (libpq's
/// `prefer`/`require`).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Verifies the chain but not the name (`verify-ca`).
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
