//go:build !linux

package store

import (
	"errors"
	"os"
)

// mapSegment: off Linux the journal's records are written with write(2).
func mapSegment(*os.File, int64) ([]byte, error) { return nil, nil }

func unmapSegment([]byte) error { return nil }

// zeroSegment: off Linux no segment is mapped, and none is reused.
func zeroSegment(*os.File, int64) error { return errors.ErrUnsupported }
