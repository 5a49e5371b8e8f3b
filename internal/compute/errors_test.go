package compute_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

func TestIsTerminal(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		err      error
		terminal bool
	}{
		{"nil", nil, false},
		{"unmarked", boom, false},
		{"unmarked invalid spec", fmt.Errorf("x: %w", compute.ErrInvalidSpec), true},
		{"validation error", compute.Invalid("/image", "is required"), true},
		{"unmarked provider not found", &compute.ProviderNotFoundError{Name: "x"}, true},
		{"marked terminal", compute.Terminal(boom), true},
		{"marked retryable", compute.Retryable(boom), false},
		{"retryable mark wins over invalid spec", compute.Retryable(compute.ErrInvalidSpec), false},
		{"terminal through wrapping", fmt.Errorf("docker: %w", compute.Terminal(compute.ErrProvisionFailed)), true},
		{"cancelled", compute.Retryable(fmt.Errorf("%w: %w", compute.ErrProvisionFailed, context.Canceled)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compute.IsTerminal(tt.err); got != tt.terminal {
				t.Errorf("IsTerminal = %v, want %v", got, tt.terminal)
			}
			if got := compute.IsRetryable(tt.err); got != (tt.err != nil && !tt.terminal) {
				t.Errorf("IsRetryable = %v", got)
			}
		})
	}
	if compute.Retryable(nil) != nil || compute.Terminal(nil) != nil {
		t.Error("marking nil must stay nil")
	}
	wrapped := compute.Terminal(fmt.Errorf("x: %w", compute.ErrProvisionFailed))
	if !errors.Is(wrapped, compute.ErrProvisionFailed) || wrapped.Error() != "x: provisioning failed" {
		t.Errorf("marks must be transparent: %v", wrapped)
	}
}

func TestInvalidSpecViolations(t *testing.T) {
	var errs violation.List
	errs.Add("/ports/0", "b")
	errs.Add("/image", "a")
	err := errs.Err(compute.ErrInvalidSpec)
	if !errors.Is(err, compute.ErrInvalidSpec) {
		t.Fatal("violations of kind ErrInvalidSpec must wrap it")
	}
	if got, want := err.Error(), "invalid compute specification: /image: a; /ports/0: b"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if violation.Of(fmt.Errorf("wrapped: %w", err)) == nil {
		t.Error("violation.Of must find wrapped violations")
	}
	if !errors.Is(compute.Invalid("/image", "is required"), compute.ErrInvalidSpec) {
		t.Error("Invalid must wrap ErrInvalidSpec")
	}
}
