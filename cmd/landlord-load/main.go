package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // the run failed, or some requests did
	exitUsage   = 2
	exitAborted = 130
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func realMain(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "suite" {
		return suiteMain(args[1:], stdout, stderr)
	}
	opts, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "landlord-load: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, opts, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "landlord-load: interrupted: %v\n", err)
		return exitAborted
	default:
		fmt.Fprintf(stderr, "landlord-load: %v\n", err)
		return exitFailed
	}
}

// suiteMain runs the suite subcommand.
func suiteMain(args []string, stdout, stderr io.Writer) int {
	opts, err := parseSuiteFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "landlord-load suite: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = runSuite(ctx, opts, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "landlord-load suite: interrupted: %v\n", err)
		return exitAborted
	default:
		fmt.Fprintf(stderr, "landlord-load suite: %v\n", err)
		return exitFailed
	}
}
