package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// tlsAdvice is what to do about a TLS failure in err, naming the flags
// that fix it; "" when err is no TLS failure.
func tlsAdvice(cmd *cobra.Command, err error) string {
	var (
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		rh  tls.RecordHeaderError
		oe  *net.OpError
		ce  *client.Error
		cve *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &ua):
		if tlsGiven(cmd, "ca-cert", "LANDLORD_CA_CERT", "LANDLORD_CACERT") {
			return "the server's certificate is not signed by a CA in --ca-cert (or LANDLORD_CA_CERT): pass the certificate of the CA that signed it"
		}
		return "the server's certificate is not signed by a CA this system knows: pass that CA's certificate with --ca-cert (or LANDLORD_CA_CERT)"
	case errors.As(err, &he):
		names := certNames(he.Certificate)
		if names == "" {
			return "the server's certificate holds no name: it cannot be checked against " + he.Host
		}
		return "the server's certificate is for " + names + ", not " + he.Host +
			": use --tls-server-name (or LANDLORD_TLS_SERVER_NAME) with one of them, or an --addr that names one"
	case errors.As(err, &cve):
		// Any other reason the server's certificate was refused
		// (expired, not for a server): nothing a flag can fix.
		return ""
	case errors.As(err, &oe) && oe.Op == "remote error" && isClientCertAlert(oe.Err):
		if tlsGiven(cmd, "client-cert", "LANDLORD_CLIENT_CERT") {
			return "the server refused the client certificate: pass one signed by a CA it trusts with --client-cert and --client-key (or LANDLORD_CLIENT_CERT and LANDLORD_CLIENT_KEY)"
		}
		return "the server wants a client certificate: pass one with --client-cert and --client-key (or LANDLORD_CLIENT_CERT and LANDLORD_CLIENT_KEY)"
	case (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "http2: client conn could not be established")) && httpsAddress(cmd):
		// With TLS 1.3 a server that refuses the client's certificate
		// (or its lack of one) after the handshake may close the
		// connection before its alert is read: the client then sees
		// only the connection break (over HTTP/2, in words that drop
		// the cause).
		if tlsGiven(cmd, "client-cert", "LANDLORD_CLIENT_CERT") {
			return "the server closed the connection: if it did not trust the client certificate, pass one signed by a CA it trusts with --client-cert and --client-key (or LANDLORD_CLIENT_CERT and LANDLORD_CLIENT_KEY)"
		}
		return "the server closed the connection: if it wants a client certificate, pass one with --client-cert and --client-key (or LANDLORD_CLIENT_CERT and LANDLORD_CLIENT_KEY)"
	case errors.As(err, &rh),
		// net/http's words for an HTTP answer to a handshake; the error
		// has no type.
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "the server does not serve TLS there: use an http:// address in --addr (or LANDLORD_ADDR)"
	case errors.As(err, &ce) && ce.Status == http.StatusBadRequest && ce.Problem.Code == "" &&
		strings.Contains(ce.Problem.Detail, "HTTP request to an HTTPS server"):
		return "the server serves HTTPS there: use an https:// address in --addr (or LANDLORD_ADDR)"
	}
	return ""
}

// isClientCertAlert reports whether a TLS alert from the server says it
// wanted a client certificate or refused the one sent. The alerts of a TLS
// connection have no exported type: only their words tell them apart.
func isClientCertAlert(err error) bool {
	if err == nil {
		return false
	}
	switch strings.TrimPrefix(err.Error(), "tls: ") {
	case "certificate required", "bad certificate", "unknown certificate authority", "certificate unknown":
		return true
	}
	return false
}

// certNames are the names cert holds, comma-separated: its DNS and IP
// SANs, else its common name.
func certNames(cert *x509.Certificate) string {
	if cert == nil {
		return ""
	}
	names := append([]string(nil), cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && cert.Subject.CommonName != "" {
		names = append(names, cert.Subject.CommonName)
	}
	return strings.Join(names, ", ")
}

// httpsAddress reports whether the address of cmd (--addr, else
// LANDLORD_ADDR) is https.
func httpsAddress(cmd *cobra.Command) bool {
	addr := os.Getenv("LANDLORD_ADDR")
	if f := cmd.Flags().Lookup("addr"); f != nil && f.Changed {
		addr = f.Value.String()
	}
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(addr)), "https://")
}

// tlsGiven reports whether flag was set on cmd, else one of envs is set.
func tlsGiven(cmd *cobra.Command, flag string, envs ...string) bool {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return f.Value.String() != ""
	}
	return slices.ContainsFunc(envs, func(env string) bool { return os.Getenv(env) != "" })
}
