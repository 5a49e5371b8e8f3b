package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/jaxxstorm/landlord/client"
)

// exitFor gives err the exit code main ends with: 3 when the API said 404,
// 4 when a wait timed out, 1 for any other failure; an error that already
// has a code keeps it. A refused connection gets a hint.
func exitFor(err error) error {
	var coded *exitCodeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &coded):
		return err
	case client.IsNotFound(err):
		return withExitCode(exitNotFound, err)
	case errors.Is(err, context.DeadlineExceeded):
		return withExitCode(exitTimeout, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return withExitCode(exitFailure, fmt.Errorf("%w\n  is landlord serve running there? Point --addr or LANDLORD_ADDR at it", err))
	}
	return withExitCode(exitFailure, err)
}
