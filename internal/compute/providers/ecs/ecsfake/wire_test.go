package ecsfake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
)

const testAuth = "AWS4-HMAC-SHA256 Credential=AKIDFAKE/20260301/us-west-2/ecs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=abc123"

// rawCall sends a hand-made request, for what the SDK would never send.
func rawCall(t *testing.T, s *Server, target, body string, header map[string]string) (int, http.Header, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Amz-Target", targetPrefix+target)
	req.Header.Set("X-Amz-Date", "20260301T120000Z")
	req.Header.Set("Authorization", testAuth)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("error body %s: %v", b, err)
		}
	}
	return resp.StatusCode, resp.Header, out
}

func TestWireRefusals(t *testing.T) {
	s, _ := newFake(t, Options{})
	tests := []struct {
		name       string
		target     string
		body       string
		header     map[string]string
		wantStatus int
		wantType   string
		wantInMsg  string
	}{
		{
			name:       "unknown field",
			target:     "DescribeServices",
			body:       `{"cluster":"landlord","services":["a"],"serviceTags":true}`,
			wantStatus: 400, wantType: CodeInvalidParameter, wantInMsg: `"serviceTags"`,
		},
		{
			name:       "unknown nested field",
			target:     "CreateService",
			body:       `{"serviceName":"a","deploymentConfiguration":{"bake":1}}`,
			wantStatus: 400, wantType: CodeInvalidParameter, wantInMsg: `"bake"`,
		},
		{
			name:       "wrong type",
			target:     "ListServices",
			body:       `{"maxResults":"ten"}`,
			wantStatus: 400, wantType: CodeSerialization, wantInMsg: "maxResults",
		},
		{
			name:       "no Authorization",
			target:     "ListServices",
			body:       `{}`,
			header:     map[string]string{"Authorization": ""},
			wantStatus: 403, wantType: CodeMissingAuth,
		},
		{
			name:       "no X-Amz-Date",
			target:     "ListServices",
			body:       `{}`,
			header:     map[string]string{"X-Amz-Date": ""},
			wantStatus: 400, wantType: CodeIncompleteSignature,
		},
		{
			name:       "not SigV4",
			target:     "ListServices",
			body:       `{}`,
			header:     map[string]string{"Authorization": "Bearer token"},
			wantStatus: 400, wantType: CodeIncompleteSignature,
		},
		{
			name:       "signed for another region",
			target:     "ListServices",
			body:       `{}`,
			header:     map[string]string{"Authorization": strings.Replace(testAuth, "us-west-2", "eu-west-1", 1)},
			wantStatus: 403, wantType: CodeInvalidSignature, wantInMsg: "eu-west-1",
		},
		{
			name:       "operation the fake does not implement",
			target:     "RunTask",
			body:       `{}`,
			wantStatus: 400, wantType: CodeUnknownOperation,
		},
		{
			name:       "another service's target",
			target:     "",
			body:       `{}`,
			header:     map[string]string{"X-Amz-Target": "DynamoDB_20120810.ListTables"},
			wantStatus: 400, wantType: CodeUnknownOperation,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header, body := rawCall(t, s, tt.target, tt.body, tt.header)
			if status != tt.wantStatus || body["__type"] != tt.wantType {
				t.Errorf("got %d %v, want %d %s", status, body, tt.wantStatus, tt.wantType)
			}
			if !strings.Contains(body["message"], tt.wantInMsg) {
				t.Errorf("message %q does not mention %q", body["message"], tt.wantInMsg)
			}
			if header.Get("x-amzn-RequestId") == "" {
				t.Error("no x-amzn-RequestId")
			}
		})
	}
}

func TestRequestIDs(t *testing.T) {
	s, _ := newFake(t, Options{})
	seen := map[string]bool{}
	for range 3 {
		status, header, _ := rawCall(t, s, "ListServices", `{"cluster":"landlord"}`, nil)
		id := header.Get("x-amzn-RequestId")
		if status != 200 || id == "" || seen[id] {
			t.Fatalf("status %d, request id %q (seen before: %v)", status, id, seen[id])
		}
		seen[id] = true
	}
}

