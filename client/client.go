package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// DefaultAddress is the API's address when LANDLORD_ADDR is not set.
const DefaultAddress = "http://127.0.0.1:8080"

// Config configures a Client.
type Config struct {
	// Address is the API's base URL, e.g. http://127.0.0.1:8080; a bare
	// host:port means http. Default DefaultAddress.
	Address string
	// Token is the bearer token sent with every request; empty sends none.
	Token string
	// HTTPClient sends the requests; nil means a client without a timeout
	// (bound requests with their context) over a clone of
	// http.DefaultTransport with the TLS settings below. New refuses a
	// HTTPClient together with TLS settings: set them on its transport.
	HTTPClient *http.Client

	// CACertFile is a PEM file of the CA certificates that sign the
	// server's certificate. When set, only they are trusted, not the
	// system's; empty means the system's.
	CACertFile string
	// ClientCertFile and ClientKeyFile are the PEM certificate and key
	// presented to a server that asks for a client certificate (mTLS);
	// both or neither.
	ClientCertFile string
	ClientKeyFile  string
	// TLSServerName is the name the server's certificate must hold, and
	// is sent in SNI; empty means the address's host.
	TLSServerName string
}

// DefaultConfig returns the configuration from the environment:
// LANDLORD_ADDR (default DefaultAddress), LANDLORD_TOKEN, LANDLORD_CA_CERT,
// LANDLORD_CLIENT_CERT, LANDLORD_CLIENT_KEY and LANDLORD_TLS_SERVER_NAME.
// Each is named as the landlord CLI's flag that overrides it (--ca-cert).
// LANDLORD_CACERT, the former name of LANDLORD_CA_CERT, is read when
// LANDLORD_CA_CERT is not set.
func DefaultConfig() Config {
	cfg := Config{
		Address:        os.Getenv("LANDLORD_ADDR"),
		Token:          os.Getenv("LANDLORD_TOKEN"),
		CACertFile:     cmp.Or(os.Getenv("LANDLORD_CA_CERT"), os.Getenv("LANDLORD_CACERT")),
		ClientCertFile: os.Getenv("LANDLORD_CLIENT_CERT"),
		ClientKeyFile:  os.Getenv("LANDLORD_CLIENT_KEY"),
		TLSServerName:  os.Getenv("LANDLORD_TLS_SERVER_NAME"),
	}
	if cfg.Address == "" {
		cfg.Address = DefaultAddress
	}
	return cfg
}

// String describes the configuration without its token.
func (c Config) String() string {
	token := "none"
	if c.Token != "" {
		token = "set"
	}
	return fmt.Sprintf("client.Config{Address: %q, Token: %s, CACertFile: %q, ClientCertFile: %q, ClientKeyFile: %q, TLSServerName: %q}",
		c.Address, token, c.CACertFile, c.ClientCertFile, c.ClientKeyFile, c.TLSServerName)
}

// GoString is String, so that %#v does not print the token either.
func (c Config) GoString() string { return c.String() }

// Client talks to one landlord API. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New returns a client for cfg. It fails when the address is not an http or
// https URL, when a TLS file cannot be read, and when cfg has both an
// HTTPClient and TLS settings.
func New(cfg Config) (*Client, error) {
	addr := strings.TrimSpace(cfg.Address)
	if addr == "" {
		addr = DefaultAddress
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: address %q is not a URL such as %s", cfg.Address, DefaultAddress)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	hc, err := cfg.httpClient()
	if err != nil {
		return nil, err
	}
	return &Client{base: u, token: cfg.Token, http: hc}, nil
}

// Address is the API's base URL.
func (c *Client) Address() string { return c.base.String() }

// Tenants is the tenants resource.
func (c *Client) Tenants() *Tenants { return &Tenants{c: c} }

// Compute is the compute resource: providers and their config schemas.
func (c *Client) Compute() *Compute { return &Compute{c: c} }

// request is one API call.
type request struct {
	method string
	path   string // under the base URL, escaped
	query  url.Values
	header http.Header
	// body is sent as JSON with contentType (default application/json).
	body        any
	contentType string
	// accept is the Accept header (default JSON and problems).
	accept string
}

// maxProblemBytes bounds how much of an error response is read.
const maxProblemBytes = 1 << 16

// do sends req and decodes a 2xx JSON answer into out (when not nil). Any
// other answer is a *Error; a failure to reach the API is wrapped.
func (c *Client) do(ctx context.Context, req request, out any) error {
	res, err := c.send(ctx, req)
	if err != nil {
		return err
	}
	defer closeBody(res.Body)
	if out == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: read the answer: %w", req.method, res.Request.URL.Path, err)
	}
	return nil
}

// send sends req and returns a 2xx answer, whose body the caller closes
// (closeBody). Any other answer is a *Error; a failure to reach the API is
// wrapped.
func (c *Client) send(ctx context.Context, req request) (*http.Response, error) {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + req.path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", req.method, u.RawPath, err)
	}
	u.Path = p
	u.RawQuery = req.query.Encode()
	var body io.Reader
	if req.body != nil {
		var b []byte
		switch v := req.body.(type) {
		case json.RawMessage:
			b = v
		default:
			var err error
			if b, err = json.Marshal(v); err != nil {
				return nil, fmt.Errorf("client: %s %s: encode the request: %w", req.method, u.Path, err)
			}
		}
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", req.method, u.Path, err)
	}
	for k, v := range req.header {
		hr.Header[k] = v
	}
	hr.Header.Set("Accept", cmp.Or(req.accept, "application/json, application/problem+json"))
	hr.Header.Set("User-Agent", "landlord-client")
	if body != nil {
		ct := req.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(hr)
	if err != nil {
		// url.Error repeats the method and URL; say them once.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("client: %s %s: %w", req.method, u.Redacted(), err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer closeBody(res.Body)
		return nil, responseError(res)
	}
	return res, nil
}

// maxDrainBytes bounds what is read of an answer's unread rest (a decoder
// stops at the end of the JSON value, before the end of a chunked body) so
// that its connection can be used again.
const maxDrainBytes = 1 << 16

// closeBody reads what is left of a body, up to maxDrainBytes, and closes
// it: a body closed unread closes its connection, and every request would
// then open a new one.
func closeBody(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrainBytes))
	_ = body.Close()
}

// responseError reads an error answer: the API's problem, or, from something
// else in the way (a proxy), a problem made of the status and body.
func responseError(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, maxProblemBytes))
	e := &Error{Status: res.StatusCode}
	if json.Unmarshal(b, &e.Problem) == nil && e.Problem.Code != "" {
		e.Problem.Status = res.StatusCode
		return e
	}
	e.Problem = Problem{Status: res.StatusCode, Title: http.StatusText(res.StatusCode)}
	if detail := strings.TrimSpace(string(b)); detail != "" && len(detail) < 512 {
		e.Problem.Detail = detail
	}
	return e
}

// pathFor is the escaped path of a tenant.
func pathFor(idOrName string, rest ...string) (string, error) {
	return resourcePath("/v1/tenants/", "a tenant id or name", idOrName, rest...)
}

// resourcePath is the escaped path of the resource key of collection
// (what names the key, for the error when it is empty), then rest.
func resourcePath(collection, what, key string, rest ...string) (string, error) {
	if key == "" {
		return "", errors.New("client: " + what + " is required")
	}
	return collection + url.PathEscape(key) + strings.Join(rest, ""), nil
}
