package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// The labels of a backup helper: engine.HelperLabel=HelperKind, the owner
// (Where.Owner), a digest of the repository it opens and its host name
// (unique to the helper: the name restic writes in the locks it takes).
const (
	HelperKind  = "backup"
	OwnerLabel  = engine.HelperLabel + ".owner"
	RepoLabel   = engine.HelperLabel + ".repository"
	HostLabel   = engine.HelperLabel + ".hostname"
	secretsDir  = "/berth"
	outFile     = "/tmp/out"
	sshLog      = "/tmp/ssh.log"
	maxStderr   = 64 // lines of restic's standard error kept for its error
	logsTimeout = time.Minute
)

// Config is what New needs.
type Config struct {
	// Restic is the host's restic binary (BERTH_RESTIC); "" looks it up
	// on PATH.
	Restic string
	// Helper holds berth-helper, which the backup image holds too.
	Helper *helperimage.Set
	Log    *slog.Logger
}

// Restic is the Runner of this package: restic in helper containers.
type Restic struct {
	log    *slog.Logger
	images *images

	mu    sync.Mutex
	repos map[string]*repoLock // by repository key
	live  map[string]bool      // the ids of this process's running helpers
}

var _ Runner = (*Restic)(nil)

// repoLock serialises this process's runs of one repository.
type repoLock struct {
	sem chan struct{}
	// dead holds the host names of the helpers of the repository that were
	// interrupted (killed, cancelled, or left by a Berth that stopped): the
	// locks they left are stale and removed before the next run, when they
	// are the only ones (removeDeadLocks).
	dead map[string]bool
}

// New returns the Runner. Without restic on the host it still returns
// one, whose every call fails with a fault saying so.
func New(cfg Config) *Restic {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	restic, ssh := lookPrograms(cfg.Restic)
	return &Restic{log: log, images: &images{restic: restic, ssh: ssh, helper: cfg.Helper},
		repos: map[string]*repoLock{}, live: map[string]bool{}}
}

// Installed reports whether the host has restic.
func (x *Restic) Installed() bool { return x.images.restic != "" }

// repoKey names r as opened from w: a local repository is a path of that
// engine's host; a remote one is the same from everywhere (without the
// credentials of its URL).
func repoKey(w Where, r Repo) string {
	s := r.Repository
	if r.Type == TypeLocal {
		s = fmt.Sprintf("local:%d:%s", w.EnvID, s)
	} else if u, err := url.Parse(strings.TrimPrefix(s, "rest:")); err == nil && u.User != nil {
		u.User = nil
		s = "rest:" + u.String()
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

func owner(w Where) string {
	if w.Owner == "" {
		return "berth"
	}
	return w.Owner
}

// withRepo runs fn holding r's lock: one run of a repository at a time in
// this process. Before fn, it sweeps w's leftovers and removes the stale
// locks of a run Berth knows is dead.
func (x *Restic) withRepo(ctx context.Context, w Where, r *Repo, fn func() error) error {
	if w.Client == nil {
		return fault.New(fault.Internal, "backup: no engine")
	}
	typ, err := ParseRepository(r.Repository)
	if err != nil {
		return err
	}
	if r.Type == "" {
		r.Type = typ
	}
	if err := CheckRepo(*r); err != nil {
		return err
	}
	if typ == TypeSFTP && x.images.ssh == "" {
		return fault.New(fault.Unavailable, "ssh is not installed on the Berth host (install Debian's openssh-client package)")
	}
	key := repoKey(w, *r)
	x.mu.Lock()
	l := x.repos[key]
	if l == nil {
		l = &repoLock{sem: make(chan struct{}, 1)}
		x.repos[key] = l
	}
	x.mu.Unlock()
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.sem }()
	x.sweep(ctx, w)
	if err := x.releaseDeadLocks(ctx, w, *r, l); err != nil {
		return err
	}
	err = fn()
	if ctx.Err() != nil {
		// Stopped: what restic, interrupted, left of its locks (taken
		// in the moment it was stopped) goes now, not at the next run.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if rerr := x.releaseDeadLocks(cctx, w, *r, l); rerr != nil {
			x.log.Warn("backup: the locks of a stopped run kept until the next run", "env", w.EnvID, "err", rerr)
		}
	}
	return err
}

// releaseTimeout bounds the removal of a stopped run's locks.
const releaseTimeout = 2 * time.Minute

