package backup

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Where the backup image holds its programs: the paths of Debian's
// packages, which the server image (scripts/image-rootfs.sh) keeps too.
const (
	ResticPath = "/usr/bin/restic"
	SSHPath    = "/usr/bin/ssh"
	// ImageLabel marks the backup image; its value is ImageFormat.
	ImageLabel  = "berth.backup.image"
	ImageFormat = "1"
	// ImageRepository names the image's tag, for people listing images.
	ImageRepository = "berth/backup"
)

// caBundle is the host's CA bundle (Debian's ca-certificates), for
// repositories over HTTPS.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

var errNoRestic = fault.New(fault.Unavailable, "restic is not installed on the Berth host (install Debian's restic package)")

// images makes the backup image from this host's files once and puts it on
// engines.
type images struct {
	restic string // the host's restic; "" when there is none
	ssh    string // the host's ssh; "" when there is none (sftp refused)
	helper *helperimage.Set

	mu    sync.Mutex
	image *helperimage.Image
	err   error
}

// lookPrograms finds restic (restic, else on PATH) and ssh on this host.
func lookPrograms(restic string) (string, string) {
	if restic == "" {
		restic, _ = exec.LookPath("restic")
	}
	if restic != "" {
		if st, err := os.Stat(restic); err != nil || !st.Mode().IsRegular() {
			restic = ""
		}
	}
	ssh, _ := exec.LookPath("ssh")
	return restic, ssh
}

// ensure returns the id of the backup image on c's engine, loading it
// there first when missing. The image holds this host's programs: an
// engine of another architecture is refused.
func (im *images) ensure(ctx context.Context, c *engine.Client) (string, error) {
	if im.restic == "" {
		return "", errNoRestic
	}
	if im.helper == nil {
		return "", fault.New(fault.Unavailable, "Helper image not built: run make")
	}
	arch, err := im.helper.Arch(ctx, c)
	if err != nil {
		return "", err
	}
	if err := sameArch(arch, runtime.GOARCH); err != nil {
		return "", err
	}
	img, err := im.build()
	if err != nil {
		return "", err
	}
	return helperimage.Ensure(ctx, c, img, "Berth's backup image")
}

// sameArch refuses an engine whose architecture (GOARCH) is not the
// host's: the image holds the host's programs.
func sameArch(engine, host string) error {
	if engine != host {
		return fault.New(fault.Invalid, fmt.Sprintf(
			"Backups need an engine of the Berth host's architecture (%s); this engine's is %s", host, engine))
	}
	return nil
}

// build makes the image on first use.
func (im *images) build() (*helperimage.Image, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.image != nil || im.err != nil {
		return im.image, im.err
	}
	program, err := im.helper.Program(runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	files, err := imageFiles(im.restic, im.ssh, program)
	if err != nil {
		im.err = fault.Wrap(fault.Unavailable, "Cannot make the backup image from this host's restic: "+err.Error(), err)
		return nil, im.err
	}
	im.image, im.err = helperimage.Build(runtime.GOARCH, helperimage.Spec{
		Files: files, Cmd: []string{ResticPath, "version"}, Labels: map[string]string{ImageLabel: ImageFormat},
		Repository: ImageRepository, CreatedBy: "berth backup image",
	})
	return im.image, im.err
}

// imageFiles lists the layer of the backup image: restic and ssh at their
// Debian paths with the shared libraries they need, the CA bundle, a
// minimal /etc/passwd and /etc/group (ssh needs its user's entry), /root,
// /tmp and berth-helper.
func imageFiles(restic, ssh string, helper []byte) ([]helperimage.File, error) {
	content := map[string][]byte{} // image path (no leading slash) → bytes
	modes := map[string]int64{}
	add := func(imagePath, hostPath string, mode int64) error {
		b, err := os.ReadFile(hostPath)
		if err != nil {
			return err
		}
		content[imagePath[1:]], modes[imagePath[1:]] = b, mode
		return nil
	}
	programs := map[string]string{ResticPath: restic}
	if ssh != "" {
		programs[SSHPath] = ssh
	}
	for imagePath, hostPath := range programs {
		if err := add(imagePath, hostPath, 0o755); err != nil {
			return nil, err
		}
		libs, err := sharedLibraries(hostPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hostPath, err)
		}
		for _, l := range libs {
			if err := add(l, l, 0o755); err != nil {
				return nil, err
			}
		}
	}
	if _, err := os.Stat(caBundle); err == nil {
		if err := add(caBundle, caBundle, 0o644); err != nil {
			return nil, err
		}
	}
	content["etc/passwd"], modes["etc/passwd"] = []byte("root:x:0:0:root:/root:/sbin/nologin\n"), 0o644
	content["etc/group"], modes["etc/group"] = []byte("root:x:0:\n"), 0o644
	content[helperimage.Program[1:]], modes[helperimage.Program[1:]] = helper, 0o755

	dirs := map[string]int64{"root/": 0o700, "tmp/": 0o1777}
	for name := range content {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d+"/"]; !ok {
				dirs[d+"/"] = 0o755
			}
		}
	}
	names := make([]string, 0, len(dirs)+len(content))
	for d := range dirs {
		names = append(names, d)
	}
	for f := range content {
		names = append(names, f)
	}
	// A directory sorts before what it holds ("a/" < "a/b").
	slices.Sort(names)
	files := make([]helperimage.File, 0, len(names))
	for _, n := range names {
		if mode, ok := dirs[n]; ok {
			files = append(files, helperimage.File{Name: n, Dir: true, Mode: mode})
		} else {
			files = append(files, helperimage.File{Name: n, Mode: modes[n], Data: content[n]})
		}
	}
	return files, nil
}

// sharedLibraries returns the host paths of what the ELF program needs to
// run: its interpreter (PT_INTERP) and its DT_NEEDED libraries, theirs in
// turn, resolved in the host's library directories. A static program needs
// none.
func sharedLibraries(program string) ([]string, error) {
	f, err := elf.Open(program)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dirs := libraryDirs(f.Machine)
	var out []string
	seen := map[string]bool{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("reading its interpreter: %w", err)
			}
			interp := strings.TrimRight(string(b), "\x00")
			out = append(out, interp)
			seen[path.Base(interp)] = true
		}
	}
	queue, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		found := ""
		for _, d := range dirs {
			if st, err := os.Stat(path.Join(d, name)); err == nil && !st.IsDir() {
				found = path.Join(d, name)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("library %s not found in %v: %w", name, dirs, fs.ErrNotExist)
		}
		out = append(out, found)
		lf, err := elf.Open(found)
		if err != nil {
			return nil, err
		}
		more, err := lf.ImportedLibraries()
		lf.Close()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			return nil, err
		}
		queue = append(queue, more...)
	}
	return out, nil
}

// libraryDirs are the directories the dynamic linker searches (Debian's
// multiarch ones first).
func libraryDirs(m elf.Machine) []string {
	triplet := map[elf.Machine]string{
		elf.EM_X86_64: "x86_64-linux-gnu", elf.EM_AARCH64: "aarch64-linux-gnu", elf.EM_ARM: "arm-linux-gnueabihf",
		elf.EM_386: "i386-linux-gnu",
	}[m]
	var dirs []string
	if triplet != "" {
		dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	return append(dirs, "/lib", "/usr/lib", "/lib64", "/usr/lib64")
}
