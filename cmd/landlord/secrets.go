package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/server"
)

func init() { commands = append(commands, newSecretsCommand) }

func newSecretsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Manage the encryption of tenants' secrets at rest",
		Long: `Manage the encryption at rest of tenants' secrets (the compute_config values
their provider's schema marks writeOnly), configured under encryption: in
landlord.yaml. See docs/storage.md.`,
		Example: `  landlord secrets rotate --dry-run
  landlord secrets rotate`,
		Args:              cobra.NoArgs, // an unknown verb is a usage error
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSecretsRotateCommand())
	return cmd
}

func newSecretsRotateCommand() *cobra.Command {
	var (
		configPath, database string
		opts                 seal.RotateOptions
	)
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Seal every stored secret again with the primary key",
		Long: `Seal every stored tenant's secrets (deleted tenants' included) with the
primary key of the configuration's encryption block: values sealed with
another key of the block are sealed again, secrets stored in plain text are
sealed, values sealed with the primary key are kept. Once it has run, the
keys other than the primary may be removed from the block.

It reads the database directly, with the configuration landlord serve uses
(--config, LANDLORD_CONFIG or ./landlord.yaml). It is safe beside running
landlord serve processes: each batch of tenants is rewritten in a
transaction that holds their rows, and nothing a tenant means changes (no
new generation, version or event). Running it again changes nothing.

--decrypt stores every sealed value in plain text instead (to turn
encryption off: stop landlord serve, decrypt, remove the block).`,
		Example: `  landlord secrets rotate --dry-run
  landlord secrets rotate --config /etc/landlord/landlord.yaml
  landlord secrets rotate --decrypt`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := config.Load(configPath, os.Getenv)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if cmd.Flags().Changed("database") {
				cfg.Database = config.ParseDatabase(database)
			}
			if err := cfg.Validate(); err != nil {
				return withExitCode(exitUsage, err)
			}
			if !cfg.Encryption.Enabled() {
				return withExitCode(exitUsage, errors.New("secrets rotate: the configuration has no encryption keys: add an encryption block (docs/storage.md)"))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return rotateSecrets(ctx, cfg, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file, YAML or JSON (env LANDLORD_CONFIG; default ./landlord.yaml when it exists)")
	f.StringVar(&database, "database", "", "SQLite file path or postgres:// URL (env LANDLORD_DATABASE; default landlord.db)")
	f.BoolVar(&opts.Decrypt, "decrypt", false, "store every sealed value in plain text instead")
	f.BoolVar(&opts.DryRun, "dry-run", false, "count what would change, and write nothing")
	f.IntVar(&opts.BatchSize, "batch", seal.DefaultBatchSize, "tenants rewritten per transaction")
	return cmd
}

// maxFailuresShown bounds the tenants rotate lists that it could not
// rotate.
const maxFailuresShown = 20

// rotateSecrets rotates the secrets of cfg's database with its keys (see
// server.Rotator), and reports what it did on stdout; warnings and
// failures go to stderr.
func rotateSecrets(ctx context.Context, cfg config.Config, opts seal.RotateOptions, stdout, stderr io.Writer) error {
	log := newLogger("warn", stderr)
	keys, err := cfg.Encryption.Keyring(os.Getenv, log)
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	r, err := server.NewRotator(ctx, cfg, server.Options{Providers: providerTable, Keys: keys, Logger: log})
	if err != nil {
		return serverExit(err)
	}
	defer r.Close()
	stats, err := r.Rotate(ctx, opts)
	printRotation(stdout, stats, keys.Primary(), opts)
	for _, provider := range slices.Sorted(maps.Keys(stats.NoSchema)) {
		fmt.Fprintf(stderr, "warning: %d tenants of provider %s: its config schema is not known here (%v): their sealed values were rotated, but secrets they hold in plain text, if any, were not looked for; run rotate with the configuration of landlord serve\n",
			stats.NoSchema[provider], provider, r.WhyNoSchema(provider))
	}
	if err != nil {
		return err
	}
	if n := len(stats.Failed); n > 0 {
		for i, ferr := range stats.Failed {
			if i == maxFailuresShown {
				fmt.Fprintf(stderr, "and %d more\n", n-maxFailuresShown)
				break
			}
			fmt.Fprintln(stderr, ferr)
		}
		return fmt.Errorf("secrets rotate: %d tenants could not be rotated and are left as they were; add the keys their values name to encryption.keys and run it again", n)
	}
	return nil
}

// printRotation reports what a rotation did.
func printRotation(w io.Writer, stats seal.Stats, primary string, opts seal.RotateOptions) {
	verb := "written"
	if opts.DryRun {
		fmt.Fprintln(w, "dry run: nothing was written")
		verb = "to write"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "tenants read (deleted ones included):\t%d\n", stats.Tenants)
	fmt.Fprintf(tw, "tenants %s:\t%d\n", verb, stats.Rewritten)
	if opts.Decrypt {
		fmt.Fprintf(tw, "values stored in plain text:\t%d\n", stats.Opened)
	} else {
		fmt.Fprintf(tw, "values sealed again with %s:\t%d\n", primary, stats.Resealed)
		fmt.Fprintf(tw, "secrets in plain text sealed with %s:\t%d\n", primary, stats.Sealed)
		fmt.Fprintf(tw, "values already sealed with %s:\t%d\n", primary, stats.Current)
	}
	if len(stats.Failed) > 0 {
		fmt.Fprintf(tw, "tenants that could not be rotated:\t%d\n", len(stats.Failed))
	}
	_ = tw.Flush()
}
