package store

import (
	"bytes"
	"testing"
)

// BenchmarkJournalWrite is the journal's part of a streamed part's write:
// one record of a 400-byte part (its key, its JSON and the appends it
// folds away), alone, without badger. BenchmarkPutPart is the whole write.
func BenchmarkJournalWrite(b *testing.B) {
	j, err := openJournal(b.TempDir(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer j.close()
	muts := []mutation{
		{op: mutSet, key: bytes.Repeat([]byte("k"), 90), value: bytes.Repeat([]byte("v"), 520)},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := j.write(muts); err != nil {
			b.Fatal(err)
		}
	}
}
