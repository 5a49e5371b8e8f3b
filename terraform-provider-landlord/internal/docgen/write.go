package main

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// pageFolders are the folders docgen owns whole: a page in one that
// render does not make is a type's that is gone. docs/index.md is the
// only other page docgen writes; guides, say, would be left alone.
var pageFolders = []string{"docs/" + resourceKind.folder, "docs/" + dataSourceKind.folder}

// write writes files (render's) under dir, each only when its content
// changed, and removes the stale pages (stalePages). It returns what it
// wrote or removed.
func write(dir string, files map[string][]byte) ([]string, error) {
	var changed []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		to := filepath.Join(dir, filepath.FromSlash(name))
		old, err := os.ReadFile(to)
		if err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return changed, err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return changed, err
		}
		if err := os.WriteFile(to, files[name], 0o644); err != nil {
			return changed, err
		}
		changed = append(changed, "wrote "+name)
	}
	stale, err := stalePages(dir, files)
	if err != nil {
		return changed, err
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return changed, err
		}
		changed = append(changed, "removed "+name)
	}
	return changed, nil
}

// stalePages lists the pages in pageFolders under dir that files has not.
func stalePages(dir string, files map[string][]byte) ([]string, error) {
	var stale []string
	for _, folder := range pageFolders {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(folder)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := path.Join(folder, e.Name())
			if _, ok := files[name]; !ok && !e.IsDir() {
				stale = append(stale, name)
			}
		}
	}
	return stale, nil
}
