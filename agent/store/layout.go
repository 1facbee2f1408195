package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// The data directory holds more than the database: the owner's lock and
// socket, the journal, the checkpoints' shadow repositories, transcripts.
// Badger's files live in a directory of their own, DATA/store, because
// badger walks its whole directory to count its size, at every open and
// again every minute (DB.calculateSize): with the shadow repositories
// inside it, that walk lstat-ed every object of every workspace's
// checkpoints, and every start of darman grew with the history.
const dbDirName = "store"

// movingDirName is where an old store's files gather while they move into
// dbDirName; renaming it to dbDirName is the move's last step.
const movingDirName = "store.moving"

// databaseDir is the directory of badger's files in the data directory.
func databaseDir(dataDir string) string { return filepath.Join(dataDir, dbDirName) }

// journalPath is the journal's directory in the data directory: beside
// badger's files, not among them, so that a repair moving them aside
// keeps it.
func journalPath(dataDir string) string { return filepath.Join(dataDir, journalDir) }

// movedHook, when set (by a test), is called after each file the layout
// move renames, with how many it has renamed.
var movedHook func(n int)

// settleLayout makes sure badger's files are in DATA/store, moving them
// there from the data directory itself, where darman before this layout
// kept them, and returns that directory. The caller holds the owner lock,
// so no other darman has the files open.
//
// The move is safe to interrupt at any point (a kill -9, a power loss):
// the files are renamed one by one into DATA/store.moving, which is
// renamed to DATA/store when all are there; a start that finds
// store.moving, or an old store's files in the data directory, finishes
// the move before anything else. No file is copied or changed, only
// renamed within the data directory.
func settleLayout(dataDir string) (string, error) {
	db := databaseDir(dataDir)
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return "", err
	}
	var old []string
	moving, hasDB := false, false
	for _, e := range entries {
		switch name := e.Name(); {
		case name == movingDirName && e.IsDir():
			moving = true
		case name == dbDirName && e.IsDir():
			hasDB = true
		case !e.IsDir() && isLegacyDatabaseFile(name):
			old = append(old, name)
		}
	}
	if len(old) == 0 && !moving {
		if hasDB {
			return db, nil
		}
		if err := os.Mkdir(db, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cannot create the session store's directory: %w", diskFull(err))
		}
		return db, nil
	}
	if hasDB {
		// A store in both places: a darman older than this layout ran on
		// this data directory after a newer one had moved the store.
		// Which of them holds the sessions the user wants is not
		// darman's to guess; neither is touched.
		return "", fmt.Errorf("the data directory %s holds two session stores: one in %s, and the files of one written by an older darman in %s itself (%s); "+
			"nothing was changed: move one of them away (for example the older one's files into another directory, which you can open with --data-dir)",
			dataDir, db, dataDir, strings.Join(old[:min(len(old), 3)], ", "))
	}
	tmp := filepath.Join(dataDir, movingDirName)
	if err := os.Mkdir(tmp, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cannot move the session store into %s: %w", db, diskFull(err))
	}
	// The MANIFEST goes last: until the move is done, the data directory
	// keeps the file that says an old store is there.
	for i, name := range manifestLast(old) {
		if err := os.Rename(filepath.Join(dataDir, name), filepath.Join(tmp, name)); err != nil {
			return "", fmt.Errorf("cannot move the session store into %s: %w", db, err)
		}
		if movedHook != nil {
			movedHook(i + 1)
		}
	}
	if err := syncDir(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, db); err != nil {
		return "", fmt.Errorf("cannot move the session store into %s: %w", db, err)
	}
	return db, syncDir(dataDir)
}

// isLegacyDatabaseFile reports whether a name in the data directory is a
// file of a store kept there before DATA/store (see settleLayout).
func isLegacyDatabaseFile(name string) bool {
	switch filepath.Ext(name) {
	case ".sst", ".vlog", ".mem":
		return true
	}
	return strings.HasPrefix(name, badger.ManifestFilename) || strings.HasPrefix(name, badger.KeyRegistryFileName) ||
		name == "DISCARD" || name == "LOCK" || strings.HasPrefix(name, witnessName)
}

func manifestLast(names []string) []string {
	out := make([]string, 0, len(names))
	var last []string
	for _, n := range names {
		if n == badger.ManifestFilename {
			last = append(last, n)
		} else {
			out = append(out, n)
		}
	}
	return append(out, last...)
}

// syncDir makes a directory's renames durable where the system allows it
// (Windows cannot sync a directory; the renames stand anyway).
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	f.Sync()
	return f.Close()
}
