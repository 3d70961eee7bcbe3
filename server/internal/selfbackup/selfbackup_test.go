package selfbackup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
)

// TestEncryptedStreamRoundTripsAndRejectsEveryCut seals streams of sizes
// around the chunk size and opens them again; every stream cut short (at a
// chunk boundary too), or with a byte flipped, fails to open; another
// passphrase is told apart from damage.
func TestEncryptedStreamRoundTripsAndRejectsEveryCut(t *testing.T) {
	pass := []byte("passphrase of the test")
	for _, size := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 17} {
		plain := bytes.Repeat([]byte("berth"), size/5+1)[:size]
		var sealed bytes.Buffer
		w, err := newEncryptWriter(&sealed, pass)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(plain); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := openAll(sealed.Bytes(), pass)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("size %d: round trip: %v (%d bytes back)", size, err, len(got))
		}
		if _, err := openAll(sealed.Bytes(), []byte("another passphrase")); !errors.Is(err, ErrWrongPassphrase) {
			t.Errorf("size %d: another passphrase: %v, want ErrWrongPassphrase", size, err)
		}
		// Cuts: in the header, at each chunk boundary, one byte short.
		cuts := []int{headerSize - 1, sealed.Len() - 1}
		for c := headerSize; c < sealed.Len(); c += chunkSize + 16 {
			cuts = append(cuts, c)
		}
		for _, c := range cuts {
			if _, err := openAll(sealed.Bytes()[:c], pass); err == nil {
				t.Errorf("size %d cut at %d of %d: opened", size, c, sealed.Len())
			}
		}
		flipped := bytes.Clone(sealed.Bytes())
		flipped[len(flipped)-1] ^= 1
		if _, err := openAll(flipped, pass); !errors.Is(err, errDamaged) {
			t.Errorf("size %d: a flipped byte: %v, want errDamaged", size, err)
		}
	}
}

func openAll(sealed, pass []byte) ([]byte, error) {
	r := newBufReader(sealed)
	d, err := newDecryptReader(r, pass)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(d)
}

// newDataDir makes a data directory with a real migrated SQLite database, a
// key file and a stack file, and returns it.
func newDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	key, err := secret.LoadKey(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(dir, "berth.db"), box)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.MkdirAll(filepath.Join(dir, "stacks", "1", "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stacks", "1", "web", "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRestoreRefusesANewerSchema: an archive whose database has a migration
// this build does not know is refused, and nothing is written.
func TestRestoreRefusesANewerSchema(t *testing.T) {
	dir := newDataDir(t)
	st, err := openSQLite(filepath.Join(dir, "berth.db"), false)
	if err != nil {
		t.Fatal(err)
	}
	known, err := store.SchemaVersion(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)", known+1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: dir}, archive); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "new")
	_, err = Restore(t.Context(), RestoreOptions{DataDir: target}, archive)
	if err == nil || !strings.Contains(err.Error(), "newer than this Berth's") {
		t.Fatalf("restore of a newer schema: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the target was written: %v", err)
	}
}

// TestRestoreRefusesAnEntryThatDoesNotMatchItsManifest rewrites an
// unencrypted archive with one byte of a stack file changed (the manifest
// kept): the restore fails naming the entry, and writes nothing.
func TestRestoreRefusesAnEntryThatDoesNotMatchItsManifest(t *testing.T) {
	dir := newDataDir(t)
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: dir}, archive); err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "tampered")
	rewrite(t, archive, tampered, func(name string, body []byte) []byte {
		if name == "data/stacks/1/web/compose.yaml" {
			body = bytes.Replace(body, []byte("{}"), []byte("[]"), 1)
		}
		return body
	})
	target := filepath.Join(t.TempDir(), "new")
	_, err := Restore(t.Context(), RestoreOptions{DataDir: target}, tampered)
	if err == nil || !strings.Contains(err.Error(), `"data/stacks/1/web/compose.yaml" does not match the manifest`) {
		t.Fatalf("restore of a tampered archive: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the target was written: %v", err)
	}
	// The untouched archive restores.
	if _, err := Restore(t.Context(), RestoreOptions{DataDir: target}, archive); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(target, "stacks", "1", "web", "compose.yaml"))
	if err != nil || string(got) != "services: {}\n" {
		t.Errorf("restored stack file %q %v", got, err)
	}
}

