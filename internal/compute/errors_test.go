package compute_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/provider"
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
		{"unmarked invalid spec", fmt.Errorf("x: %w", provider.ErrInvalidSpec), true},
		{"validation error", provider.Invalid("/image", "is required"), true},
		{"unmarked provider not found", &compute.ProviderNotFoundError{Name: "x"}, true},
		{"marked terminal", provider.Terminal(boom), true},
		{"marked retryable", provider.Retryable(boom), false},
		{"retryable mark wins over invalid spec", provider.Retryable(provider.ErrInvalidSpec), false},
		{"terminal through wrapping", fmt.Errorf("docker: %w", provider.Terminal(provider.ErrProvisionFailed)), true},
		{"cancelled", provider.Retryable(fmt.Errorf("%w: %w", provider.ErrProvisionFailed, context.Canceled)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := provider.IsTerminal(tt.err); got != tt.terminal {
				t.Errorf("IsTerminal = %v, want %v", got, tt.terminal)
			}
			if got := provider.IsRetryable(tt.err); got != (tt.err != nil && !tt.terminal) {
				t.Errorf("IsRetryable = %v", got)
			}
		})
	}
	if provider.Retryable(nil) != nil || provider.Terminal(nil) != nil {
		t.Error("marking nil must stay nil")
	}
	wrapped := provider.Terminal(fmt.Errorf("x: %w", provider.ErrProvisionFailed))
	if !errors.Is(wrapped, provider.ErrProvisionFailed) || wrapped.Error() != "x: provisioning failed" {
		t.Errorf("marks must be transparent: %v", wrapped)
	}
}

func TestInvalidSpecViolations(t *testing.T) {
	var errs violation.List
	errs.Add("/ports/0", "b")
	errs.Add("/image", "a")
	err := errs.Err(provider.ErrInvalidSpec)
	if !errors.Is(err, provider.ErrInvalidSpec) {
		t.Fatal("violations of kind ErrInvalidSpec must wrap it")
	}
	if got, want := err.Error(), "invalid compute specification: /image: a; /ports/0: b"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if violation.Of(fmt.Errorf("wrapped: %w", err)) == nil {
		t.Error("violation.Of must find wrapped violations")
	}
	if !errors.Is(provider.Invalid("/image", "is required"), provider.ErrInvalidSpec) {
		t.Error("Invalid must wrap ErrInvalidSpec")
	}
}
