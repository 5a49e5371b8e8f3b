package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// BackupInfo describes a backup Backup wrote.
type BackupInfo struct {
	// Path is the backup's file; Size its size in bytes.
	Path string
	Size int64
	// SchemaVersion is the last migration the backup holds: a landlord
	// at least that new opens it.
	SchemaVersion int64
	// Tenants counts its tenants that are not deleted.
	Tenants int
}

// ErrBackupExists means the backup's destination is already a file.
var ErrBackupExists = errors.New("sqlite: the backup's destination exists")

// Backup writes a consistent copy of the landlord database at src to dest
// with VACUUM INTO, which reads src in one read transaction: a landlord
// serving on src goes on writing meanwhile (WAL), and the copy is src as
// of the moment that transaction began, never half a write. src is opened
// read-only and never created or migrated. The copy is written beside dest
// under another name, readable by its owner alone (it holds tenants'
// configs, secrets sealed or not, and the install keys), checked with
// PRAGMA integrity_check, synced, and only then renamed to dest, so dest
// is either a whole, checked backup or absent. dest must not exist.
func Backup(ctx context.Context, src, dest string) (*BackupInfo, error) {
	if _, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	if _, err := os.Stat(dest); err == nil {
		return nil, fmt.Errorf("%w: %s; choose a new name, or remove it first", ErrBackupExists, dest)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: src}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: open %s: %w", src, err)
	}
	defer db.Close()
	if _, err := schemaVersion(ctx, db); err != nil {
		return nil, fmt.Errorf("sqlite: backup: %s is not a landlord database: %w", src, err)
	}
	// VACUUM INTO takes an empty file; made here, it is 0600 from the start.
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".partial-*")
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	done := false
	defer func() {
		if !done {
			os.Remove(tmpPath)
		}
	}()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmpPath); err != nil {
		return nil, fmt.Errorf("sqlite: backup: VACUUM INTO: %w", err)
	}
	info, err := checkBackup(ctx, tmpPath)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(tmpPath)
	if err != nil {
		return nil, err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: sync: %w", err)
	}
	if err := publish(tmpPath, dest); err != nil {
		return nil, err
	}
	done = true
	if d, err := os.Open(filepath.Dir(dest)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	info.Path = dest
	return info, nil
}

// publish gives the file at tmp the name dest, which must not exist.
// os.Link fails when dest appeared meanwhile, where a rename would replace
// it; on a file system without hard links (vfat, SMB shares, some FUSE
// mounts) a rename after a last look is the best there is.
func publish(tmp, dest string) error {
	err := os.Link(tmp, dest)
	switch {
	case err == nil:
		return os.Remove(tmp)
	case errors.Is(err, os.ErrExist):
		return fmt.Errorf("%w: %s", ErrBackupExists, dest)
	}
	if _, serr := os.Lstat(dest); serr == nil {
		return fmt.Errorf("%w: %s", ErrBackupExists, dest)
	}
	if rerr := os.Rename(tmp, dest); rerr != nil {
		return fmt.Errorf("sqlite: backup: %w", errors.Join(err, rerr))
	}
	return nil
}

// checkBackup checks the database at path whole and reads what BackupInfo
// says of it.
func checkBackup(ctx context.Context, path string) (*BackupInfo, error) {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var check []string
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: integrity check: %w", err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, err
		}
		check = append(check, s)
	}
	rows.Close()
	if len(check) != 1 || check[0] != "ok" {
		return nil, fmt.Errorf("sqlite: backup: the copy fails its integrity check: %s", strings.Join(check, "; "))
	}
	info := &BackupInfo{}
	if info.SchemaVersion, err = schemaVersion(ctx, db); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM tenants WHERE deleted_at IS NULL").Scan(&info.Tenants); err != nil {
		return nil, fmt.Errorf("sqlite: backup: count tenants: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	info.Size = st.Size()
	return info, nil
}

// schemaVersion is the last migration applied to db.
func schemaVersion(ctx context.Context, db *sql.DB) (int64, error) {
	var v sql.NullInt64
	err := db.QueryRowContext(ctx, "SELECT max(version_id) FROM landlord_schema_migrations WHERE is_applied").Scan(&v)
	if err == nil && !v.Valid {
		err = errors.New("no migration applied")
	}
	return v.Int64, err
}
