package ecs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/smithy-go"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// apiError is an error ECS answered, worded for a tenant's status message;
// the SDK's error stays in the chain, so errors.As finds its typed
// exception.
type apiError struct {
	msg string
	err error
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

// retryableCodes are error codes that mean "later": throttling and ECS's own
// failures. The SDK has already retried them (adaptive mode); the
// controller's backoff takes over.
var retryableCodes = map[string]bool{
	"ThrottlingException": true, "Throttling": true, "RequestLimitExceeded": true, "TooManyRequestsException": true,
	"ServerException": true, "InternalFailure": true, "ServiceUnavailable": true, "ServiceUnavailableException": true,
}

// awsError words a failed call for the tenant's status message (what failed,
// AWS's code and message, its request id) and marks it retryable or
// terminal. A cancelled or expired context stays retryable and keeps its
// error in the chain.
func awsError(op string, err error) error {
	if err == nil {
		return nil
	}
	if why, ok := credentialsFailure(err); ok {
		// No request was sent: the SDK found no credentials, or could not
		// load those configured (the lookup may also have run out of time).
		// Credentials may be configured later, so it stays retryable.
		return provider.Retryable(&credentialsError{msg: fmt.Sprintf("ecs: %s: %s: %s", op, why, configureCredentials), err: err})
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return provider.Retryable(fmt.Errorf("ecs: %s: %w", op, err))
	}
	var unreadable *smithy.DeserializationError
	var netErr net.Error
	if errors.As(err, &unreadable) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &netErr) {
		// ECS answered, and the SDK cannot read the answer: the endpoint does
		// not speak ECS's API as AWS defines it (an emulator, a proxy that
		// rewrites bodies). Asking again gets the same answer.
		return provider.Terminal(fmt.Errorf("ecs: %s: the AWS SDK cannot read the endpoint's answer (%w); landlord speaks ECS's API as AWS documents it: check the endpoint key, or the proxy or emulator behind it", op, err))
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		// No answer from ECS: a network problem, or credentials that could not
		// be loaded.
		return provider.Retryable(fmt.Errorf("ecs: %s: %w", op, err))
	}
	detail := fmt.Sprintf("%s: %s", api.ErrorCode(), api.ErrorMessage())
	var resp *awshttp.ResponseError
	status := 0
	if errors.As(err, &resp) {
		status = resp.HTTPStatusCode()
		if id := resp.ServiceRequestID(); id != "" {
			detail += " (request id " + id + ")"
		}
	}
	wrapped := &apiError{msg: fmt.Sprintf("ecs: %s: %s", op, detail), err: err}
	switch code := api.ErrorCode(); {
	case retryableCodes[code] || status >= http.StatusInternalServerError:
		return provider.Retryable(wrapped)
	case code == "ClusterNotFoundException":
		return provider.Terminal(fmt.Errorf("%w: check cluster_arn and region: %w", wrapped, provider.ErrInvalidSpec))
	case code == "AccessDeniedException" || code == "UnrecognizedClientException" || code == "InvalidSignatureException" || code == "ExpiredTokenException":
		return provider.Terminal(fmt.Errorf("%w: landlord's AWS identity may not do this; see the IAM policy in docs/compute-providers.md", wrapped))
	default:
		return provider.Terminal(wrapped)
	}
}

// credentialsError is the SDK's failure to load credentials, worded for an
// operator; the SDK's error stays in the chain.
type credentialsError struct {
	msg string
	err error
}

func (e *credentialsError) Error() string { return e.msg }
func (e *credentialsError) Unwrap() error { return e.err }

// configureCredentials says where the AWS SDK's default chain looks for
// credentials, in its order (aws-sdk-go-v2 config.LoadDefaultConfig).
const configureCredentials = "configure AWS credentials for landlord in one of the ways the AWS SDK looks for them: " +
	"the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and AWS_SESSION_TOKEN with temporary ones), " +
	"a profile of ~/.aws/credentials or ~/.aws/config (AWS_PROFILE; for IAM Identity Center, aws sso login --profile NAME), " +
	"web identity (AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, as EKS sets them), " +
	"or the IAM role of the ECS task or EC2 instance landlord runs on"

// credentialsFailure reports whether err is the SDK failing to load
// credentials before it sent a request, and says why in words for an
// operator. Each client's auth step wraps that failure in "get identity:"
// (smithy-go's auth middleware; the v4 signer's SigningError in older
// clients); neither has a type of its own. A credential provider that got
// an answer (AssumeRole refused by STS) is an API error, worded as such by
// awsError. When the chain fell through to the instance metadata service
// (IMDS), nothing was configured, and the IMDS error only confuses.
func credentialsFailure(err error) (string, bool) {
	var api smithy.APIError
	if errors.As(err, &api) {
		return "", false
	}
	var cause error
	var signing *v4.SigningError
	if errors.As(err, &signing) && strings.Contains(signing.Error(), "retrieve credentials") {
		cause = signing.Err
	}
	for e := err; e != nil && cause == nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "get identity: ") {
			cause = errors.Unwrap(e)
		}
	}
	if cause == nil {
		return "", false
	}
	why := cause.Error()
	switch {
	case strings.Contains(why, "EC2 IMDS") || strings.Contains(why, "ec2imds"):
		return "no AWS credentials found", true
	case errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, context.Canceled):
		// Off EC2 the metadata service's address is not routed, and the
		// SDK waits for it until the call's time is up.
		return "no AWS credentials found in time", true
	}
	for _, prefix := range []string{"get credentials: ", "failed to retrieve credentials: ", "failed to refresh cached credentials, "} {
		why = strings.TrimPrefix(why, prefix)
	}
	return "the AWS credentials could not be loaded (" + why + ")", true
}

// isCode reports whether err is ECS's error code.
func isCode(err error, code string) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == code
}

// describeCluster checks that the cluster exists and is active.
func describeCluster(ctx context.Context, c *ecs.Client, cluster string) error {
	out, err := c.DescribeClusters(ctx, &ecs.DescribeClustersInput{Clusters: []string{cluster}})
	if err != nil {
		return awsError("describe cluster "+cluster, err)
	}
	for _, cl := range out.Clusters {
		if aws.ToString(cl.ClusterArn) == cluster || aws.ToString(cl.ClusterName) == cluster {
			if s := aws.ToString(cl.Status); s != "ACTIVE" {
				return fmt.Errorf("ecs: cluster %s is %s", cluster, s)
			}
			return nil
		}
	}
	return fmt.Errorf("ecs: cluster %s not found: check cluster_arn, region and the account of landlord's AWS credentials", cluster)
}
