package store

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// MANIFEST is a log: each flush and each merge appends the tables it
// created and deleted, and every open reads all of it (twice: checkStore,
// then badger). Badger rewrites it as the live tables only once it holds
// 10,000 deletions, by then a few hundred KiB: a history of short-lived
// processes (each flushes a table; every mergeTables of them merge) makes
// it grow by some 40 bytes a process, read at every start. A read-write
// open rewrites it when it is this big and mostly history.
const manifestRewriteAt = 16 << 10

// manifestRewriteName is the file a rewrite writes before it renames it
// over MANIFEST: badger's own name for it, which badger truncates when it
// next rewrites, so a kill in between leaves nothing foreign behind.
const manifestRewriteName = "MANIFEST-REWRITE"

// wantsRewrite reports whether the manifest checkStore read is big enough
// and mostly history (four times what a rewrite writes), and the store
// has no tables the manifest does not name (which badger removes at its
// open, and which the rewrite would forget were ever named).
func (s storeShape) wantsRewrite() bool {
	live := int64(len(s.manifest.tables))
	return s.manifest.tables != nil && !s.leftovers &&
		s.manifestBytes >= manifestRewriteAt && s.manifestBytes > 4*(16+16*live)
}

// rewriteManifest replaces the MANIFEST in dir by one that creates the
// live tables m names, as badger's own rewrite does: the new file is
// written whole and synced beside the old one, renamed over it, and the
// directory synced. A kill at any point leaves either manifest, whole; a
// failure (a full disk) leaves the old one, which serves as before.
func rewriteManifest(dir string, m manifest) error {
	set := pb.ManifestChangeSet{}
	for _, id := range m.live() {
		t := m.tables[id]
		set.Changes = append(set.Changes, &pb.ManifestChange{
			Id: id, Op: pb.ManifestChange_CREATE, Level: t.level,
			KeyId: t.keyID, EncryptionAlgo: pb.EncryptionAlgo_aes, Compression: t.compression,
		})
	}
	body, err := proto.Marshal(&set)
	if err != nil {
		return err
	}
	buf := append([]byte(nil), m.header...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)))
	buf = binary.BigEndian.AppendUint32(buf, crc32.Checksum(body, y.CastagnoliCrcTable))
	buf = append(buf, body...)
	tmp := filepath.Join(dir, manifestRewriteName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, badger.ManifestFilename))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}