// rewrite copies the gzip'd tar at src to dst, passing every file's body
// through edit.
func rewrite(t *testing.T, src, dst string, edit func(name string, body []byte) []byte) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		body = edit(hdr.Name, body)
		hdr.Size = int64(len(body))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newBufReader(b []byte) *bufio.Reader { return bufio.NewReaderSize(bytes.NewReader(b), chunkSize) }

// TestRestoreAfterAnInterruptedOne: the staging directory a killed restore
// left is cleared and the restore goes on; the previous contents a restore
// killed while moving them left in .berth-restore-old are never removed:
// the restore is refused, even with Force.
func TestRestoreAfterAnInterruptedOne(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: newDataDir(t)}, archive); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(target, restoreStaging, "stacks"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(t.Context(), RestoreOptions{DataDir: target}, archive); err != nil {
		t.Fatalf("restore over a staging directory left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, restoreStaging)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staging directory is still there: %v", err)
	}

	kept := filepath.Join(target, restoreOld, "berth.db")
	if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("the previous database"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Restore(t.Context(), RestoreOptions{DataDir: target, Force: true}, archive)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("restore over an interrupted one's previous contents: %v", err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "the previous database" {
		t.Errorf("the previous contents: %q %v", b, err)
	}
}

// TestWithGitIncludesTheCheckoutsWithTheirLinks: DATA_DIR/git is in an
// archive only with WithGit, symbolic links as links; file template
// sources always are, caches never.
func TestWithGitIncludesTheCheckoutsWithTheirLinks(t *testing.T) {
	dir := newDataDir(t)
	for name, body := range map[string]string{
		"git/stack-1/compose.yaml":   "services: {}\n",
		"templates/mine.json":        "[]\n",
		"template-logos/1/logo.png":  "png",
		"somethingelse/unknown.file": "x",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("compose.yaml", filepath.Join(dir, "git", "stack-1", "docker-compose.yml")); err != nil {
		t.Fatal(err)
	}
	for _, withGit := range []bool{false, true} {
		archive := filepath.Join(t.TempDir(), "b")
		if _, err := WriteFile(t.Context(), Options{DataDir: dir, WithGit: withGit}, archive); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(t.TempDir(), "data")
		m, err := Restore(t.Context(), RestoreOptions{DataDir: target}, archive)
		if err != nil {
			t.Fatal(err)
		}
		if m.WithGit != withGit {
			t.Errorf("manifest withGit = %v, want %v", m.WithGit, withGit)
		}
		link, err := os.Readlink(filepath.Join(target, "git", "stack-1", "docker-compose.yml"))
		if withGit && link != "compose.yaml" {
			t.Errorf("with git: the checkout's link reads %q, %v", link, err)
		}
		if !withGit && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("without git: the checkout was restored: %v", err)
		}
		if fi, err := os.Stat(filepath.Join(target, "templates", "mine.json")); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("template source: %v %v, want mode 0640", fi, err)
		}
		for _, skipped := range []string{"template-logos", "somethingelse", "setup-token"} {
			if _, err := os.Stat(filepath.Join(target, skipped)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was restored: %v", skipped, err)
			}
		}
	}
}

// FuzzReadArchive: no input makes the reader of an (unencrypted) archive
// panic or accept an archive that does not match its manifest.
func FuzzReadArchive(f *testing.F) {
	dir := f.TempDir()
	key, _ := secret.LoadKey(dir, "")
	box, _ := secret.New(key)
	st, err := store.Open(f.Context(), filepath.Join(dir, "berth.db"), box)
	if err != nil {
		f.Fatal(err)
	}
	st.Close()
	var valid bytes.Buffer
	if err := Write(f.Context(), Options{DataDir: dir}, &valid); err != nil {
		f.Fatal(err)
	}
	f.Add(valid.Bytes())
	f.Add(valid.Bytes()[:len(valid.Bytes())/2])
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readArchive(bytes.NewReader(b), nil, nil)
		if err == nil && m.Format != Format {
			t.Fatalf("accepted an archive of format %d", m.Format)
		}
	})
}

