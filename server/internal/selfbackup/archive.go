package selfbackup

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxManifest bounds the manifest entry read into memory.
const maxManifest = 64 << 20

// ErrNoPassphrase is returned for an encrypted archive read without a
// passphrase.
var ErrNoPassphrase = errors.New("the archive is encrypted: give its passphrase (-passphrase-stdin)")

// sink receives each entry of an archive being read, its body (of a file)
// hashed as it is read; it need not read the body whole.
type sink func(e Entry, body io.Reader) error

// readArchive reads an archive from r, hands every entry to put (nil: none),
// and returns its manifest once every entry has been checked against it:
// same set of entries, each file's size and SHA-256. The whole stream is
// read and authenticated, so an error here means the archive is unusable,
// and the entries put was given must be discarded.
func readArchive(r io.Reader, passphrase []byte, put sink) (Manifest, error) {
	br := bufio.NewReaderSize(r, chunkSize)
	var src io.Reader = br
	if isEncrypted(br) {
		if len(passphrase) == 0 {
			return Manifest{}, ErrNoPassphrase
		}
		dr, err := newDecryptReader(br, passphrase)
		if err != nil {
			return Manifest{}, err
		}
		src = dr
	} else if b, err := br.Peek(2); err != nil || b[0] != 0x1f || b[1] != 0x8b {
		return Manifest{}, errors.New("not a Berth backup archive (neither encrypted nor gzip'd tar)")
	}
	m, err := readEntries(src, put)
	if err != nil {
		if errors.Is(err, errDamaged) || errors.Is(err, ErrWrongPassphrase) {
			return Manifest{}, err
		}
		return Manifest{}, fmt.Errorf("the archive is truncated or damaged: %w", err)
	}
	return m, nil
}

func readEntries(src io.Reader, put sink) (Manifest, error) {
	zr, err := gzip.NewReader(src)
	if err != nil {
		return Manifest{}, err
	}
	tr := tar.NewReader(zr)
	var (
		m      *Manifest
		seen   = map[string]Entry{}
		hashed = sha256.New()
	)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Manifest{}, err
		}
		if m != nil {
			return Manifest{}, fmt.Errorf("entry %q after the manifest", hdr.Name)
		}
		for k := range hdr.PAXRecords {
			// A sparse entry reads as zeros without input: a small hostile
			// archive could make a reader write without end.
			if strings.HasPrefix(k, "GNU.sparse.") {
				return Manifest{}, fmt.Errorf("entry %q is a sparse file: not written by Berth", hdr.Name)
			}
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		if !validName(name) {
			return Manifest{}, fmt.Errorf("unexpected entry %q", hdr.Name)
		}
		if _, dup := seen[name]; dup {
			return Manifest{}, fmt.Errorf("entry %q twice", name)
		}
		if name == manifestEntry {
			data, err := io.ReadAll(io.LimitReader(tr, maxManifest+1))
			if err != nil {
				return Manifest{}, err
			}
			if len(data) > maxManifest {
				return Manifest{}, errors.New("the manifest is too large")
			}
			m = new(Manifest)
			if err := json.Unmarshal(data, m); err != nil {
				return Manifest{}, fmt.Errorf("manifest: %w", err)
			}
			continue
		}
		e := Entry{Path: name, Mode: uint32(hdr.Mode) & 0o777}
		var body io.Reader
		switch hdr.Typeflag {
		case tar.TypeDir:
			e.Type = typeDir
		case tar.TypeSymlink:
			e.Type, e.Target = typeSymlink, hdr.Linkname
		case tar.TypeReg:
			e.Type = typeFile
			hashed.Reset()
			body = io.TeeReader(tr, hashed)
		default:
			return Manifest{}, fmt.Errorf("entry %q of an unexpected type", name)
		}
		if put != nil {
			if err := put(e, body); err != nil {
				return Manifest{}, err
			}
		}
		if body != nil {
			// What put did not read is hashed too.
			if _, err := io.Copy(io.Discard, body); err != nil {
				return Manifest{}, err
			}
			e.Size = hdr.Size
			e.SHA256 = hex.EncodeToString(hashed.Sum(nil))
		}
		seen[name] = e
	}
	// The rest of the stream: gzip's checksum, the encryption's final chunk.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return Manifest{}, err
	}
	if m == nil {
		return Manifest{}, errors.New("no manifest (the archive ends early)")
	}
	if m.Format != Format {
		return Manifest{}, fmt.Errorf("archive format %d is not known to this Berth (it reads format %d)", m.Format, Format)
	}
	if len(m.Entries) != len(seen) {
		return Manifest{}, fmt.Errorf("the manifest lists %d entries, the archive holds %d", len(m.Entries), len(seen))
	}
	for _, want := range m.Entries {
		got, ok := seen[want.Path]
		if !ok {
			return Manifest{}, fmt.Errorf("entry %q of the manifest is missing", want.Path)
		}
		if got.Type != want.Type || got.Size != want.Size || got.SHA256 != want.SHA256 || got.Target != want.Target {
			return Manifest{}, fmt.Errorf("entry %q does not match the manifest (size %d, sha256 %s; manifest: size %d, sha256 %s)",
				want.Path, got.Size, got.SHA256, want.Size, want.SHA256)
		}
	}
	return *m, nil
}
