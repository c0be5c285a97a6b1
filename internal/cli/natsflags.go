package cli

import "github.com/a2amesh/a2amesh/natsstore"

// NATSAuthFlags are the flags that say who a command is to NATS and how
// it verifies NATS over TLS: files only, each secret read from its file
// (a Secret's mount), never given on the command line.
type NATSAuthFlags struct {
	creds, nkey, user, password, token, ca, cert, key *string
}

// DefineNATSAuth defines the NATS authentication flags on f, each with an
// A2AMESH_NATS_* variable that every command shares.
func DefineNATSAuth(f *Flags) *NATSAuthFlags {
	return &NATSAuthFlags{
		creds: f.StringEnv("nats-creds", "A2AMESH_NATS_CREDS", "",
			"with --nats: NATS credentials file (.creds: a user JWT and its nkey seed) to connect with, for a NATS in operator mode"),
		nkey: f.StringEnv("nats-nkey", "A2AMESH_NATS_NKEY", "",
			"with --nats: file of a user nkey seed (SU...) to connect with"),
		user: f.StringEnv("nats-user", "A2AMESH_NATS_USER", "",
			"with --nats: NATS user to connect as, with --nats-password-file"),
		password: f.StringEnv("nats-password-file", "A2AMESH_NATS_PASSWORD_FILE", "",
			"with --nats-user: file holding the user's password (re-read at every reconnection)"),
		token: f.StringEnv("nats-token-file", "A2AMESH_NATS_TOKEN_FILE", "",
			"with --nats: file holding the NATS authorization token (re-read at every reconnection)"),
		ca: f.StringEnv("nats-tls-ca", "A2AMESH_NATS_TLS_CA", "",
			"with --nats: PEM CA certificates that verify the NATS server; connects over TLS only (empty: the system's roots, when the server asks for TLS)"),
		cert: f.StringEnv("nats-tls-cert", "A2AMESH_NATS_TLS_CERT", "",
			"with --nats: PEM client certificate for a NATS that verifies clients (mutual TLS), with --nats-tls-key"),
		key: f.StringEnv("nats-tls-key", "A2AMESH_NATS_TLS_KEY", "", "PEM private key of --nats-tls-cert"),
	}
}

// Auth is the natsstore.Auth the flags give; natsstore.Auth.Check says
// what is wrong with it.
func (n *NATSAuthFlags) Auth() natsstore.Auth {
	return natsstore.Auth{CredsFile: *n.creds, NkeyFile: *n.nkey, User: *n.user, PasswordFile: *n.password,
		TokenFile: *n.token, TLSCA: *n.ca, TLSCert: *n.cert, TLSKey: *n.key}
}
