package selfbackup

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/scrypt"
)

// An encrypted archive is a header followed by the gzip'd tar sealed in
// chunks of chunkSize bytes with AES-256-GCM (the STREAM construction):
//
//	magic "BERTHBAK" | version 1 | scrypt logN, r, p (1 byte each) | salt (16) | check (32)
//	chunk*: AES-GCM(plain ≤ chunkSize), nonce = counter (8 bytes, big endian) | 0 0 0 | final (0 or 1)
//
// The key is scrypt(passphrase, salt) (64 bytes: 32 for AES, 32 for the
// check, an HMAC that tells a wrong passphrase from a damaged file). Every
// chunk carries the header as additional data; the last one is marked final,
// so a file cut at a chunk boundary fails like one cut inside a chunk.
const (
	magic       = "BERTHBAK"
	cryptFormat = 1
	chunkSize   = 64 << 10
	saltSize    = 16
	checkSize   = 32
	headerSize  = len(magic) + 4 + saltSize + checkSize
	// scrypt's cost: 2^15 × 8 × 128 bytes = 32 MiB, about 0.1 s.
	scryptLogN = 15
	scryptR    = 8
	scryptP    = 1
	// maxLogN bounds the cost a (hostile) header may ask for.
	maxLogN = 20
)

// ErrWrongPassphrase is returned when an encrypted archive's passphrase is
// not the one it was written with.
var ErrWrongPassphrase = errors.New("wrong passphrase: the archive was encrypted with another one")

// errDamaged is returned when an encrypted archive fails authentication or
// ends early.
var errDamaged = errors.New("the archive is truncated or damaged (its encryption does not authenticate)")

func deriveKeys(passphrase, salt []byte, logN, r, p int) (aead cipher.AEAD, check []byte, err error) {
	k, err := scrypt.Key(passphrase, salt, 1<<logN, r, p, 64)
	if err != nil {
		return nil, nil, err
	}
	block, err := aes.NewCipher(k[:32])
	if err != nil {
		return nil, nil, err
	}
	aead, err = cipher.NewGCM(block)
	if err != nil {
		return nil, nil, err
	}
	mac := hmac.New(sha256.New, k[32:])
	mac.Write([]byte("berth-backup passphrase check"))
	mac.Write(salt)
	return aead, mac.Sum(nil), nil
}

func chunkNonce(counter uint64, final bool) []byte {
	n := make([]byte, 12)
	binary.BigEndian.PutUint64(n, counter)
	if final {
		n[11] = 1
	}
	return n
}

// encryptWriter seals what is written to it; Close seals the final chunk
// (it does not close the underlying writer).
type encryptWriter struct {
	w       io.Writer
	aead    cipher.AEAD
	header  []byte
	buf     []byte
	counter uint64
	closed  bool
}

func newEncryptWriter(w io.Writer, passphrase []byte) (*encryptWriter, error) {
	salt := make([]byte, saltSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	aead, check, err := deriveKeys(passphrase, salt, scryptLogN, scryptR, scryptP)
	if err != nil {
		return nil, err
	}
	header := make([]byte, 0, headerSize)
	header = append(header, magic...)
	header = append(header, cryptFormat, scryptLogN, scryptR, scryptP)
	header = append(header, salt...)
	header = append(header, check...)
	if _, err := w.Write(header); err != nil {
		return nil, err
	}
	return &encryptWriter{w: w, aead: aead, header: header, buf: make([]byte, 0, chunkSize)}, nil
}

func (e *encryptWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if len(e.buf) == chunkSize {
			// More follows: the full buffer is not the last chunk.
			if err := e.seal(false); err != nil {
				return n, err
			}
		}
		k := copy(e.buf[len(e.buf):chunkSize], p)
		e.buf = e.buf[:len(e.buf)+k]
		p = p[k:]
		n += k
	}
	return n, nil
}

func (e *encryptWriter) seal(final bool) error {
	out := e.aead.Seal(nil, chunkNonce(e.counter, final), e.buf, e.header)
	e.counter++
	e.buf = e.buf[:0]
	_, err := e.w.Write(out)
	return err
}

func (e *encryptWriter) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	return e.seal(true)
}

// decryptReader opens the chunks of an encrypted archive.
type decryptReader struct {
	r       *bufio.Reader
	aead    cipher.AEAD
	header  []byte
	counter uint64
	plain   []byte
	sealed  []byte
	done    bool
}

// newDecryptReader reads the header of an encrypted archive from r (whose
// magic is already known to be there) and checks the passphrase.
func newDecryptReader(r *bufio.Reader, passphrase []byte) (*decryptReader, error) {
	header := make([]byte, headerSize)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, errDamaged
	}
	if header[len(magic)] != cryptFormat {
		return nil, fmt.Errorf("the archive's encryption format %d is not known to this Berth", header[len(magic)])
	}
	logN, cr, cp := int(header[len(magic)+1]), int(header[len(magic)+2]), int(header[len(magic)+3])
	if logN < 10 || logN > maxLogN || cr < 1 || cr > 32 || cp < 1 || cp > 16 {
		return nil, errors.New("the archive's key derivation parameters are out of range: not an archive of this Berth")
	}
	salt := header[len(magic)+4 : len(magic)+4+saltSize]
	aead, check, err := deriveKeys(passphrase, salt, logN, cr, cp)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(check, header[len(magic)+4+saltSize:]) {
		return nil, ErrWrongPassphrase
	}
	return &decryptReader{r: r, aead: aead, header: header, sealed: make([]byte, chunkSize+16)}, nil
}

func (d *decryptReader) Read(p []byte) (int, error) {
	for len(d.plain) == 0 {
		if d.done {
			return 0, io.EOF
		}
		if err := d.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, d.plain)
	d.plain = d.plain[n:]
	return n, nil
}

func (d *decryptReader) next() error {
	n, err := io.ReadFull(d.r, d.sealed)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		// A short chunk is the last one.
	case err != nil:
		return err
	}
	final := n < len(d.sealed)
	if !final {
		if _, err := d.r.Peek(1); errors.Is(err, io.EOF) {
			final = true
		}
	}
	if n < 16 {
		return errDamaged
	}
	plain, err := d.aead.Open(d.sealed[:0:0], chunkNonce(d.counter, final), d.sealed[:n], d.header)
	if err != nil {
		return errDamaged
	}
	d.counter++
	d.plain = plain
	d.done = final
	return nil
}

// isEncrypted reports whether r starts like an encrypted archive.
func isEncrypted(r *bufio.Reader) bool {
	b, err := r.Peek(len(magic))
	return err == nil && bytes.Equal(b, []byte(magic))
}
