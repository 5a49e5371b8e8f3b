package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
)

func init() { commands = append(commands, newBackupCommand) }

func newBackupCommand() *cobra.Command {
	var configPath, database string
	cmd := &cobra.Command{
		Use:   "backup FILE | -",
		Short: "Copy the SQLite database to FILE, consistently, while landlord runs",
		Long: `Write a consistent copy of landlord's SQLite database to FILE, which must not
exist, while landlord serve goes on running: the copy is the database as of
one moment, never half a write. The database is the one landlord serve would
open (--database, LANDLORD_DATABASE, database.path in --config or
./landlord.yaml, else ./landlord.db). The copy is readable by its owner alone:
it holds the tenants' configs and the install keys.

To restore, stop landlord, put the copy where database.path points, and start
landlord: it finds the tenants' workloads by their names and adopts them,
creating nothing twice. Keep the encryption keys (encryption.keys) apart from
the backups: secrets sealed with them cannot be opened without them.

With - the copy goes to standard output (made in the temporary directory
first), for a container without a shell or tar:
  kubectl exec deploy/landlord -- /landlord backup - > landlord.db

For PostgreSQL, back up with pg_dump (see docs/operations.md).`,
		Example: "  landlord backup /backups/landlord-$(date +%F).db\n  landlord backup --database /var/lib/landlord/landlord.db copy.db\n  landlord backup - > copy.db",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := config.Load(configPath, os.Getenv)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if cmd.Flags().Changed("database") {
				cfg.Database = config.ParseDatabase(database)
			}
			if cfg.Database.Driver != "sqlite" {
				return withExitCode(exitUsage, errors.New("landlord backup copies SQLite databases; this one is PostgreSQL: use pg_dump --format=custom on the landlord database (docs/operations.md says what it must include)"))
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if args[0] == "-" {
				return backupToStdout(ctx, cfg.Database.Path, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			info, err := sqlite.Backup(ctx, cfg.Database.Path, args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s: %d tenants, schema version %d, %d bytes, integrity checked\n",
				cfg.Database.Path, info.Path, info.Tenants, info.SchemaVersion, info.Size)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file naming the database (env LANDLORD_CONFIG; default ./landlord.yaml when it exists)")
	f.StringVar(&database, "database", "", "the SQLite file (env LANDLORD_DATABASE; default landlord.db)")
	return cmd
}

// backupToStdout writes the backup to out, through a file in the
// temporary directory that is removed after; what it says goes to errOut.
func backupToStdout(ctx context.Context, database string, out, errOut io.Writer) error {
	dir, err := os.MkdirTemp("", "landlord-backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	info, err := sqlite.Backup(ctx, database, filepath.Join(dir, "landlord.db"))
	if err != nil {
		return err
	}
	f, err := os.Open(info.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(out, f); err != nil {
		return fmt.Errorf("write the backup: %w", err)
	}
	_, err = fmt.Fprintf(errOut, "backed up %s: %d tenants, schema version %d, %d bytes, integrity checked\n",
		database, info.Tenants, info.SchemaVersion, info.Size)
	return err
}
