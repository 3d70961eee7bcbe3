package backupjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// SelfTarget is the target name of a configuration of type berth, and
// SelfFile the file its snapshots hold: the archive of `berth admin
// backup`, restored with `berth admin restore`.
const (
	SelfTarget = "berth"
	SelfFile   = "berth-backup.tar.gz"
)

// errSelfRestore refuses a restore onto an environment of a snapshot of
// Berth itself.
var errSelfRestore = fault.New(fault.Invalid, "This snapshot is a backup of Berth itself, which is not restored onto an environment: "+
	"download its file (GET /api/backup/snapshots/{id}/dump?destinationId=…&path=/"+SelfFile+"&download=true, "+
	"or restic dump <snapshot> /"+SelfFile+") and restore it with `berth admin restore FILE` on a stopped Berth")

// SelfOptions are the options of a configuration of type berth.
type SelfOptions struct {
	// IncludeGit adds git stacks' checkouts and repositories' mirrors (as
	// berth admin backup --with-git).
	IncludeGit bool `json:"includeGit"`
}

// ParseSelfOptions reads the options object of a configuration of type
// berth.
func ParseSelfOptions(options string) (SelfOptions, error) {
	var o SelfOptions
	if options == "" {
		return o, nil
	}
	if err := json.Unmarshal([]byte(options), &o); err != nil {
		return o, fault.Invalidf("Invalid options for a backup of Berth itself: includeGit is true or false")
	}
	return o, nil
}

// CheckSelfEnvironment refuses an environment a backup of Berth itself
// cannot run on: a Hawser edge's exec is a terminal, which cannot carry
// the archive to restic.
func CheckSelfEnvironment(env store.Environment) error {
	if env.ConnectionType == engine.HawserEdge {
		return fault.Invalidf("A backup of Berth itself cannot run on a Hawser edge environment (its exec is a terminal, " +
			"which cannot carry the archive): choose another environment to run restic")
	}
	return nil
}

// backupBerth is the work of a run of a configuration of type berth: the
// archive of Berth itself, written by SelfArchive and streamed to restic
// on the configuration's environment (never written to that host), then
// the retention.
func (s *Service) backupBerth(ctx context.Context, cfg store.BackupConfig, progress func(Event)) (res Result, err error) {
	if s.o.SelfArchive == nil {
		return res, fault.New(fault.Unavailable, "Backups of Berth itself are not available on this server")
	}
	opts, err := ParseSelfOptions(cfg.Options)
	if err != nil {
		return res, err
	}
	what := "database, encryption key, stack files"
	if opts.IncludeGit {
		what += ", git checkouts and mirrors"
	}
	progress(Event{Phase: "resolve", Message: "Backing up Berth itself (" + what + ")"})
	repo, where, env, err := s.open(ctx, cfg)
	if err != nil {
		return res, err
	}
	if err := CheckSelfEnvironment(env); err != nil {
		return res, err
	}
	instance, err := s.o.Instance(ctx)
	if err != nil {
		return res, err
	}

	// The archive is written while restic reads it: a failure of the
	// archive fails the read, and restic is killed before it makes a
	// snapshot of a part.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	archived := make(chan error, 1)
	go func() {
		err := s.o.SelfArchive(actx, opts.IncludeGit, pw)
		if err != nil {
			err = fmt.Errorf("the archive of Berth: %w", err)
		}
		pw.CloseWithError(err)
		archived <- err
	}()
	progress(Event{Phase: "backup", Message: "Backing up"})
	src := backup.Source{Host: instance, Tags: snapshotTags(cfg, instance, "")}
	sum, err := s.o.Runner.BackupStdin(ctx, where, repo, src, SelfFile, pr, func(p backup.Progress) {
		q := p
		progress(Event{Phase: "backup", Progress: &q})
	})
	// restic read all of it, or gave up: the archive's writer ends.
	pr.CloseWithError(errors.New("restic stopped reading the archive"))
	cancel()
	aerr := <-archived
	if err != nil {
		return res, err
	}
	if aerr != nil {
		// restic saw the end of the archive before its writer failed:
		// impossible unless the writer failed after writing it all.
		return res, aerr
	}
	err = s.summarise(ctx, where, repo, cfg, instance, sum, &res, progress)
	return res, err
}
