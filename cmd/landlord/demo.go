package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/internal/build"
	"github.com/jaxxstorm/landlord/internal/demo"
)

func init() { commands = append(commands, newDemoCommand) }

func newDemoCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build and serve landlord's demo workload, which needs no registry",
		Long: `landlord's demo workload is an image landlord builds on the local Docker Engine
from its own binary, with no registry and no Dockerfile: a small web page that
shows the tenant's name and its environment variables' names.`,
		Example: `  landlord demo image
  landlord create acme --config '{"image":"` + demo.DefaultRef + `","args":["acme"],"ports":[{"container_port":8080}]}' --wait`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.AddCommand(newDemoImageCommand(), newDemoServeCommand())
	return cmd
}

func newDemoImageCommand() *cobra.Command {
	var binary, ref, host string
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build the demo image on the Docker Engine from this landlord binary",
		Long: `Build the demo image on the Docker Engine (DOCKER_HOST, else the default socket)
from this landlord binary, or the one --binary names: the binary alone in an
image, loaded through the Engine's image load API, with no registry and no
Dockerfile. It must be a static Linux binary of the Engine's architecture
(CGO_ENABLED=0 go build). Run again, it does nothing until the binary changes,
then replaces the image and removes the old one unless a container uses it.`,
		Example: `  CGO_ENABLED=0 go build -o landlord ./cmd/landlord && ./landlord demo image
  landlord demo image --binary ./landlord-linux-arm64 --tag registry.example.com/landlord/demo:1`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.Flags().StringVar(&binary, "binary", "", "the landlord binary the image runs (default this one)")
	cmd.Flags().StringVar(&ref, "tag", demo.DefaultRef, "the image's reference")
	cmd.Flags().StringVar(&host, "docker-host", "", "the Engine's address (default DOCKER_HOST, else the default socket)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if binary == "" {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("demo image: find this binary (pass --binary): %w", err)
			}
			if binary, err = filepath.EvalSymlinks(self); err != nil {
				return fmt.Errorf("demo image: find this binary (pass --binary): %w", err)
			}
		}
		opts := []client.Opt{client.FromEnv}
		if host != "" {
			opts = append(opts, client.WithHost(host))
		}
		cli, err := client.New(opts...)
		if err != nil {
			return fmt.Errorf("demo image: engine client: %w", err)
		}
		defer cli.Close()
		start := time.Now()
		res, err := demo.Load(contextOf(cmd), cli, demo.Options{Binary: binary, Ref: ref})
		if err != nil {
			return err // "demo: …"
		}
		out := cmd.OutOrStdout()
		if !res.Loaded {
			fmt.Fprintf(out, "%s is up to date (%s)\n", res.Ref, shortImageID(res.ID))
		} else {
			fmt.Fprintf(out, "built %s (%s, %.1f MB) from %s in %s\n", res.Ref, shortImageID(res.ID), float64(res.Size)/1e6, binary, time.Since(start).Round(10*time.Millisecond))
		}
		switch {
		case res.Replaced != "":
			fmt.Fprintf(out, "removed the image it replaces (%s)\n", shortImageID(res.Replaced))
		case res.Kept != "":
			fmt.Fprintf(out, "kept the image it replaces (%s), which the Engine would not remove: %s\n", shortImageID(res.Kept), res.KeptBecause)
		}
		fmt.Fprintf(out, "a tenant runs it with: --config '{\"image\":%q,\"args\":[\"<tenant name>\"],\"ports\":[{\"container_port\":%d}]}'\n", res.Ref, demo.Port)
		return nil
	}
	return cmd
}

// shortImageID is an image id as docker images shows it.
func shortImageID(id string) string {
	if len(id) > len("sha256:")+12 {
		return id[:len("sha256:")+12]
	}
	return id
}

func newDemoServeCommand() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve [tenant name] [args…]",
		Short: "Serve the demo page (what the demo image runs)",
		Long: `Serve the demo page on --listen until SIGTERM or SIGINT: the tenant's name (the
first argument), the other arguments, the host name and the names of the
environment variables, never their values (secrets are environment variables
too, and nothing tells them apart), but for DEMO_MESSAGE's, shown as the
message (a plan's version can set it; never put a secret in it). /healthz
answers ok.`,
		Example:           `  landlord demo serve acme --listen 127.0.0.1:8081`,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.Flags().SetInterspersed(false) // what follows the tenant's name is its args
	cmd.Flags().StringVar(&listen, "listen", "", "the address to serve on (default :$PORT, else :8080)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if listen == "" {
			port := os.Getenv("PORT")
			if port == "" {
				port = strconv.Itoa(demo.Port)
			}
			listen = ":" + port
		}
		page := demo.Page{Started: time.Now(), EnvNames: demo.EnvNames(os.Environ()), Message: os.Getenv(demo.MessageVariable)}
		if len(args) > 0 {
			page.Tenant, page.Args = args[0], args[1:]
		}
		page.Host, _ = os.Hostname()
		page.Version = build.Read().String()
		ctx, stop := signal.NotifyContext(contextOf(cmd), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return serveDemo(ctx, cmd, listen, demo.Handler(page), page.Tenant)
	}
	return cmd
}

// serveDemo serves h on addr until ctx ends, then shuts down within 5 s.
// As a container's process 1 it must end on SIGTERM itself: the kernel
// applies no default action to signals sent to process 1.
func serveDemo(ctx context.Context, cmd *cobra.Command, addr string, h http.Handler, tenant string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("demo serve: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cmd.ErrOrStderr(), "landlord demo: serving tenant %q on %s\n", tenant, ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("demo serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("demo serve: shut down: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("demo serve: %w", err)
	}
	return nil
}
