package ecs

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Without AWS credentials, the health check (which landlord serve logs at
// start-up) and every call say to configure credentials and how, not the
// SDK's error of the instance metadata service it fell back to; the SDK's
// error stays in the chain, and the error is retryable.
func TestMissingCredentialsSayHowToConfigureThem(t *testing.T) {
	// Where ECS would be: nothing is sent there without credentials.
	var calls atomic.Int32
	ecsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); http.NotFound(w, r) }))
	defer ecsSrv.Close()
	// The instance metadata service off EC2: no role (an EC2 instance
	// without one answers 404 too), or no answer at all (a laptop: the
	// address is not routed, and the SDK waits).
	noRole := httptest.NewServer(http.NotFoundHandler())
	defer noRole.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close() // accepts into its backlog and never answers

	for _, tt := range []struct {
		name string
		env  map[string]string
		// timeout bounds the check, as landlord serve's start-up does.
		timeout time.Duration
		want    string
	}{
		{name: "nothing configured, IMDS has no role", env: map[string]string{"AWS_EC2_METADATA_SERVICE_ENDPOINT": noRole.URL},
			want: "no AWS credentials found"},
		{name: "nothing configured, IMDS disabled", env: map[string]string{"AWS_EC2_METADATA_DISABLED": "true"},
			want: "no AWS credentials found"},
		{name: "nothing configured, IMDS does not answer", env: map[string]string{"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://" + silent.Addr().String()},
			timeout: 2 * time.Second, want: "no AWS credentials found"},
		{name: "a web identity token file that is missing", env: map[string]string{
			"AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/landlord", "AWS_WEB_IDENTITY_TOKEN_FILE": filepath.Join(t.TempDir(), "token"),
			"AWS_EC2_METADATA_DISABLED": "true"},
			want: "the AWS credentials could not be loaded (failed to retrieve jwt from provide source, unable to read file at "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
				"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
				"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_REGION", "AWS_DEFAULT_REGION"} {
				t.Setenv(k, "")
			}
			t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "config"))
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "credentials"))
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			block, err := json.Marshal(map[string]any{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord", "region": "us-west-2", "endpoint": ecsSrv.URL})
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(context.Background(), Options{Block: block, HashKey: []byte("credentials-test-hash-key-0123456789")})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			err = p.CheckHealth(ctx)
			if err == nil {
				t.Fatal("CheckHealth passed without credentials")
			}
			msg := err.Error()
			for _, want := range []string{tt.want, "configure AWS credentials", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "aws sso login", "AWS_WEB_IDENTITY_TOKEN_FILE", "ECS task or EC2 instance"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q: %s", want, msg)
				}
			}
			for _, noise := range []string{"IMDS", "ec2imds", "get identity"} {
				if strings.Contains(msg, noise) {
					t.Errorf("the error says %q: %s", noise, msg)
				}
			}
			if provider.IsTerminal(err) {
				t.Errorf("the error is terminal; credentials may be configured later: %s", msg)
			}
			var sdk *smithy.OperationError
			if !errors.As(err, &sdk) {
				t.Errorf("the SDK's error is not in the chain: %#v", err)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests reached ECS without credentials", n)
	}
}
