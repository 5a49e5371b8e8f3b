package wire

import "fmt"

// Problem is an RFC 9457 problem detail, with landlord's extensions: a
// stable machine-readable code and the fields at fault.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Code is stable across releases; clients branch on it.
	Code string `json:"code"`
	// Errors lists the fields at fault: every one, up to 100.
	Errors []FieldError `json:"errors,omitempty"`
	// ErrorsOmitted counts the fields at fault that Errors does not list,
	// past its first 100.
	ErrorsOmitted int `json:"errors_omitted,omitempty"`
	// Instance is the request id, to find the request in the logs.
	Instance string `json:"instance,omitempty"`
	// ErrorMessage is Detail (Title when there is no detail) and the first
	// of Errors with how many more there are ("…: /compute_config/image:
	// is required (and 2 more)"), as the member "error" that many API
	// clients show alone: without it they show only the status, and with
	// the detail alone no reason.
	ErrorMessage string `json:"error"`
}

// Error is the status, code and detail, so that a handler can return a
// *Problem as its error.
func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail) }

// FieldError is one problem with one field of a request.
type FieldError struct {
	// Pointer is the RFC 6901 JSON pointer of the field in the request body.
	Pointer string `json:"pointer,omitempty"`
	// Parameter names the query parameter or header at fault.
	Parameter string `json:"parameter,omitempty"`
	Message   string `json:"message"`
}
