package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// TrustFile is the name of the trust records' file in the user config
// directory (see [UserDir]).
const TrustFile = "trust.json"

// TrustAnswer is what the user said of a folder.
type TrustAnswer string

// The answers a record holds.
const (
	// Trusted: the folder's widening settings apply while their hash is
	// the recorded one; the folders below it are trusted whatever they
	// hold.
	Trusted TrustAnswer = "trusted"
	// Never: the folder stays untrusted and darman does not ask again.
	Never TrustAnswer = "never"
)

// TrustRecord is one folder's record.
type TrustRecord struct {
	// Path is the folder's real path (symbolic links resolved).
	Path   string      `json:"path"`
	Answer TrustAnswer `json:"answer"`
	// Hash is [Hash] of the widening settings the user saw when
	// trusting; "" trusts whatever the folder holds.
	Hash string    `json:"hash,omitempty"`
	At   time.Time `json:"at"`
}

// TrustVerdict is what the records say of a workspace.
type TrustVerdict int

// The verdicts.
const (
	// Unknown: no record; ask, or treat as untrusted.
	Unknown TrustVerdict = iota
	// IsTrusted: the folder or a parent is trusted.
	IsTrusted
	// Changed: the folder was trusted with other settings; ask again.
	Changed
	// IsNever: the user said never.
	IsNever
)

// TrustStore is the user's trust records, one JSON file. Each call reads
// the file afresh; writes replace it whole (a temporary file renamed), so
// a reader never sees half of one.
type TrustStore struct {
	path string
}

// OpenTrust returns the trust records kept in the user config directory
// of the environment lookupEnv reads (nil: the process's).
func OpenTrust(lookupEnv func(string) (string, bool)) (*TrustStore, error) {
	dir, err := UserDir(lookupEnv)
	if err != nil {
		return nil, fmt.Errorf("trust records: %w", err)
	}
	return &TrustStore{path: filepath.Join(dir, TrustFile)}, nil
}

// Path is the records' file.
func (s *TrustStore) Path() string { return s.path }

type trustFile struct {
	Folders []TrustRecord `json:"folders"`
}

// List returns every record, by path.
func (s *TrustStore) List() ([]TrustRecord, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust records: %w", err)
	}
	var f trustFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("trust records %s: not a file darman can read (%v); move it away to start afresh", s.path, err)
	}
	slices.SortFunc(f.Folders, func(a, b TrustRecord) int { return strings.Compare(a.Path, b.Path) })
	return f.Folders, nil
}

// RealPath is the folder's path with symbolic links resolved, as records
// are keyed.
func RealPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Check says what the records make of the workspace at root whose
// widening settings hash to hash. The nearest record wins: the folder's
// own, else a parent's (a trusted parent trusts what is below it).
func (s *TrustStore) Check(root, hash string) (TrustVerdict, error) {
	real, err := RealPath(root)
	if err != nil {
		return Unknown, fmt.Errorf("trust: %w", err)
	}
	recs, err := s.List()
	if err != nil {
		return Unknown, err
	}
	for dir := real; ; {
		if i := slices.IndexFunc(recs, func(r TrustRecord) bool { return r.Path == dir }); i >= 0 {
			r := recs[i]
			switch {
			case r.Answer == Never:
				return IsNever, nil
			case r.Answer != Trusted:
			case dir != real || r.Hash == "" || r.Hash == hash:
				return IsTrusted, nil
			default:
				return Changed, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return Unknown, nil
		}
		dir = parent
	}
}

// Set records answer for the folder at root, replacing its record.
func (s *TrustStore) Set(root string, answer TrustAnswer, hash string) (TrustRecord, error) {
	real, err := RealPath(root)
	if err != nil {
		return TrustRecord{}, fmt.Errorf("trust: %w", err)
	}
	rec := TrustRecord{Path: real, Answer: answer, Hash: hash, At: time.Now().UTC().Truncate(time.Second)}
	return rec, s.update(func(recs []TrustRecord) []TrustRecord {
		recs = slices.DeleteFunc(recs, func(r TrustRecord) bool { return r.Path == real })
		return append(recs, rec)
	})
}

// Revoke removes the folder's record; it reports whether there was one.
func (s *TrustStore) Revoke(root string) (bool, error) {
	real, err := RealPath(root)
	if err != nil {
		// A folder that is gone is revoked by the path given.
		if real, err = filepath.Abs(root); err != nil {
			return false, err
		}
	}
	found := false
	err = s.update(func(recs []TrustRecord) []TrustRecord {
		return slices.DeleteFunc(recs, func(r TrustRecord) bool {
			found = found || r.Path == real
			return r.Path == real
		})
	})
	return found, err
}

func (s *TrustStore) update(change func([]TrustRecord) []TrustRecord) error {
	recs, err := s.List()
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(trustFile{Folders: change(recs)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("trust records: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".trust-*.json")
	if err != nil {
		return fmt.Errorf("trust records: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust records: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust records: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("trust records: %w", err)
	}
	return nil
}