// releaseDeadLocks removes the locks of l's dead helpers from r when they
// are its only ones (removeDeadLocks), and forgets those helpers then.
func (x *Restic) releaseDeadLocks(ctx context.Context, w Where, r Repo, l *repoLock) error {
	x.mu.Lock()
	dead := maps.Clone(l.dead)
	x.mu.Unlock()
	if len(dead) == 0 {
		return nil
	}
	removed, err := x.removeDeadLocks(ctx, w, r, dead)
	if err != nil {
		return err
	}
	if removed {
		x.mu.Lock()
		for h := range dead {
			delete(l.dead, h)
		}
		x.mu.Unlock()
	}
	return nil
}

// invocation is one helper run.
type invocation struct {
	args    []string // restic's command and arguments (the global ones are added)
	volumes []engine.VolumeMount
	binds   []engine.BindMount
	// createRepo makes a local repository's directory (init).
	createRepo bool
	// helper runs berth-helper with args instead of restic, with no
	// repository or secrets.
	helper bool
	// stdout gets each line restic prints on its standard output (nil:
	// ignored); with toFile the output goes to outFile instead, and
	// after reads the stopped helper (its output) before removal.
	stdout func(line string)
	toFile bool
	after  func(ctx context.Context, id string) error
	// stdin is restic's standard input (restic backup --stdin): restic
	// then runs as an attached exec in a helper that idles.
	stdin io.Reader
	// okCodes are exit codes other than 0 that are a success.
	okCodes []int64
	// secrets are more secret files, by path under secretsDir.
	secrets map[string]string
	// copies write tar streams extracted at / in the helper before it
	// starts (Source.Copied).
	copies []func(io.Writer) error
}

// exec runs inv in a helper on w and maps its failure to a fault.
func (x *Restic) exec(ctx context.Context, w Where, r Repo, inv invocation) error {
	img, err := x.images.ensure(ctx, w.Client)
	if err != nil {
		return err
	}
	key := repoKey(w, r)
	host := helperHostname()
	spec := engine.HelperSpec{
		// restic reaches repositories on the host's loopback too;
		// berth-helper needs no network.
		Image: img, Mounts: inv.volumes, Binds: inv.binds, HostNetwork: !inv.helper, Hostname: host,
		Labels: map[string]string{engine.HelperLabel: HelperKind, OwnerLabel: owner(w), RepoLabel: key, HostLabel: host},
	}
	var secrets []byte
	if inv.helper {
		spec.Cmd = append([]string{helperimage.Program}, inv.args...)
	} else {
		args, files, err := resticArgs(r, inv.args)
		if err != nil {
			return err
		}
		for p, v := range inv.secrets {
			files[p] = v
		}
		if secrets, err = tarOfSecrets(files); err != nil {
			return err
		}
		out := "-"
		if inv.toFile {
			out = outFile
		}
		spec.Cmd = append([]string{helperimage.Program, "exec", secretsDir + "/env", out, ResticPath}, args...)
		if r.Type == TypeLocal {
			spec.Binds = append(spec.Binds, engine.BindMount{Source: r.Repository, Target: RepoDir, Create: inv.createRepo})
		}
	}
	// With a standard input, restic is an attached exec of a helper that
	// idles (a container's own process cannot be fed through every
	// environment type).
	var cmd []string
	if inv.stdin != nil {
		cmd, spec.Cmd = spec.Cmd, []string{helperimage.Program, "idle"}
	}
	id, err := w.Client.CreateHelper(ctx, spec)
	if err != nil {
		if r.Type == TypeLocal && strings.Contains(err.Error(), "bind source path does not exist") {
			return fault.Wrap(fault.NotFound, "Repository not initialized: "+r.Repository+" does not exist on the host", err)
		}
		return err
	}
	x.mu.Lock()
	x.live[id] = true
	x.mu.Unlock()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logsTimeout)
		defer cancel()
		if err := w.Client.RemoveContainer(rctx, id, true); err != nil && !errors.Is(err, engine.ErrNotFound) {
			x.log.Warn("backup: removing a helper", "env", w.EnvID, "container", id, "err", err)
		}
		x.mu.Lock()
		delete(x.live, id)
		x.mu.Unlock()
	}()
	if secrets != nil {
		if err := w.Client.CopyTo(ctx, id, "/", bytes.NewReader(secrets)); err != nil {
			return err
		}
	}
	for _, write := range inv.copies {
		if err := copyInto(ctx, w, id, write); err != nil {
			return err
		}
	}
	if err := w.Client.StartContainer(ctx, id); err != nil {
		return err
	}
	// From here an end before restic's leaves its locks behind.
	interrupted := func() {
		if !inv.helper && (len(inv.args) == 0 || inv.args[0] != "unlock") {
			x.markDead(key, host)
		}
	}
	var stderr []string
	line := func(l engine.LogLine) {
		if l.Stream == "stderr" {
			if strings.Contains(l.Text, "Permanently added") {
				// An SFTP host key accepted on first use (no known hosts given).
				x.log.Info("backup: "+l.Text, "env", w.EnvID, "repository", key)
			}
			if len(stderr) == maxStderr {
				stderr = stderr[1:]
			}
			stderr = append(stderr, l.Text)
		} else if inv.stdout != nil {
			inv.stdout(l.Text)
		}
	}
	var code int64
	var werr error
	if inv.stdin != nil {
		code, werr = x.attached(ctx, w, id, cmd, inv.stdin, line)
	} else {
		code, werr = x.follow(ctx, w, id, line)
	}
	if werr != nil {
		if ctx.Err() != nil && inv.stdin == nil {
			// Stopped: restic is interrupted as by Ctrl-C, which removes
			// the locks it holds, before the deferred removal (which kills
			// one that does not end in time). A lock it took in that very
			// moment, or could not remove, is removed by withRepo after.
			x.interrupt(ctx, w, id)
			interrupted()
			return ctx.Err()
		}
		interrupted()
		var in *inputError
		if errors.As(werr, &in) {
			return in.err
		}
		if ctx.Err() != nil {
			// The deferred removal kills restic.
			return ctx.Err()
		}
		if errors.Is(werr, engine.ErrNotFound) {
			return fault.Wrap(fault.Internal, "The backup helper was removed while restic ran", werr)
		}
		return werr
	}
	if code == 0 || slices.Contains(inv.okCodes, code) {
		if inv.after != nil {
			return inv.after(ctx, id)
		}
		return nil
	}
	if code == 137 || code == 143 {
		interrupted()
		return fault.New(fault.Internal, "restic was killed before it finished (the repository's locks are removed before its next run)")
	}
	if r.Type == TypeSFTP {
		stderr = append(stderr, x.sshErrors(ctx, w, id)...)
	}
	return resticError(r, code, stderr)
}

