package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// tlsFlags are the TLS flags of every verb that talks to a server.
type tlsFlags struct {
	caCert, clientCert, clientKey, serverName string
}

// add adds --ca-cert, --client-cert, --client-key and --tls-server-name to
// cmd.
func (f *tlsFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.caCert, "ca-cert", "", "PEM file of the CAs that sign the server's certificate, trusted instead of the system's (env LANDLORD_CA_CERT, or LANDLORD_CACERT, its former name)")
	fs.StringVar(&f.clientCert, "client-cert", "", "PEM client certificate, for a server that asks for one (env LANDLORD_CLIENT_CERT)")
	fs.StringVar(&f.clientKey, "client-key", "", "PEM key of --client-cert (env LANDLORD_CLIENT_KEY)")
	fs.StringVar(&f.serverName, "tls-server-name", "", "the name the server's certificate must hold, when not the --addr host (env LANDLORD_TLS_SERVER_NAME)")
	for _, name := range []string{"ca-cert", "client-cert", "client-key"} {
		_ = fs.SetAnnotation(name, cobra.BashCompFilenameExt, []string{"pem", "crt", "cer", "key"})
	}
}

// apply sets the flags given on cfg, over the environment's.
func (f *tlsFlags) apply(cmd *cobra.Command, cfg *client.Config) {
	fs := cmd.Flags()
	for name, set := range map[string]struct {
		dst *string
		v   string
	}{
		"ca-cert":         {&cfg.CACertFile, f.caCert},
		"client-cert":     {&cfg.ClientCertFile, f.clientCert},
		"client-key":      {&cfg.ClientKeyFile, f.clientKey},
		"tls-server-name": {&cfg.TLSServerName, f.serverName},
	} {
		if fs.Changed(name) {
			*set.dst = set.v
		}
	}
}

// tlsFieldFlags words the client's configuration fields as the flags and
// variables that set them.
var tlsFieldFlags = strings.NewReplacer(
	"CACertFile", "--ca-cert (LANDLORD_CA_CERT)",
	"ClientCertFile", "--client-cert (LANDLORD_CLIENT_CERT)",
	"ClientKeyFile", "--client-key (LANDLORD_CLIENT_KEY)",
)

// tlsFlagError is an error of client.New about TLS settings, naming the
// flags instead of the fields.
func tlsFlagError(err error) error {
	return &advisedError{msg: tlsFieldFlags.Replace(strings.TrimPrefix(err.Error(), "client: ")), err: err}
}