// TestRestoreRefusesAnotherKindOfDatabase: a SQLite archive is not
// restored into PostgreSQL (nor the reverse); nothing is written.
func TestRestoreRefusesAnotherKindOfDatabase(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: newDataDir(t)}, archive); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "data")
	_, err := Restore(t.Context(), RestoreOptions{DataDir: target, DatabaseURL: "postgres://berth@127.0.0.1:1/none"}, archive)
	if err == nil || !strings.Contains(err.Error(), "holds a sqlite database and DATABASE_URL selects postgres") {
		t.Fatalf("restore of SQLite into PostgreSQL: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the target was written: %v", err)
	}
}

// TestRestoreOntoAFreshFileSystemKeepsLostAndFound: a data directory that
// is the root of a new file system holds only lost+found; it counts as
// empty and stays.
func TestRestoreOntoAFreshFileSystemKeepsLostAndFound(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: newDataDir(t)}, archive); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if err := os.Mkdir(filepath.Join(target, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(t.Context(), RestoreOptions{DataDir: target}, archive); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lost+found", "berth.db", secret.KeyFile, "stacks"} {
		if _, err := os.Stat(filepath.Join(target, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRestoreOfAnOlderSchemaIsMigratedByTheNextOpen: an archive of the
// database an early release wrote (the store's upgrade fixture, schema
// version 7) restores as it is, and opening the restored database, as the
// next "berth serve" does, migrates it with its sealed secrets readable.
func TestRestoreOfAnOlderSchemaIsMigratedByTheNextOpen(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{"berth-pre-gorm.db": "berth.db", "encryption_key": secret.KeyFile} {
		b, err := os.ReadFile(filepath.Join("..", "store", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: dir}, archive); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "data")
	m, err := Restore(t.Context(), RestoreOptions{DataDir: target}, archive)
	if err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != 7 {
		t.Errorf("manifest schema version = %d, want the fixture's 7", m.SchemaVersion)
	}
	key, err := secret.LoadKey(target, "")
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(target, "berth.db"), box)
	if err != nil {
		t.Fatalf("open the restored older database: %v", err)
	}
	defer st.Close()
	db, err := openSQLite(filepath.Join(target, "berth.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := schemaVersion(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := store.SchemaVersion(SQLite); got != want {
		t.Errorf("schema version after the open = %d, want %d", got, want)
	}
	regs, err := st.ListRegistries(t.Context())
	if err != nil {
		t.Fatalf("the restored secrets do not open: %v", err)
	}
	passwords := map[string]string{}
	for _, r := range regs {
		passwords[r.Name] = r.Password
	}
	if passwords["private"] != "registry-p@ss w0rd" {
		t.Errorf("registries of the fixture = %+v, want private with its password", regs)
	}
}

// TestRestoreWithEncryptionKeySet: a target whose ENCRYPTION_KEY is
// another key is refused (none of the archive's secrets would open); one
// set to the archive's key gets no key file (the key stays out of the data
// directory, as it was).
func TestRestoreWithEncryptionKeySet(t *testing.T) {
	dir := newDataDir(t)
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: dir}, archive); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(dir, secret.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "data")
	other := strings.Repeat("ab", 32)
	_, err = Restore(t.Context(), RestoreOptions{DataDir: target, EncryptionKey: other}, archive)
	if err == nil || !strings.Contains(err.Error(), "ENCRYPTION_KEY is set to another key") {
		t.Fatalf("restore with another ENCRYPTION_KEY: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the target was written: %v", err)
	}
	if _, err := Restore(t.Context(), RestoreOptions{DataDir: target, EncryptionKey: strings.TrimSpace(string(key))}, archive); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, secret.KeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a key file was written although ENCRYPTION_KEY holds the key: %v", err)
	}
}
