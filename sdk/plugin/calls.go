package plugin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
)

// An operation's context crosses the boundary as metadata and a Cancel
// call, not as the gRPC call's own context: cancelling a gRPC call returns
// at once, while the contract has a cancelled Provision remove what it
// created before it returns. So landlord keeps the call open, tells the
// plugin to cancel, and waits for its answer, for at most cancelGrace.
const (
	mdOperation = "landlord-operation"
	mdDeadline  = "landlord-deadline"
	mdCancelled = "landlord-cancelled"
)

// DefaultCancelGrace is Options.CancelGrace when it is zero.
const DefaultCancelGrace = 10 * time.Second

// hostInterceptor sends each unary call with its operation's id, deadline
// and cancellation as metadata, and sends Cancel when the operation's
// context ends during the call; it gives up on the call cancelGrace later.
func hostInterceptor(cancelGrace time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == pluginpb.Provider_Cancel_FullMethodName {
			return invoke(ctx, method, req, reply, cc, opts...)
		}
		id := operationID()
		md := []string{mdOperation, id}
		if d, ok := ctx.Deadline(); ok {
			md = append(md, mdDeadline, d.Format(time.RFC3339Nano))
		}
		cancelledBefore := ctx.Err() != nil
		if cancelledBefore {
			md = append(md, mdCancelled, "1")
		}
		call, abandon := context.WithCancel(metadata.AppendToOutgoingContext(context.WithoutCancel(ctx), md...))
		defer abandon()
		done := make(chan struct{}) // closed when the call has returned
		defer close(done)
		stop := context.AfterFunc(ctx, func() {
			if !cancelledBefore {
				go func() {
					cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
					defer cancel()
					_ = cc.Invoke(cctx, pluginpb.Provider_Cancel_FullMethodName, &pluginpb.CancelRequest{Operation: id}, &pluginpb.Empty{})
				}()
			}
			giveUp := time.NewTimer(cancelGrace)
			defer giveUp.Stop()
			select {
			case <-giveUp.C:
				abandon()
			case <-done:
			}
		})
		defer stop()
		err := invoke(call, method, req, reply, cc, opts...)
		if err != nil && call.Err() != nil && ctx.Err() != nil {
			// landlord gave up on the call: the operation's context ended
			// and the plugin did not answer within the grace.
			code := codes.Canceled
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				code = codes.DeadlineExceeded
			}
			return status.Errorf(code, "the plugin did not answer within %s after the operation's context ended (%v)", cancelGrace, ctx.Err())
		}
		return err
	}
}

func operationID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// operations are the calls a plugin is serving, by operation id, so that
// Cancel finds them. A Cancel may arrive before its call (they travel on
// separate streams): it is kept, for a minute, for the call to find.
type operations struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc
	early   map[string]time.Time
}

func newOperations() *operations {
	return &operations{running: map[string]context.CancelFunc{}, early: map[string]time.Time{}}
}

// interceptor gives each call the context of its operation: the gRPC
// call's context (which ends when landlord gives up on the call or goes
// away), with the operation's deadline, cancelled by Cancel.
func (o *operations) interceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handle grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(key string) string {
		if v := md.Get(key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if d, err := time.Parse(time.RFC3339Nano, first(mdDeadline)); err == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if first(mdCancelled) == "1" {
		cancel()
	}
	if id := first(mdOperation); id != "" {
		o.start(id, cancel)
		defer o.end(id)
	}
	return handle(ctx, req)
}

func (o *operations) start(id string, cancel context.CancelFunc) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.early[id]; ok {
		delete(o.early, id)
		cancel()
	}
	o.running[id] = cancel
}

func (o *operations) end(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.running, id)
}

// cancel cancels the operation id, or keeps the request for it to find.
func (o *operations) cancel(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if cancel, ok := o.running[id]; ok {
		cancel()
		return
	}
	now := time.Now()
	for early, at := range o.early {
		if now.Sub(at) > time.Minute {
			delete(o.early, early)
		}
	}
	o.early[id] = now
}
