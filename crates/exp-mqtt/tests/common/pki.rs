//! A throwaway PKI for TLS tests, made with the `openssl` command-line tool
//! in a temp dir: a CA, a server certificate for 127.0.0.1 and a client
//! certificate, all P-256 and valid for two days.

use std::path::{Path, PathBuf};
use std::process::Command;

use exp_mqtt::TlsFiles;

pub struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    /// A new PKI whose CA is named `ca_name` (distinct CAs should have distinct names,
    /// or a verifier takes one for the other and reports a bad signature).
    pub fn generate(ca_name: &str) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        openssl(
            d,
            &format!(
                "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout ca.key -out ca.pem \
                 -subj /CN={ca_name} -addext basicConstraints=critical,CA:TRUE \
                 -addext keyUsage=critical,keyCertSign,cRLSign"
            ),
        );
        issue(
            d,
            "server",
            "127.0.0.1",
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
            2,
        );
        issue(d, "client", "expc-test-client", "extendedKeyUsage=clientAuth\n", 3);
        Pki { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Listener lines for Mosquitto: TLS with this PKI's server certificate.
    pub fn listener(&self, require_client_certificate: bool) -> String {
        // `user root`: Mosquitto started as root drops to the `mosquitto` user
        // before it reads certificates, and could not read this private temp dir.
        format!(
            "cafile {}\ncertfile {}\nkeyfile {}\nrequire_certificate {require_client_certificate}\nuser root\n",
            self.path("ca.pem").display(),
            self.path("server.pem").display(),
            self.path("server.key").display(),
        )
    }

    /// Trust this CA, no client certificate.
    pub fn trust(&self) -> TlsFiles {
        TlsFiles {
            ca_file: Some(self.path("ca.pem")),
            ..TlsFiles::default()
        }
    }

    /// Trust this CA and present the client certificate.
    pub fn mutual(&self) -> TlsFiles {
        TlsFiles {
            ca_file: Some(self.path("ca.pem")),
            client_cert: Some(self.path("client.pem")),
            client_key: Some(self.path("client.key")),
        }
    }
}

/// A key and a certificate for `cn` signed by the CA, with `extensions`.
fn issue(d: &Path, name: &str, cn: &str, extensions: &str, serial: u32) {
    std::fs::write(
        d.join(format!("{name}.ext")),
        format!("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n{extensions}"),
    )
    .unwrap();
    openssl(
        d,
        &format!(
            "req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout {name}.key -out {name}.csr \
             -subj /CN={cn}"
        ),
    );
    openssl(
        d,
        &format!(
            "x509 -req -in {name}.csr -CA ca.pem -CAkey ca.key -set_serial {serial} -days 2 \
             -extfile {name}.ext -out {name}.pem"
        ),
    );
}

/// Runs `openssl` with `args` split at whitespace (no argument here contains any).
fn openssl(dir: &Path, args: &str) {
    let out = Command::new("openssl")
        .args(args.split_whitespace())
        .current_dir(dir)
        .output()
        .expect("cannot run `openssl`: these tests need it; install it with `apt-get install openssl`");
    assert!(
        out.status.success(),
        "openssl {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
