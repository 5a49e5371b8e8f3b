package ecsfake

import (
	"fmt"
	"net/http"
)

// Error codes the fake returns. They are the ECS exception names the SDK maps
// to its typed errors (types.ClusterNotFoundException and so on), plus the
// protocol-level codes every AWS JSON service shares.
const (
	CodeAccessDenied        = "AccessDeniedException"
	CodeClient              = "ClientException"
	CodeClusterNotFound     = "ClusterNotFoundException"
	CodeInvalidParameter    = "InvalidParameterException"
	CodeServer              = "ServerException"
	CodeServiceNotActive    = "ServiceNotActiveException"
	CodeServiceNotFound     = "ServiceNotFoundException"
	CodeThrottling          = "ThrottlingException"
	CodeInternalFailure     = "InternalFailure"
	CodeServiceUnavailable  = "ServiceUnavailable"
	CodeUnknownOperation    = "UnknownOperationException"
	CodeSerialization       = "SerializationException"
	CodeMissingAuth         = "MissingAuthenticationTokenException"
	CodeIncompleteSignature = "IncompleteSignatureException"
	CodeInvalidSignature    = "InvalidSignatureException"
)

// apiError is an AWS error response: a code the SDK dispatches on and a
// message for people.
type apiError struct {
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// status is the HTTP status ECS sends with the code. The SDK's retryer looks
// at both: throttling codes are retried by name, 5xx by status.
func (e *apiError) status() int {
	switch e.code {
	case CodeServer, CodeInternalFailure:
		return http.StatusInternalServerError
	case CodeServiceUnavailable:
		return http.StatusServiceUnavailable
	case CodeMissingAuth, CodeInvalidSignature:
		return http.StatusForbidden
	default:
		return http.StatusBadRequest
	}
}

func errorf(code, format string, args ...any) *apiError {
	return &apiError{code: code, message: fmt.Sprintf(format, args...)}
}

func invalidParameter(format string, args ...any) *apiError {
	return errorf(CodeInvalidParameter, format, args...)
}

func clientError(format string, args ...any) *apiError {
	return errorf(CodeClient, format, args...)
}

var (
	errClusterNotFound  = errorf(CodeClusterNotFound, "Cluster not found.")
	errServiceNotFound  = errorf(CodeServiceNotFound, "Service not found.")
	errServiceNotActive = errorf(CodeServiceNotActive, "Service was not ACTIVE.")
)