// interruptGrace is how long a stopped restic has to remove its locks and
// end.
const interruptGrace = 30 * time.Second

// interrupt sends SIGINT to restic, the process of the running helper id
// (restic then removes the locks it holds and exits with 130, as on
// Ctrl-C; SIGTERM would end it without), and waits for its end, at most
// interruptGrace.
func (x *Restic) interrupt(ctx context.Context, w Where, id string) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptGrace)
	defer cancel()
	if err := w.Client.KillContainer(ictx, id, "SIGINT"); err != nil {
		x.log.Warn("backup: interrupting a stopped restic", "env", w.EnvID, "container", id, "err", err)
		return
	}
	if code, err := w.Client.WaitHelper(ictx, id); err != nil || code != 130 && code != 0 {
		x.log.Warn("backup: a stopped restic did not end by itself", "env", w.EnvID, "container", id, "code", code, "err", err)
	}
}

// sshErrors returns the last lines ssh logged in the stopped helper id.
func (x *Restic) sshErrors(ctx context.Context, w Where, id string) []string {
	rc, _, err := w.Client.CopyFrom(ctx, id, sshLog)
	if err != nil {
		return nil
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(tr, 64<<10))
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > maxStderr {
		lines = lines[len(lines)-maxStderr:]
	}
	return lines
}

// labelOf returns the label name of a container inspection.
func labelOf(raw []byte, name string) string {
	var c struct {
		Config struct {
			Labels map[string]string
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return ""
	}
	return c.Config.Labels[name]
}

// copyInto extracts at / of the created helper id the tar stream that
// write writes, streamed (not held in memory). write's error wins over
// the engine's (which only sees a stream cut short).
func copyInto(ctx context.Context, w Where, id string, write func(io.Writer) error) error {
	pr, pw := io.Pipe()
	werr := make(chan error, 1)
	go func() {
		err := write(pw)
		pw.CloseWithError(err)
		werr <- err
	}()
	err := w.Client.CopyTo(ctx, id, "/", pr)
	pr.CloseWithError(errCopyEnded)
	if e := <-werr; e != nil && !errors.Is(e, errCopyEnded) {
		return e
	}
	return err
}

// errCopyEnded is what a copy's writer gets once the engine stopped reading.
var errCopyEnded = errors.New("backup: the copy into the helper ended")