// TestTypedErrors checks that each code the fake sends comes out of the SDK
// as the SDK's own error type, which is what a provider branches on.
func TestTypedErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(s *Server, c *ecs.Client)
		call  func(c *ecs.Client) error
		check func(err error) bool
	}{
		{
			name: "ClusterNotFoundException",
			call: func(c *ecs.Client) error {
				_, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("nope"), Services: []string{"a"}})
				return err
			},
			check: func(err error) bool { var e *types.ClusterNotFoundException; return errors.As(err, &e) },
		},
		{
			name: "ServiceNotFoundException",
			call: func(c *ecs.Client) error {
				_, err := c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("ghost"), DesiredCount: aws.Int32(1)})
				return err
			},
			check: func(err error) bool { var e *types.ServiceNotFoundException; return errors.As(err, &e) },
		},
		{
			name: "InvalidParameterException",
			call: func(c *ecs.Client) error {
				_, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("landlord"), Services: make([]string, 11)})
				return err
			},
			check: func(err error) bool { var e *types.InvalidParameterException; return errors.As(err, &e) },
		},
		{
			name: "ClientException",
			call: func(c *ecs.Client) error {
				_, err := c.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String("missing:1")})
				return err
			},
			check: func(err error) bool {
				var e *types.ClientException
				return errors.As(err, &e) && e.ErrorMessage() == "Unable to describe task definition."
			},
		},
		{
			name: "ServiceNotActiveException",
			setup: func(s *Server, c *ecs.Client) {
				mustRegister(t, c, "app", "nginx", fargate)
				mustCreate(t, c, serviceInput("gone", "app", 0))
				if err := s.DeleteServiceOutOfBand("landlord", "gone"); err != nil {
					t.Fatal(err)
				}
			},
			call: func(c *ecs.Client) error {
				_, err := c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("gone"), DesiredCount: aws.Int32(1)})
				return err
			},
			check: func(err error) bool { var e *types.ServiceNotActiveException; return errors.As(err, &e) },
		},
		{
			name:  "AccessDeniedException",
			setup: func(s *Server, c *ecs.Client) { s.FailNext("ListServices", CodeAccessDenied, 1) },
			call: func(c *ecs.Client) error {
				_, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord")})
				return err
			},
			check: func(err error) bool { var e *types.AccessDeniedException; return errors.As(err, &e) },
		},
		{
			name: "ServerException after the SDK's retries",
			// The standard retryer makes 3 attempts; all fail.
			setup: func(s *Server, c *ecs.Client) { s.FailNext("*", CodeServer, 3) },
			call: func(c *ecs.Client) error {
				_, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord")})
				return err
			},
			check: func(err error) bool { var e *types.ServerException; return errors.As(err, &e) },
		},
		{
			name:  "UnknownOperationException is a generic API error",
			setup: func(s *Server, c *ecs.Client) {},
			call: func(c *ecs.Client) error {
				_, err := c.RunTask(ctx, &ecs.RunTaskInput{TaskDefinition: aws.String("app")})
				return err
			},
			check: func(err error) bool {
				var e smithy.APIError
				return errors.As(err, &e) && e.ErrorCode() == CodeUnknownOperation
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newFake(t, Options{})
			if tt.setup != nil {
				tt.setup(s, c)
			}
			err := tt.call(c)
			if err == nil || !tt.check(err) {
				t.Errorf("error %T %v is not a %s", err, err, tt.name)
			}
		})
	}
}

func TestThrottlingIsRetried(t *testing.T) {
	s, c := newFake(t, Options{})
	s.FailNext("ListServices", CodeThrottling, 2)
	out, err := c.ListServices(context.Background(), &ecs.ListServicesInput{Cluster: aws.String("landlord")})
	if err != nil {
		t.Fatalf("ListServices after 2 throttles: %v", err)
	}
	if len(out.ServiceArns) != 0 {
		t.Errorf("ServiceArns = %v, want none", out.ServiceArns)
	}
	if diff := cmp.Diff(map[string]int{"ListServices": 3}, s.Calls()); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
	s.ResetCalls()
	if got := s.Calls(); len(got) != 0 {
		t.Errorf("Calls after ResetCalls = %v", got)
	}
}
