package controller

import (
	"context"
	"time"
)

// SetWait makes c wait for its clock (Options.Now) with wait instead of a
// timer; call it before Run.
func SetWait(c *Controller, wait func(ctx context.Context, until time.Time) error) { c.wait = wait }
